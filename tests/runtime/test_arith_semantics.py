"""Every scalar `arith`/`math` op on every type gives the LangRef's result on every path.

The oracle is `devplan.reference.arith`, which computes each op's result exactly
(integers as bit patterns of their width, floats as `Fraction`s rounded once to the
format, transcendental functions within a stated ulp bound of mpmath). Each op × type
combination (`CATALOG`) gets edge values (0, ±1, the extremes, NaN, ±inf, ±0,
subnormals, values at every conversion boundary) and random values, and runs on five
paths:

* host code: a `func.func` executed by `devplan.execute`;
* kernels on the `numpy` and the `numba` backend, each launched two ways: one thread
  per element, and one thread looping over every element with `scf.for`.

Numba compiles each op of a kernel for about two seconds cold, so `make test` runs every
combination on host code and the numpy backend and a sample (`NUMBA_SAMPLE`) on numba,
one thread per element only (`NUMBA_PATHS`); `make semantics`
(DEVPLAN_SEMANTICS_NUMBA=all) runs every combination on numba, launched both ways.

To keep compiling cheap, the combinations are batched by the type of their first
operand: one kernel module (both launch shapes) and one host function per group hold
every op of the group, each op reading its operands from its own rows of a 2-D input
buffer per type and writing its own rows of an output buffer per type. A value for which
the LangRef's behaviour is undefined (division by zero, signed division overflow, an
`nsw`/`nuw` overflow, an over-wide shift, an out-of-range float-to-integer conversion)
stays out of the batch; a sample of them runs alone and must be a run-time error placed
at the op's line on every path. Results must match the model, and the two kernel
backends must give the same bits (NaNs compare as NaN).

Where xDSL's interpreter implements an op, it must agree too, on the values where it
follows the LangRef (see `test_xdsl_interpreter_agrees_where_it_follows_the_langref`).

Run this file as a script (`python tests/runtime/test_arith_semantics.py FILE`) to write every
disagreement to FILE as a list.
"""

from __future__ import annotations

import os
import re
import sys
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, cached_property
from typing import Any

import numpy as np
import pytest

import devplan
from devplan.diagnostics import DevplanError
from devplan.dialects.kernel import KernelFuncOp
from devplan.reference.arith import CMPF, CMPI, evaluate
from devplan.reference.expectations import Exact, Expectation, Fault, Near, matches
from devplan.reference.scalars import (
    FLOAT_TYPES,
    INT_TYPES,
    FloatFormat,
    IntType,
    decode,
    finite,
    round_to_format,
    scalar_type,
)
from devplan.reference.transcendental import TRANSCENDENTAL_BINARY, TRANSCENDENTAL_UNARY
from devplan.runtime.kernels.compile import compile_kernel

INTS = ("i1", "i8", "i16", "i32", "i64", "index")
FLOATS = ("f16", "bf16", "f32", "f64")
STORAGE: dict[str, Any] = {
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "index": np.int64,
    "f16": np.float16,
    "bf16": np.uint16,  # NumPy has no bf16: its bit pattern
    "f32": np.float32,
    "f64": np.float64,
}
BACKENDS = ("numpy", "numba")
RANDOM_VALUES = 48
"""Random operand tuples per combination, besides the edge values."""
TRANSCENDENTAL_VALUES = 160
"""Random inputs per transcendental function (an ulp bound needs more than exact ops)."""
FAULTS_PER_COMBINATION = 2
"""Undefined-behaviour cases run alone per combination (one launch each on every path)."""


# ----------------------------------------------------------------------------------------
# The catalog: op x type combinations


@dataclass(frozen=True)
class Combination:
    """One op on one tuple of types; `op` is the model's name (`arith.cmpi slt`,
    `arith.addi<nsw>`)."""

    op: str
    operands: tuple[str, ...]
    results: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.op} : ({', '.join(self.operands)}) -> ({', '.join(self.results)})"

    def mlir(self, args: Sequence[str], results: Sequence[str]) -> str:
        """The op as one line of MLIR."""
        name, _, rest = self.op.partition("<")
        flags = f" overflow<{rest.rstrip('>').replace(',', ', ')}>" if rest else ""
        lhs = ", ".join(results)
        a = ", ".join(args)
        t = self.operands[0]
        if " " in name:
            base, predicate = name.split()
            return f"{lhs} = {base} {predicate}, {a} : {t}"
        if name == "arith.select":
            return f"{lhs} = arith.select {a} : {self.operands[1]}"
        if name == "math.fpowi":
            return f"{lhs} = math.fpowi {a} : {t}, {self.operands[1]}"
        if name == "arith.addui_extended":
            return f"{lhs} = {name} {a} : {t}, i1"
        if len(self.operands) == 1 and self.operands[0] != self.results[0]:
            return f"{lhs} = {name} {a} : {t} to {self.results[0]}"
        if name == "arith.bitcast" or name.startswith("arith.index_cast"):
            return f"{lhs} = {name} {a} : {t} to {self.results[0]}"
        return f"{lhs} = {name} {a}{flags} : {t}"


