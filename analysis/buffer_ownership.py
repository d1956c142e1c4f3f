"""Which device owns the memory of a memref: the device of its memory space, or none for
host memory (no memory space, or a space of the module's host device,
`vdev.host_device`, default `cpu:0`). Memory whose device type is unconstrained counts
as host memory; an unconstrained virtual id (`#vdev.device<"cuda">`) stays open.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from ..dialects.shaped_types import is_memref
from ..dialects.target import TargetAttr
from ..dialects.virtual_device import DeviceAttr, memory_space_of

DeviceKey = tuple[str, int | None]
"""A device: (device type, virtual id); an id of None is unconstrained."""


def device_name(key: DeviceKey) -> str:
    """`cuda:0`, or `cuda` when the id is unconstrained."""
    return key[0] if key[1] is None else f"{key[0]}:{key[1]}"


def module_host_device(module: ModuleOp) -> DeviceAttr:
    """The module's `vdev.host_device`, else `cpu:0` with an `llvm` target."""
    host = module.attributes.get("vdev.host_device")
    if isinstance(host, DeviceAttr):
        return host
    return DeviceAttr.make("cpu", 0, TargetAttr.from_config({"kind": "llvm"}), "global")


class BufferOwnership:
    """The owners of memory in one module (its host device decides what is host memory)."""

    def __init__(self, module: ModuleOp):
        self.host_device = module_host_device(module)
        self.host_key: DeviceKey = (
            self.host_device.type_name or "cpu",
            self.host_device.device_id if self.host_device.device_id is not None else 0,
        )

    def owner(self, memref: Attribute) -> DeviceKey | None:
        """The device owning a memref type's memory; None for host memory."""
        if not is_memref(memref):
            return None
        space = memory_space_of(memref)
        if space is None or space.type_name is None:
            return None
        key: DeviceKey = (space.type_name, space.device_id)
        if key[0] == self.host_key[0] and key[1] in (None, self.host_key[1]):
            return None
        return key
