"""Every scalar op gives the same result in both kernel backends and in a NumPy/Python oracle.

Each op runs in a one-op elementwise kernel (`c[i] = op(a[i], b[i])`, tail masked) over
inputs drawn by hypothesis, including NaN, infinities and integer extremes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels.common import KernelError, wrap_int
from devplan.runtime.kernels.compile import compile_kernel

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "i1": np.bool_}
DTYPES["index"] = np.int64


@cache
def elementwise(op_line: str, a_type: str, b_type: str, c_type: str) -> KernelFuncOp:
    """A kernel computing `%z` with `op_line` from `%x = a[i]` and `%y = b[i]` into c[i]."""
    text = f"""
kernel.module @k target #target.target<"cuda"> {{
  kernel.func @op(%a: memref<?x{a_type}>, %b: memref<?x{b_type}>, %c: memref<?x{c_type}>) {{
    %c0 = arith.constant 0 : index
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %i0 = arith.muli %bx, %bd : index
    %i = arith.addi %i0, %tx : index
    %n = memref.dim %a, %c0 : memref<?x{a_type}>
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {{
      %x = memref.load %a[%i] : memref<?x{a_type}>
      %y = memref.load %b[%i] : memref<?x{b_type}>
      {op_line}
      memref.store %z, %c[%i] : memref<?x{c_type}>
    }}
    kernel.return
  }}
}}"""
    module = devplan.parse(text)
    return next(op for op in module.walk() if isinstance(op, KernelFuncOp))


def run_both(func: KernelFuncOp, a: Any, b: Any, c_dtype: Any) -> tuple[Any, Any]:
    outs: list[Any] = []
    for backend in ("numpy", "numba"):
        c = np.zeros(len(a), dtype=c_dtype)
        compile_kernel(func, backend)((((len(a) + 7) // 8), 1, 1), (8, 1, 1), [a, b, c])
        outs.append(c)
    return outs[0], outs[1]


floats32 = hnp.arrays(
    np.float32,
    st.integers(1, 40),
    elements=st.floats(width=32, allow_nan=True, allow_infinity=True),
)
ordinary32 = hnp.arrays(np.float32, st.integers(1, 40), elements=st.floats(-30, 30, width=32))

FLOAT_BINARY: dict[str, Callable[..., Any]] = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum,
    "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
    "math.copysign": np.copysign,
}


@pytest.mark.parametrize("op", sorted(FLOAT_BINARY))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_float_binary_ops_agree_exactly(op: str, data: st.DataObject) -> None:
    a = data.draw(floats32)
    b = data.draw(hnp.arrays(np.float32, len(a), elements=st.floats(width=32)))
    func = elementwise(f"%z = {op} %x, %y : f32", "f32", "f32", "f32")
    got_numpy, got_numba = run_both(func, a, b, np.float32)
    with np.errstate(all="ignore"):
        expected = FLOAT_BINARY[op](a, b)
    np.testing.assert_array_equal(got_numpy, expected)
    np.testing.assert_array_equal(got_numba, expected)


FLOAT_UNARY: dict[str, Callable[..., Any]] = {
    "arith.negf": np.negative,
    "math.absf": np.abs,
    "math.floor": np.floor,
    "math.ceil": np.ceil,
    "math.trunc": np.trunc,
    "math.sqrt": np.sqrt,
    "math.exp": np.exp,
    "math.exp2": np.exp2,
    "math.expm1": np.expm1,
    "math.log": np.log,
    "math.log2": np.log2,
    "math.log10": np.log10,
    "math.log1p": np.log1p,
    "math.rsqrt": lambda x: 1 / np.sqrt(x),
    "math.tanh": np.tanh,
    "math.sin": np.sin,
    "math.cos": np.cos,
    "math.tan": np.tan,
    "math.atan": np.arctan,
}


@pytest.mark.parametrize("op", sorted(FLOAT_UNARY))
@settings(max_examples=20, deadline=None)
@given(a=ordinary32)
def test_float_unary_ops_agree_within_an_ulp_or_two(op: str, a: Any) -> None:
    func = elementwise(f"%z = {op} %x : f32", "f32", "f32", "f32")
    got_numpy, got_numba = run_both(func, a, a, np.float32)
    with np.errstate(all="ignore"):
        expected = FLOAT_UNARY[op](a.astype(np.float64)).astype(np.float32)
    for got in (got_numpy, got_numba):
        np.testing.assert_allclose(got, expected, rtol=3e-7 * 4, atol=1e-6, equal_nan=True)


def trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


INT_BINARY: dict[str, Callable[[int, int, int], int]] = {
    "arith.addi": lambda x, y, w: x + y,
    "arith.subi": lambda x, y, w: x - y,
    "arith.muli": lambda x, y, w: x * y,
    "arith.andi": lambda x, y, w: x & y,
    "arith.ori": lambda x, y, w: x | y,
    "arith.xori": lambda x, y, w: x ^ y,
    "arith.maxsi": lambda x, y, w: max(x, y),
    "arith.minsi": lambda x, y, w: min(x, y),
    "arith.maxui": lambda x, y, w: x if x % 2**w >= y % 2**w else y,
    "arith.minui": lambda x, y, w: x if x % 2**w <= y % 2**w else y,
    "arith.divsi": lambda x, y, w: trunc_div(x, y),
    "arith.remsi": lambda x, y, w: x - trunc_div(x, y) * y,
    "arith.floordivsi": lambda x, y, w: x // y,
    "arith.ceildivsi": lambda x, y, w: -(-x // y),
    "arith.divui": lambda x, y, w: (x % 2**w) // (y % 2**w),
    "arith.remui": lambda x, y, w: (x % 2**w) % (y % 2**w),
}


@pytest.mark.parametrize("type_", ["i32", "index"])
@pytest.mark.parametrize("op", sorted(INT_BINARY))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_integer_binary_ops_agree_and_wrap_at_their_width(
    op: str, type_: str, data: st.DataObject
) -> None:
    width = 32 if type_ == "i32" else 64
    dtype = DTYPES[type_]
    info = np.iinfo(dtype)
    ints = st.integers(int(info.min), int(info.max))
    divisor = ints.filter(lambda v: v != 0) if "div" in op or "rem" in op else ints
    a = data.draw(hnp.arrays(dtype, st.integers(1, 30), elements=ints))
    b = data.draw(hnp.arrays(dtype, len(a), elements=divisor))
    func = elementwise(f"%z = {op} %x, %y : {type_}", type_, type_, type_)
    got_numpy, got_numba = run_both(func, a, b, dtype)
    expected = [
        wrap_int(INT_BINARY[op](int(x), int(y), width), width)
        for x, y in zip(a.tolist(), b.tolist(), strict=True)
    ]
    assert got_numpy.tolist() == expected
    assert got_numba.tolist() == expected


@pytest.mark.parametrize("op", ["shli", "shrsi", "shrui"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_shift_ops_agree_between_backends(op: str, data: st.DataObject) -> None:
    a = data.draw(hnp.arrays(np.int32, st.integers(1, 30)))
    b = data.draw(hnp.arrays(np.int32, len(a), elements=st.integers(0, 31)))
    func = elementwise(f"%z = arith.{op} %x, %y : i32", "i32", "i32", "i32")
    got_numpy, got_numba = run_both(func, a, b, np.int32)
    shifted = {
        "shli": lambda x, y: x << y,
        "shrsi": lambda x, y: x >> y,
        "shrui": lambda x, y: (x % 2**32) >> y,
    }[op]
    expected = [wrap_int(shifted(x, y), 32) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    assert got_numpy.tolist() == expected
    assert got_numba.tolist() == expected


CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


@pytest.mark.parametrize("pred", CMPI)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_cmpi_predicates_agree(pred: str, data: st.DataObject) -> None:
    a = data.draw(hnp.arrays(np.int32, st.integers(1, 30), elements=st.integers(-3, 3)))
    b = data.draw(hnp.arrays(np.int32, len(a), elements=st.integers(-3, 3)))
    func = elementwise(f"%z = arith.cmpi {pred}, %x, %y : i32", "i32", "i32", "i1")
    got_numpy, got_numba = run_both(func, a, b, np.bool_)
    x, y = a.astype(np.int64), b.astype(np.int64)
    if pred[0] == "u":
        x, y = x % 2**32, y % 2**32
    key = pred if pred in ("eq", "ne") else pred[1:]
    expected = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}
    np.testing.assert_array_equal(got_numpy, expected[key])
    np.testing.assert_array_equal(got_numba, expected[key])


CMPF: dict[str, Callable[[Any, Any], Any]] = {
    "false": lambda x, y: np.zeros(len(x), bool),
    "true": lambda x, y: np.ones(len(x), bool),
    "oeq": lambda x, y: x == y,
    "ogt": lambda x, y: x > y,
    "oge": lambda x, y: x >= y,
    "olt": lambda x, y: x < y,
    "ole": lambda x, y: x <= y,
    "one": lambda x, y: (x < y) | (x > y),
    "ord": lambda x, y: ~np.isnan(x) & ~np.isnan(y),
    "ueq": lambda x, y: ~((x < y) | (x > y)),
    "ugt": lambda x, y: ~(x <= y),
    "uge": lambda x, y: ~(x < y),
    "ult": lambda x, y: ~(x >= y),
    "ule": lambda x, y: ~(x > y),
    "une": lambda x, y: x != y,
    "uno": lambda x, y: np.isnan(x) | np.isnan(y),
}


@pytest.mark.parametrize("pred", sorted(CMPF))
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_cmpf_predicates_agree_with_nan(pred: str, data: st.DataObject) -> None:
    few = st.sampled_from([math.nan, -1.0, 0.0, 2.5, math.inf])
    a = data.draw(hnp.arrays(np.float32, st.integers(1, 30), elements=few))
    b = data.draw(hnp.arrays(np.float32, len(a), elements=few))
    func = elementwise(f"%z = arith.cmpf {pred}, %x, %y : f32", "f32", "f32", "i1")
    got_numpy, got_numba = run_both(func, a, b, np.bool_)
    np.testing.assert_array_equal(got_numpy, CMPF[pred](a, b))
    np.testing.assert_array_equal(got_numba, CMPF[pred](a, b))


def unsigned32(a: Any) -> Any:
    return a.astype(np.int64) % 2**32


CASTS = [
    ("%z = arith.sitofp %x : i32 to f32", "i32", "f32", lambda a: a.astype(np.float32)),
    ("%z = arith.uitofp %x : i32 to f32", "i32", "f32", lambda a: unsigned32(a).astype(np.float32)),
    ("%z = arith.extsi %x : i32 to i64", "i32", "i64", lambda a: a.astype(np.int64)),
    ("%z = arith.extui %x : i32 to i64", "i32", "i64", unsigned32),
    ("%z = arith.index_cast %x : i32 to index", "i32", "index", lambda a: a.astype(np.int64)),
    ("%z = arith.trunci %x : i64 to i32", "i64", "i32", lambda a: a.astype(np.int32)),
    ("%z = arith.index_cast %x : index to i32", "index", "i32", lambda a: a.astype(np.int32)),
    ("%z = arith.extf %x : f32 to f64", "f32", "f64", lambda a: a.astype(np.float64)),
    ("%z = arith.truncf %x : f64 to f32", "f64", "f32", lambda a: a.astype(np.float32)),
    ("%z = arith.fptosi %x : f32 to i32", "f32", "i32", lambda a: np.trunc(a).astype(np.int32)),
    ("%z = math.absi %x : i32", "i32", "i32", lambda a: np.abs(a)),
]  # fmt: skip


@pytest.mark.parametrize(("line", "src", "dst", "oracle"), CASTS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_casts_agree_between_backends_and_with_numpy(
    line: str, src: str, dst: str, oracle: Callable[[Any], Any], data: st.DataObject
) -> None:
    dtype = DTYPES[src]
    if src.startswith("f"):
        elements: Any = st.floats(-2e9, 2e9, width=32)
    else:
        elements = None
    a = data.draw(hnp.arrays(dtype, st.integers(1, 30), elements=elements))
    func = elementwise(line, src, src, dst)
    got_numpy, got_numba = run_both(func, a, a, DTYPES[dst])
    np.testing.assert_array_equal(got_numpy, oracle(a))
    np.testing.assert_array_equal(got_numba, oracle(a))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_fptosi_of_nan_or_out_of_range_is_an_error(backend: str) -> None:
    func = elementwise("%z = arith.fptosi %x : f32 to i32", "f32", "f32", "i32")
    a = np.array([1.5, 3e9], dtype=np.float32)
    with pytest.raises(KernelError, match=r"'arith.fptosi' converts NaN .* thread \(1, 0, 0\)"):
        compile_kernel(func, backend)((1, 1, 1), (8, 1, 1), [a, a, np.zeros(2, np.int32)])


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_shift_by_the_width_is_an_error(backend: str) -> None:
    func = elementwise("%z = arith.shli %x, %y : i32", "i32", "i32", "i32")
    a = np.array([1, 1], dtype=np.int32)
    b = np.array([3, 32], dtype=np.int32)
    with pytest.raises(
        KernelError, match=r"by 32 bits or more \(block \(0, 0, 0\), thread \(1, 0, 0\)\)"
    ):
        compile_kernel(func, backend)((1, 1, 1), (2, 1, 1), [a, b, np.zeros(2, np.int32)])


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(1, 300),
    block=st.sampled_from([1, 3, 32, 64, 128]),
    extra_blocks=st.integers(0, 2),
)
def test_select_kernel_agrees_for_any_launch_shape(n: int, block: int, extra_blocks: int) -> None:
    func = elementwise(
        "%lt = arith.cmpf olt, %x, %y : f32\n      %z = arith.select %lt, %x, %y : f32",
        "f32",
        "f32",
        "f32",
    )
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    for backend in ("numpy", "numba"):
        c = np.zeros(n, np.float32)
        grid = (n + block - 1) // block + extra_blocks
        compile_kernel(func, backend)((grid, 1, 1), (block, 1, 1), [a, b, c])
        np.testing.assert_array_equal(c, np.minimum(a, b))


APPROX_BINARY: dict[str, Callable[..., Any]] = {
    "math.powf": np.power,
    "math.atan2": np.arctan2,
}


@pytest.mark.parametrize("op", sorted(APPROX_BINARY))
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_transcendental_binary_ops_agree_within_an_ulp_or_two(op: str, data: st.DataObject) -> None:
    a = data.draw(hnp.arrays(np.float32, st.integers(1, 30), elements=st.floats(0.5, 4, width=32)))
    b = data.draw(hnp.arrays(np.float32, len(a), elements=st.floats(-3, 3, width=32)))
    func = elementwise(f"%z = {op} %x, %y : f32", "f32", "f32", "f32")
    got_numpy, got_numba = run_both(func, a, b, np.float32)
    expected = APPROX_BINARY[op](a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    for got in (got_numpy, got_numba):
        np.testing.assert_allclose(got, expected, rtol=1.2e-6, atol=1e-7)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_fma_multiplies_then_adds(backend: str) -> None:
    func = elementwise("%z = math.fma %x, %y, %x : f32", "f32", "f32", "f32")
    a = np.array([1.5, -2.0, 3.0], dtype=np.float32)
    b = np.array([2.0, 4.0, 0.5], dtype=np.float32)
    c = np.zeros(3, dtype=np.float32)
    compile_kernel(func, backend)((1, 1, 1), (4, 1, 1), [a, b, c])
    np.testing.assert_array_equal(c, a * b + a)
