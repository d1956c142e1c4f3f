"""The oracle of scalar ops (`reference/arith.py`) on cases a standard answers in words.

`tests/runtime/test_arith_semantics.py` holds every path to this oracle; these are the
oracle's own rules that no path exercises because every path takes the same side of them.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from devplan.reference.arith import evaluate
from devplan.reference.expectations import matches
from devplan.reference.scalars import (
    FLOAT_TYPES,
    INT_TYPES,
    finite,
    is_signalling,
    round_to_format,
)


@pytest.mark.parametrize("name", sorted(FLOAT_TYPES))
def test_a_signalling_nan_raised_to_the_zeroth_may_give_one_or_a_quiet_nan(name: str) -> None:
    """pow(x, 0) and pow(1, y) are 1 even for a NaN (C99 F.9.4.4), but IEEE-754 lets a
    signalling NaN give a quiet NaN instead: the oracle accepts both for a signalling NaN
    and only 1 for a quiet one (every backend gives 1, so only this test sees the rule)."""
    fmt = FLOAT_TYPES[name]
    i32 = INT_TYPES["i32"]
    signalling, quiet = fmt.inf_bits | 1, fmt.nan_bits
    one = round_to_format(fmt, finite(Fraction(1)))
    assert is_signalling(fmt, signalling)
    assert not is_signalling(fmt, quiet)
    assert not is_signalling(fmt, one)
    for nan, either in ((signalling, True), (quiet, False)):
        expectations = [
            evaluate("math.powf", [fmt, fmt], [fmt], [nan, 0]),
            evaluate("math.powf", [fmt, fmt], [fmt], [one, nan]),
            evaluate("math.fpowi", [fmt, i32], [fmt], [nan, 0]),
        ]
        for expected in expectations:
            assert matches(expected, [fmt], [one])
            assert matches(expected, [fmt], [quiet]) == either
