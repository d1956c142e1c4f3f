"""Run-time values of host code: Python and NumPy scalars standing for MLIR's scalar types.

Integers (`index`, `iN`) are Python ints in two's-complement signed form, wrapped to their
width (`wrapper`); `i1` is a Python bool. Floats are NumPy scalars of their width, bf16 an
f32 holding the bf16 value (`float_cast`). `from_python` takes a user's scalar in, after
`analysis.dtypes` has checked it fits; `to_numpy_scalar` gives a result back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import AnyFloat, BFloat16Type, Float16Type
from xdsl.ir import Attribute

from ...analysis.dtypes import check_scalar_input, int_width, is_integer_like, numpy_dtype
from .. import numpy_semantics


def float_cast(type_: Attribute) -> Callable[[Any], Any]:
    """A value rounded (once) to float type `type_`, as host code holds it: a NumPy
    scalar of its width, bf16 as an f32 holding the bf16 value."""
    if isinstance(type_, BFloat16Type):
        return numpy_semantics.bf16_value
    return numpy_dtype(type_).type


def is_narrow(type_: Attribute) -> bool:
    """Whether float ops of `type_` are computed in f64 and rounded once (f16, bf16)."""
    return isinstance(type_, Float16Type | BFloat16Type)


def element_type(type_: Attribute) -> Attribute:
    """The element type of a memref type."""
    memref_type: Any = type_
    element: Attribute = memref_type.element_type
    return element


def wrapper(type_: Attribute) -> Callable[[int], Any]:
    """Wraps a Python int to `type_`'s width in signed two's complement (i1 -> bool)."""
    width = int_width(type_)
    if width == 1:
        return lambda x: bool(x & 1)
    half, mask = 1 << (width - 1), (1 << width) - 1
    return lambda x: ((x + half) & mask) - half


def signed(x: Any) -> int:
    """The signed reading of an integer value (`i1` true is -1)."""
    return -1 if x is True else int(x)


def from_python(type_: Attribute, value: object, what: str) -> Any:
    """A Python or NumPy scalar given by a user as a run-time value of `type_`."""
    check_scalar_input(type_, value, what)
    number: Any = value
    if is_integer_like(type_):
        return wrapper(type_)(int(number))
    assert isinstance(type_, AnyFloat)
    with np.errstate(over="ignore"):
        return float_cast(type_)(number)


def to_numpy_scalar(type_: Attribute, value: Any) -> np.generic:
    """A run-time scalar as the NumPy scalar of its type (how results are returned)."""
    if isinstance(type_, BFloat16Type):
        return np.float32(value)  # a bf16 scalar is returned as the f32 of its value
    dtype = numpy_dtype(type_)
    if dtype.kind == "u":
        return dtype.type(int(value) & ((1 << (dtype.itemsize * 8)) - 1))
    return dtype.type(value)


__all__ = [
    "element_type",
    "float_cast",
    "from_python",
    "is_narrow",
    "signed",
    "to_numpy_scalar",
    "wrapper",
]
