"""Tests of a type against xDSL's shaped types that narrow it as
`isa(type_, MemRefType[Attribute])` does, at the price of an `isinstance`.

xDSL's `isa` with a parametrised type builds an IRDL constraint and verifies the type
against it on every call, and when the type does not match it formats and catches a
`VerifyException`: 30-50 us a call, against 0.1 us. Passes and verifiers ask it of every
operand and result, hundreds of times in a short run. With `Attribute` as the element
type the constraint admits every instance of the class (the other parameters were
checked when the type was built), so `isinstance` decides the same.
"""

from __future__ import annotations

from typing import TypeGuard

from xdsl.dialects.builtin import MemRefType, TensorType, UnrankedTensorType
from xdsl.ir import Attribute


def is_memref(type_: Attribute) -> TypeGuard[MemRefType[Attribute]]:
    """Whether `type_` is a ranked memref type (`memref<4x?xf32, ...>`)."""
    return isinstance(type_, MemRefType)


def is_ranked_tensor(type_: Attribute) -> TypeGuard[TensorType[Attribute]]:
    """Whether `type_` is a ranked tensor type (`tensor<4x?xf32>`)."""
    return isinstance(type_, TensorType)


def is_unranked_tensor(type_: Attribute) -> TypeGuard[UnrankedTensorType[Attribute]]:
    """Whether `type_` is an unranked tensor type (`tensor<*xf32>`)."""
    return isinstance(type_, UnrankedTensorType)
