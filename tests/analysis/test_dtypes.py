"""`devplan.analysis.dtypes`: NumPy dtypes of MLIR types, and which user scalars fit them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IndexType, IntegerType

from devplan.analysis.dtypes import BF16_OVERFLOW, check_scalar_input, numpy_dtype
from devplan.diagnostics import DevplanError
from devplan.runtime import semantics


def test_numpy_dtype_holds_index_as_int64_i1_as_bool_and_bf16_as_its_bits() -> None:
    assert numpy_dtype(IndexType()) == np.int64
    assert numpy_dtype(IntegerType(1)) == np.bool_
    assert numpy_dtype(BFloat16Type()) == np.uint16


def test_an_integer_outside_the_type_is_refused_with_the_valid_range() -> None:
    with pytest.raises(DevplanError, match=r"256 does not fit in it \(valid: -128 to 255\)"):
        check_scalar_input(IntegerType(8), 256, "x")
    check_scalar_input(IntegerType(8), 200, "x")  # a signless i8 reads 200 as -56


def test_a_finite_float_that_rounds_to_infinity_is_refused() -> None:
    with pytest.raises(DevplanError, match="65520 does not fit"):
        check_scalar_input(Float16Type(), 65520, "x")
    check_scalar_input(Float16Type(), 65519, "x")
    check_scalar_input(Float32Type(), math.inf, "x")
    with pytest.raises(DevplanError, match="an integer of 401 digits"):
        check_scalar_input(Float32Type(), 10**400, "x")


@pytest.mark.parametrize("steps", [-2, -1, 0, 1, 2])
def test_bf16_refuses_exactly_what_the_runtime_rounds_to_infinity(steps: int) -> None:
    x = float(BF16_OVERFLOW)
    for _ in range(abs(steps)):
        x = math.nextafter(x, math.inf if steps > 0 else -math.inf)
    overflows = math.isinf(semantics.bf16_value(x))
    try:
        check_scalar_input(BFloat16Type(), x, "x")
        refused = False
    except DevplanError:
        refused = True
    assert refused == overflows
