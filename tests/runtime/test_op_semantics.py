"""Each arith/math semantics bug of the op differential test, fixed on every path.

Every finding is one test. To compile little, the findings share two programs, each
built once for host code (a loop over memrefs) and for a kernel (one thread per value)
run on both backends:

* `VALUES`: every op whose result a finding is about, each reading its own input
  buffers and writing its own output buffer; one run, then each test checks its outputs.
* `FAULTS`: every op whose undefined behaviour must be an error, each under an `scf.if`
  on a `%which` argument, so each test runs the one program with the op it is about.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pytest

import devplan
from devplan.diagnostics import DevplanError
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels.common import KernelError
from devplan.runtime.kernels.compile import compile_kernel

NP = {
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "index": np.int64,
    "f16": np.float16,
    "bf16": np.uint16,  # NumPy has no bf16: memory holds its bit pattern
    "f32": np.float32,
    "f64": np.float64,
}
BACKENDS = ("numpy", "numba")
PATHS = ("host", *BACKENDS)
N = 4
"""Values per input: every op runs on N threads (kernels) or N loop iterations (host)."""


def bf16(values: list[float]) -> list[int]:
    """bf16 bit patterns of values that are exactly bf16."""
    f32 = np.array(values, np.float32)
    assert (f32.view(np.uint32) & 0xFFFF == 0).all()
    return [int(b) for b in (f32.view(np.uint32) >> 16)]


SNAN = float(np.array([0x7FA00000], dtype=np.uint32).view(np.float32)[0])
BELOW_HALF = float(np.nextafter(np.float32(0.5), np.float32(0)))
E30, E12 = 2.0**-30, 2.0**-12


@dataclass
class Program:
    """Ops over named inputs (`%name` in `lines`) defining named results. The inputs of
    one type are the rows of one 2-D buffer, and so are the results (few parameters keep
    compiling cheap)."""

    inputs: dict[str, tuple[str, list[Any]]]
    lines: list[str]
    results: dict[str, str]
    """Result name -> type."""

    @staticmethod
    def rows(named: dict[str, str]) -> dict[str, tuple[str, int]]:
        """Each name's (type, row in its type's buffer)."""
        counts: dict[str, int] = {}
        placed: dict[str, tuple[str, int]] = {}
        for name, type_ in named.items():
            placed[name] = (type_, counts.get(type_, 0))
            counts[type_] = counts.get(type_, 0) + 1
        return placed

    def in_types(self) -> list[str]:
        return list(dict.fromkeys(t for t, _ in self.inputs.values()))

    def out_types(self) -> list[str]:
        return list(dict.fromkeys(self.results.values()))

    def body(self, index: str, indent: str) -> str:
        ins = self.rows({n: t for n, (t, _) in self.inputs.items()})
        outs = self.rows(self.results)
        rows = {r for _, r in (*ins.values(), *outs.values())}
        consts = [f"%row{r} = arith.constant {r} : index" for r in sorted(rows)]
        loads = [
            f"%{n} = memref.load %in_{t}[%row{r}, {index}] : memref<?x{N}x{t}>"
            for n, (t, r) in ins.items()
        ]
        stores = [
            f"memref.store %{n}, %out_{t}[%row{r}, {index}] : memref<?x{N}x{t}>"
            for n, (t, r) in outs.items()
        ]
        return "\n".join(indent + line for line in (*consts, *loads, *self.lines, *stores))

    def params(self) -> str:
        ins = [f"%in_{t}: memref<?x{N}x{t}>" for t in self.in_types()]
        outs = [f"%out_{t}: memref<?x{N}x{t}>" for t in self.out_types()]
        return ", ".join(ins + outs)

    def arrays(self) -> list[Any]:
        ins = [
            np.array([v for u, v in self.inputs.values() if u == t], dtype=NP[t])
            for t in self.in_types()
        ]
        outs = [
            np.zeros((sum(u == t for u in self.results.values()), N), NP[t])
            for t in self.out_types()
        ]
        return ins + outs

    def read(self, outputs: list[Any]) -> dict[str, Any]:
        """Each result's values out of the output buffers."""
        by_type = dict(zip(self.out_types(), outputs, strict=True))
        return {n: by_type[t][r] for n, (t, r) in self.rows(self.results).items()}


