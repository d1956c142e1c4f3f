"""What the scalar semantics of every path share that needs no compiled code: which float
ops have one definition (`semantics`' compiled ones) and which IEEE-754 defines exactly,
the narrow formats, the integer ops' undefined behaviour (fault kinds, op numbers, flags
and messages), and the conversions done in Python (bf16 bit patterns, integers rounded
once to floats).

Apart from `semantics` so that code which only classifies ops, words a fault or converts
a value imports neither Numba nor the compiled definitions: a run on the NumPy kernel
backend that needs no transcendental never builds a Numba function. `semantics` imports
these names too (its compiled code uses the fault kinds), so `semantics.<name>` still
names each of them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# ---------------------------------------------------------------- float ops

UNARY_DEFINED: frozenset[str] = frozenset(
    {
        "math.exp", "math.exp2", "math.expm1", "math.log", "math.log2", "math.log10",
        "math.log1p", "math.sin", "math.cos", "math.tan", "math.asin", "math.acos",
        "math.atan", "math.sinh", "math.cosh", "math.tanh", "math.asinh", "math.acosh",
        "math.atanh", "math.cbrt", "math.erf", "math.round", "math.rsqrt",
    }
)  # fmt: skip
"""Unary float ops whose result a library could choose (or that NumPy gets wrong): each
has one compiled definition in `semantics`."""

BINARY_DEFINED: frozenset[str] = frozenset(
    {
        "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf",
        "math.powf", "math.atan2", "math.copysign",
    }
)  # fmt: skip
"""Binary float ops with one definition in `semantics`."""

DEFINED_OPS: frozenset[str] = UNARY_DEFINED | BINARY_DEFINED | {"math.fma"}
"""Float ops every path computes through `semantics`' `scalar`/`ufunc` (one compiled
definition), or NumPy code checked bit for bit against it (`numpy_semantics`)."""

EXACT_UNARY: dict[str, str] = {
    "arith.negf": "negative",
    "math.absf": "absolute",
    "math.sqrt": "sqrt",
    "math.floor": "floor",
    "math.ceil": "ceil",
    "math.trunc": "trunc",
    "math.roundeven": "rint",
}
"""Unary float ops IEEE-754 defines exactly: NumPy's ufunc (by name) is the definition."""

EXACT_BINARY: dict[str, str] = {
    "arith.addf": "add",
    "arith.subf": "subtract",
    "arith.mulf": "multiply",
    "arith.divf": "divide",
    "arith.remf": "fmod",
}
"""Binary float ops IEEE-754 defines exactly (NumPy's ufunc by name)."""

FLOAT_OPS: frozenset[str] = DEFINED_OPS | frozenset(EXACT_UNARY) | frozenset(EXACT_BINARY)
"""Every float arithmetic op of the three paths."""

EXP_F32_INV_LN2 = 1.4426950408889634
"""`math.exp` of f32: 1 / ln 2, rounded to f64."""

EXP_F32_LN2 = 0.6931471805599453
"""`math.exp` of f32: ln 2, rounded to f64."""

EXP_F32_LIMITS = (-160.0, 130.0)
"""`math.exp` of f32 (`semantics._exp_f32`, `numpy_semantics.exp_f32`): the range
`x / ln 2` is clamped to. Beyond it the
result is 0 or +inf in f32 anyway (e^x underflows below x = -103.98 and overflows above
88.73), and inside it `2^k` is a normal f64 whose exponent bits are `k + 1023`."""

EXP_F32_TAYLOR = tuple(1.0 / math.factorial(n) for n in range(11, -1, -1))
"""`math.exp` of f32: the Taylor coefficients 1/n! of e^t, highest first (Horner's order),
each rounded to f64. Over |t| <= ln(2) / 2 the polynomial of degree 11, evaluated in f64,
is within a relative 2^-46 of e^t, far below the f32 result's half ulp (2^-25)."""


def arity(name: str) -> int:
    if name in UNARY_DEFINED or name in EXACT_UNARY:
        return 1
    if name in BINARY_DEFINED or name in EXACT_BINARY:
        return 2
    return 3


FORMATS: dict[str, tuple[int, int, int]] = {"f16": (11, -14, 15), "bf16": (8, -126, 127)}
"""Narrow float formats: (precision in bits with the implicit one, minimum normal exponent,
maximum exponent)."""


# ---------------------------------------------------------------- integer undefined behaviour
# What the LangRef leaves undefined is an error on every path, worded once here.

SIGNED_OVERFLOW_DIVISIONS = ("divsi", "ceildivsi", "floordivsi")
"""Signed divisions whose quotient overflows for the minimum value divided by -1
(`remsi` does not: its result, 0, fits)."""


def overflow_flags(op: Any) -> tuple[str, ...]:
    """The `nsw`/`nuw` flags of an `addi`/`subi`/`muli`/`shli` (sorted), else ()."""
    attr = op.properties.get("overflowFlags")
    if attr is None:
        return ()
    return tuple(sorted(str(flag.value) for flag in attr.data))


def overflow_message(op: str, flag: str, width: int) -> str:
    kind = "signed" if flag == "nsw" else "unsigned"
    return (
        f"'arith.{op}' with the {flag} flag overflows: the result does not fit in a {kind} i{width}"
    )