INT_BINARY = (
    "arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.divui", "arith.remsi",
    "arith.remui", "arith.ceildivsi", "arith.ceildivui", "arith.floordivsi", "arith.andi",
    "arith.ori", "arith.xori", "arith.shli", "arith.shrsi", "arith.shrui", "arith.maxsi",
    "arith.minsi", "arith.maxui", "arith.minui", "math.ipowi",
    *(f"arith.{op}<{flags}>" for op in ("addi", "subi", "muli", "shli")
      for flags in ("nsw", "nuw", "nsw,nuw")),
)  # fmt: skip
INT_UNARY = ("math.absi", "math.ctlz", "math.cttz", "math.ctpop")
FLOAT_UNARY = (
    "arith.negf", "math.absf", "math.sqrt", "math.floor", "math.ceil", "math.trunc",
    "math.round", "math.roundeven", *TRANSCENDENTAL_UNARY,
)  # fmt: skip
FLOAT_BINARY = (
    "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.maximumf",
    "arith.minimumf", "arith.maxnumf", "arith.minnumf", "math.copysign",
    *TRANSCENDENTAL_BINARY,
)  # fmt: skip
FLOAT_EXTENSIONS = (
    ("f16", "f32"),
    ("f16", "f64"),
    ("bf16", "f32"),
    ("bf16", "f64"),
    ("f32", "f64"),
)
BITCASTS = (("i16", "f16"), ("i16", "bf16"), ("f16", "bf16"), ("i32", "f32"), ("i64", "f64"))


def _width(name: str) -> int:
    return scalar_type(name).width


def _int_catalog(t: str) -> Iterator[Combination]:
    for op in INT_BINARY:
        yield Combination(op, (t, t), (t,))
    for op in INT_UNARY:
        yield Combination(op, (t,), (t,))
    for predicate in CMPI:
        yield Combination(f"arith.cmpi {predicate}", (t, t), ("i1",))
    yield Combination("arith.select", ("i1", t, t), (t,))
    if t != "index":  # the *_extended ops take signless integers only
        yield Combination("arith.addui_extended", (t, t), (t, "i1"))
        yield Combination("arith.mulsi_extended", (t, t), (t, t))
        yield Combination("arith.mului_extended", (t, t), (t, t))


def _float_catalog(f: str) -> Iterator[Combination]:
    for op in FLOAT_UNARY:
        yield Combination(op, (f,), (f,))
    for op in FLOAT_BINARY:
        yield Combination(op, (f, f), (f,))
    yield Combination("math.fma", (f, f, f), (f,))
    yield Combination("math.fpowi", (f, "i32"), (f,))
    for predicate in CMPF:
        yield Combination(f"arith.cmpf {predicate}", (f, f), ("i1",))
    yield Combination("arith.select", ("i1", f, f), (f,))


def _conversion_catalog() -> Iterator[Combination]:
    plain = [t for t in INTS if t != "index"]
    for s in plain:
        for d in plain:
            if _width(s) < _width(d):
                yield Combination("arith.extsi", (s,), (d,))
                yield Combination("arith.extui", (s,), (d,))
            elif _width(s) > _width(d):
                yield Combination("arith.trunci", (s,), (d,))
        for s_, d_ in ((s, "index"), ("index", s)):
            yield Combination("arith.index_cast", (s_,), (d_,))
            yield Combination("arith.index_castui", (s_,), (d_,))
        for f in FLOATS:
            yield Combination("arith.sitofp", (s,), (f,))
            yield Combination("arith.uitofp", (s,), (f,))
            yield Combination("arith.fptosi", (f,), (s,))
            yield Combination("arith.fptoui", (f,), (s,))
    for narrow, wide in FLOAT_EXTENSIONS:
        yield Combination("arith.extf", (narrow,), (wide,))
        yield Combination("arith.truncf", (wide,), (narrow,))
    for a, b in BITCASTS:
        yield Combination("arith.bitcast", (a,), (b,))
        yield Combination("arith.bitcast", (b,), (a,))


CATALOG: tuple[Combination, ...] = (
    *(c for t in INTS for c in _int_catalog(t)),
    *(c for f in FLOATS for c in _float_catalog(f)),
    *_conversion_catalog(),
)
GROUPS: dict[str, tuple[Combination, ...]] = {
    t: tuple(c for c in CATALOG if c.operands[0] == t) for t in (*INTS, *FLOATS)
}
"""The batches: combinations by the type of their first operand."""


# ----------------------------------------------------------------------------------------
# Values


def _float_bits(f: str, value: Fraction) -> int:
    return round_to_format(FLOAT_TYPES[f], finite(value))


