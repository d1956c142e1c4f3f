"""Reading placement from IR: where a module's host and default devices are, which
targets it names, and on which device a function argument, an op or a value lives.

The placement attributes themselves (`vdev.device`, `vdev.host_device`, ...) and their
check are the `vdev` dialect's, in `vdev.py`; plan-devices writes them, and passes, the
runtime and tools read them through these functions.
"""

from __future__ import annotations

from functools import cache
from typing import cast

from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue

from .memory_scopes import DEFAULT_SCOPE
from .target import Target, TargetAttr
from .vdev import (
    DEFAULT_DEVICE_ATTR,
    DEVICE_ATTR,
    HOST_DEVICE_ATTR,
    TARGETS_ATTR,
    DeviceCopyOp,
    function_attr_dicts,
)
from .virtual_device import DeviceAttr


@cache
def default_host_device() -> DeviceAttr:
    """`#vdev.device<"cpu", 0, #target.target<"llvm">, "global">`."""
    return DeviceAttr.make("cpu", 0, Target.parse("llvm"), DEFAULT_SCOPE)


def host_device(module: ModuleOp) -> DeviceAttr:
    """The module's `vdev.host_device`, or `default_host_device()`."""
    device = module.attributes.get(HOST_DEVICE_ATTR)
    return device if isinstance(device, DeviceAttr) else default_host_device()


def default_device(module: ModuleOp) -> DeviceAttr:
    """The module's `vdev.default_device`, or its host device."""
    device = module.attributes.get(DEFAULT_DEVICE_ATTR)
    return device if isinstance(device, DeviceAttr) else host_device(module)


def module_targets(module: ModuleOp) -> dict[str, TargetAttr]:
    """The module's `vdev.targets` by device type (empty when absent)."""
    targets = module.attributes.get(TARGETS_ATTR)
    if not isinstance(targets, ArrayAttr):
        return {}
    items = cast(ArrayAttr[Attribute], targets).data
    return {t.device_type: t for t in items if isinstance(t, TargetAttr)}


def arg_device(func: Operation, index: int) -> DeviceAttr | None:
    """The `vdev.device` of argument `index` of a `func.func`, or None."""
    dicts = function_attr_dicts(func, "arg_attrs")
    entry = dicts[index] if index < len(dicts) else None
    device = entry.data.get(DEVICE_ATTR) if entry is not None else None
    return device if isinstance(device, DeviceAttr) else None


def result_device(func: Operation, index: int) -> DeviceAttr | None:
    """The `vdev.device` of result `index` of a `func.func`, or None."""
    dicts = function_attr_dicts(func, "res_attrs")
    entry = dicts[index] if index < len(dicts) else None
    device = entry.data.get(DEVICE_ATTR) if entry is not None else None
    return device if isinstance(device, DeviceAttr) else None


def op_device(op: Operation) -> DeviceAttr | None:
    """The `vdev.device` an op carries (plan-devices puts one on each tensor op), or None.

    None also when the op carries one device per result (an array): ask
    `result_placement` for each result then.
    """
    device = op.attributes.get(DEVICE_ATTR)
    return device if isinstance(device, DeviceAttr) else None


def result_placement(op: Operation, index: int) -> DeviceAttr | None:
    """The device of result `index` of `op` in a planned module, or None.

    `vdev.device` on an op is one `#vdev.device` for all its results, or an array with
    one `#vdev.device` per result (ops whose results live apart: `scf.if`, `scf.for`,
    `func.call`). A `vdev.device_copy` result lives at its destination.
    """
    if isinstance(op, DeviceCopyOp):
        return op.dst_device
    device = op.attributes.get(DEVICE_ATTR)
    if isinstance(device, DeviceAttr):
        return device
    if isinstance(device, ArrayAttr):
        items = cast(ArrayAttr[Attribute], device).data
        if index < len(items) and isinstance(items[index], DeviceAttr):
            return cast(DeviceAttr, items[index])
    return None


def value_device(value: SSAValue) -> DeviceAttr | None:
    """Where a value of a planned module lives, or None when nothing says.

    An op result: `result_placement`. A function argument: its `vdev.device` argument
    attribute. A loop-carried block argument of `scf.for`: the device of the loop
    result it carries (plan-devices keeps init value, block argument, yield and result
    of one iteration value on one device). Other block arguments: None.
    """
    if isinstance(value, OpResult):
        return result_placement(value.op, value.index)
    if not isinstance(value, BlockArgument):
        return None
    parent = value.block.parent_op()
    if parent is None:
        return None
    if parent.name == "func.func":
        return arg_device(parent, value.index)
    if parent.name == "scf.for" and value.index > 0:
        return result_placement(parent, value.index - 1)
    return None