def host_module(program: Program, guarded: bool) -> Any:
    outs = ", ".join(f"memref<?x{N}x{t}>" for t in program.out_types())
    which = "%which: index, " if guarded else ""
    text = f"""
func.func @main({which}{program.params()}) -> ({outs}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {N} : index
  scf.for %i = %c0 to %n step %c1 {{
{program.body("%i", "    ")}
  }}
  func.return {", ".join(f"%out_{t}" for t in program.out_types())} : {outs}
}}"""
    return devplan.parse(text)


def kernel_func(program: Program, guarded: bool) -> KernelFuncOp:
    which = "%which: index, " if guarded else ""
    text = f"""
kernel.module @k target #target.target<"cuda"> {{
  kernel.func @op({which}{program.params()}) {{
    %tx = kernel.thread_id x
{program.body("%tx", "    ")}
    kernel.return
  }}
}}"""
    module = devplan.parse(text)
    return next(op for op in module.walk() if isinstance(op, KernelFuncOp))


# ---------------------------------------------------------------- the value findings

VALUES = Program(
    inputs={
        "p": ("i1", [True, False, True, False]),
        "q": ("i1", [False, True, True, False]),
        "fa": ("f64", [1 + E30, 0, 0, 0]),
        "fb": ("f64", [1 - E30, 0, 0, 0]),
        "fc": ("f64", [-1.0, 0, 0, 0]),
        "ga": ("f32", [1 + E12, 0, 0, 0]),
        "gb": ("f32", [1 - E12, 0, 0, 0]),
        "gc": ("f32", [-1.0, 0, 0, 0]),
        "z1": ("f32", [0.0, -0.0, SNAN, SNAN]),
        "z2": ("f32", [-0.0, 0.0, 2.0, -3.0]),
        "pb": ("f64", [-math.inf, -0.0, 4.0, -8.0]),
        "px": ("f32", [SNAN, math.inf, 1.0, -0.0]),
        "py": ("f32", [0.0, -0.0, math.nan, 0.0]),
        "big": ("i64", [2**53 + 2**29 + 1, -(2**53 + 2**29 + 1), 3, 0]),
        "rd": ("f32", [BELOW_HALF, 0.5, -2.5, 2.5]),
        "mn": ("i8", [-128, 7, -7, 0]),
        "m1": ("i8", [-1, 2, 2, 1]),
        "w1": ("i64", [3, 2**40, 0, -1]),
        "w2": ("i64", [5, 2, 0, 0]),
        "tr": ("f32", [-128.5, -1.5, 0.75, 127.9]),
        "tu": ("f32", [255.5, 0.5, -0.5, 0.0]),
        "t1": ("f32", [0.5, -1.5, -0.5, -1.0]),
        "s1": ("i64", [-1, 5, 1, 7]),
        "s2": ("i64", [63, 1, 0, 2]),
        "e1": ("f32", [0.5, -1.25, 3.0, 100.0]),
        "e2": ("f32", [2.5, 0.75, -3.0, 1e-3]),
        "ua": ("i32", [7, -1, 9, 0]),
        "ub": ("i32", [2, 2, 3, 5]),
        "uf": ("f32", [1.5, 4e9, 0.0, 2.0]),
    },
    lines=[
        "# i1 is a 1-bit integer: true is -1 read as signed",
        "%slt = arith.cmpi slt, %p, %q : i1",
        "%sge = arith.cmpi sge, %p, %q : i1",
        "%sitofp1 = arith.sitofp %p : i1 to f32",
        "%uitofp1 = arith.uitofp %p : i1 to f32",
        "%add1 = arith.addi %p, %q : i1",
        "%mul1 = arith.muli %p, %q : i1",
        "%maxs1 = arith.maxsi %p, %q : i1",
        "%maxu1 = arith.maxui %p, %q : i1",
        "%cast1 = arith.index_cast %p : i1 to index",
        "# fused multiply-add; signed zeros and NaN operands of the extrema; powf",
        "%fma64 = math.fma %fa, %fb, %fc : f64",
        "%fma32 = math.fma %ga, %gb, %gc : f32",
        "%maximum = arith.maximumf %z1, %z2 : f32",
        "%minimum = arith.minimumf %z1, %z2 : f32",
        "%maxnum = arith.maxnumf %z1, %z2 : f32",
        "%minnum = arith.minnumf %z2, %z1 : f32",
        "%half = arith.constant 0.5 : f64",
        "%pow = math.powf %pb, %half : f64",
        "%pow1 = math.powf %px, %py : f32",
        "# integer to float rounded once; round half away from zero; remsi of MIN by -1",
        "%i2f = arith.sitofp %big : i64 to f32",
        "%round = math.round %rd : f32",
        "%roundeven = math.roundeven %rd : f32",
        "%rem = arith.remsi %mn, %m1 : i8",
        "# no-wrap flags that hold",
        "%addw = arith.addi %w1, %w2 overflow<nsw, nuw> : i64",
        "%mulw = arith.muli %w1, %w2 overflow<nsw> : i64",
        "%c2 = arith.constant 2 : i64",
        "%shlw = arith.shli %w1, %c2 overflow<nsw> : i64",
        "# float to integer: the truncation must fit",
        "%f2i8 = arith.fptosi %tr : f32 to i8",
        "%f2u8 = arith.fptoui %tu : f32 to i8",
        "%f2i1 = arith.fptosi %t1 : f32 to i1",
        "# i64 shifts by per-thread amounts, of per-thread and uniform values",
        "%m8 = arith.constant -8 : i64",
        "%shl = arith.shli %s1, %s2 : i64",
        "%shru = arith.shrui %s1, %s2 : i64",
        "%shrs = arith.shrsi %m8, %s2 : i64",
        "%shlc = arith.shli %m8, %s2 : i64",
        "# NaN and infinite constants",
        "%nan = arith.constant 0x7FC00000 : f32",
        "%inf = arith.constant 0x7F800000 : f32",
        "%addnan = arith.addf %e1, %nan : f32",
        "%subinf = arith.subf %e1, %inf : f32",
        "# transcendentals: one definition on every path",
        "%exp = math.exp %e1 : f32",
        "%sin = math.sin %e1 : f32",
        "%atan2 = math.atan2 %e1, %e2 : f32",
        "%powf = math.powf %e1, %e2 : f32",
        "%erf = math.erf %e1 : f32",
        "%cbrt = math.cbrt %e2 : f32",
        "# ops kernels lacked",
        "%ceilu = arith.ceildivui %ua, %ub : i32",
        "%fptoui = arith.fptoui %uf : f32 to i32",
        "# bit counts and integer powers",
        "%ctlz = math.ctlz %ua : i32",
        "%cttz = math.cttz %ua : i32",
        "%ctpop = math.ctpop %ua : i32",
        "%ipowi = math.ipowi %ua, %ub : i32",
        "%fpowi = math.fpowi %uf, %ub : f32, i32",
        "# bitcasts and extended arithmetic",
        "%bits = arith.bitcast %uf : f32 to i32",
        "%back = arith.bitcast %bits : i32 to f32",
        "%lo, %hi = arith.mulsi_extended %w1, %s1 : i64",
        "%ulo, %uhi = arith.mului_extended %w1, %s1 : i64",
        "%sum, %carry = arith.addui_extended %s1, %w1 : i64, i1",
    ],
    results={
        **{n: "i1" for n in ("slt", "sge", "add1", "mul1", "maxs1", "maxu1")},
        "sitofp1": "f32",
        "uitofp1": "f32",
        "cast1": "index",
        "fma64": "f64",
        "fma32": "f32",
        **{n: "f32" for n in ("maximum", "minimum", "maxnum", "minnum")},
        "pow": "f64",
        "pow1": "f32",
        "i2f": "f32",
        "round": "f32",
        "roundeven": "f32",
        "rem": "i8",
        **{n: "i64" for n in ("addw", "mulw", "shlw", "shl", "shru", "shrs", "shlc")},
        "f2i8": "i8",
        "f2u8": "i8",
        "f2i1": "i1",
        **{n: "f32" for n in ("addnan", "subinf", "exp", "sin", "atan2", "powf", "erf", "cbrt")},
        **{n: "i32" for n in ("ceilu", "fptoui", "ctlz", "cttz", "ctpop", "ipowi", "bits")},
        "fpowi": "f32",
        "back": "f32",
        **{n: "i64" for n in ("lo", "hi", "ulo", "uhi", "sum")},
        "carry": "i1",
    },
)


