"""Memory areas and copy routes of a system: which placements are one memory, and what a
copy between two devices costs.

Two placements are one memory area when they are one device and scope, or scopes that a
`[[same_memory]]` entry of the system description joins. A copy's cost is the cost
model's (`CostModel.route`: the direct link, else through the host).
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Attribute

from ..diagnostics import DevplanError
from ..dialects.memory_scopes import DEFAULT_SCOPE
from ..dialects.virtual_device import DeviceAttr
from ..system.cost import CostModel, LinkCost, NoLinkError
from ..system.description import ScopeRef, System

NOMINAL_BYTES = 1 << 30
"""Size used to compare routes for a copy of dynamic size (bandwidth dominates)."""


class MemoryAreas:
    """Which placements are one memory area, and what copies cost, in one system."""

    def __init__(self, system: System):
        self.system = system
        self.cost = CostModel(
            [LinkCost(link.a, link.b, link.bandwidth, link.latency) for link in system.links],
            host=system.host.name,
        )

    def scope_ref(self, device: DeviceAttr | None) -> ScopeRef | None:
        """`("cuda:0", "global")` for a placement (None: host memory), or None when the
        placement names no device of the system."""
        if device is None:
            return (self.system.host.name, DEFAULT_SCOPE)
        if device.type_name is None or device.device_id is None:
            return None
        name = f"{device.type_name}:{device.device_id}"
        try:
            spec = self.system.device_named(name)
        except DevplanError:
            return None
        scope = device.scope or DEFAULT_SCOPE
        return (name, scope) if scope in spec.scopes else None

    def one_area(self, a: DeviceAttr | None, b: DeviceAttr | None) -> bool:
        """Whether memory placed at `a` and at `b` is the same memory."""
        ra, rb = self.scope_ref(a), self.scope_ref(b)
        if ra is not None and rb is not None:
            return self.system.same_memory(ra, rb)
        if a is None or b is None or a.device_id is None or a.type_name is None:
            return False
        same_device = (a.type_name, a.device_id) == (b.type_name, b.device_id)
        return same_device and (a.scope or DEFAULT_SCOPE) == (b.scope or DEFAULT_SCOPE)

    def route_seconds(self, a: DeviceAttr, b: DeviceAttr, nbytes: int | None) -> float | None:
        """Cost-model seconds of copying `nbytes` from `a` to `b`, None when the
        system cannot route such a copy."""
        ra, rb = self.scope_ref(a), self.scope_ref(b)
        if ra is None or rb is None:
            return None
        try:
            hops = self.cost.route(ra[0], rb[0])
        except NoLinkError:
            return None
        size = NOMINAL_BYTES if nbytes is None else nbytes
        return sum(hop.seconds(size) for hop in hops)


def byte_size(type_: Attribute) -> int | None:
    """Bytes of a statically shaped tensor or memref, else None."""
    if not isinstance(type_, TensorType | MemRefType):
        return None
    shaped = cast(TensorType[Attribute] | MemRefType[Attribute], type_)
    element = getattr(shaped.get_element_type(), "size", None)
    shape = shaped.get_shape()
    if not isinstance(element, int) or any(d < 0 for d in shape):
        return None
    count = 1
    for d in shape:
        count *= d
    return count * element
