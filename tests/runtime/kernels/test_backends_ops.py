"""Every scalar op gives the same result in both kernel backends and in a NumPy/Python oracle.

The ops of one family (float binary, float unary, integer binary of one type, compares,
casts, ...) run in one elementwise kernel with one output per op
(`c_k[i] = op_k(a_p[i], b_p[i])`, tail masked, each op reading its own pair p of inputs)
over inputs drawn by hypothesis, including NaN, infinities and integer extremes: a Numba
compile of a small kernel is mostly a fixed cost, so a family costs one compile, not one
per op. The small families of the casts, one a source type, share one kernel, each test
checking its own casts (4 compiles fewer); the large families keep a kernel each: one
kernel of every f32 family compiled slower than the four apart (12.5 against 11.6 CPU-s).
Each op's result is still checked on its own, and a failure names the op (and type).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
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


Op = tuple[str, int, str]
"""One op of a batched kernel: its line (`%z = ...` from `%x` and `%y`), the input pair it
reads `%x` and `%y` from, and its result type."""


@cache
def batched(ops: tuple[Op, ...], inputs: tuple[tuple[str, str], ...]) -> KernelFuncOp:
    """A kernel computing, for each op k, `%z` with its line from `%x = a_p[i]` and
    `%y = b_p[i]` of its input pair p (of the types `inputs[p]`) into `c_k[i]` (`%z` and
    the line's other results are renamed apart)."""
    params = "".join(
        f"%a{p}: memref<?x{a}>, %b{p}: memref<?x{b}>, " for p, (a, b) in enumerate(inputs)
    )
    params += ", ".join(f"%c{k}: memref<?x{t}>" for k, (_, _, t) in enumerate(ops))
    loads = "".join(
        f"      %x{p} = memref.load %a{p}[%i] : memref<?x{a}>\n"
        f"      %y{p} = memref.load %b{p}[%i] : memref<?x{b}>\n"
        for p, (a, b) in enumerate(inputs)
    )
    body = ""
    for k, (line, p, c_type) in enumerate(ops):
        named = line.replace("%z", f"%z{k}").replace("%lt", f"%lt{k}")
        named = named.replace("%x", f"%x{p}").replace("%y", f"%y{p}")
        body += f"      {named}\n      memref.store %z{k}, %c{k}[%i] : memref<?x{c_type}>\n"
    text = f"""
kernel.module @k target #target.target<"cuda"> {{
  kernel.func @op({params}) {{
    %zero = arith.constant 0 : index
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %i0 = arith.muli %bx, %bd : index
    %i = arith.addi %i0, %tx : index
    %n = memref.dim %a0, %zero : memref<?x{inputs[0][0]}>
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {{
{loads}{body}    }}
    kernel.return
  }}
}}"""
    module = devplan.parse(text)
    return next(op for op in module.walk() if isinstance(op, KernelFuncOp))


def elementwise(op_line: str, a_type: str, b_type: str, c_type: str) -> KernelFuncOp:
    """A kernel computing `%z` with `op_line` from `%x = a[i]` and `%y = b[i]` into c[i]."""
    return batched(((op_line, 0, c_type),), ((a_type, b_type),))


def run_all(
    func: KernelFuncOp, pairs: Sequence[tuple[Any, Any]], c_dtypes: Sequence[Any]
) -> dict[str, list[Any]]:
    """Each backend's outputs (one array per op) of `func` launched over the input arrays
    `pairs` (all of one length)."""
    outs: dict[str, list[Any]] = {}
    n = len(pairs[0][0])
    for backend in ("numpy", "numba"):
        cs = [np.zeros(n, dtype=d) for d in c_dtypes]
        args = [array for pair in pairs for array in pair]
        compile_kernel(func, backend)((((n + 7) // 8), 1, 1), (8, 1, 1), [*args, *cs])
        outs[backend] = cs
    return outs


class Family:
    """Ops batched in one kernel: their names (`lines`: name -> op line, each reading the
    input pair `pair_of[name]`, 0 by default), the kernel, and each op's output dtype
    (`c_types`: one type for all, or one per name)."""

    def __init__(
        self,
        lines: dict[str, str],
        inputs: Sequence[tuple[str, str]],
        c_types: dict[str, str] | str,
        pair_of: dict[str, int] | None = None,
    ) -> None:
        self.names = list(lines)
        types = [c_types if isinstance(c_types, str) else c_types[n] for n in self.names]
        pairs = pair_of or {}
        ops = tuple((lines[n], pairs.get(n, 0), t) for n, t in zip(self.names, types, strict=True))
        self.func = batched(ops, tuple(inputs))
        self.dtypes = [DTYPES[t] for t in types]

    def run(self, *pairs: tuple[Any, Any]) -> dict[str, list[Any]]:
        return run_all(self.func, pairs, self.dtypes)

    def run_some(self, names: Sequence[str], *pairs: tuple[Any, Any]) -> dict[str, list[Any]]:
        """Each backend's outputs of the ops `names` only (in that order)."""
        index = [self.names.index(name) for name in names]
        return {backend: [got[k] for k in index] for backend, got in self.run(*pairs).items()}


def family(
    lines: dict[str, str], a_type: str, b_type: str, c_types: dict[str, str] | str
) -> Family:
    """The ops `lines` (name -> op line) of one input pair of types `a_type`, `b_type`."""
    return Family(lines, [(a_type, b_type)], c_types)


def assert_each(
    names: list[str],
    outs: dict[str, list[Any]],
    expected: Callable[[str], Any],
    check: Callable[..., None] = np.testing.assert_array_equal,
    what: str = "",
) -> None:
    """Each op's output on each backend checked against `expected(name)` by
    `check(got, expected, err_msg=...)`; a failure names the op, `what` and the backend."""
    for k, name in enumerate(names):
        want = expected(name)
        for backend, got in outs.items():
            check(got[k], want, err_msg=f"{name} {what} on the {backend} backend")


floats32 = hnp.arrays(
    np.float32,
    st.integers(1, 40),
    elements=st.floats(width=32, allow_nan=True, allow_infinity=True),
)
ordinary32 = hnp.arrays(np.float32, st.integers(1, 40), elements=st.floats(-30, 30, width=32))


def zeros_ordered(pick: Callable[..., Any], larger: bool) -> Callable[..., Any]:
    """`pick` (NumPy's max or min, which leave the sign of two zeros unspecified) with
    -0 below +0, as MLIR's maximumf/minimumf/maxnumf/minnumf order them."""

    def ordered(x: Any, y: Any) -> Any:
        negative = np.signbit(x) & np.signbit(y) if larger else np.signbit(x) | np.signbit(y)
        zero = np.where(negative, np.float32(-0.0), np.float32(0.0))
        return np.where((x == 0) & (y == 0), zero, pick(x, y))

    return ordered


FLOAT_BINARY: dict[str, Callable[..., Any]] = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.maximumf": zeros_ordered(np.maximum, larger=True),
    "arith.minimumf": zeros_ordered(np.minimum, larger=False),
    "arith.maxnumf": zeros_ordered(np.fmax, larger=True),
    "arith.minnumf": zeros_ordered(np.fmin, larger=False),
    "math.copysign": np.copysign,
}


def same_floats_and_zero_signs(got: Any, want: Any, err_msg: str) -> None:
    """Equal values (NaN to NaN), and zeros of the same sign."""
    np.testing.assert_array_equal(got, want, err_msg=err_msg)
    zeros = want == 0
    assert (np.signbit(got[zeros]) == np.signbit(want[zeros])).all(), f"{err_msg}: sign of 0"


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_float_binary_ops_agree_exactly(data: st.DataObject) -> None:
    a = data.draw(floats32)
    b = data.draw(hnp.arrays(np.float32, len(a), elements=st.floats(width=32)))
    lines = {op: f"%z = {op} %x, %y : f32" for op in sorted(FLOAT_BINARY)}
    ops = family(lines, "f32", "f32", "f32")
    outs = ops.run((a, b))
    with np.errstate(all="ignore"):
        assert_each(
            ops.names, outs, lambda op: FLOAT_BINARY[op](a, b), same_floats_and_zero_signs, "f32"
        )


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


@settings(max_examples=30, deadline=None)
@given(a=ordinary32)
def test_float_unary_ops_agree_within_an_ulp_or_two(a: Any) -> None:
    lines = {op: f"%z = {op} %x : f32" for op in sorted(FLOAT_UNARY)}
    ops = family(lines, "f32", "f32", "f32")
    outs = ops.run((a, a))

    def close(got: Any, want: Any, err_msg: str) -> None:
        np.testing.assert_allclose(
            got, want, rtol=3e-7 * 4, atol=1e-6, equal_nan=True, err_msg=err_msg
        )

    with np.errstate(all="ignore"):
        assert_each(
            ops.names,
            outs,
            lambda op: FLOAT_UNARY[op](a.astype(np.float64)).astype(np.float32),
            close,
            "f32",
        )


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


@pytest.mark.parametrize("divides", [False, True], ids=["not-dividing", "dividing"])
@pytest.mark.parametrize("type_", ["i32", "index"])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_integer_binary_ops_agree_and_wrap_at_their_width(
    type_: str, divides: bool, data: st.DataObject
) -> None:
    """The ops that divide get nonzero divisors; the others any operand, 0 included.
    Operands are drawn from the extremes, -1, 0 and 1 as often as from the rest (a
    remainder by -1 is 0), except the minimum divided by -1 (undefined for divsi)."""
    width = 32 if type_ == "i32" else 64
    dtype = DTYPES[type_]
    info = np.iinfo(dtype)
    low, high = int(info.min), int(info.max)
    ints = st.one_of(st.sampled_from([low, low + 1, -1, 0, 1, high]), st.integers(low, high))
    divisor = ints.filter(lambda v: v != 0) if divides else ints
    a = data.draw(hnp.arrays(dtype, st.integers(1, 30), elements=ints))
    b = data.draw(hnp.arrays(dtype, len(a), elements=divisor))
    if divides:
        b[(a == low) & (b == -1)] = 1
    ops = [op for op in sorted(INT_BINARY) if ("div" in op or "rem" in op) == divides]
    lines = {op: f"%z = {op} %x, %y : {type_}" for op in ops}
    ops = family(lines, type_, type_, type_)
    outs = ops.run((a, b))

    def expected(op: str) -> list[int]:
        pairs = zip(a.tolist(), b.tolist(), strict=True)
        return [wrap_int(INT_BINARY[op](int(x), int(y), width), width) for x, y in pairs]

    def same_list(got: Any, want: list[int], err_msg: str) -> None:
        assert got.tolist() == want, err_msg

    assert_each(ops.names, outs, expected, same_list, type_)


SHIFTS: dict[str, Callable[[int, int], int]] = {
    "arith.shli": lambda x, y: x << y,
    "arith.shrsi": lambda x, y: x >> y,
    "arith.shrui": lambda x, y: (x % 2**32) >> y,
}


def shifts() -> Family:
    return family({op: f"%z = {op} %x, %y : i32" for op in SHIFTS}, "i32", "i32", "i32")


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_shift_ops_agree_between_backends(data: st.DataObject) -> None:
    a = data.draw(hnp.arrays(np.int32, st.integers(1, 30)))
    b = data.draw(hnp.arrays(np.int32, len(a), elements=st.integers(0, 31)))
    ops = shifts()
    outs = ops.run((a, b))

    def expected(op: str) -> list[int]:
        pairs = zip(a.tolist(), b.tolist(), strict=True)
        return [wrap_int(SHIFTS[op](x, y), 32) for x, y in pairs]

    def same_list(got: Any, want: list[int], err_msg: str) -> None:
        assert got.tolist() == want, err_msg

    assert_each(ops.names, outs, expected, same_list, "i32")


CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_cmpi_predicates_agree(data: st.DataObject) -> None:
    a = data.draw(hnp.arrays(np.int32, st.integers(1, 30), elements=st.integers(-3, 3)))
    b = data.draw(hnp.arrays(np.int32, len(a), elements=st.integers(-3, 3)))
    lines = {pred: f"%z = arith.cmpi {pred}, %x, %y : i32" for pred in CMPI}
    ops = family(lines, "i32", "i32", "i1")
    outs = ops.run((a, b))

    def expected(pred: str) -> Any:
        x, y = a.astype(np.int64), b.astype(np.int64)
        if pred[0] == "u":
            x, y = x % 2**32, y % 2**32
        key = pred if pred in ("eq", "ne") else pred[1:]
        by_key = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}
        return by_key[key]

    assert_each(ops.names, outs, expected, what="cmpi i32")


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


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_cmpf_predicates_agree_with_nan(data: st.DataObject) -> None:
    few = st.sampled_from([math.nan, -1.0, 0.0, 2.5, math.inf])
    a = data.draw(hnp.arrays(np.float32, st.integers(1, 30), elements=few))
    b = data.draw(hnp.arrays(np.float32, len(a), elements=few))
    lines = {pred: f"%z = arith.cmpf {pred}, %x, %y : f32" for pred in sorted(CMPF)}
    ops = family(lines, "f32", "f32", "i1")
    outs = ops.run((a, b))
    assert_each(ops.names, outs, lambda pred: CMPF[pred](a, b), what="cmpf f32")


def unsigned32(a: Any) -> Any:
    return a.astype(np.int64) % 2**32


CAST_LIST = [
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

CASTS: dict[str, dict[str, tuple[str, str, Callable[[Any], Any]]]] = {}
"""The casts (and `math.absi`) by source type: op line -> (op line, result type, oracle)."""
for _line, _src, _dst, _oracle in CAST_LIST:
    CASTS.setdefault(_src, {})[_line] = (_line, _dst, _oracle)


SOURCES = sorted(CASTS)


def casts() -> Family:
    """The casts from every source type in one kernel (input pair p holds `SOURCES[p]`
    values): the tests of each source share its compile, each checking its own casts."""
    lines = {n: op[0] for src in SOURCES for n, op in CASTS[src].items()}
    c_types = {n: op[1] for src in SOURCES for n, op in CASTS[src].items()}
    pair_of = {n: p for p, src in enumerate(SOURCES) for n in CASTS[src]}
    return Family(lines, [(src, src) for src in SOURCES], c_types, pair_of)


def cast_inputs(src: str, a: Any) -> list[tuple[Any, Any]]:
    """`a` as the input of the casts from `src`, zeros as the others'."""
    return [(a, a) if s == src else (np.zeros(len(a), DTYPES[s]),) * 2 for s in SOURCES]


@pytest.mark.parametrize("src", SOURCES)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_casts_agree_between_backends_and_with_numpy(src: str, data: st.DataObject) -> None:
    dtype = DTYPES[src]
    if src.startswith("f"):
        elements: Any = st.floats(-2e9, 2e9, width=32)
    else:
        elements = None
    a = data.draw(hnp.arrays(dtype, st.integers(1, 30), elements=elements))
    names = list(CASTS[src])
    outs = casts().run_some(names, *cast_inputs(src, a))
    assert_each(names, outs, lambda name: CASTS[src][name][2](a), what=f"from {src}")


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_fptosi_of_nan_or_out_of_range_is_an_error(backend: str) -> None:
    ops = casts()
    inputs = cast_inputs("f32", np.array([1.5, 3e9], dtype=np.float32))
    outs = [np.zeros(2, d) for d in ops.dtypes]
    args = [array for pair in inputs for array in pair]
    with pytest.raises(KernelError, match=r"'arith.fptosi' converts NaN .* thread \(1, 0, 0\)"):
        compile_kernel(ops.func, backend)((1, 1, 1), (8, 1, 1), [*args, *outs])


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_shift_by_the_width_is_an_error(backend: str) -> None:
    ops = shifts()
    a = np.array([1, 1], dtype=np.int32)
    b = np.array([3, 32], dtype=np.int32)
    outs = [np.zeros(2, d) for d in ops.dtypes]
    with pytest.raises(
        KernelError,
        match=r"'arith.shli' .*by 32 bits or more \(block \(0, 0, 0\), thread \(1, 0, 0\)\)",
    ):
        compile_kernel(ops.func, backend)((1, 1, 1), (2, 1, 1), [a, b, *outs])


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


def approx_and_fma() -> Family:
    """The transcendental binary ops and `math.fma` (of x, y, x) in one kernel."""
    lines = {op: f"%z = {op} %x, %y : f32" for op in sorted(APPROX_BINARY)}
    lines["math.fma"] = "%z = math.fma %x, %y, %x : f32"
    return family(lines, "f32", "f32", "f32")


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_transcendental_binary_ops_agree_within_an_ulp_or_two(data: st.DataObject) -> None:
    a = data.draw(hnp.arrays(np.float32, st.integers(1, 30), elements=st.floats(0.5, 4, width=32)))
    b = data.draw(hnp.arrays(np.float32, len(a), elements=st.floats(-3, 3, width=32)))
    ops = approx_and_fma()
    outs = ops.run((a, b))
    names = ops.names[: len(APPROX_BINARY)]  # fma is checked exactly below

    def close(got: Any, want: Any, err_msg: str) -> None:
        np.testing.assert_allclose(got, want, rtol=1.2e-6, atol=1e-7, err_msg=err_msg)

    assert_each(
        names,
        outs,
        lambda op: APPROX_BINARY[op](a.astype(np.float64), b.astype(np.float64)).astype(np.float32),
        close,
        "f32",
    )


def test_fma_multiplies_then_adds() -> None:
    a = np.array([1.5, -2.0, 3.0], dtype=np.float32)
    b = np.array([2.0, 4.0, 0.5], dtype=np.float32)
    outs = approx_and_fma().run_some(["math.fma"], (a, b))
    assert_each(["math.fma"], outs, lambda _: a * b + a)