@cache
def values() -> dict[str, dict[str, Any]]:
    """Every result of `VALUES` by path and name (host code, then each backend). The ops
    run in groups (separated by comments in `VALUES.lines`), each a program loading only
    what it reads: Numba's compile time grows faster than the number of accesses."""
    out: dict[str, dict[str, Any]] = {path: {} for path in PATHS}
    for group in _groups(VALUES.lines):
        used = {m for line in group for m in re.findall(r"%(\w+)", line)}
        defined = {m for line in group for m in re.findall(r"%(\w+)", line.split(" = ")[0])}
        program = Program(
            {n: v for n, v in VALUES.inputs.items() if n in used},
            [line for line in group if not line.startswith("#")],
            {n: t for n, t in VALUES.results.items() if n in defined},
        )
        for path, results in run(program).items():
            out[path].update(results)
    return out


def _groups(lines: list[str]) -> list[list[str]]:
    groups: list[list[str]] = []
    for line in lines:
        if line.startswith("#") or not groups:
            groups.append([])
        groups[-1].append(line)
    return [g for g in groups if any(not line.startswith("#") for line in g)]


def run(program: Program) -> dict[str, dict[str, Any]]:
    """Every result of `program` by path and name (host code, then each backend)."""
    out: dict[str, dict[str, Any]] = {}
    host = devplan.execute(host_module(program, guarded=False), program.arrays())
    out["host"] = program.read(list(host.outputs))
    func = kernel_func(program, guarded=False)
    for backend in BACKENDS:
        arrays = program.arrays()
        compile_kernel(func, backend)((1, 1, 1), (N, 1, 1), arrays)
        out[backend] = program.read(arrays[len(program.in_types()) :])
    return out


