"""The MLIR LangRef semantics of scalar `arith` and `math` ops, computed exactly.

The oracle of `tests/runtime/test_arith_semantics.py`: it shares no code with host code or the
kernel backends, and computes each op's result the way the LangRef defines it:

* Integers are bit patterns of their width (`index` is 64 bits); an op reads them as
  signed (two's complement) or unsigned as the op says, computes with Python's
  unbounded ints and wraps to the width. `i1` is a 1-bit integer: true is 1 unsigned
  and -1 signed.
* Floats (`f16`, `bf16`, `f32`, `f64`) are IEEE-754 binary formats. A value is decoded
  from its bits into NaN, a signed infinity, or a signed exact `Fraction` (signed zeros
  kept); an op computes the exact real result and rounds it once to the nearest value
  of the format, ties to even (`round_to_format`, written here with subnormals,
  overflow to infinity and signed zeros). NaN payloads are not specified by the
  LangRef, so any NaN matches an expected NaN.
* Undefined behaviour (division by zero, signed division overflow, `nsw`/`nuw`
  overflow, shifts by the width or more, float-to-integer conversion of NaN or of a
  value outside the integer type) is `Fault`: devplan must report it as a located
  run-time error.
* Transcendental functions have no exact answer in a finite format: their expectation
  is `Near`, the real result (mpmath at 256 bits, special values per C99 Annex F,
  which is what MLIR lowers them to through libm) that the computed value must lie
  within `ulps` units in the last place of.

`evaluate(op, operand_types, result_types, operands)` is the entry point; operands are
bit patterns, the expectation says what the results must be.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

# ----------------------------------------------------------------------------------------
# Types


@dataclass(frozen=True)
class IntType:
    """An integer type: `iN`, or `index` (64 bits)."""

    name: str
    width: int

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    def signed(self, bits: int) -> int:
        """`bits` read as a two's-complement integer."""
        return bits - (1 << self.width) if bits >> (self.width - 1) else bits

    def wrap(self, value: int) -> int:
        """The bit pattern of `value` modulo 2**width."""
        return value & self.mask

    @property
    def smin(self) -> int:
        return -(1 << (self.width - 1))

    @property
    def smax(self) -> int:
        return (1 << (self.width - 1)) - 1


@dataclass(frozen=True)
class FloatFormat:
    """An IEEE-754 binary format: exponent field width and precision (hidden bit included)."""

    name: str
    exponent_bits: int
    precision: int

    @property
    def width(self) -> int:
        return self.exponent_bits + self.precision

    @property
    def bias(self) -> int:
        return (1 << (self.exponent_bits - 1)) - 1

    @property
    def emin(self) -> int:
        return 1 - self.bias

    @property
    def emax(self) -> int:
        return self.bias

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)

    @property
    def inf_bits(self) -> int:
        return ((1 << self.exponent_bits) - 1) << (self.precision - 1)

    @property
    def nan_bits(self) -> int:
        return self.inf_bits | (1 << (self.precision - 2))

    @property
    def max_finite(self) -> Fraction:
        return Fraction((1 << self.precision) - 1) * Fraction(2) ** (self.emax - self.precision + 1)


INT_TYPES = {f"i{w}": IntType(f"i{w}", w) for w in (1, 8, 16, 32, 64)} | {
    "index": IntType("index", 64)
}
FLOAT_TYPES = {
    "f16": FloatFormat("f16", 5, 11),
    "bf16": FloatFormat("bf16", 8, 8),
    "f32": FloatFormat("f32", 8, 24),
    "f64": FloatFormat("f64", 11, 53),
}
ScalarType = IntType | FloatFormat


def scalar_type(name: str) -> ScalarType:
    """The type named `name` (`i32`, `index`, `bf16`, ...)."""
    return INT_TYPES[name] if name in INT_TYPES else FLOAT_TYPES[name]


# ----------------------------------------------------------------------------------------
# Expectations


@dataclass(frozen=True)
class Exact:
    """The results must be these bit patterns (a float NaN matches any NaN; `alternatives`
    lists other acceptable patterns, e.g. either zero for `maxnumf(+0, -0)`)."""

    bits: tuple[int, ...]
    alternatives: tuple[tuple[int, ...], ...] = ()


@dataclass(frozen=True)
class Near:
    """The result must be within `ulps` units in the last place of the real value `value`
    (a Fraction), or be its correctly rounded value `rounded` (which covers infinities)."""

    value: Fraction
    rounded: int
    ulps: float


@dataclass(frozen=True)
class Fault:
    """Undefined behaviour that devplan reports as a located run-time error."""

    reason: str


Expectation = Exact | Near | Fault


class Unsupported(Exception):
    """An op or type combination the model does not define."""


# ----------------------------------------------------------------------------------------
# Floats: decoding and correctly rounded encoding


