"""The NumPy dtypes of scalar types in memory: what a buffer of a memref's element type
holds, for lower-to-device (which element types a generated kernel may hold) and for
the kernel backends (the arrays they allocate and read).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
)
from xdsl.ir import Attribute

INT_DTYPES: dict[int, np.dtype[np.generic]] = {
    1: np.dtype(np.bool_),
    8: np.dtype(np.int8),
    16: np.dtype(np.int16),
    32: np.dtype(np.int32),
    64: np.dtype(np.int64),
}
"""The dtype of integers of each width NumPy holds natively."""


def int_width(type_: Attribute) -> int | None:
    """Bit width of an integer-like type (`index` is 64 bits), None for other types."""
    if isinstance(type_, IndexType):
        return 64
    if isinstance(type_, IntegerType):
        return type_.bitwidth
    return None


def dtype_of(type_: Attribute) -> np.dtype[np.generic] | None:
    """The NumPy dtype of memory holding a scalar type, None when unsupported (bf16, which
    NumPy lacks, is held as its uint16 bit pattern)."""
    if isinstance(type_, BFloat16Type):
        return np.dtype(np.uint16)
    width = int_width(type_)
    if width is not None:
        return INT_DTYPES.get(width)
    if isinstance(type_, Float16Type):
        return np.dtype(np.float16)
    if isinstance(type_, Float32Type):
        return np.dtype(np.float32)
    if isinstance(type_, Float64Type):
        return np.dtype(np.float64)
    return None
