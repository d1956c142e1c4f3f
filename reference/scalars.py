"""The scalar types of the oracle of `arith` and `math` ops, and their values computed exactly.

Integer types are widths (`index` is 64 bits) whose values are bit patterns. A float format
is IEEE-754 binary (`f16`, `bf16`, `f32`, `f64`): `decode` reads a bit pattern into a
`Real` (NaN, a signed infinity, or a signed exact `Fraction`, signed zeros kept), and
`round_to_format` encodes a `Real` rounded once to the nearest value of the format, ties to
even, with subnormals and overflow to infinity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

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


def is_signalling(fmt: FloatFormat, bits: int) -> bool:
    """Whether `bits` is a signalling NaN (quiet bit clear)."""
    return decode(fmt, bits).is_nan and not bits & (1 << (fmt.precision - 2))