def bits(x: Any) -> Any:
    a = np.asarray(x)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind != "b" else a


def expect(name: str, expected: list[Any]) -> None:
    """Result `name` is bitwise `expected` on every path (NaNs compare as NaN)."""
    for path in PATHS:
        got = np.asarray(values()[path][name])
        want = np.array(expected, dtype=got.dtype)
        same = bits(got) == bits(want)
        if got.dtype.kind == "f":
            same |= np.isnan(got) & np.isnan(want)
        assert same.all(), f"%{name} on {path}: {got!r}, expected {want!r}"


def expect_same(name: str) -> None:
    """Result `name` has the same bits on every path."""
    host = np.asarray(values()["host"][name])
    for path in BACKENDS:
        got = np.asarray(values()[path][name])
        same = (bits(got) == bits(host)) | (np.isnan(got) & np.isnan(host))
        assert same.all(), f"%{name}: host {host!r}, {path} {got!r}"


def wrap(v: int, width: int) -> int:
    half = 1 << (width - 1)
    return ((v + half) % (1 << width)) - half


def test_signed_comparison_and_sitofp_read_i1_true_as_minus_one() -> None:
    expect("slt", [True, False, False, False])
    expect("sge", [False, True, True, True])
    expect("sitofp1", [-1.0, 0.0, -1.0, 0.0])
    expect("uitofp1", [1.0, 0.0, 1.0, 0.0])


def test_i1_arithmetic_wraps_at_one_bit() -> None:
    expect("add1", [True, True, False, False])
    expect("mul1", [False, False, True, False])
    expect("maxs1", [False, False, True, False])  # max(-1, 0) is 0 signed
    expect("maxu1", [True, True, True, False])
    expect("cast1", [-1, 0, -1, 0])


def test_fma_rounds_once() -> None:
    expect("fma64", [-(2.0**-60), 0.0, 0.0, 0.0])
    expect("fma32", [-(2.0**-24), 0.0, 0.0, 0.0])


def test_maximumf_and_minimumf_order_minus_zero_below_plus_zero() -> None:
    expect("maximum", [0.0, 0.0, math.nan, math.nan])
    expect("minimum", [-0.0, -0.0, math.nan, math.nan])


def test_maxnumf_with_a_signalling_nan_returns_the_other_operand() -> None:
    expect("maxnum", [0.0, 0.0, 2.0, -3.0])
    expect("minnum", [-0.0, -0.0, 2.0, -3.0])


def test_powf_has_no_square_root_shortcut() -> None:
    expect("pow", [math.inf, 0.0, 2.0, math.nan])


