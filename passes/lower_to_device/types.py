"""Types and places of lowered values: tensors become memrefs in their device's memory."""

from __future__ import annotations

from typing import cast

from xdsl.dialects import tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    MemRefType,
    TensorType,
    UnrankedTensorType,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue

from ...analysis.dtypes import dtype_of
from ...dialects.memory_scopes import DEFAULT_SCOPE
from ...dialects.shaped_types import is_ranked_tensor
from ...dialects.virtual_device import DeviceAttr, ir_text


def is_tensor(value: SSAValue) -> bool:
    return is_ranked_tensor(value.type)


def is_unranked_cast(value: SSAValue) -> bool:
    """A `tensor.cast` result of unranked type: a host buffer of its own (`movement.py`)."""
    return isinstance(value.type, UnrankedTensorType) and isinstance(value.owner, tensor.CastOp)


RESHAPES = (tensor.CollapseShapeOp, tensor.ExpandShapeOp, tensor.ReshapeOp, tensor.CastOp)
"""Ops that give their operand's elements another shape, in the same row-major order."""


def becomes_view(op: Operation) -> bool:
    """Whether lower-to-device makes `op`'s result a `device.view` of its source's buffer
    (no allocation, no copy): a slice or ranked cast of a ranked tensor, and a reshape of
    a tensor whose elements are consecutive in row-major order (not `is_strided`)."""
    if isinstance(op, tensor.ExtractSliceOp):
        return is_ranked_tensor(op.source.type)
    if isinstance(op, RESHAPES):
        ranked = all(is_ranked_tensor(v.type) for v in (op.operands[0], op.results[0]))
        return ranked and (isinstance(op, tensor.CastOp) or not is_strided(op.operands[0]))
    return False


def is_strided(value: SSAValue) -> bool:
    """Whether `value`'s buffer is a view whose elements are not consecutive in row-major
    order: a slice that is not `contiguous_slice`, or any slice or cast of such a view."""
    if isinstance(value, OpResult) and isinstance(value.op, tensor.CastOp):
        return is_strided(value.op.source)  # a cast keeps its source's strides
    if not isinstance(value, OpResult) or not isinstance(value.op, tensor.ExtractSliceOp):
        return False
    return is_strided(value.op.source) or not contiguous_slice(value.op)


def contiguous_slice(op: tensor.ExtractSliceOp) -> bool:
    """Whether the slice's elements are consecutive in its source's row-major order, as
    the static sizes say: unit sizes, then one dimension of stride 1, then whole
    dimensions (offset 0, the source's static extent, stride 1)."""
    shape = tensor_type(op.source.type).get_shape()
    offsets = op.static_offsets.get_values()
    sizes = op.static_sizes.get_values()
    strides = op.static_strides.get_values()
    d = 0
    while d < len(shape) and sizes[d] == 1:
        d += 1
    if d == len(shape):
        return True
    if strides[d] != 1:
        return False
    return all(
        offsets[e] == 0 and shape[e] != DYNAMIC_INDEX and sizes[e] == shape[e] and strides[e] == 1
        for e in range(d + 1, len(shape))
    )


def view_source(value: SSAValue) -> SSAValue | None:
    """The tensor whose buffer `value`'s buffer views (`becomes_view`), or None."""
    if isinstance(value, OpResult) and becomes_view(value.op):
        return value.op.operands[0]
    return None


def tensor_type(type_: Attribute) -> TensorType[Attribute]:
    return cast(TensorType[Attribute], type_)


def memref_type(type_: Attribute) -> MemRefType[Attribute]:
    return cast(MemRefType[Attribute], type_)


def type_text(type_: Attribute) -> str:
    return ir_text(type_)


PLAN = "lower-to-device lowers planned modules: run plan-devices first"
ELEMENTS = "the kernel backends support index, i1, i8, i16, i32, i64, f16, f32 and f64 elements"


def kernel_element(element: Attribute) -> bool:
    return dtype_of(element) is not None


def memory_of(type_: Attribute) -> DeviceAttr | None:
    space = memref_type(type_).memory_space
    return space if isinstance(space, DeviceAttr) else None


def same_place(a: DeviceAttr, b: DeviceAttr) -> bool:
    return (
        a.type_name == b.type_name
        and a.device_id == b.device_id
        and (a.scope or DEFAULT_SCOPE) == (b.scope or DEFAULT_SCOPE)
    )
