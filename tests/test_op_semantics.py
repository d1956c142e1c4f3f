"""Each arith/math semantics bug of the op differential test, fixed on every path.

Every test runs one op body over a few values three ways — host code (a loop over
memrefs), the NumPy kernel backend and the Numba kernel backend (one thread per value) —
and checks each against the LangRef's result. Bodies name their operands `%a`, `%b`, ...
and their results `%r0`, `%r1`, ...; each helper compiles a body once for all its values.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import devplan
from devplan.diagnostics import DevplanError
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels import KernelError, compile_kernel

NP = {
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "index": np.int64,
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
}
BACKENDS = ("numpy", "numba")


def _kernel(body: str, ins: list[str], outs: list[str]) -> KernelFuncOp:
    names = "abcdefgh"
    params = [f"%A{k}: memref<?x{t}>" for k, t in enumerate(ins)]
    params += [f"%O{k}: memref<?x{t}>" for k, t in enumerate(outs)]
    loads = "\n".join(
        f"      %{names[k]} = memref.load %A{k}[%i] : memref<?x{t}>" for k, t in enumerate(ins)
    )
    stores = "\n".join(
        f"      memref.store %r{k}, %O{k}[%i] : memref<?x{t}>" for k, t in enumerate(outs)
    )
    text = f"""
kernel.module @k target #target.target<"cuda"> {{
  kernel.func @op({", ".join(params)}) {{
    %c0 = arith.constant 0 : index
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %i0 = arith.muli %bx, %bd : index
    %i = arith.addi %i0, %tx : index
    %n = memref.dim %O0, %c0 : memref<?x{outs[0]}>
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {{
{loads}
      {body}
{stores}
    }}
    kernel.return
  }}
}}"""
    module = devplan.parse(text)
    return next(op for op in module.walk() if isinstance(op, KernelFuncOp))


def _host(body: str, ins: list[str], outs: list[str]) -> Any:
    names = "abcdefgh"
    params = [f"%A{k}: memref<?x{t}>" for k, t in enumerate(ins)]
    params += [f"%O{k}: memref<?x{t}>" for k, t in enumerate(outs)]
    loads = "\n".join(
        f"    %{names[k]} = memref.load %A{k}[%i] : memref<?x{t}>" for k, t in enumerate(ins)
    )
    stores = "\n".join(
        f"    memref.store %r{k}, %O{k}[%i] : memref<?x{t}>" for k, t in enumerate(outs)
    )
    results = ", ".join(f"memref<?x{t}>" for t in outs)
    text = f"""
