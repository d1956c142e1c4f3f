"""How values of MLIR's scalar types are held in NumPy, and which Python scalars may stand for
them.

These are facts about the types alone, shared by the runtime (which takes and gives values
at `devplan.execute`'s boundary) and by the oracle (which takes the same inputs and must
refuse the same ones, with the same words):

* `numpy_dtype`: the dtype memory holds elements of a type in (`index` is `int64`, `i1`
  is `bool`, `ui8` is `uint8`, bf16 its 16-bit pattern);
* `dtype_of`: the same for the element types a generated kernel may hold (signless
  integers as signed), None for the others, for lower-to-device and the kernel backends;
* `check_scalar_input`: whether a Python or NumPy scalar given by a user is a value of a
  type: an integer of the type's range for `index` and integer types, a finite number that
  does not round to infinity (or an infinity or NaN) for float types.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

from ..diagnostics import DevplanError


def numpy_dtype(type_: Attribute) -> np.dtype[Any]:
    """The NumPy dtype of an element or scalar type (`index` is `int64`, `i1` is `bool`)."""
    if isinstance(type_, IndexType):
        return np.dtype(np.int64)
    if isinstance(type_, IntegerType):
        width = type_.bitwidth
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            signedness = cast(object, type_.signedness.data)  # pyright: ignore[reportUnknownMemberType]
            signed = signedness is not Signedness.UNSIGNED
            return np.dtype(f"{'i' if signed else 'u'}{width // 8}")
    if isinstance(type_, Float16Type):
        return np.dtype(np.float16)
    if isinstance(type_, BFloat16Type):
        return np.dtype(np.uint16)  # NumPy has no bf16: memory holds its bit pattern
    if isinstance(type_, Float32Type):
        return np.dtype(np.float32)
    if isinstance(type_, Float64Type):
        return np.dtype(np.float64)
    raise DevplanError(f"error: the executor does not support values of type {type_}")


def int_width(type_: Attribute) -> int:
    """Bit width of an integer-like type (`index` counts as 64)."""
    width = integer_width(type_)
    if width is None:
        raise DevplanError(f"error: expected an integer or index type, got {type_}")
    return width


def integer_width(type_: Attribute) -> int | None:
    """Bit width of an integer-like type (`index` counts as 64), None for other types."""
    if isinstance(type_, IndexType):
        return 64
    if isinstance(type_, IntegerType):
        return type_.bitwidth
    return None


INT_DTYPES: dict[int, np.dtype[np.generic]] = {
    1: np.dtype(np.bool_),
    8: np.dtype(np.int8),
    16: np.dtype(np.int16),
    32: np.dtype(np.int32),
    64: np.dtype(np.int64),
}
"""The dtype of integers of each width NumPy holds natively."""


def dtype_of(type_: Attribute) -> np.dtype[np.generic] | None:
    """The NumPy dtype of memory holding a scalar type in a kernel, None when unsupported
    (bf16, which NumPy lacks, is held as its uint16 bit pattern)."""
    if isinstance(type_, BFloat16Type):
        return np.dtype(np.uint16)
    width = integer_width(type_)
    if width is not None:
        return INT_DTYPES.get(width)
    if isinstance(type_, Float16Type):
        return np.dtype(np.float16)
    if isinstance(type_, Float32Type):
        return np.dtype(np.float32)
    if isinstance(type_, Float64Type):
        return np.dtype(np.float64)
    return None


def is_integer_like(type_: Attribute) -> bool:
    """Whether `type_` is `index` or an integer type."""
    return isinstance(type_, IndexType | IntegerType)


BF16_OVERFLOW = (2 - 2.0**-8) * 2.0**127
"""The smallest magnitude an f64 rounds to infinity at in bf16: halfway between bf16's
largest finite value and 2^128, where ties to even go up."""


def check_scalar_input(type_: Attribute, value: object, what: str) -> None:
    """Raise a `DevplanError` naming `what` unless `value`, a Python or NumPy scalar given
    by a user, is a value of scalar type `type_`."""
    got = f"got {type(value).__name__} {value!r}"
    number: Any = value
    if is_integer_like(type_):
        width = int_width(type_)
        if not (_is_number(value, floats=False) or (width == 1 and _is_bool(value))):
            raise DevplanError(f"error: {what} is {type_}, {got}")
        v = int(number)
        lo, hi = _input_range(type_, width)
        if not lo <= v <= hi:
            raise DevplanError(
                f"error: {what} is {type_}, and {v} does not fit in it (valid: {lo} to {hi})"
            )
        return
    if isinstance(type_, AnyFloat):
        if not _is_number(value, floats=True):
            raise DevplanError(f"error: {what} is {type_}, {got}")
        if _is_finite(number) and _overflows(type_, number):
            # A finite value beyond the type's range would silently become infinity.
            raise DevplanError(
                f"error: {what} is {type_}, and {_number_text(number)} does not fit in it"
            )
        return
    raise DevplanError(f"error: {what} has type {type_}, which the executor cannot pass in")


def _overflows(type_: Attribute, number: Any) -> bool:
    """Whether finite `number` rounds to infinity in float type `type_` (a bf16 value is
    rounded from the f64 nearest it, as the runtime rounds it)."""
    try:
        with np.errstate(over="ignore"):
            if isinstance(type_, BFloat16Type):
                return abs(float(number)) >= BF16_OVERFLOW
            return not math.isfinite(numpy_dtype(type_).type(number))
    except OverflowError:  # an int beyond every float (10**400)
        return True


def _is_bool(value: object) -> bool:
    return isinstance(value, bool | np.bool_)


def _is_number(value: object, floats: bool) -> bool:
    if _is_bool(value):
        return False
    if floats:
        return isinstance(value, int | float | np.integer | np.floating)
    return isinstance(value, int | np.integer)


def _input_range(type_: Attribute, width: int) -> tuple[int, int]:
    """The values (lowest, highest) a scalar input of integer-like `type_` may take: `i1`
    is 0 or 1, a signless integer (and `index`) its bits read as signed or unsigned,
    `si8` and `ui8` their own ranges (-1 is no ui8; 200 is no si8)."""
    if width == 1:
        return 0, 1
    if isinstance(type_, IntegerType):
        low, high = type_.value_range()
        return low, high - 1
    return -(1 << (width - 1)), (1 << width) - 1


def _is_finite(number: Any) -> bool:
    """Whether a Python or NumPy number is finite (every int is, even beyond a float)."""
    return isinstance(number, int | np.integer) or math.isfinite(number)


def _number_text(number: Any) -> str:
    """`number` as a message quotes it: an int of hundreds of digits by its first ones."""
    text = repr(number)
    digits = text.lstrip("-")
    if isinstance(number, int) and len(digits) > 24:
        text = f"{text[: len(text) - len(digits) + 6]}... (an integer of {len(digits)} digits)"
    return text


__all__ = [
    "INT_DTYPES",
    "check_scalar_input",
    "dtype_of",
    "int_width",
    "integer_width",
    "is_integer_like",
    "numpy_dtype",
]
