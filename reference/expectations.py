"""What the oracle of `arith` and `math` ops expects of a result: exact bit patterns, a value
within some ulps of the real result, or a fault (undefined behaviour devplan reports).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from .scalars import FloatFormat, Real, ScalarType, decode, round_to_format, ulp_error


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


def exact_float(fmt: FloatFormat, value: Real) -> Exact:
    """The expectation of exactly `value` rounded once to `fmt`."""
    return Exact((round_to_format(fmt, value),))


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