func.func @main({", ".join(params)}) -> ({results}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %O0, %c0 : memref<?x{outs[0]}>
  scf.for %i = %c0 to %n step %c1 {{
{loads}
    {body}
{stores}
  }}
  func.return {", ".join(f"%O{k}" for k in range(len(outs)))} : {results}
}}"""
    return devplan.parse(text)


def run_all(body: str, ins: dict[str, list[Any]], outs: list[str]) -> dict[str, list[Any]]:
    """The results of `body` on host code and on both kernel backends, by path."""
    types = list(ins)
    arrays = [np.array(values, dtype=NP[t.split(":")[0]]) for t, values in ins.items()]
    types = [t.split(":")[0] for t in types]
    n = len(arrays[0])
    results: dict[str, list[Any]] = {}
    host = devplan.execute(_host(body, types, outs), [*arrays, *(np.zeros(n, NP[t]) for t in outs)])
    results["host"] = list(host.outputs)
    func = _kernel(body, types, outs)
    for backend in BACKENDS:
        out = [np.zeros(n, NP[t]) for t in outs]
        compile_kernel(func, backend)(((n + 3) // 4, 1, 1), (4, 1, 1), [*arrays, *out])
        results[backend] = out
    return results


def errors_of(body: str, ins: dict[str, list[Any]], outs: list[str]) -> dict[str, str]:
    """The error message of each path running `body` (each must fail)."""
    types = [t.split(":")[0] for t in ins]
    arrays = [np.array(v, dtype=NP[t]) for t, v in zip(types, ins.values(), strict=True)]
    n = len(arrays[0])
    messages: dict[str, str] = {}
    with pytest.raises(DevplanError) as host:
        devplan.execute(_host(body, types, outs), [*arrays, *(np.zeros(n, NP[t]) for t in outs)])
    messages["host"] = str(host.value)
    func = _kernel(body, types, outs)
    for backend in BACKENDS:
        out = [np.zeros(n, NP[t]) for t in outs]
        with pytest.raises(KernelError) as kernel:
            compile_kernel(func, backend)(((n + 3) // 4, 1, 1), (4, 1, 1), [*arrays, *out])
        messages[backend] = str(kernel.value)
    return messages


def bits(x: Any) -> Any:
    a = np.asarray(x)
    return a.view(f"u{a.dtype.itemsize}")


def assert_everywhere(results: dict[str, list[Any]], k: int, expected: list[Any]) -> None:
    """Result `k` of every path is bitwise `expected` (NaNs compare as NaN)."""
    for path, outs in results.items():
        got = np.asarray(outs[k])
        want = np.array(expected, dtype=got.dtype)
        same = bits(got) == bits(want)
        if got.dtype.kind == "f":
            same |= np.isnan(got) & np.isnan(want)
        assert same.all(), f"{path}: {got!r} != {want!r}"


# ---------------------------------------------------------------- silent wrong values


def test_signed_comparison_and_sitofp_read_i1_true_as_minus_one() -> None:
    body = """%r0 = arith.cmpi slt, %a, %b : i1
    %r1 = arith.cmpi sge, %a, %b : i1
    %r2 = arith.sitofp %a : i1 to f32
    %r3 = arith.uitofp %a : i1 to f32"""
    results = run_all(
        body, {"i1": [True, False, True], "i1:b": [False, True, True]}, ["i1", "i1", "f32", "f32"]
    )
    assert_everywhere(results, 0, [True, False, False])
    assert_everywhere(results, 1, [False, True, True])
    assert_everywhere(results, 2, [-1.0, 0.0, -1.0])
    assert_everywhere(results, 3, [1.0, 0.0, 1.0])


def test_i1_arithmetic_wraps_at_one_bit() -> None:
    body = """%r0 = arith.addi %a, %b : i1
    %r1 = arith.muli %a, %b : i1
    %r2 = arith.maxsi %a, %b : i1
    %r3 = arith.maxui %a, %b : i1
    %r4 = arith.index_cast %a : i1 to index"""
    results = run_all(
        body,
        {"i1": [True, True, False], "i1:b": [True, False, False]},
        ["i1", "i1", "i1", "i1", "index"],
    )
    assert_everywhere(results, 0, [False, True, False])
    assert_everywhere(results, 1, [True, False, False])
    assert_everywhere(results, 2, [True, False, False])  # max(-1, 0) = 0 signed
    assert_everywhere(results, 3, [True, True, False])
    assert_everywhere(results, 4, [-1, -1, 0])


def test_fma_rounds_once() -> None:
    e30, e12 = 2.0**-30, 2.0**-12
    results = run_all(
        "%r0 = math.fma %a, %b, %c : f64",
        {"f64": [1 + e30], "f64:b": [1 - e30], "f64:c": [-1.0]},
        ["f64"],
    )
    assert_everywhere(results, 0, [-(2.0**-60)])
    results = run_all(
        "%r0 = math.fma %a, %b, %c : f32",
        {"f32": [1 + e12], "f32:b": [1 - e12], "f32:c": [-1.0]},
        ["f32"],
    )
    assert_everywhere(results, 0, [-(2.0**-24)])


def test_maximumf_and_minimumf_order_minus_zero_below_plus_zero() -> None:
    body = """%r0 = arith.maximumf %a, %b : f32
    %r1 = arith.minimumf %a, %b : f32
    %r2 = arith.maxnumf %a, %b : f32
    %r3 = arith.minnumf %a, %b : f32"""
    results = run_all(body, {"f32": [0.0, -0.0], "f32:b": [-0.0, 0.0]}, ["f32"] * 4)
    for k, expected in enumerate(([0.0, 0.0], [-0.0, -0.0], [0.0, 0.0], [-0.0, -0.0])):
        assert_everywhere(results, k, expected)


def test_maxnumf_with_a_signalling_nan_returns_the_other_operand() -> None:
    snan = np.array([0x7FA00000], dtype=np.uint32).view(np.float32)[0]
    body = """%r0 = arith.maxnumf %a, %b : f32
    %r1 = arith.minnumf %b, %a : f32
    %r2 = arith.maximumf %a, %b : f32"""
    results = run_all(body, {"f32": [snan, snan], "f32:b": [2.0, -3.0]}, ["f32"] * 3)
    assert_everywhere(results, 0, [2.0, -3.0])
    assert_everywhere(results, 1, [2.0, -3.0])
    assert_everywhere(results, 2, [math.nan, math.nan])


def test_powf_has_no_square_root_shortcut() -> None:
    results = run_all(
        "%r0 = math.powf %a, %b : f64", {"f64": [-math.inf, -0.0], "f64:b": [0.5, 0.5]}, ["f64"]
    )
    assert_everywhere(results, 0, [math.inf, 0.0])


def test_i64_to_f32_rounds_once() -> None:
    x = 2**53 + 2**29 + 1
    results = run_all(
        "%r0 = arith.sitofp %a : i64 to f32\n    %r1 = arith.uitofp %a : i64 to f32",
        {"i64": [x, -x]},
        ["f32", "f32"],
    )
    assert_everywhere(results, 0, [2.0**53 + 2.0**30, -(2.0**53 + 2.0**30)])


def test_round_of_the_float_below_one_half_is_zero() -> None:
    below = np.nextafter(np.float32(0.5), np.float32(0))
    body = "%r0 = math.round %a : f32\n    %r1 = math.roundeven %a : f32"
    results = run_all(body, {"f32": [below, 0.5, -2.5, 2.5]}, ["f32", "f32"])
    assert_everywhere(results, 0, [0.0, 1.0, -3.0, 3.0])
    assert_everywhere(results, 1, [0.0, 0.0, -2.0, 2.0])


# ---------------------------------------------------------------- undefined behaviour


@pytest.mark.parametrize("op", ["divsi", "ceildivsi", "floordivsi"])
def test_signed_division_of_the_minimum_by_minus_one_is_an_error(op: str) -> None:
    messages = errors_of(
        f"%r0 = arith.{op} %a, %b : i32", {"i32": [7, -(2**31)], "i32:b": [2, -1]}, ["i32"]
    )
    for path, message in messages.items():
        assert f"'arith.{op}' divides the minimum i32 value by -1" in message, path
    assert "thread (1, 0, 0)" in messages["numpy"]
    assert "thread (1, 0, 0)" in messages["numba"]


def test_remsi_of_the_minimum_by_minus_one_is_zero() -> None:
    results = run_all("%r0 = arith.remsi %a, %b : i8", {"i8": [-128], "i8:b": [-1]}, ["i8"])
    assert_everywhere(results, 0, [0])


@pytest.mark.parametrize(
    ("line", "values", "flag"),
    [
        ("arith.addi %a, %b overflow<nsw> : i32", ([2**31 - 1], [1]), "nsw"),
        ("arith.subi %a, %b overflow<nuw> : i32", ([1], [2]), "nuw"),
        ("arith.muli %a, %b overflow<nsw> : i64", ([2**62], [2]), "nsw"),
        ("arith.muli %a, %b overflow<nuw> : i64", ([-1], [2]), "nuw"),
        ("arith.shli %a, %b overflow<nsw> : i8", ([64], [1]), "nsw"),
    ],
)
def test_overflow_of_an_op_with_a_no_wrap_flag_is_an_error(
    line: str, values: tuple[list[int], list[int]], flag: str
) -> None:
    type_ = line.rsplit(": ", 1)[1]
    messages = errors_of(f"%r0 = {line}", {type_: values[0], f"{type_}:b": values[1]}, [type_])
    for path, message in messages.items():
        assert f"with the {flag} flag overflows" in message, path


def test_ops_with_no_wrap_flags_that_do_not_overflow_give_the_result() -> None:
    body = """%r0 = arith.addi %a, %b overflow<nsw, nuw> : i64
    %r1 = arith.muli %a, %b overflow<nsw> : i64
    %r2 = arith.shli %a, %b overflow<nuw> : i64"""
    results = run_all(body, {"i64": [3, 2**40], "i64:b": [5, 2]}, ["i64"] * 3)
    assert_everywhere(results, 0, [8, 2**40 + 2])
    assert_everywhere(results, 1, [15, 2**41])
    assert_everywhere(results, 2, [96, 2**42])


# ---------------------------------------------------------------- spurious errors


def test_fptosi_keeps_values_whose_truncation_fits() -> None:
    body = """%r0 = arith.fptosi %a : f32 to i8
    %r1 = arith.fptosi %c : f32 to i1
    %r2 = arith.fptoui %b : f32 to i8"""
    results = run_all(
        body,
        {"f32": [-128.5, -1.5, 0.75], "f32:b": [255.5, 0.5, -0.5], "f32:c": [0.5, -1.5, -0.5]},
        ["i8", "i1", "i8"],
    )
    assert_everywhere(results, 0, [-128, -1, 0])
    assert_everywhere(results, 1, [False, True, False])
    assert_everywhere(results, 2, [-1, 0, 0])


def test_fptosi_to_i1_of_one_is_out_of_range() -> None:
    messages = errors_of("%r0 = arith.fptosi %a : f32 to i1", {"f32": [0.0, 1.0]}, ["i1"])
    for path in ("numpy", "numba"):
        assert "'arith.fptosi' converts NaN or a value outside the range of i1" in messages[path]


def test_i64_shifts_by_per_thread_amounts() -> None:
    body = """%m = arith.constant -8 : i64
    %r0 = arith.shli %a, %b : i64
    %r1 = arith.shrui %a, %b : i64
    %r2 = arith.shrsi %m, %b : i64
    %r3 = arith.shli %m, %b : i64"""
    results = run_all(body, {"i64": [-1, 5], "i64:b": [63, 1]}, ["i64"] * 4)
    assert_everywhere(results, 0, [-(2**63), 10])
    assert_everywhere(results, 1, [1, 2])
    assert_everywhere(results, 2, [-1, -4])
    assert_everywhere(results, 3, [0, -16])


# ---------------------------------------------------------------- backends agree


def test_nan_and_infinite_constants_compile_on_both_backends() -> None:
    body = """%nan = arith.constant 0x7FC00000 : f32
    %inf = arith.constant 0x7F800000 : f32
    %r0 = arith.addf %a, %nan : f32
    %r1 = arith.subf %a, %inf : f32"""
    results = run_all(body, {"f32": [1.0]}, ["f32", "f32"])
    assert_everywhere(results, 0, [math.nan])
    assert_everywhere(results, 1, [-math.inf])


UNARY = [
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "tanh",
    "sin",
    "cos",
    "tan",
    "atan",
    "asin",
    "acos",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "cbrt",
    "erf",
    "floor",
    "ceil",
    "trunc",
    "round",
    "roundeven",
    "absf",
]


@pytest.mark.parametrize("type_", ["f32", "f64", "f16"])
def test_every_float_unary_op_is_bitwise_equal_on_every_path(type_: str) -> None:
    values = [0.0, -0.0, 0.5, -0.75, 1.0, 1.5, 3.0, -7.25, 100.0, 1e-3, math.inf, -math.inf]
    values.append(math.nan)
    values += list(np.random.default_rng(15).uniform(-4, 4, 12))
    body = "\n    ".join(f"%r{k} = math.{op} %a : {type_}" for k, op in enumerate(UNARY))
    results = run_all(body, {type_: values}, [type_] * len(UNARY))
    for k, op in enumerate(UNARY):
        host, numpy_, numba_ = (np.asarray(results[p][k]) for p in ("host", "numpy", "numba"))
        for name, got in (("numpy", numpy_), ("numba", numba_)):
            same = (bits(got) == bits(host)) | (np.isnan(got) & np.isnan(host))
            assert same.all(), f"math.{op} {type_}: host {host!r} != {name} {got!r}"


@pytest.mark.parametrize("type_", ["f32", "f64", "f16"])
def test_every_float_binary_op_is_bitwise_equal_on_every_path(type_: str) -> None:
    ops = [
        "arith.addf",
        "arith.divf",
        "arith.subf",
        "math.powf",
        "math.atan2",
        "math.copysign",
        "arith.maxnumf",
    ]
    rng = np.random.default_rng(16)
    xs = [0.0, -0.0, 2.0, -2.0, math.inf, math.nan, 0.5, *rng.uniform(-3, 3, 9)]
    ys = [-0.0, 0.0, 0.5, 3.0, -0.5, 1.0, math.inf, *rng.uniform(-3, 3, 9)]
    body = "\n    ".join(f"%r{k} = {op} %a, %b : {type_}" for k, op in enumerate(ops))
    results = run_all(body, {type_: xs, f"{type_}:b": ys}, [type_] * len(ops))
    for k, op in enumerate(ops):
        host = np.asarray(results["host"][k])
        for name in BACKENDS:
            got = np.asarray(results[name][k])
            same = (bits(got) == bits(host)) | (np.isnan(got) & np.isnan(host))
            assert same.all(), f"{op} {type_}: host {host!r} != {name} {got!r}"


def test_f16_arithmetic_rounds_once_on_every_path() -> None:
    body = """%r0 = arith.addf %a, %b : f16
    %r1 = arith.mulf %a, %b : f16
    %r2 = math.fma %a, %b, %a : f16
    %r3 = arith.extf %a : f16 to f32"""
    xs, ys = [0.1, 65504.0, 1e-7, -3.0], [0.2, 65504.0, 1e-7, 0.3333]
    results = run_all(body, {"f16": xs, "f16:b": ys}, ["f16", "f16", "f16", "f32"])
    a, b = np.array(xs, np.float16).astype(np.float64), np.array(ys, np.float16).astype(np.float64)
    assert_everywhere(results, 0, list((a + b).astype(np.float16)))
    assert_everywhere(results, 1, list((a * b).astype(np.float16)))
    assert_everywhere(results, 2, list((a * b + a).astype(np.float16)))  # exact in f64 here
    assert_everywhere(results, 3, list(a.astype(np.float32)))


# ---------------------------------------------------------------- ops kernels lacked


def test_integer_ops_kernels_lacked_run_on_every_path() -> None:
    body = """%r0 = arith.ceildivui %a, %b : i32
    %r1 = arith.fptoui %c : f32 to i32
    %r2 = arith.divsi %a, %b : i32"""
    results = run_all(
        body, {"i32": [7, -1], "i32:b": [2, 2], "f32:c": [1.5, 4e9]}, ["i32", "i32", "i32"]
    )
    assert_everywhere(results, 0, [4, -(2**31)])
    assert_everywhere(results, 1, [1, 4_000_000_000 - 2**32])
    assert_everywhere(results, 2, [3, 0])


def test_bit_counts_and_integer_powers_run_on_every_path() -> None:
    body = """%r0 = math.ctlz %a : i32
    %r1 = math.cttz %a : i32
    %r2 = math.ctpop %a : i32
    %r3 = math.ipowi %a, %b : i32
    %r4 = math.ctpop %c : i64"""
    results = run_all(
        body,
        {"i32": [0, 1, -1, 12], "i32:b": [0, -3, 5, 9], "i64:c": [-1, 0, 2**40, 7]},
        ["i32", "i32", "i32", "i32", "i64"],
    )
    assert_everywhere(results, 0, [32, 31, 0, 28])
    assert_everywhere(results, 1, [32, 0, 0, 2])
    assert_everywhere(results, 2, [0, 1, 32, 2])
    assert_everywhere(results, 3, [1, 1, -1, 12**9 % 2**32 - 2**32 * (12**9 % 2**32 >= 2**31)])
    assert_everywhere(results, 4, [64, 0, 1, 3])


def test_zero_to_a_negative_integer_power_is_an_error() -> None:
    messages = errors_of(
        "%r0 = math.ipowi %a, %b : i16", {"i16": [2, 0], "i16:b": [2, -1]}, ["i16"]
    )
    for path, message in messages.items():
        assert "'math.ipowi' raises 0 to a negative power" in message, path


def test_extended_arithmetic_gives_both_halves() -> None:
    body = """%r0, %r1 = arith.mulsi_extended %a, %b : i64
    %r2, %r3 = arith.mului_extended %a, %b : i64
    %r4, %r5 = arith.addui_extended %a, %b : i64, i1
    %r6, %r7 = arith.mulsi_extended %c, %c : i8"""
    a, b = [-(2**63), 3, -1], [-1, 2**62, -1]
    results = run_all(
        body,
        {"i64": a, "i64:b": b, "i8:c": [-128, 11, -3]},
        ["i64", "i64", "i64", "i64", "i64", "i1", "i8", "i8"],
    )

    def wrap(v: int, w: int) -> int:
        return ((v + (1 << (w - 1))) % (1 << w)) - (1 << (w - 1))

    m = 2**64 - 1
    assert_everywhere(results, 0, [wrap(x * y, 64) for x, y in zip(a, b, strict=True)])
    assert_everywhere(results, 1, [wrap((x * y) >> 64, 64) for x, y in zip(a, b, strict=True)])
    assert_everywhere(
        results, 3, [wrap(((x & m) * (y & m)) >> 64, 64) for x, y in zip(a, b, strict=True)]
    )
    assert_everywhere(results, 4, [wrap(x + y, 64) for x, y in zip(a, b, strict=True)])
    assert_everywhere(results, 5, [(x & m) + (y & m) > m for x, y in zip(a, b, strict=True)])
    assert_everywhere(results, 7, [64, 0, 0])


def test_bitcast_and_fpowi_run_on_every_path() -> None:
    body = """%r0 = arith.bitcast %a : f32 to i32
    %r1 = arith.bitcast %r0 : i32 to f32
    %r2 = arith.bitcast %c : f16 to i16
    %r3 = math.fpowi %a, %b : f32, i32
    %r4 = arith.bitcast %d : i64 to f64"""
    results = run_all(
        body,
        {
            "f32": [1.0, -0.0, 3.5],
            "i32:b": [3, -1, 2],
            "f16:c": [1.0, -2.0, 0.5],
            "i64:d": [0, 1, -1],
        },
        ["i32", "f32", "i16", "f32", "f64"],
    )
    assert_everywhere(results, 0, [0x3F800000, -(2**31), 0x40600000])
    assert_everywhere(results, 1, [1.0, -0.0, 3.5])
    assert_everywhere(results, 2, [0x3C00, -16384, 0x3800])
    assert_everywhere(results, 3, [1.0, -math.inf, 12.25])
    assert_everywhere(results, 4, list(np.array([0, 1, -1], np.int64).view(np.float64)))