def test_powf_of_x_to_the_zeroth_and_of_one_is_one_even_for_nan() -> None:
    """C99 F.9.4.4: pow(x, ±0) is 1 for every x (a signalling NaN too), pow(1, y) for
    every y (NaN too)."""
    expect("pow1", [1.0] * N)


def test_i64_to_f32_rounds_once() -> None:
    expect("i2f", [2.0**53 + 2.0**30, -(2.0**53 + 2.0**30), 3.0, 0.0])


def test_round_of_the_float_below_one_half_is_zero() -> None:
    expect("round", [0.0, 1.0, -3.0, 3.0])
    expect("roundeven", [0.0, 0.0, -2.0, 2.0])


def test_remsi_of_the_minimum_by_minus_one_is_zero() -> None:
    expect("rem", [0, 1, -1, 0])


def test_ops_with_no_wrap_flags_that_do_not_overflow_give_the_result() -> None:
    expect("addw", [8, 2**40 + 2, 0, -1])
    expect("mulw", [15, 2**41, 0, 0])
    expect("shlw", [12, 2**42, 0, -4])


def test_fptosi_keeps_values_whose_truncation_fits() -> None:
    expect("f2i8", [-128, -1, 0, 127])
    expect("f2u8", [-1, 0, 0, 0])
    expect("f2i1", [False, True, False, True])


def test_i64_shifts_by_per_thread_amounts() -> None:
    expect("shl", [-(2**63), 10, 1, 28])
    expect("shru", [1, 2, 1, 1])
    expect("shrs", [-1, -4, -8, -2])
    expect("shlc", [0, -16, -8, -32])


def test_nan_and_infinite_constants_compile_on_both_backends() -> None:
    expect("addnan", [math.nan] * N)
    expect("subinf", [-math.inf] * N)


def test_transcendentals_are_bitwise_equal_on_every_path() -> None:
    for name in ("exp", "sin", "atan2", "powf", "erf", "cbrt"):
        expect_same(name)


def test_ops_kernels_lacked_run_on_every_path() -> None:
    expect("ceilu", [4, -(2**31), 3, 0])
    expect("fptoui", [1, wrap(4_000_000_000, 32), 0, 2])
    expect("ctlz", [29, 0, 28, 32])
    expect("cttz", [0, 0, 0, 32])
    expect("ctpop", [3, 32, 2, 0])
    expect("ipowi", [49, 1, 729, 0])
    expect("fpowi", [2.25, 1.6e19, 0.0, 32.0])
    expect("bits", [0x3FC00000, 0x4F6E6B28, 0, 0x40000000])
    expect("back", [1.5, 4e9, 0.0, 2.0])


def test_extended_arithmetic_gives_both_halves() -> None:
    w1, s1 = VALUES.inputs["w1"][1], VALUES.inputs["s1"][1]
    m = 2**64 - 1
    expect("lo", [wrap(x * y, 64) for x, y in zip(w1, s1, strict=True)])
    expect("hi", [wrap((x * y) >> 64, 64) for x, y in zip(w1, s1, strict=True)])
    expect("ulo", [wrap(x * y, 64) for x, y in zip(w1, s1, strict=True)])
    expect("uhi", [wrap(((x & m) * (y & m)) >> 64, 64) for x, y in zip(w1, s1, strict=True)])
    expect("sum", [wrap(x + y, 64) for x, y in zip(s1, w1, strict=True)])
    expect("carry", [(x & m) + (y & m) > m for x, y in zip(s1, w1, strict=True)])


# ---------------------------------------------------------------- narrow formats


F16_SPECIALS = [0x7E01, 0xFE10, 0x7C00, 0xFC00]
"""Quiet NaNs with a payload and either sign, and both infinities, as f16 bit patterns."""

