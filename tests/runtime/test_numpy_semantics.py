"""runtime/numpy_semantics.py computes what runtime/semantics.py's compiled definitions do,
bit for bit: every binary integer op and `int_fault` (every op code and flag set) on all
pairs of boundary values of each width, the overflow tests also against exact Python
integers, and the float min/max ops on zeros of both signs, NaNs and infinities."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from devplan.runtime import numpy_semantics, semantics

WIDTHS = (1, 8, 16, 32, 64)


def boundary_values(width: int) -> list[int]:
    """Signed-form values where integer ops change behaviour: 0, ±1, ±2, the extremes and
    their neighbours, the powers of two around half the width, and -1 >> 1 patterns."""
    if width == 1:
        return [0, -1]
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    half = 1 << (width // 2)
    raw = [0, 1, 2, 3, -1, -2, -3, lo, lo + 1, lo + 2, hi, hi - 1, hi - 2,
           half, half - 1, half + 1, -half, -half + 1, -half - 1, width - 1, width, width + 1,
           hi // 3, lo // 3, 7, -7]  # fmt: skip
    return sorted({v for v in raw if lo <= v <= hi})


def pairs(width: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    values = boundary_values(width)
    xs, ys = zip(*itertools.product(values, values), strict=True)
    return np.array(xs, dtype=np.int64), np.array(ys, dtype=np.int64)


@pytest.mark.parametrize("width", WIDTHS)
def test_binary_integer_ops_match_semantics(width: int) -> None:
    xs, ys = pairs(width)
    for name, fn in numpy_semantics.INT_BINARY.items():
        expected = semantics.int_ufunc(name)(xs, ys, width)
        got = fn(xs, ys, width)
        wrong = np.flatnonzero(got != expected)
        assert not wrong.size, (
            f"{name} i{width}: ({xs[wrong[0]]}, {ys[wrong[0]]}) gives {got[wrong[0]]}, "
            f"semantics {expected[wrong[0]]}"
        )
        # a uniform (0-d) operand gives the same values
        assert int(fn(int(xs[-1]), int(ys[-1]), width)) == int(expected[-1])


@pytest.mark.parametrize("width", WIDTHS)
def test_int_fault_matches_semantics_and_exact_overflow(width: int) -> None:
    xs, ys = pairs(width)
    for code, op in enumerate(semantics.FAULTING_OPS):
        for flags in (0, 1, 2, 3):
            expected = semantics.int_ufunc("int_fault")(code, flags, xs, ys, width)
            got = numpy_semantics.int_fault(code, flags, xs, ys, width)
            wrong = np.flatnonzero(got != expected)
            assert not wrong.size, (
                f"int_fault {op} flags {flags} i{width}: ({xs[wrong[0]]}, {ys[wrong[0]]}) "
                f"gives {got[wrong[0]]}, semantics {expected[wrong[0]]}"
            )
        if op not in ("addi", "subi", "muli", "shli"):
            continue
        for flag, code_of_flag, kind in (("nsw", 1, 4), ("nuw", 2, 5)):
            got = numpy_semantics.int_fault(code, code_of_flag, xs, ys, width)
            exact = [semantics.exact_overflows(op, flag, int(x), int(y), width)
                     for x, y in zip(xs, ys, strict=True)]  # fmt: skip
            overflowed = (got == kind).tolist()
            assert overflowed == exact, f"{op} {flag} i{width} against exact integers"


def test_every_sign_case_of_a_64_bit_multiply_overflow_is_found() -> None:
    lo, hi = -(2**63), 2**63 - 1
    cases = [(2**32, 2**32), (-(2**32), 2**32), (2**32, -(2**32)), (-(2**32), -(2**32)),
             (-1, lo), (lo, -1), (2, lo), (lo, 2), (3, hi // 3 + 1), (-3, hi // 3 + 1)]  # fmt: skip
    xs = np.array([x for x, _ in cases], dtype=np.int64)
    ys = np.array([y for _, y in cases], dtype=np.int64)
    kinds = numpy_semantics.int_fault(semantics.fault_code("muli"), 1, xs, ys, 64)
    assert kinds.tolist() == [4] * len(cases)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_min_max_match_semantics(dtype: type[np.floating[Any]]) -> None:
    nan = np.array(np.nan, dtype=dtype)
    other_nan = (nan.view(np.uint32 if dtype is np.float32 else np.uint64) ^ 1).view(dtype)
    values = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, nan, other_nan, 3.5]
    xs = np.array([x for x in values for _ in values], dtype=dtype)
    ys = np.array([y for _ in values for y in values], dtype=dtype)
    bits = np.uint32 if dtype is np.float32 else np.uint64
    for name, fn in numpy_semantics.FLOAT_BINARY.items():
        with np.errstate(invalid="ignore"):  # (the compiled ufunc warns on NaN operands)
            expected = semantics.ufunc(name)(xs, ys)
        got = fn(xs, ys)
        assert got.dtype == expected.dtype
        assert got.view(bits).tolist() == expected.view(bits).tolist(), name
