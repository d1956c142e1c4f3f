"""runtime/numpy_semantics.py computes what runtime/semantics.py's compiled definitions do,
bit for bit: every binary integer op and `int_fault` (every op code and flag set) on all
pairs of boundary values of each width, the overflow tests also against exact Python
integers, the float min/max ops on zeros of both signs, NaNs and infinities, and the f32
`fma` on every triple of boundary values and on random bit patterns and near
cancellations, NaN payloads included; the transcendentals it computes by calling the C
library (and `rsqrt`) on boundary values, random bit patterns and values of every
magnitude, in f32 and f64."""

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


F32_BOUNDARY = [0.0, -0.0, 1.0, -1.0, 3.0, 1 / 3, np.inf, -np.inf, np.nan, 2.0**64, 2.0**-75,
                1 + 2.0**-23, 1 - 2.0**-24, 0.5 + 2.0**-24, 2.0**-12,
                float(np.finfo(np.float32).max), -float(np.finfo(np.float32).max),
                float(np.finfo(np.float32).tiny), float(np.finfo(np.float32).smallest_subnormal),
                -float(np.finfo(np.float32).smallest_subnormal)]  # fmt: skip


def _f32_fma_cases() -> tuple[np.ndarray[Any, Any], ...]:
    """Every triple of boundary values; random bit patterns (NaNs with payloads, huge and
    tiny values); products cancelled by an addend within a few ulps (where one rounding
    and two differ)."""
    boundary = np.array(F32_BOUNDARY, dtype=np.float32)
    triples = [
        np.array(t, dtype=np.float32)
        for t in zip(*itertools.product(boundary, repeat=3), strict=True)
    ]
    rng = np.random.default_rng(23)
    bits = rng.integers(0, 2**32, (3, 20000), dtype=np.uint64).astype(np.uint32).view(np.float32)
    a, b = rng.standard_normal((2, 20000)).astype(np.float32)
    near = -(a.astype(np.float64) * b) * (1 + rng.standard_normal(20000) * 2.0**-22)
    c = near.astype(np.float32)
    return tuple(np.concatenate(parts) for parts in zip(triples, bits, (a, b, c), strict=True))


def test_f32_fma_matches_semantics_bit_for_bit() -> None:
    a, b, c = _f32_fma_cases()
    with np.errstate(invalid="ignore", over="ignore"):  # (the compiled ufunc warns)
        expected = semantics.ufunc("math.fma")(a, b, c)
    got = numpy_semantics.fma_f32(a, b, c)
    assert got.dtype == np.float32
    wrong = np.flatnonzero(got.view(np.uint32) != expected.view(np.uint32))
    assert not wrong.size, (
        f"fma({a[wrong[0]]!r}, {b[wrong[0]]!r}, {c[wrong[0]]!r}) gives {got[wrong[0]]!r}, "
        f"semantics {expected[wrong[0]]!r}"
    )
    # uniform (0-d) operands give an f32 scalar
    one = numpy_semantics.fma_f32(
        np.float32(1 + 2.0**-23), np.float32(1 - 2.0**-23), np.float32(-1)
    )
    assert type(one) is np.float32
    assert one == np.float32(-(2.0**-46))


def test_f32_fma_of_a_few_lanes_at_a_time_matches_semantics_bit_for_bit() -> None:
    """Kernels call fma on a block's lanes: the calls whose f64 sums need no rounding to
    odd take a shorter path. Products at an f32 midpoint with an addend below f64's
    precision are where that path alone would round wrongly."""
    a, b, c = _f32_fma_cases()
    step = np.float32(1 + 2.0**-12)  # step * step is halfway between two f32 values
    tiny = [2.0**-60, -(2.0**-60), 2.0**-100, -(2.0**-100), 0.0]
    a = np.concatenate([a, np.full(len(tiny), step), np.full(len(tiny), -step)])
    b = np.concatenate([b, np.full(2 * len(tiny), step)])
    c = np.concatenate([c, np.array(tiny * 2, dtype=np.float32)])
    with np.errstate(invalid="ignore", over="ignore"):
        expected = semantics.ufunc("math.fma")(a, b, c)
    lanes = 4
    got = np.concatenate([
        np.atleast_1d(numpy_semantics.fma_f32(a[i : i + lanes], b[i : i + lanes], c[i : i + lanes]))
        for i in range(0, len(a), lanes)
    ])  # fmt: skip
    wrong = np.flatnonzero(got.view(np.uint32) != expected.view(np.uint32))
    assert not wrong.size, (
        f"fma({a[wrong[0]]!r}, {b[wrong[0]]!r}, {c[wrong[0]]!r}) gives {got[wrong[0]]!r}, "
        f"semantics {expected[wrong[0]]!r}"
    )