NARROW = Program(
    inputs={
        "ha": ("f16", [0.1, 65504.0, 1e-7, -3.0]),
        "hb": ("f16", [0.2, 65504.0, 1e-7, 0.3333]),
        "hc": ("f16", list(np.array(F16_SPECIALS, np.uint16).view(np.float16))),
        "ba": ("bf16", bf16([1.5, 1.0, -2.0, 3.0])),
        "bb": ("bf16", bf16([1.0078125, 2.0**-8, 0.5, 0.0])),
        "bc": ("bf16", bf16([-(2.0**-100), -(2.0**-40), 1.0, -0.0])),
        "bd": ("f32", [1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 3.4e38, -1e-45]),
        "be": ("i64", [2**60 + 2**52 + 1, 255, -257, 0]),
    },
    lines=[
        "%hadd = arith.addf %ha, %hb : f16",
        "%hmul = arith.mulf %ha, %hb : f16",
        "%hfma = math.fma %ha, %hb, %ha : f16",
        "%hext = arith.extf %ha : f16 to f32",
        "%hexp = math.exp %hb : f16",
        "%hneg = arith.negf %hc : f16",
        "%badd = arith.addf %ba, %bb : bf16",
        "%bmul = arith.mulf %ba, %bb : bf16",
        "%bfma = math.fma %ba, %bb, %bc : bf16",
        "%bext = arith.extf %ba : bf16 to f32",
        "%btrunc = arith.truncf %bd : f32 to bf16",
        "%bint = arith.sitofp %be : i64 to bf16",
        "%bexp = math.exp %ba : bf16",
    ],
    results={
        **{n: "f16" for n in ("hadd", "hmul", "hfma", "hexp", "hneg")},
        "hext": "f32",
        **{n: "bf16" for n in ("badd", "bmul", "bfma", "btrunc", "bint", "bexp")},
        "bext": "f32",
    },
)


@cache
def narrow() -> dict[str, dict[str, Any]]:
    return run(NARROW)


def expect_narrow(name: str, expected: Any) -> None:
    for path in PATHS:
        got = np.asarray(narrow()[path][name])
        assert (bits(got) == bits(np.asarray(expected, got.dtype))).all(), (name, path, got)


def test_f16_arithmetic_rounds_once_on_every_path() -> None:
    a = np.array(NARROW.inputs["ha"][1], np.float16).astype(np.float64)
    b = np.array(NARROW.inputs["hb"][1], np.float16).astype(np.float64)
    with np.errstate(over="ignore"):
        expect_narrow("hadd", (a + b).astype(np.float16))
        expect_narrow("hmul", (a * b).astype(np.float16))
        expect_narrow("hfma", (a * b + a).astype(np.float16))  # exact in f64 here
    expect_narrow("hext", a.astype(np.float32))
    expect_narrow("hexp", narrow()["host"]["hexp"])
    # negation flips the sign bit of NaNs and infinities too, keeping a NaN's payload
    expect_narrow("hneg", (np.array(F16_SPECIALS, np.uint16) ^ 0x8000).view(np.float16))


def test_bf16_arithmetic_rounds_once_on_every_path() -> None:
    expect_narrow("badd", bf16([2.5, 1.0, -1.5, 3.0]))
    expect_narrow("bmul", bf16([1.515625, 2.0**-8, -1.0, 0.0]))
    # 1.5 * 1.0078125 is halfway between two bf16 values and the addend, too small to
    # survive an f64 sum, decides: down (ties-to-even after rounding to f64 would go up)
    expect_narrow("bfma", bf16([1.5078125, 2.0**-8, 0.0, 0.0]))
    expect_narrow("bext", np.array([1.5, 1.0, -2.0, 3.0], np.float32))
    expect_narrow("btrunc", bf16([1.0, 1.015625, math.inf, -0.0]))
    expect_narrow("bint", bf16([2.0**60 + 2.0**53, 255.0, -256.0, 0.0]))
    expect_narrow("bexp", narrow()["host"]["bexp"])


# ---------------------------------------------------------------- undefined behaviour