def int_edges(t: str) -> list[int]:
    it = INT_TYPES[t]
    w = it.width
    values = {0, 1, 2, 3, -1, -2, it.smin, it.smin + 1, it.smax, it.smax - 1, w - 1, w, w + 1}
    values |= {1 << (w // 2), -(1 << (w // 2)), int("01" * 32, 2), 100, -100}
    return sorted({it.wrap(v) for v in values})


def float_edges(f: str) -> list[int]:
    fmt = FLOAT_TYPES[f]
    p = fmt.precision
    magnitudes = [
        0, 1, fmt.max_finite, Fraction(2) ** (fmt.emin - p + 1),  # min subnormal
        Fraction(2) ** fmt.emin, Fraction(2) ** fmt.emin - Fraction(2) ** (fmt.emin - p + 1),
        Fraction(1, 2), Fraction(3, 2), Fraction(5, 2), 3, Fraction(1, 2) - Fraction(2) ** (-p - 1),
        Fraction(2) ** (p - 1), Fraction(2) ** (p - 1) + Fraction(1, 2), 100, Fraction(1, 1000),
        Fraction(355, 113),
    ]  # fmt: skip
    bits = {_float_bits(f, Fraction(m)) | sign for m in magnitudes for sign in (0, fmt.sign_bit)}
    bits |= {fmt.inf_bits, fmt.inf_bits | fmt.sign_bit, fmt.nan_bits, fmt.nan_bits | fmt.sign_bit}
    bits.add(fmt.inf_bits | 1)  # a signalling NaN
    return sorted(bits)


def float_boundaries(f: str, target: str) -> list[int]:
    """Floats at and next to the limits of the integer type `target` (and half-way)."""
    fmt = FLOAT_TYPES[f]
    w = INT_TYPES[target].width
    found: set[int] = set()
    for limit in (Fraction(2) ** (w - 1), Fraction(2) ** w, Fraction(1)):
        for v in (
            limit,
            -limit,
            limit - 1,
            -limit - 1,
            limit - Fraction(1, 2),
            -limit - Fraction(1, 2),
        ):
            b = _float_bits(f, v)
            if decode(fmt, b).kind == "finite":
                found |= {b, b + 1, max(b - 1, 0) if b & ~fmt.sign_bit else b}
    return sorted(x for x in found if decode(fmt, x).kind != "nan")


def int_boundaries(t: str, f: str) -> list[int]:
    """Integers whose conversion to `f` rounds at a tie or one past it (double rounding)."""
    it = INT_TYPES[t]
    p = FLOAT_TYPES[f].precision
    found: set[int] = set()
    for k in range(p, it.width):
        tie = (1 << k) + (1 << (k - p))
        found |= {tie, tie + 1, tie - 1, (1 << k) + (1 << (k - p + 1)) + (1 << (k - p))}
    if t == "i64" and f == "f32":
        found.add((1 << 53) + (1 << 29) + 1)
    return sorted({it.wrap(v) for v in found} | {it.wrap(-v) for v in found})


def edges(t: str) -> list[int]:
    return int_edges(t) if t in INT_TYPES else float_edges(t)


def random_values(t: str, rng: np.random.Generator, count: int) -> list[int]:
    width = _width(t)
    raw = [int(x) for x in rng.integers(0, 1 << min(width, 63), count, dtype=np.uint64)]
    if width == 64:
        raw = [x | (int(rng.integers(0, 2)) << 63) for x in raw]
    if t in FLOAT_TYPES and count:
        # Half uniform bit patterns (every magnitude), half ordinary values.
        half = count // 2
        ordinary = rng.normal(0.0, 4.0, half)
        raw[:half] = [_float_bits(t, Fraction(float(v))) for v in ordinary]
    return raw


def operand_tuples(c: Combination) -> list[tuple[int, ...]]:
    """Edge values (crossed, for up to two operands) and random values for `c`."""
    rng = np.random.default_rng(zlib.crc32(str(c).encode()))
    if c.op == "math.fpowi":
        powers = [INT_TYPES["i32"].wrap(n) for n in range(-12, 13)]
        bases = float_edges(c.operands[0]) + random_values(c.operands[0], rng, 16)
        return [(b, n) for b in bases for n in powers[::3]] + [
            (b, powers[int(rng.integers(0, len(powers)))])
            for b in random_values(c.operands[0], rng, 64)
        ]
    if len(c.operands) == 1:
        count = TRANSCENDENTAL_VALUES if c.op in TRANSCENDENTAL_UNARY else RANDOM_VALUES * 2
        values = edges(c.operands[0]) + random_values(c.operands[0], rng, count)
        s, d = c.operands[0], c.results[0]
        if s in FLOAT_TYPES and d in INT_TYPES:
            values += float_boundaries(s, d)
        if s in INT_TYPES and d in FLOAT_TYPES:
            values += int_boundaries(s, d)
        return [(v,) for v in dict.fromkeys(values)]
    columns = [edges(t) for t in c.operands]
    if len(c.operands) == 2:
        crossed = [(a, b) for a in columns[0] for b in columns[1]]
    else:
        picks = [rng.integers(0, len(col), 200) for col in columns]
        crossed = [
            tuple(col[int(p[i])] for col, p in zip(columns, picks, strict=True)) for i in range(200)
        ]
        if c.op == "math.fma" and c.operands[0] == "f64":
            crossed.append(tuple(_float_bits("f64", v) for v in (
                1 + Fraction(1, 2**30), 1 - Fraction(1, 2**30), Fraction(-1))))  # fmt: skip
    randoms = list(zip(*(random_values(t, rng, RANDOM_VALUES) for t in c.operands), strict=True))
    return list(dict.fromkeys([*crossed, *randoms]))


@dataclass
class Cases:
    """A combination's operand tuples and what the model expects of each."""

    combination: Combination
    values: list[tuple[int, ...]]
    expected: list[Expectation]

    @cached_property
    def defined(self) -> list[int]:
        return [i for i, e in enumerate(self.expected) if not isinstance(e, Fault)]

    @cached_property
    def faults(self) -> list[int]:
        return [i for i, e in enumerate(self.expected) if isinstance(e, Fault)]

    @property
    def safe(self) -> tuple[int, ...]:
        return self.values[self.defined[0]]


@cache
def cases(c: Combination) -> Cases:
    operand_types = [scalar_type(t) for t in c.operands]
    result_types = [scalar_type(t) for t in c.results]
    values = operand_tuples(c)
    return Cases(c, values, [evaluate(c.op, operand_types, result_types, v) for v in values])


# ----------------------------------------------------------------------------------------
# Arrays of bit patterns


def to_array(t: str, bits: Sequence[int]) -> np.ndarray[Any, Any]:
    if t == "i1":
        return np.array(bits, dtype=np.bool_)
    return np.array(bits, dtype=f"uint{_width(t)}").view(STORAGE[t])


def to_bits(t: str, array: np.ndarray[Any, Any]) -> list[int]:
    if t == "i1":
        return [int(x) for x in np.asarray(array).astype(np.uint8)]
    return [int(x) for x in np.ascontiguousarray(array).view(f"uint{_width(t)}")]


# ----------------------------------------------------------------------------------------
# Programs: one host function and two kernels per group


@dataclass
class Batch:
    """A group's ops laid out in rows of per-type buffers, and the programs running them."""

    combinations: tuple[Combination, ...]
    input_rows: list[list[tuple[str, int]]] = field(default_factory=list[list[tuple[str, int]]])
    output_rows: list[list[tuple[str, int]]] = field(default_factory=list[list[tuple[str, int]]])
    input_types: list[str] = field(default_factory=list[str])
    output_types: list[str] = field(default_factory=list[str])
    host_lines: dict[Combination, int] = field(default_factory=dict[Combination, int])
    kernel_lines: dict[tuple[str, Combination], int] = field(
        default_factory=dict[tuple[str, Combination], int]
    )
    host_text: str = ""
    kernel_text: str = ""
    compiled: Any = None
    """The parsed host module (host batches)."""
    kernels: dict[str, Any] = field(default_factory=dict[str, Any])
    """The compiled kernels by name (kernel batches)."""

    def __post_init__(self) -> None:
        counts: dict[tuple[str, bool], int] = {}
        for c in self.combinations:
            self.input_rows.append([(t, _take(counts, (t, True))) for t in c.operands])
            self.output_rows.append([(t, _take(counts, (t, False))) for t in c.results])
        self.input_types = sorted({t for (t, is_in) in counts if is_in}, key=_type_order)
        self.output_types = sorted({t for (t, is_in) in counts if not is_in}, key=_type_order)
        self.rows = counts
        self.host_text = self._host()
        self.kernel_text = self._kernels()

    def _params(self) -> list[str]:
        return [f"%in_{t}: memref<?x?x{t}>" for t in self.input_types] + [
            f"%out_{t}: memref<?x?x{t}>" for t in self.output_types
        ]

    def _prologue(self) -> list[str]:
        most = max(self.rows.values())
        first = self.input_types[0]
        return [f"%r{r} = arith.constant {r} : index" for r in range(max(most, 2))] + [
            f"%n = memref.dim %in_{first}, %r1 : memref<?x?x{first}>"
        ]

    def _body(self, lines: list[str], indent: str, where: str) -> None:
        for k, c in enumerate(self.combinations):
            args: list[str] = []
            for j, (t, row) in enumerate(self.input_rows[k]):
                args.append(f"%a{k}_{j}")
                lines.append(
                    f"{indent}%a{k}_{j} = memref.load %in_{t}[%r{row}, %i] : memref<?x?x{t}>"
                )
            results = [f"%z{k}_{j}" for j in range(len(c.results))]
            line = len(lines) + 1
            if where == "host":
                self.host_lines[c] = line
            else:
                self.kernel_lines[(where, c)] = line
            lines.append(indent + c.mlir(args, results))
            for j, (t, row) in enumerate(self.output_rows[k]):
                lines.append(
                    f"{indent}memref.store %z{k}_{j}, %out_{t}[%r{row}, %i] : memref<?x?x{t}>"
                )

    def _host(self) -> str:
        outs = ", ".join(f"memref<?x?x{t}>" for t in self.output_types)
        lines = [f"func.func @main({', '.join(self._params())}) -> ({outs}) {{"]
        lines += ["  " + line for line in self._prologue()]
        lines.append("  scf.for %i = %r0 to %n step %r1 {")
        self._body(lines, "    ", "host")
        lines.append("  }")
        results = ", ".join(f"%out_{t}" for t in self.output_types)
        lines.append(f"  func.return {results} : {outs}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _kernels(self) -> str:
        lines = ['kernel.module @semantics target #target.target<"llvm"> {']
        params = ", ".join(self._params())
        lines.append(f"  kernel.func @per_element({params}) {{")
        lines += ["    " + line for line in self._prologue()]
        lines += [
            "    %tx = kernel.thread_id x",
            "    %bx = kernel.block_id x",
            "    %bd = kernel.block_dim x",
            "    %i0 = arith.muli %bx, %bd : index",
            "    %i = arith.addi %i0, %tx : index",
            "    %inside = arith.cmpi ult, %i, %n : index",
            "    scf.if %inside {",
        ]
        self._body(lines, "      ", "per_element")
        lines += ["    }", "    kernel.return", "  }"]
        lines.append(f"  kernel.func @looping({params}) {{")
        lines += ["    " + line for line in self._prologue()]
        lines.append("    scf.for %i = %r0 to %n step %r1 {")
        self._body(lines, "      ", "looping")
        lines += ["    }", "    kernel.return", "  }", "}"]
        return "\n".join(lines) + "\n"

    def buffers(self, columns: Sequence[Sequence[tuple[int, ...]]]) -> list[np.ndarray[Any, Any]]:
        """Input buffers holding `columns[k]` (operand tuples) in op k's rows, then zeroed
        output buffers."""
        n = len(columns[0])
        inputs = {t: [[0] * n for _ in range(self.rows[(t, True)])] for t in self.input_types}
        for k, column in enumerate(columns):
            for j, (t, row) in enumerate(self.input_rows[k]):
                inputs[t][row] = [values[j] for values in column]
        arrays = [
            to_array(t, [b for row in inputs[t] for b in row]).reshape(-1, n)
            for t in self.input_types
        ]
        arrays += [
            np.zeros((self.rows[(t, False)], n), dtype=STORAGE[t]) for t in self.output_types
        ]
        return arrays

    def results(self, outputs: Sequence[np.ndarray[Any, Any]], k: int) -> list[list[int]]:
        """Op k's result bit patterns, one list per element."""
        by_type = dict(zip(self.output_types, outputs, strict=True))
        per_result = [to_bits(t, by_type[t][row]) for t, row in self.output_rows[k]]
        return [list(r) for r in zip(*per_result, strict=True)]


def _take(counts: dict[tuple[str, bool], int], key: tuple[str, bool]) -> int:
    counts[key] = counts.get(key, 0) + 1
    return counts[key] - 1


def _type_order(t: str) -> int:
    return (*INTS, *FLOATS).index(t)


NUMBA_SAMPLE = (
    "math.fma : (f64, f64, f64) -> (f64)",
    "arith.maximumf : (f64, f64) -> (f64)",
    "math.exp : (f64) -> (f64)",
    "math.powf : (f64, f64) -> (f64)",
    "arith.minnumf : (f32, f32) -> (f32)",
    "math.round : (f32) -> (f32)",
    "arith.fptosi : (f32) -> (i8)",
    "arith.truncf : (f32) -> (bf16)",
    "arith.cmpi slt : (i1, i1) -> (i1)",
    "arith.sitofp : (i1) -> (f32)",
    "arith.divsi : (i64, i64) -> (i64)",
    "arith.sitofp : (i64) -> (f32)",
    "arith.index_castui : (i64) -> (index)",
    "arith.remf : (f64, f64) -> (f64)",
)
"""The combinations `make test` runs on the numba backend. Numba compiles each op of a
kernel for seconds (cold), so every combination on numba is `make semantics`
(DEVPLAN_SEMANTICS_NUMBA=all); host code and the numpy backend always run every one."""
NUMBA_CHUNK = 4
"""Ops per numba kernel: numba's compile time grows faster than the function's size."""


def on_numba(c: Combination) -> bool:
    return os.environ.get("DEVPLAN_SEMANTICS_NUMBA") == "all" or str(c) in NUMBA_SAMPLE


@cache
def batches(group: str, where: str) -> tuple[tuple[Batch, ...], dict[Combination, str]]:
    """The group's batches for `where` (host code or a kernel backend), without the ops
    that fail to compile there (returned with the error each gave)."""
    if where == "numba":  # both backends check ops alike; spare numba compiling them
        unsupported = dict(batches(group, "numpy")[1])
        chosen = [c for c in GROUPS[group] if c not in unsupported and on_numba(c)]
        chunks = [tuple(chosen[i : i + NUMBA_CHUNK]) for i in range(0, len(chosen), NUMBA_CHUNK)]
        found: list[Batch] = []
        for chunk in chunks:
            b = Batch(chunk)
            compile_batch(b, where)
            found.append(b)
        return tuple(found), {c: u for c, u in unsupported.items() if on_numba(c)}
    return batch_without_failures(list(GROUPS[group]), where)


def batch_without_failures(
    combinations: list[Combination], where: str
) -> tuple[tuple[Batch, ...], dict[Combination, str]]:
    unsupported: dict[Combination, str] = {}
    while combinations:
        b = Batch(tuple(combinations))
        try:
            compile_batch(b, where)
            return (b,), unsupported
        except Exception as error:
            text = str(error)
            lines = (
                b.host_lines
                if where == "host"
                else {c: line for (_, c), line in b.kernel_lines.items()}
            )
            place = re.search(r"<string>:(\d+):\d+: error: (.*)", text)
            culprit = next(
                (c for c, line in lines.items() if place and int(place[1]) == line), None
            )
            if culprit is not None and place:
                unsupported[culprit] = place[2]
                combinations.remove(culprit)
                continue
            # An error that names no line: find the ops that give it one by one.
            for c in list(combinations):
                try:
                    compile_batch(Batch((c,)), where)
                except Exception as alone:
                    unsupported[c] = "(compiled alone) " + str(alone).splitlines()[0]
                    combinations.remove(c)
            if not unsupported:
                raise
    return (), unsupported


def compile_batch(b: Batch, where: str) -> None:
    if where == "host":
        columns = [[cases(c).safe] for c in b.combinations]
        b.compiled = devplan.parse(b.host_text)
        devplan.execute(b.compiled, b.buffers(columns))
        return
    module = devplan.parse(b.kernel_text)
    funcs = {op.sym_name.data: op for op in module.walk() if isinstance(op, KernelFuncOp)}
    b.kernels = {name: compile_kernel(func, where) for name, func in funcs.items()}


NUMBA_PATHS = (
    ("numba per_element", "numba looping")
    if os.environ.get("DEVPLAN_SEMANTICS_NUMBA") == "all"
    else ("numba per_element",)
)
"""The numba backend's launch shapes that run. The numpy backend computes an op on a
vector of lanes (one thread per element) or on one uniform lane (one thread looping),
two codes; the numba backend emits an op as the same line in both shapes (on its fast
path and on its checked path), so `make test` spares Numba compiling the looping
kernel, some 40% of its Numba compiling."""
PATHS = ("host", "numpy per_element", "numpy looping", *NUMBA_PATHS)


def run_path(
    b: Batch, path: str, buffers: list[np.ndarray[Any, Any]]
) -> list[np.ndarray[Any, Any]]:
    """Run a batch on one path; the output buffers."""
    if path == "host":
        return list(devplan.execute(b.compiled, buffers).outputs)
    name = path.split()[1]
    args = [a.copy() for a in buffers]
    n = buffers[0].shape[1]
    if name == "per_element":
        b.kernels[name](((n + 63) // 64, 1, 1), (64, 1, 1), args)
    else:
        b.kernels[name]((1, 1, 1), (1, 1, 1), args)
    return args[len(b.input_types) :]


# ----------------------------------------------------------------------------------------
# Comparison


@dataclass(frozen=True)
class Disagreement:
    combination: Combination
    path: str
    operands: tuple[int, ...]
    got: str
    expected: str

    def __str__(self) -> str:
        c = self.combination
        shown = ", ".join(show(t, v) for t, v in zip(c.operands, self.operands, strict=False))
        return f"{c} on {self.path}: ({shown}) gave {self.got}, expected {self.expected}"


def show(t: str, bits: int) -> str:
    """A value for a person: the integer (signed) or the float (exactly, with its bits)."""
    ty = scalar_type(t)
    if isinstance(ty, IntType):
        return str(ty.signed(bits)) if t != "i1" else str(bits)
    r = decode(ty, bits)
    if r.kind == "nan":
        return f"nan(0x{bits:x})"
    if r.kind == "inf":
        return "-inf" if r.negative else "inf"
    text = repr(float(r.value)) if r.value else ("-0.0" if r.negative else "0.0")
    return f"{text}(0x{bits:x})"


def show_expected(c: Combination, e: Expectation) -> str:
    if isinstance(e, Fault):
        return f"a run-time error ({e.reason})"
    if isinstance(e, Near):
        return f"{show(c.results[0], e.rounded)} within {e.ulps} ulp"
    return " | ".join(
        ", ".join(show(t, b) for t, b in zip(c.results, option, strict=True))
        for option in (e.bits, *e.alternatives)
    )


def _shown(c: Combination, bits: Sequence[int]) -> str:
    return ", ".join(show(t, v) for t, v in zip(c.results, bits, strict=True))


def check_group(group: str) -> tuple[list[Disagreement], int]:
    """Run every defined case of the group on every path; the disagreements and the
    number of results compared."""
    found: list[Disagreement] = []
    compared = 0
    results: dict[str, dict[Combination, list[list[int]]]] = {}
    for path in PATHS:
        where = path.split()[0]
        group_batches, unsupported = batches(group, where)
        if not path.endswith("looping"):
            found += [
                Disagreement(c, where, (), "not supported", why) for c, why in unsupported.items()
            ]
        results[path] = {}
        for b in group_batches:
            found_here, count = run_batch(b, path, results[path])
            found += found_here
            compared += count
    for shape in ("per_element", "looping"):
        left, right = results.get(f"numpy {shape}", {}), results.get(f"numba {shape}", {})
        for c in left.keys() & right.keys():
            found += backends_differ(c, shape, left[c], right[c])
    return found, compared


def run_batch(
    b: Batch, path: str, results: dict[Combination, list[list[int]]]
) -> tuple[list[Disagreement], int]:
    """Run every defined case of a batch's ops on one path, recording each op's results."""
    all_cases = [cases(c) for c in b.combinations]
    n = max(len(x.defined) for x in all_cases)
    columns = [
        [x.values[i] for i in x.defined] + [x.safe] * (n - len(x.defined)) for x in all_cases
    ]
    try:
        outputs = run_path(b, path, b.buffers(columns))
    except Exception as error:  # a crash is a disagreement too: find the ops that crash
        if len(b.combinations) == 1:
            first = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            return [Disagreement(b.combinations[0], path, (), first, "no error")], 0
        found_alone: list[Disagreement] = []
        compared_alone = 0
        for c in b.combinations:
            alone = Batch((c,))
            compile_batch(alone, path.split()[0])
            found_c, compared_c = run_batch(alone, path, results)
            found_alone += found_c
            compared_alone += compared_c
        return found_alone, compared_alone
    found: list[Disagreement] = []
    compared = 0
    for k, x in enumerate(all_cases):
        c = x.combination
        result_types = [scalar_type(t) for t in c.results]
        got_all = b.results(outputs, k)[: len(x.defined)]
        results[c] = got_all
        for i, got in zip(x.defined, got_all, strict=True):
            compared += 1
            if not matches(x.expected[i], result_types, got):
                found.append(
                    Disagreement(
                        c, path, x.values[i], _shown(c, got), show_expected(c, x.expected[i])
                    )
                )
    return found, compared


def backends_differ(
    c: Combination, shape: str, left: list[list[int]], right: list[list[int]]
) -> list[Disagreement]:
    x = cases(c)
    types = [scalar_type(t) for t in c.results]
    found: list[Disagreement] = []
    for i, l_bits, r_bits in zip(x.defined, left, right, strict=True):
        same = all(
            a == b
            or (isinstance(ty, FloatFormat) and decode(ty, a).is_nan and decode(ty, b).is_nan)
            for ty, a, b in zip(types, l_bits, r_bits, strict=True)
        )
        if not same:
            path = f"numba {shape} vs numpy"
            found.append(
                Disagreement(
                    c, path, x.values[i], _shown(c, r_bits), _shown(c, l_bits) + " (numpy)"
                )
            )
    return found


def check_faults(group: str) -> tuple[list[Disagreement], int]:
    """Run a sample of each combination's undefined cases alone; each must be a run-time
    error placed at the op's line (and, in kernels, naming the block and thread)."""
    found: list[Disagreement] = []
    checked = 0
    for path in PATHS:
        for b in batches(group, path.split()[0])[0]:
            all_cases = [cases(c) for c in b.combinations]
            for k, x in enumerate(all_cases):
                c = x.combination
                line = b.host_lines[c] if path == "host" else b.kernel_lines[(path.split()[1], c)]
                for i in x.faults[:FAULTS_PER_COMBINATION]:
                    columns = [[y.safe] for y in all_cases]
                    columns[k] = [x.values[i]]
                    checked += 1
                    problem = fault_problem(b, path, b.buffers(columns), line)
                    if problem:
                        found.append(
                            Disagreement(
                                c, path, x.values[i], problem, show_expected(c, x.expected[i])
                            )
                        )
    return found, checked


def fault_problem(b: Batch, path: str, buffers: list[np.ndarray[Any, Any]], line: int) -> str:
    """'' when the path reports a located error at `line`, else what it did instead."""
    try:
        run_path(b, path, buffers)
    except DevplanError as error:
        first = str(error).splitlines()[0]
        if f":{line}:" not in first:
            return f"an error elsewhere: {first}"
        if path != "host" and "thread" not in first:
            return f"an error naming no thread: {first}"
        return ""
    except Exception as error:
        return f"an unlocated {type(error).__name__}: {error}"
    return "no error"


# ----------------------------------------------------------------------------------------
# Tests


def _report(found: list[Disagreement], limit: int = 40) -> str:
    lines = [str(d) for d in found[:limit]]
    if len(found) > limit:
        lines.append(f"... and {len(found) - limit} more")
    return "\n".join(lines)


@pytest.mark.parametrize("group", list(GROUPS))
def test_every_op_matches_the_langref_on_every_path(group: str) -> None:
    found, compared = check_group(group)
    assert compared > 0
    assert not found, f"{len(found)} disagreements in the {group} group:\n{_report(found)}"


@pytest.mark.parametrize("group", list(GROUPS))
def test_undefined_behaviour_is_a_located_error_on_every_path(group: str) -> None:
    found, _ = check_faults(group)
    assert not found, f"{len(found)} faults not reported as the LangRef requires:\n{_report(found)}"


def test_the_catalog_covers_every_type_and_the_listed_ops() -> None:
    ops = {c.op.split()[0].split("<")[0] for c in CATALOG}
    for listed in (
        "arith.ceildivui", "arith.fptoui", "math.round", "math.roundeven", "math.asin",
        "math.acos", "math.sinh", "math.cosh", "math.asinh", "math.acosh", "math.atanh",
        "math.cbrt", "math.erf", "arith.bitcast", "arith.mulsi_extended",
        "arith.mului_extended", "arith.addui_extended", "math.ctlz", "math.cttz",
        "math.ctpop", "math.ipowi", "math.fpowi", "arith.remf", "arith.index_castui",
    ):  # fmt: skip
        assert listed in ops
    assert {t for c in CATALOG for t in c.operands} == {*INTS, *FLOATS}


def test_the_model_rounds_once_and_keeps_signed_zeros() -> None:
    f64, f32 = FLOAT_TYPES["f64"], FLOAT_TYPES["f32"]
    fma = evaluate("math.fma", [f64] * 3, [f64], [_float_bits("f64", v) for v in (
        1 + Fraction(1, 2**30), 1 - Fraction(1, 2**30), Fraction(-1))])  # fmt: skip
    assert isinstance(fma, Exact)
    assert decode(f64, fma.bits[0]).value == -Fraction(1, 2**60)
    i64 = INT_TYPES["i64"]
    big = (1 << 53) + (1 << 29) + 1
    to_f32 = evaluate("arith.sitofp", [i64], [f32], [big])
    assert isinstance(to_f32, Exact)
    assert decode(f32, to_f32.bits[0]).value == (1 << 53) + (1 << 30)
    maximum = evaluate("arith.maximumf", [f32, f32], [f32], [0, f32.sign_bit])
    assert maximum == Exact((0,))


XDSL_OPS = frozenset(
    (
        "arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori",
        "arith.shli", "arith.shrsi", "arith.divsi", "arith.remsi", "arith.floordivsi",
        "arith.cmpi", "arith.select", "arith.index_cast", "arith.addf", "arith.subf",
        "arith.mulf", "arith.minimumf", "arith.maximumf", "arith.cmpf", "math.exp",
        "math.log", "math.sqrt",
    )
)  # fmt: skip
"""The ops xDSL 0.74's interpreter implements (xdsl.interpreters.arith and .math)."""


def xdsl_compares(c: Combination) -> bool:
    """Whether xDSL's interpreter follows the LangRef for `c`. It computes every float op
    in Python floats (f64) and never rounds to f16, bf16 or f32: for those types it
    deviates from the LangRef (an f32 `addf` of 1 and 2**-30 gives 1 + 2**-30), so only
    f64 float ops are compared."""
    name = c.op.split()[0]
    if name not in XDSL_OPS:
        return False
    floats = [t for t in (*c.operands, *c.results) if t in FLOAT_TYPES]
    return all(t == "f64" for t in floats)


def xdsl_value(t: str, bits: int) -> object:
    if t == "f64":
        return float(np.array(bits, dtype=np.uint64).view(np.float64))
    if t == "i1":
        return bool(bits)
    return INT_TYPES[t].signed(bits)


def xdsl_bits(t: str, value: object) -> int:
    if t == "f64":
        return int(np.array(value, dtype=np.float64).view(np.uint64))
    return INT_TYPES[t].wrap(int(value))  # pyright: ignore[reportArgumentType]


def _xdsl_context() -> Any:
    """A context of xDSL's own dialects: its interpreter implements xDSL's op classes (not
    devplan's versions of `arith.cmpi` and the casts, which `devplan.context()` loads)."""
    from xdsl.context import Context
    from xdsl.universe import Universe

    ctx = Context()
    for name, factory in Universe.get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx


def check_xdsl(c: Combination) -> tuple[list[Disagreement], list[str], int]:
    """Run `c`'s defined cases through xDSL's interpreter: the disagreements, where xDSL
    raised instead of giving the LangRef's value, and how many results were compared."""
    from xdsl.interpreter import Interpreter
    from xdsl.interpreters.arith import ArithFunctions
    from xdsl.interpreters.func import FuncFunctions
    from xdsl.interpreters.math import MathFunctions

    params = ", ".join(f"%a{j}: {t}" for j, t in enumerate(c.operands))
    results = ", ".join(c.results)
    line = c.mlir([f"%a{j}" for j in range(len(c.operands))], ["%r"])
    module = devplan.parse(
        f"func.func @f({params}) -> ({results}) {{\n  {line}\n  func.return %r : {results}\n}}\n",
        ctx=_xdsl_context(),
    )
    interpreter = Interpreter(module)
    for functions in (ArithFunctions(), MathFunctions(), FuncFunctions()):
        interpreter.register_implementations(functions)
    x = cases(c)
    types = [scalar_type(t) for t in c.results]
    found: list[Disagreement] = []
    raised: list[str] = []
    compared = 0
    for i in x.defined:
        args = tuple(xdsl_value(t, v) for t, v in zip(c.operands, x.values[i], strict=True))
        try:
            (value,) = interpreter.call_op("f", args)
        except Exception as error:
            raised.append(f"{c} ({', '.join(map(str, args))}): {type(error).__name__}")
            continue
        compared += 1
        got = [xdsl_bits(c.results[0], value)]
        if not matches(x.expected[i], types, got):
            found.append(
                Disagreement(
                    c, "xdsl", x.values[i], _shown(c, got), show_expected(c, x.expected[i])
                )
            )
    return found, raised, compared


def test_xdsl_interpreter_agrees_where_it_follows_the_langref() -> None:
    """Where xDSL implements an op, it gives the LangRef's value, except that it computes
    floats in f64 only (`xdsl_compares`) and raises Python's OverflowError or ValueError
    where the LangRef gives inf or NaN (`math.exp` of a large value, `math.log` of zero or
    a negative value, `math.sqrt` of a negative value): those are xDSL's deviations, counted
    here and not compared."""
    found: list[Disagreement] = []
    raised: list[str] = []
    compared = 0
    for c in CATALOG:
        if xdsl_compares(c):
            f, r, n = check_xdsl(c)
            found += f
            raised += r
            compared += n
    assert compared > 10000
    assert all(
        r.startswith(("math.exp", "math.log", "math.sqrt"))
        and r.endswith(("OverflowError", "ValueError"))
        for r in raised
    ), "\n".join(r for r in raised[:20])
    assert not found, f"{len(found)} disagreements with xDSL's interpreter:\n{_report(found)}"


if __name__ == "__main__":
    everything: list[Disagreement] = []
    for name in GROUPS:
        everything += check_group(name)[0] + check_faults(name)[0]
    with open(sys.argv[1], "w") as out:
        out.write("\n".join(f"- {d}" for d in everything) + "\n")
    print(len(everything), "disagreements")