def _unary_cases(dtype: type[np.floating[Any]]) -> np.ndarray[Any, Any]:
    """Boundary values, random bit patterns (NaNs with payloads, subnormals, huge values)
    and normal values of magnitudes 2^-30 to 2^30, both signs."""
    bits, uint = (32, np.uint32) if dtype is np.float32 else (64, np.uint64)
    rng = np.random.default_rng(29)
    patterns = rng.integers(0, 2**bits, 4000, dtype=np.uint64).astype(uint).view(dtype)
    scaled = rng.standard_normal(4000) * np.exp2(rng.integers(-30, 31, 4000))
    return np.concatenate([np.array(F32_BOUNDARY, dtype=dtype), patterns, scaled.astype(dtype)])


@pytest.mark.parametrize("f32", [True, False], ids=["f32", "f64"])
def test_transcendentals_through_the_c_library_give_the_bits_of_semantics(f32: bool) -> None:
    """Every op of `LIBM_UNARY` one C call an element, `rsqrt` and the f32 `exp` in NumPy:
    the compiled definitions' results, bit for bit, on 0-d operands as on arrays."""
    dtype = np.float32 if f32 else np.float64
    x = _unary_cases(dtype)
    view = np.uint32 if f32 else np.uint64
    assert numpy_semantics.libm_unary("math.log", f32=False) is None  # Numba's NaN sign
    assert numpy_semantics.libm_unary("math.exp", f32=True) is None  # arithmetic in f32
    names = [
        n for n, symbols in sorted(numpy_semantics.LIBM_UNARY.items()) if symbols[0 if f32 else 1]
    ]
    in_numpy = ["math.rsqrt", "math.exp"] if f32 else ["math.rsqrt"]
    for name in [*names, *in_numpy]:
        compute = (
            numpy_semantics.libm_unary(name, f32)
            if name in names
            else numpy_semantics.float_function(name, f32)
        )
        assert compute is not None, name
        with np.errstate(all="ignore"):
            expected = semantics.ufunc(name)(x)
            got = compute(x)
            one = compute(dtype(0.75))
            one_expected = dtype(semantics.ufunc(name)(dtype(0.75)))
        assert got.dtype == dtype, name
        wrong = np.flatnonzero(got.view(view) != expected.view(view))
        assert not wrong.size, (
            f"{name}({x[wrong[0]]!r}) gives {got[wrong[0]]!r}, semantics {expected[wrong[0]]!r}"
        )
        assert type(one) is dtype, name
        assert one.view(view) == one_expected.view(view), name


def test_f32_exp_in_numpy_gives_the_bits_of_semantics_across_the_whole_range() -> None:
    """`exp_f32` against the compiled definition on one f32 bit pattern in 4099 (every
    exponent, both signs, NaNs and infinities): the two compute one f64 method in the
    same operations, so every result has the same bits."""
    x = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        expected = semantics.ufunc("math.exp")(x)
        got = numpy_semantics.exp_f32(x)
    wrong = np.flatnonzero(got.view(np.uint32) != expected.view(np.uint32))
    assert not wrong.size, (
        f"exp({x[wrong[0]]!r}) gives {got[wrong[0]]!r}, semantics {expected[wrong[0]]!r}"
    )