@dataclass(frozen=True)
class Real:
    """A decoded float: NaN, a signed infinity, or a signed finite value (zeros signed)."""

    kind: str  # "nan", "inf", "finite"
    negative: bool = False
    magnitude: Fraction = Fraction(0)

    @property
    def value(self) -> Fraction:
        return -self.magnitude if self.negative else self.magnitude

    @property
    def is_nan(self) -> bool:
        return self.kind == "nan"

    @property
    def is_inf(self) -> bool:
        return self.kind == "inf"

    @property
    def is_zero(self) -> bool:
        return self.kind == "finite" and self.magnitude == 0


NAN = Real("nan")


def finite(value: Fraction, negative_zero: bool = False) -> Real:
    if value == 0:
        return Real("finite", negative_zero)
    return Real("finite", value < 0, abs(value))


def infinity(negative: bool) -> Real:
    return Real("inf", negative)


def decode(fmt: FloatFormat, bits: int) -> Real:
    negative = bool(bits & fmt.sign_bit)
    exponent = (bits >> (fmt.precision - 1)) & ((1 << fmt.exponent_bits) - 1)
    fraction = bits & ((1 << (fmt.precision - 1)) - 1)
    if exponent == (1 << fmt.exponent_bits) - 1:
        return Real("nan", negative) if fraction else infinity(negative)
    if exponent == 0:
        magnitude = Fraction(fraction) * Fraction(2) ** (fmt.emin - fmt.precision + 1)
    else:
        significand = fraction | (1 << (fmt.precision - 1))
        magnitude = Fraction(significand) * Fraction(2) ** (exponent - fmt.bias - fmt.precision + 1)
    return Real("finite", negative, magnitude)


def exponent_of(q: Fraction) -> int:
    """floor(log2(q)) for q > 0."""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    elif Fraction(2) ** (e + 1) <= q:
        e += 1
    return e


def round_to_format(fmt: FloatFormat, value: Real) -> int:
    """The bits of `value` rounded to `fmt`: nearest, ties to even, overflow to infinity."""
    sign = fmt.sign_bit if value.negative else 0
    if value.is_nan:
        return fmt.nan_bits
    if value.is_inf:
        return sign | fmt.inf_bits
    q = value.magnitude
    if q == 0:
        return sign
    e = max(exponent_of(q), fmt.emin)
    m = round(q * Fraction(2) ** (fmt.precision - 1 - e))  # Fraction rounds ties to even
    if m == 1 << fmt.precision:
        m >>= 1
        e += 1
    if e > fmt.emax:
        return sign | fmt.inf_bits
    if m < 1 << (fmt.precision - 1):  # subnormal (or rounded to zero)
        return sign | m
    biased = e + fmt.bias
    return sign | (biased << (fmt.precision - 1)) | (m - (1 << (fmt.precision - 1)))


def ulp_of(fmt: FloatFormat, q: Fraction) -> Fraction:
    """The spacing of `fmt`'s values at magnitude |q| (the subnormal spacing below 2**emin)."""
    e = fmt.emin if q == 0 else max(exponent_of(abs(q)), fmt.emin)
    return Fraction(2) ** (e - fmt.precision + 1)


def ulp_error(fmt: FloatFormat, bits: int, reference: Fraction) -> float:
    """How many units in the last place the float `bits` is from the real `reference`
    (infinity when `bits` is not finite)."""
    got = decode(fmt, bits)
    if got.kind != "finite":
        return math.inf
    return float(abs(got.value - reference) / ulp_of(fmt, reference))


def matches(expected: Expectation, result_types: Sequence[ScalarType], got: Sequence[int]) -> bool:
    """Whether result bit patterns `got` satisfy `expected` (never for a `Fault`)."""
    if isinstance(expected, Fault):
        return False
    if isinstance(expected, Near):
        fmt = result_types[0]
        assert isinstance(fmt, FloatFormat)
        if _same_bits(fmt, expected.rounded, got[0]):
            return True
        if decode(fmt, expected.rounded).kind != "finite":
            return False
        return ulp_error(fmt, got[0], expected.value) <= expected.ulps
    return any(
        all(_same_bits(t, e, g) for t, e, g in zip(result_types, option, got, strict=True))
        for option in (expected.bits, *expected.alternatives)
    )


def _same_bits(type_: ScalarType, expected: int, got: int) -> bool:
    if isinstance(type_, FloatFormat) and decode(type_, expected).is_nan:
        return decode(type_, got).is_nan
    return expected == got


# ----------------------------------------------------------------------------------------
# The ops

IntOp = Callable[[IntType, Sequence[int]], Expectation]
FloatOp = Callable[[FloatFormat, Sequence[Real]], Expectation]