FAULT_OPS = {
    "divsi": ("%r = arith.divsi %ia, %ib : i32", "i32", "divides the minimum i32 value by -1"),
    "ceildivsi": (
        "%r = arith.ceildivsi %ia, %ib : i32",
        "i32",
        "divides the minimum i32 value by -1",
    ),
    "floordivsi": (
        "%r = arith.floordivsi %ia, %ib : i32",
        "i32",
        "divides the minimum i32 value by -1",
    ),
    "addi_nsw": ("%r = arith.addi %ic, %id overflow<nsw> : i32", "i32", "nsw flag overflows"),
    "subi_nuw": ("%r = arith.subi %id, %ic overflow<nuw> : i32", "i32", "nuw flag overflows"),
    # the smallest overflow: i64_max - (-1) is 2**63
    "subi_nsw_by_one": (
        "%r = arith.subi %le, %lf overflow<nsw> : i64",
        "i64",
        "nsw flag overflows",
    ),
    "muli_nsw": ("%r = arith.muli %la, %lb overflow<nsw> : i64", "i64", "nsw flag overflows"),
    "muli_nuw": ("%r = arith.muli %lc, %lb overflow<nuw> : i64", "i64", "nuw flag overflows"),
    "muli_nsw_minus_one_by_min": (
        "%r = arith.muli %lc, %ld overflow<nsw> : i64",
        "i64",
        "nsw flag overflows",
    ),
    "shli_nsw": ("%r = arith.shli %sa, %sb overflow<nsw> : i8", "i8", "nsw flag overflows"),
    "fptosi_i1": ("%r = arith.fptosi %fa : f32 to i1", "i1", "outside the range of i1"),
    "ipowi": ("%r = math.ipowi %ze, %ne : i16", "i16", "raises 0 to a negative power"),
}
"""Each faulting op (on thread 1) and what its message says, on every path."""


def _faults_program() -> Program:
    lines: list[str] = []
    for k, (line, _, _) in enumerate(FAULT_OPS.values()):
        lines += [
            f"%k{k} = arith.constant {k} : index",
            f"%is{k} = arith.cmpi eq, %which, %k{k} : index",
            f"scf.if %is{k} {{",
            "  " + line.replace("%r ", f"%r{k} "),
            "}",
        ]
    return Program(
        inputs={
            "ia": ("i32", [7, -(2**31), 0, 0]),
            "ib": ("i32", [2, -1, 1, 1]),
            "ic": ("i32", [1, 2**31 - 1, 0, 0]),
            "id": ("i32", [2, 1, 0, 0]),
            "la": ("i64", [3, 2**62, 0, 0]),
            "lb": ("i64", [2, 2, 0, 0]),
            "lc": ("i64", [5, -1, 0, 0]),
            "ld": ("i64", [1, -(2**63), 0, 0]),
            "le": ("i64", [3, 2**63 - 1, 0, 0]),
            "lf": ("i64", [1, -1, 0, 0]),
            "sa": ("i8", [1, 64, 0, 0]),
            "sb": ("i8", [1, 1, 0, 0]),
            "fa": ("f32", [-0.5, 1.0, 0.0, 0.0]),
            "ze": ("i16", [2, 0, 1, 1]),
            "ne": ("i16", [2, -1, 0, 0]),
        },
        lines=lines,
        results={},
    )


FAULTS = _faults_program()


@cache
def faulting() -> tuple[Any, KernelFuncOp]:
    return host_module_without_results(FAULTS), kernel_func(FAULTS, guarded=True)


def host_module_without_results(program: Program) -> Any:
    text = f"""
func.func @main(%which: index, {program.params()}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {N} : index
  scf.for %i = %c0 to %n step %c1 {{
{program.body("%i", "    ")}
  }}
  func.return
}}"""
    return devplan.parse(text)


@pytest.mark.parametrize("case", list(FAULT_OPS))
def test_undefined_behaviour_is_a_located_error_on_every_path(case: str) -> None:
    which = list(FAULT_OPS).index(case)
    line, _, says = FAULT_OPS[case]
    op = line.split(" = ")[1].split(" ")[0]
    host, func = faulting()
    with pytest.raises(DevplanError) as caught:
        devplan.execute(host, [which, *FAULTS.arrays()])
    assert f"'{op}'" in str(caught.value)
    assert says in str(caught.value)
    for backend in BACKENDS:
        with pytest.raises(KernelError) as fault:
            compile_kernel(func, backend)((1, 1, 1), (N, 1, 1), [which, *FAULTS.arrays()])
        message = str(fault.value)
        assert f"'{op}'" in message, backend
        assert says in message, backend
        assert "thread (1, 0, 0)" in message, backend


def test_every_compiled_definition_has_its_own_name() -> None:
    """Numba names compiled code by qualified name (and a per-process counter): two
    definitions sharing a name (as lambdas do) could swap code when a kernel is loaded from
    Numba's cache in another process."""
    from devplan.runtime import semantics

    names = [semantics.scalar(op).py_func.__qualname__ for op in sorted(semantics.DEFINED_OPS)]
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)
