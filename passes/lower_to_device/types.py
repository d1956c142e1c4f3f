"""Types and places of lowered values: tensors become memrefs in their device's memory."""

from __future__ import annotations

from typing import cast

from xdsl.dialects import tensor
from xdsl.dialects.builtin import (
    MemRefType,
    TensorType,
    UnrankedTensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.hints import isa

from ...analysis.dtypes import dtype_of
from ...dialects.memory_scopes import DEFAULT_SCOPE
from ...dialects.virtual_device import DeviceAttr, ir_text


def is_tensor(value: SSAValue) -> bool:
    return isa(value.type, TensorType[Attribute])


def is_unranked_cast(value: SSAValue) -> bool:
    """A `tensor.cast` result of unranked type: a host buffer of its own (`movement.py`)."""
    return isinstance(value.type, UnrankedTensorType) and isinstance(value.owner, tensor.CastOp)


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