def _is_signalling(fmt: FloatFormat, bits: int) -> bool:
    """Whether `bits` is a signalling NaN (quiet bit clear)."""
    return decode(fmt, bits).is_nan and not bits & (1 << (fmt.precision - 2))


def _int(t: IntType, *values: int) -> Exact:
    return Exact(tuple(t.wrap(v) for v in values))


def _float(fmt: FloatFormat, value: Real) -> Exact:
    return Exact((round_to_format(fmt, value),))


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _divide(kind: str) -> IntOp:
    def run(t: IntType, args: Sequence[int]) -> Expectation:
        signed = kind.endswith("si")
        a, b = (t.signed(x) for x in args) if signed else args
        if b == 0:
            return Fault("division by zero")
        if signed and kind != "remsi" and a == t.smin and b == -1:
            return Fault("signed division overflow (minimum value divided by -1)")
        if kind in ("divsi", "divui"):
            return _int(t, _trunc_div(a, b))
        if kind in ("remsi", "remui"):
            return _int(t, a - _trunc_div(a, b) * b)
        if kind == "floordivsi":
            return _int(t, a // b)
        return _int(t, -(-a // b))  # ceildivsi, ceildivui

    return run


def _shift(kind: str) -> IntOp:
    def run(t: IntType, args: Sequence[int]) -> Expectation:
        a, amount = args
        if amount >= t.width:  # the amount is read as unsigned
            return Fault("shift by the bit width or more")
        if kind == "shli":
            return _int(t, a << amount)
        if kind == "shrui":
            return _int(t, a >> amount)
        return _int(t, t.signed(a) >> amount)

    return run


def _overflow_checked(combine: Callable[[int, int], int], flags: str) -> IntOp:
    def run(t: IntType, args: Sequence[int]) -> Expectation:
        a, b = args
        if "nsw" in flags:
            exact = combine(t.signed(a), t.signed(b))
            if not t.smin <= exact <= t.smax:
                return Fault("signed overflow of an op marked nsw")
        if "nuw" in flags and not 0 <= combine(a, b) <= t.mask:
            return Fault("unsigned overflow of an op marked nuw")
        return _int(t, combine(a, b))

    return run


def _checked_shift(flags: str) -> IntOp:
    def run(t: IntType, args: Sequence[int]) -> Expectation:
        if args[1] >= t.width:
            return Fault("shift by the bit width or more")
        return _overflow_checked(lambda a, b: a << b, flags)(t, args)

    return run


def _ipowi(t: IntType, args: Sequence[int]) -> Expectation:
    """Signed `base ** exponent` wrapped to the width. The LangRef is silent on negative
    exponents; MLIR's own lowering (math-to-funcs) computes 1 / base**-exponent in
    integer division, so zero to a negative power divides by zero."""
    base, exponent = (t.signed(x) for x in args)
    if exponent >= 0:
        return _int(t, pow(base, exponent, 1 << t.width))
    # A negative power is 1 / base**-exponent in integer division.
    if base == 0:
        return Fault("division by zero (zero to a negative power)")
    if base == 1:
        return _int(t, 1)
    if base == -1:
        return _int(t, -1 if exponent % 2 else 1)
    return _int(t, 0)


def _extended(kind: str) -> IntOp:
    def run(t: IntType, args: Sequence[int]) -> Expectation:
        a, b = args
        if kind == "addui_extended":
            total = a + b
            return Exact((t.wrap(total), int(total > t.mask)))
        if kind == "mulsi_extended":
            a, b = t.signed(a), t.signed(b)
        product = a * b
        return Exact((t.wrap(product), t.wrap(product >> t.width)))

    return run


def _count(kind: str) -> IntOp:
    def run(t: IntType, args: Sequence[int]) -> Expectation:
        (a,) = args
        if kind == "ctpop":
            return _int(t, a.bit_count())
        if kind == "ctlz":
            return _int(t, t.width - a.bit_length())
        return _int(t, t.width if a == 0 else (a & -a).bit_length() - 1)

    return run


INT_OPS: dict[str, IntOp] = {
    "arith.addi": _overflow_checked(lambda a, b: a + b, ""),
    "arith.subi": _overflow_checked(lambda a, b: a - b, ""),
    "arith.muli": _overflow_checked(lambda a, b: a * b, ""),
    "arith.andi": lambda t, a: _int(t, a[0] & a[1]),
    "arith.ori": lambda t, a: _int(t, a[0] | a[1]),
    "arith.xori": lambda t, a: _int(t, a[0] ^ a[1]),
    "arith.maxsi": lambda t, a: _int(t, max(t.signed(a[0]), t.signed(a[1]))),
    "arith.minsi": lambda t, a: _int(t, min(t.signed(a[0]), t.signed(a[1]))),
    "arith.maxui": lambda t, a: _int(t, max(a)),
    "arith.minui": lambda t, a: _int(t, min(a)),
    "math.absi": lambda t, a: _int(t, abs(t.signed(a[0]))),
    "math.ipowi": _ipowi,
    "arith.addui_extended": _extended("addui_extended"),
    "arith.mulsi_extended": _extended("mulsi_extended"),
    "arith.mului_extended": _extended("mului_extended"),
}
for _kind in ("divsi", "divui", "remsi", "remui", "ceildivsi", "ceildivui", "floordivsi"):
    INT_OPS[f"arith.{_kind}"] = _divide(_kind)
for _kind in ("shli", "shrsi", "shrui"):
    INT_OPS[f"arith.{_kind}"] = _shift(_kind)
for _kind in ("ctlz", "cttz", "ctpop"):
    INT_OPS[f"math.{_kind}"] = _count(_kind)
for _flags in ("nsw", "nuw", "nsw,nuw"):
    INT_OPS[f"arith.addi<{_flags}>"] = _overflow_checked(lambda a, b: a + b, _flags)
    INT_OPS[f"arith.subi<{_flags}>"] = _overflow_checked(lambda a, b: a - b, _flags)
    INT_OPS[f"arith.muli<{_flags}>"] = _overflow_checked(lambda a, b: a * b, _flags)
    INT_OPS[f"arith.shli<{_flags}>"] = _checked_shift(_flags)

CMPI: dict[str, Callable[[IntType, int, int], bool]] = {
    "eq": lambda t, a, b: a == b,
    "ne": lambda t, a, b: a != b,
    "slt": lambda t, a, b: t.signed(a) < t.signed(b),
    "sle": lambda t, a, b: t.signed(a) <= t.signed(b),
    "sgt": lambda t, a, b: t.signed(a) > t.signed(b),
    "sge": lambda t, a, b: t.signed(a) >= t.signed(b),
    "ult": lambda t, a, b: a < b,
    "ule": lambda t, a, b: a <= b,
    "ugt": lambda t, a, b: a > b,
    "uge": lambda t, a, b: a >= b,
}


def _add(x: Real, y: Real) -> Real:
    if x.is_nan or y.is_nan:
        return NAN
    if x.is_inf or y.is_inf:
        if x.is_inf and y.is_inf and x.negative != y.negative:
            return NAN
        return x if x.is_inf else y
    total = x.value + y.value
    # An exact zero sum is -0 only when both addends are -0 (round to nearest).
    return finite(total, negative_zero=x.negative and y.negative)


def _negate(x: Real) -> Real:
    return x if x.is_nan else Real(x.kind, not x.negative, x.magnitude)


def _mul(x: Real, y: Real) -> Real:
    if x.is_nan or y.is_nan:
        return NAN
    negative = x.negative != y.negative
    if x.is_inf or y.is_inf:
        return NAN if x.is_zero or y.is_zero else infinity(negative)
    return Real("finite", negative, x.magnitude * y.magnitude)


def _div(x: Real, y: Real) -> Real:
    if x.is_nan or y.is_nan:
        return NAN
    negative = x.negative != y.negative
    if x.is_inf:
        return NAN if y.is_inf else infinity(negative)
    if y.is_inf:
        return Real("finite", negative)
    if y.is_zero:
        return NAN if x.is_zero else infinity(negative)
    return Real("finite", negative, x.magnitude / y.magnitude)


def _rem(x: Real, y: Real) -> Real:
    """fmod: x - trunc(x / y) * y, exact, with the sign of x."""
    if x.is_nan or y.is_nan or x.is_inf or y.is_zero:
        return NAN
    if y.is_inf:
        return x
    q = x.magnitude / y.magnitude
    return Real("finite", x.negative, x.magnitude - (q.numerator // q.denominator) * y.magnitude)


def _order_key(x: Real) -> tuple[Fraction | float, int]:
    """A total order on non-NaN values in which -0 < +0."""
    if x.is_inf:
        return (-math.inf if x.negative else math.inf, 0)
    return (x.value, 0 if x.negative else 1)


def _extremum(pick_max: bool, nan_wins: bool) -> Callable[[FloatFormat, Sequence[Real]], Exact]:
    def run(fmt: FloatFormat, args: Sequence[Real]) -> Exact:
        x, y = args
        if x.is_nan or y.is_nan:
            if nan_wins or (x.is_nan and y.is_nan):
                return _float(fmt, NAN)
            return _float(fmt, y if x.is_nan else x)
        if not nan_wins and x.is_zero and y.is_zero and x.negative != y.negative:
            # maxnumf/minnumf: either zero may be returned.
            return Exact((fmt.sign_bit,), ((0,),))
        lo, hi = sorted((x, y), key=_order_key)
        return _float(fmt, hi if pick_max else lo)

    return run


def _fma(x: Real, y: Real, z: Real) -> Real:
    return _add(_mul(x, y), z)


def _sqrt(fmt: FloatFormat, x: Real) -> Real:
    if x.is_nan or (x.negative and not x.is_zero):
        return NAN
    if x.is_zero or x.is_inf:
        return x
    # floor(sqrt(q) * 2**k) for a large k decides the rounding: the root of a format's
    # value is never exactly half-way between two values of the format.
    k = fmt.precision + 8 - exponent_of(x.magnitude) // 2
    scaled = x.magnitude * Fraction(4) ** k
    root = math.isqrt(scaled.numerator // scaled.denominator)
    sticky = Fraction(1, 2) if root * root != scaled else Fraction(0)
    return Real("finite", False, (root + sticky) / Fraction(2) ** k)


def _integral(mode: str) -> Callable[[Real], Real]:
    def run(x: Real) -> Real:
        if x.kind != "finite":
            return x
        v = x.value
        floor = v.numerator // v.denominator
        if mode == "floor":
            r = floor
        elif mode == "ceil":
            r = -((-v.numerator) // v.denominator)
        elif mode == "trunc":
            r = floor if v >= 0 else -((-v.numerator) // v.denominator)
        elif mode == "round":  # half away from zero
            r = math.floor(abs(v) + Fraction(1, 2)) * (-1 if v < 0 else 1)
        else:  # roundeven
            r = round(v)
        return finite(Fraction(r), negative_zero=x.negative)

    return run


def _copysign(x: Real, y: Real) -> Real:
    """x with the sign bit of y (a NaN's sign bit too)."""
    if x.is_nan:
        return NAN
    return Real(x.kind, y.negative, x.magnitude)


FLOAT_EXACT: dict[str, Callable[[FloatFormat, Sequence[Real]], Real]] = {
    "arith.addf": lambda f, a: _add(a[0], a[1]),
    "arith.subf": lambda f, a: _add(a[0], _negate(a[1])),
    "arith.mulf": lambda f, a: _mul(a[0], a[1]),
    "arith.divf": lambda f, a: _div(a[0], a[1]),
    "arith.remf": lambda f, a: _rem(a[0], a[1]),
    "arith.negf": lambda f, a: _negate(a[0]),
    "math.absf": lambda f, a: a[0] if a[0].is_nan else Real(a[0].kind, False, a[0].magnitude),
    "math.copysign": lambda f, a: _copysign(a[0], a[1]),
    "math.fma": lambda f, a: _fma(a[0], a[1], a[2]),
    "math.sqrt": lambda f, a: _sqrt(f, a[0]),
    "math.floor": lambda f, a: _integral("floor")(a[0]),
    "math.ceil": lambda f, a: _integral("ceil")(a[0]),
    "math.trunc": lambda f, a: _integral("trunc")(a[0]),
    "math.round": lambda f, a: _integral("round")(a[0]),
    "math.roundeven": lambda f, a: _integral("roundeven")(a[0]),
}
FLOAT_SELECT: dict[str, Callable[[FloatFormat, Sequence[Real]], Exact]] = {
    "arith.maximumf": _extremum(pick_max=True, nan_wins=True),
    "arith.minimumf": _extremum(pick_max=False, nan_wins=True),
    "arith.maxnumf": _extremum(pick_max=True, nan_wins=False),
    "arith.minnumf": _extremum(pick_max=False, nan_wins=False),
}


def _compare(x: Real, y: Real) -> str:
    """'unordered', 'lt', 'eq' or 'gt'."""
    if x.is_nan or y.is_nan:
        return "unordered"
    kx, ky = _order_key(x)[0], _order_key(y)[0]
    return "lt" if kx < ky else "gt" if kx > ky else "eq"


CMPF: dict[str, frozenset[str]] = {
    "false": frozenset(),
    "oeq": frozenset({"eq"}),
    "ogt": frozenset({"gt"}),
    "oge": frozenset({"gt", "eq"}),
    "olt": frozenset({"lt"}),
    "ole": frozenset({"lt", "eq"}),
    "one": frozenset({"lt", "gt"}),
    "ord": frozenset({"lt", "gt", "eq"}),
    "ueq": frozenset({"eq", "unordered"}),
    "ugt": frozenset({"gt", "unordered"}),
    "uge": frozenset({"gt", "eq", "unordered"}),
    "ult": frozenset({"lt", "unordered"}),
    "ule": frozenset({"lt", "eq", "unordered"}),
    "une": frozenset({"lt", "gt", "unordered"}),
    "uno": frozenset({"unordered"}),
    "true": frozenset({"lt", "gt", "eq", "unordered"}),
}


# ----------------------------------------------------------------------------------------
# Conversions


def _convert(op: str, source: ScalarType, target: ScalarType, bits: int) -> Expectation:
    if op == "arith.bitcast":
        return Exact((bits,))
    if isinstance(source, IntType) and isinstance(target, IntType):
        if op in ("arith.extsi", "arith.index_cast") or (
            op == "arith.trunci" and target.width < source.width
        ):
            return _int(target, source.signed(bits))
        return _int(target, bits)  # extui, trunci
    if isinstance(source, IntType) and isinstance(target, FloatFormat):
        value = source.signed(bits) if op == "arith.sitofp" else bits
        return _float(target, finite(Fraction(value)))
    if isinstance(source, FloatFormat) and isinstance(target, IntType):
        x = decode(source, bits)
        if x.kind != "finite":
            return Fault(f"conversion of {x.kind} to an integer")
        v = x.value
        truncated = v.numerator // v.denominator if v >= 0 else -((-v.numerator) // v.denominator)
        lo, hi = (target.smin, target.smax) if op == "arith.fptosi" else (0, target.mask)
        if not lo <= truncated <= hi:
            return Fault(f"conversion of a value outside the range of {target.name}")
        return _int(target, truncated)
    assert isinstance(source, FloatFormat)
    assert isinstance(target, FloatFormat)
    return _float(target, decode(source, bits))


CONVERSIONS = (
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.index_cast",
    "arith.sitofp",
    "arith.uitofp",
    "arith.fptosi",
    "arith.fptoui",
    "arith.extf",
    "arith.truncf",
    "arith.bitcast",
)


# ----------------------------------------------------------------------------------------
# Transcendental functions: mpmath with C99 Annex F special values

TRANSCENDENTAL_UNARY = (
    "math.exp", "math.exp2", "math.expm1", "math.log", "math.log2", "math.log10",
    "math.log1p", "math.sin", "math.cos", "math.tan", "math.asin", "math.acos",
    "math.atan", "math.sinh", "math.cosh", "math.tanh", "math.asinh", "math.acosh",
    "math.atanh", "math.cbrt", "math.erf", "math.rsqrt",
)  # fmt: skip
TRANSCENDENTAL_BINARY = ("math.powf", "math.atan2")
TRANSCENDENTAL = (*TRANSCENDENTAL_UNARY, *TRANSCENDENTAL_BINARY, "math.fpowi")

ODD_AT_ZERO = frozenset(
    (
        "sin",
        "tan",
        "asin",
        "atan",
        "sinh",
        "tanh",
        "asinh",
        "atanh",
        "expm1",
        "log1p",
        "cbrt",
        "erf",
    )
)
"""Functions with f(±0) = ±0."""

LIMITS_AT_INF: dict[str, tuple[Real | None, Real | None]] = {
    # name: (f(+inf), f(-inf)); None = NaN
    "exp": (infinity(False), finite(Fraction(0))),
    "exp2": (infinity(False), finite(Fraction(0))),
    "expm1": (infinity(False), finite(Fraction(-1))),
    "log": (infinity(False), None),
    "log2": (infinity(False), None),
    "log10": (infinity(False), None),
    "log1p": (infinity(False), None),
    "sin": (None, None),
    "cos": (None, None),
    "tan": (None, None),
    "asin": (None, None),
    "acos": (None, None),
    "sinh": (infinity(False), infinity(True)),
    "cosh": (infinity(False), infinity(False)),
    "tanh": (finite(Fraction(1)), finite(Fraction(-1))),
    "asinh": (infinity(False), infinity(True)),
    "acosh": (infinity(False), None),
    "atanh": (None, None),
    "cbrt": (infinity(False), infinity(True)),
    "erf": (finite(Fraction(1)), finite(Fraction(-1))),
    "rsqrt": (finite(Fraction(0)), None),
}

DEFAULT_ULPS = {"f16": 1.0, "bf16": 1.0, "f32": 2.0, "f64": 2.0}
"""The error bound stated for transcendental functions, in units in the last place."""


def _mpmath() -> Any:
    """mpmath (a test dependency, untyped), imported when a transcendental is evaluated."""
    return importlib.import_module("mpmath")


def _mp_value(x: Real) -> Any:
    mpmath = _mpmath()

    return mpmath.mpf(x.value.numerator) / x.value.denominator


def _to_fraction(value: Any) -> Fraction:
    mpmath = _mpmath()

    sign, mantissa, exponent, size = mpmath.mpf(value)._mpf_
    # Far outside every format (exp of a huge value), keep a stand-in that rounds the same.
    if int(exponent) + int(size) > _FAR:
        magnitude = Fraction(2) ** _FAR
    elif int(exponent) + int(size) < -_FAR:
        magnitude = Fraction(1, 2**_FAR)
    else:
        magnitude = Fraction(int(mantissa)) * Fraction(2) ** int(exponent)
    return -magnitude if sign else magnitude


_FAR = 1 << 14
"""log2 of a magnitude beyond every format's range (f64 spans 2**-1074 .. 2**1024)."""


DOMAINS: dict[str, Callable[[Fraction], bool]] = {
    "log": lambda v: v > 0,
    "log2": lambda v: v > 0,
    "log10": lambda v: v > 0,
    "log1p": lambda v: v >= -1,
    "asin": lambda v: -1 <= v <= 1,
    "acos": lambda v: -1 <= v <= 1,
    "acosh": lambda v: v >= 1,
    "atanh": lambda v: -1 <= v <= 1,
    "rsqrt": lambda v: v > 0,
}
"""Where functions are real (outside: NaN); the others are real everywhere."""


def _unary_special(name: str, x: Real) -> Real | None:
    """The result of `name(x)` fixed by C99 Annex F, or None when `x` is ordinary."""
    if x.is_nan:
        return NAN
    if x.is_inf:
        if name == "atan":
            return None  # ±pi/2, rounded
        plus, minus = LIMITS_AT_INF[name]
        found = minus if x.negative else plus
        return NAN if found is None else found
    if x.is_zero:
        return _at_zero(name, x)
    v = x.value
    if name in DOMAINS and not DOMAINS[name](v):
        return NAN
    if name == "log1p" and v == -1:
        return infinity(True)
    if name == "atanh" and abs(v) == 1:
        return infinity(v < 0)
    if v == 1 and name in ("log", "log2", "log10", "acosh", "acos"):
        return finite(Fraction(0))
    return None


def _at_zero(name: str, zero: Real) -> Real | None:
    if name in ODD_AT_ZERO:
        return zero
    if name in ("exp", "exp2", "cos", "cosh"):
        return finite(Fraction(1))
    if name in ("log", "log2", "log10"):
        return infinity(True)
    if name == "rsqrt":
        return infinity(zero.negative)
    if name == "acosh":
        return NAN
    return None


def _unary_real(name: str, x: Real) -> Fraction:
    mpmath = _mpmath()

    if x.is_inf:  # atan
        return _to_fraction(-mpmath.pi / 2 if x.negative else mpmath.pi / 2)
    v = _mp_value(x)
    functions: dict[str, Callable[[Any], Any]] = {
        "exp": mpmath.exp,
        "exp2": lambda v: mpmath.power(2, v),
        "expm1": mpmath.expm1,
        "log": mpmath.log,
        "log2": lambda v: mpmath.log(v, 2),
        "log10": mpmath.log10,
        "log1p": mpmath.log1p,
        "sin": mpmath.sin,
        "cos": mpmath.cos,
        "tan": mpmath.tan,
        "asin": mpmath.asin,
        "acos": mpmath.acos,
        "atan": mpmath.atan,
        "sinh": mpmath.sinh,
        "cosh": mpmath.cosh,
        "tanh": mpmath.tanh,
        "asinh": mpmath.asinh,
        "acosh": mpmath.acosh,
        "atanh": mpmath.atanh,
        "cbrt": lambda v: mpmath.sign(v) * mpmath.cbrt(abs(v)),
        "erf": mpmath.erf,
        "rsqrt": lambda v: 1 / mpmath.sqrt(v),
    }
    return _to_fraction(functions[name](v))


def _is_odd_integer(v: Fraction) -> bool:
    return v.denominator == 1 and v.numerator % 2 == 1


def _pow_special(x: Real, y: Real) -> Real | None:
    """C99 F.9.4.4 pow special cases, or None when (x, y) is ordinary."""
    if y.is_zero or (x.kind == "finite" and x.value == 1):
        return finite(Fraction(1))
    if x.is_nan or y.is_nan:
        return NAN
    y_odd = y.kind == "finite" and _is_odd_integer(y.value)
    if y.is_inf:
        if x.kind == "finite" and abs(x.value) == 1:
            return finite(Fraction(1))
        big = x.is_inf or x.magnitude > 1
        return infinity(False) if big != y.negative else finite(Fraction(0))
    if x.is_zero or x.is_inf:
        # pow(±0, y) and pow(±inf, y) mirror each other through 1/x.
        grows = y.negative if x.is_zero else not y.negative
        negative = x.negative and y_odd
        return infinity(negative) if grows else Real("finite", negative)
    if x.negative and y.value.denominator != 1:
        return NAN
    return None


def _pow_real(x: Real, y: Real) -> Fraction:
    mpmath = _mpmath()

    # A negative base has an integer exponent here (_pow_special): keep the result real.
    magnitude = mpmath.power(abs(_mp_value(x)), _mp_value(y))
    negative = x.negative and _is_odd_integer(y.value)
    return _to_fraction(-magnitude if negative else magnitude)


def _atan2_special(y: Real, x: Real) -> Real | None:
    """C99 F.9.1.4 atan2 special cases that give zero, NaN or need no pi."""
    if x.is_nan or y.is_nan:
        return NAN
    if y.is_zero and (not x.negative) and not (x.is_zero and x.negative):
        return y  # atan2(±0, x >= +0) = ±0
    if y.kind == "finite" and not y.is_zero and x.is_inf and not x.negative:
        return Real("finite", y.negative)
    return None


def _atan2_real(y: Real, x: Real) -> Fraction:
    mpmath = _mpmath()

    pi = mpmath.pi
    if y.is_inf or x.is_inf:
        sy = -1 if y.negative else 1
        if y.is_inf and x.is_inf:
            return _to_fraction(sy * (3 * pi / 4 if x.negative else pi / 4))
        if y.is_inf:
            return _to_fraction(sy * pi / 2)
        return _to_fraction(sy * pi)  # x = -inf, y finite
    if x.is_zero or y.is_zero:
        sy = -1 if y.negative else 1
        if y.is_zero:  # x < 0 or x = -0
            return _to_fraction(sy * pi)
        return _to_fraction(sy * pi / 2)
    return _to_fraction(mpmath.atan2(_mp_value(y), _mp_value(x)))


def _near(fmt: FloatFormat, special: Real | None, real: Callable[[], Fraction]) -> Expectation:
    if special is not None:
        return _float(fmt, special)
    mpmath = _mpmath()

    with mpmath.workprec(256):
        value = real()
    return Near(value, round_to_format(fmt, finite(value)), DEFAULT_ULPS[fmt.name])


def _one_or_nan(fmt: FloatFormat) -> Exact:
    """pow(1, y) and pow(x, 0) are 1 "even for a NaN" (C99 F.9.4.4), but IEEE-754 lets a
    signalling NaN operand give a quiet NaN instead: either is accepted."""
    return Exact((round_to_format(fmt, finite(Fraction(1))),), ((fmt.nan_bits,),))


def _transcendental(
    op: str, fmt: FloatFormat, args: Sequence[Real], power: int = 0, signalling: bool = False
) -> Expectation:
    name = op.removeprefix("math.")
    if op == "math.powf":
        x, y = args
        if signalling and (x.is_nan or y.is_nan) and _pow_special(x, y) == finite(Fraction(1)):
            return _one_or_nan(fmt)
        return _near(fmt, _pow_special(x, y), lambda: _pow_real(x, y))
    if op == "math.atan2":
        y, x = args
        return _near(fmt, _atan2_special(y, x), lambda: _atan2_real(y, x))
    if op == "math.fpowi":
        exponent = finite(Fraction(power))
        (x,) = args
        if signalling and power == 0:
            return _one_or_nan(fmt)
        return _near(fmt, _pow_special(x, exponent), lambda: _pow_real(x, exponent))
    (x,) = args
    return _near(fmt, _unary_special(name, x), lambda: _unary_real(name, x))


# ----------------------------------------------------------------------------------------
# Entry point


def evaluate(
    op: str,
    operand_types: Sequence[ScalarType],
    result_types: Sequence[ScalarType],
    operands: Sequence[int],
) -> Expectation:
    """What the LangRef says `op` gives for `operands` (bit patterns of `operand_types`).

    `op` is an op name, with a predicate for comparisons (`arith.cmpi slt`,
    `arith.cmpf ueq`) and overflow flags in angle brackets (`arith.addi<nsw>`).
    """
    first = operand_types[0]
    if op in CONVERSIONS:
        return _convert(op, first, result_types[0], operands[0])
    if op.startswith("arith.cmpi "):
        assert isinstance(first, IntType)
        return Exact((int(CMPI[op.split()[1]](first, operands[0], operands[1])),))
    if op.startswith("arith.cmpf "):
        assert isinstance(first, FloatFormat)
        relation = _compare(decode(first, operands[0]), decode(first, operands[1]))
        return Exact((int(relation in CMPF[op.split()[1]]),))
    if op == "arith.select":
        return Exact((operands[1] if operands[0] else operands[2],))
    if op == "math.fpowi":
        fmt, power_type = operand_types
        assert isinstance(fmt, FloatFormat)
        assert isinstance(power_type, IntType)
        power = power_type.signed(operands[1])
        x = decode(fmt, operands[0])
        return _transcendental(op, fmt, [x], power, _is_signalling(fmt, operands[0]))
    if isinstance(first, IntType):
        if op not in INT_OPS:
            raise Unsupported(f"{op} on {first.name}")
        return INT_OPS[op](first, operands)
    args = [decode(first, bits) for bits in operands]
    if op in FLOAT_EXACT:
        return _float(first, FLOAT_EXACT[op](first, args))
    if op in FLOAT_SELECT:
        return FLOAT_SELECT[op](first, args)
    if op in TRANSCENDENTAL:
        signalling = any(_is_signalling(first, bits) for bits in operands)
        return _transcendental(op, first, args, signalling=signalling)
    raise Unsupported(f"{op} on {first.name}")