def fptoi_message(op: str, width: int) -> str:
    reading = "the unsigned range" if op == "fptoui" else "the range"
    return f"'arith.{op}' converts NaN or a value outside {reading} of i{width}"


IPOWI_ZERO_MESSAGE = "'math.ipowi' raises 0 to a negative power (it divides by zero)"


def division_overflow_message(op: str, width: int) -> str:
    return f"'arith.{op}' divides the minimum i{width} value by -1: the quotient overflows"


def exact_overflows(op: str, flag: str, x: int, y: int, width: int) -> bool:
    """Whether `op` (addi, subi, muli, shli) of the integers `x`, `y` (in any reading)
    breaks its `flag` (nsw: as signed values; nuw: as unsigned values), computed exactly."""
    mask = (1 << width) - 1
    if flag == "nsw":
        half = 1 << (width - 1)
        a, b = ((x + half) & mask) - half, ((y + half) & mask) - half
        lo, hi = -half, half - 1
    else:
        a, b = x & mask, y & mask
        lo, hi = 0, mask
    if op == "shli":
        b = y & mask
        if b >= width:
            return False  # an over-wide shift is reported as such
        exact = a << b
    else:
        exact = {"addi": a + b, "subi": a - b, "muli": a * b}[op]
    return not lo <= exact <= hi


# ---------------------------------------------------------------- integer ops and faults

INT_BINARY_OPS: tuple[str, ...] = (
    "arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori",
    "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui",
    "arith.divsi", "arith.remsi", "arith.floordivsi", "arith.ceildivsi",
    "arith.divui", "arith.remui", "arith.ceildivui", "arith.shli", "arith.shrsi", "arith.shrui",
)  # fmt: skip
"""The binary integer ops of `arith` (`semantics.INT_BINARY_DEFS` defines each)."""

DIVISIONS = ("divsi", "remsi", "floordivsi", "ceildivsi", "divui", "remui", "ceildivui")
SHIFTS = ("shli", "shrsi", "shrui")

NO_FAULT, DIVIDES_BY_ZERO, QUOTIENT_OVERFLOWS, SHIFT_TOO_WIDE = 0, 1, 2, 3
NSW_OVERFLOW, NUW_OVERFLOW = 4, 5
"""What `int_fault` finds: undefined behaviour of an integer op, by kind."""

FAULTING_OPS = (*DIVISIONS, *SHIFTS, "addi", "subi", "muli")
"""The integer ops with undefined behaviour, numbered for `int_fault`."""


def fault_code(op: str) -> int:
    """`op`'s number for `int_fault` (`op` without its dialect: `divsi`)."""
    return FAULTING_OPS.index(op)


def flag_bits(flags: tuple[str, ...]) -> int:
    """The `flags` operand of `int_fault`."""
    return (1 if "nsw" in flags else 0) | (2 if "nuw" in flags else 0)


def fault_message(kind: int, op: str, width: int) -> str:
    """The message of fault `kind` (from `int_fault`) of `op` (`divsi`) on i`width`."""
    if kind == DIVIDES_BY_ZERO:
        return f"'arith.{op}' divides by zero"
    if kind == QUOTIENT_OVERFLOWS:
        return division_overflow_message(op, width)
    if kind == SHIFT_TOO_WIDE:
        return shift_message(op, width)
    return overflow_message(op, "nsw" if kind == NSW_OVERFLOW else "nuw", width)


def shift_message(op: str, width: int) -> str:
    return f"'arith.{op}' shifts an i{width} by a negative amount or by {width} bits or more"


INT_OPS_WITH_DEFINITIONS = ("math.ctlz", "math.cttz", "math.ctpop", "math.ipowi")


# ---------------------------------------------------------------- conversions


def bf16_value_of_bits(bits: Any) -> np.float32:
    """The f32 holding a bf16 bit pattern (its top half): NaNs keep their bits."""
    return np.uint32(int(bits) << 16).view(np.float32)


def bf16_bits_of_value(x: Any) -> np.uint16:
    """The bf16 bit pattern of an f32 holding a bf16 value (a NaN whose payload would
    vanish stays a NaN)."""
    u = int(np.array(x, dtype=np.float32).view(np.uint32))
    if math.isnan(x) and (u >> 16) & 0x7F == 0:
        u |= 0x400000
    return np.uint16(u >> 16)


def int_to_float(x: int, dtype: np.dtype[Any], precision: int | None = None) -> Any:
    """The integer `x` rounded once (to nearest, ties to even) to the float `dtype` (to
    `precision` bits, held in `dtype`, when given: bf16 is 8 bits held in f32).

    Python's int -> float conversion rounds to f64; rounding that to f32 again would
    round twice (2**53 + 2**29 + 1 would become 2**53 instead of 2**53 + 2**30)."""
    p = precision or np.finfo(dtype).nmant + 1
    n = abs(x).bit_length()
    if n > p:
        shift = n - p
        q, r = divmod(abs(x), 1 << shift)
        half = 1 << (shift - 1)
        if r > half or (r == half and q & 1):
            q += 1
        x = (q << shift) if x >= 0 else -(q << shift)
    with np.errstate(over="ignore"):
        return dtype.type(float(x))
