"""How plan-devices reads a level-1 program: tensor values and their hints, the uses it
places, the walk with region exits its phases share, and the words of its messages."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IndexType,
    IntegerType,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, OpResult, SSAValue

from ...diagnostics import error_at, location_of, op_text
from ...dialects.memory_scopes import DEFAULT_SCOPE
from ...dialects.vdev import DEVICE_ATTR, DeviceCopyOp, OnDeviceOp
from ...dialects.virtual_device import DeviceAttr, ir_text


def not_a_tensor(op: OnDeviceOp | DeviceCopyOp) -> Exception:
    """Placement of a scalar, which plan-devices does not place: an error, not ignored."""
    return error_at(
        op,
        f"'{op.name}' of {ir_text(op.input.type)}: plan-devices places tensors; scalars "
        "live on the host device (place the tensor op that uses the scalar instead)",
    )


def is_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType)


def is_scalar(type: Attribute) -> bool:
    """An integer, index or float type: a value of it lives on the host device."""
    return isinstance(type, IntegerType | IndexType | AnyFloat)


SCALAR_WHY = "a scalar lives on the host device"


def is_dense_constant(op: Operation) -> bool:
    return (
        op.name == "arith.constant"
        and len(op.results) == 1
        and is_tensor(op.results[0])
        and isinstance(op.get_attr_or_prop("value"), DenseIntOrFPElementsAttr)
    )


def value_name(value: SSAValue) -> str:
    """`%x` as the source spells it: `%x#1` for a result of an op whose results share one
    name (`%x:2 = ...`)."""
    if not value.name_hint:
        return "the value"
    if isinstance(value, OpResult) and len(value.op.results) > 1:
        shared = sum(r.name_hint == value.name_hint for r in value.op.results) > 1
        if shared:
            return f"%{value.name_hint}#{value.index}"
    return f"%{value.name_hint}"


def function_of(op: Operation) -> FuncOp | None:
    current: Operation | None = op
    while current is not None and not isinstance(current, FuncOp):
        current = current.parent_op()
    return current


def short(device: DeviceAttr) -> str:
    """`cuda:0/global`-style text for messages."""
    return device.to_string()


def line_of(op: Operation) -> str:
    """`line N`, or the op as printed when it has no location (plain xdsl-opt keeps none)."""
    loc = location_of(op)
    return f"line {loc.line.data}" if loc is not None else f"`{op_text(op)}`"


def name_suffix(device: DeviceAttr) -> str:
    """The name part of a specialisation for `device`: `cuda0`, `cpu0_texture`."""
    text = (device.type_name or "any") + (
        str(device.device_id) if device.device_id is not None else ""
    )
    if device.scope is not None and device.scope != DEFAULT_SCOPE:
        text += "_" + device.scope.replace(".", "_").replace("-", "_")
    return text


def walk_with_exits(block_ops: Sequence[Operation]) -> Iterator[tuple[Operation, bool]]:
    """Ops in program order as (op, False); a region op is followed, after its nested
    ops, by (op, True). Ops without regions come once, as (op, True)."""
    stack: list[tuple[Operation, bool]] = [(op, False) for op in reversed(block_ops)]
    while stack:
        op, leaving = stack.pop()
        if leaving or not op.regions:
            yield op, True
            continue
        yield op, False
        stack.append((op, True))
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                stack.extend((inner, False) for inner in reversed(list(block.ops)))


@dataclass(slots=True)
class Use:
    """A tensor operand and the domain it is expected on."""

    op: Operation
    index: int
    value: SSAValue
    """The operand as written (before the rewrite replaces it)."""
    target: int
    soft: bool


def and_list(words: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def underlying(value: SSAValue) -> SSAValue:
    """The value an `on_device` result stands for (hints are removed)."""
    while isinstance(value, OpResult) and isinstance(value.op, OnDeviceOp):
        value = value.op.input
    return value


def dict_device(attrs: ArrayAttr[DictionaryAttr] | None, index: int) -> DeviceAttr | None:
    if attrs is None or index >= len(attrs.data):
        return None
    device = attrs.data[index].data.get(DEVICE_ATTR)
    return device if isinstance(device, DeviceAttr) else None


def with_devices(
    attrs: ArrayAttr[DictionaryAttr] | None, devices: list[DeviceAttr | None]
) -> ArrayAttr[DictionaryAttr]:
    entries: list[DictionaryAttr] = []
    for index, device in enumerate(devices):
        data: dict[str, Attribute] = {}
        if attrs is not None and index < len(attrs.data):
            data.update(attrs.data[index].data)
        if device is not None:
            data[DEVICE_ATTR] = device
        entries.append(DictionaryAttr(data))
    return ArrayAttr(entries)
