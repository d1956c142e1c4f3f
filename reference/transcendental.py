"""The oracle's expectation of the transcendental `math` ops: the real result computed by
mpmath at 256 bits, with the special values of C99 Annex F (what MLIR lowers them to
through libm), which the computed value must lie within `DEFAULT_ULPS` of.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from .expectations import Exact, Expectation, Near, exact_float
from .scalars import NAN, FloatFormat, Real, finite, infinity, round_to_format

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
        return exact_float(fmt, special)
    mpmath = _mpmath()

    with mpmath.workprec(256):
        value = real()
    return Near(value, round_to_format(fmt, finite(value)), DEFAULT_ULPS[fmt.name])


def _one_or_nan(fmt: FloatFormat) -> Exact:
    """pow(1, y) and pow(x, 0) are 1 "even for a NaN" (C99 F.9.4.4), but IEEE-754 lets a
    signalling NaN operand give a quiet NaN instead: either is accepted."""
    return Exact((round_to_format(fmt, finite(Fraction(1))),), ((fmt.nan_bits,),))


def transcendental(
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
