"""Comparing f16 and bf16 results in units in the last place (ulps) of their type.

A relative tolerance suits f32/f64, whose results are a few roundings from exact; an f16 or
bf16 result is 3 or 8 significant digits, so a difference is counted in the type's own steps:
the bit patterns of both values are mapped to integers in the order of the values (the sign
bit makes the magnitude negative; +0 and -0 both map to 0), and the distance is their
difference. Sums that cancel leave a result far smaller than its terms, whose own ulps are
tiny: such a result may instead be within `floor` ulps of the array's largest finite
magnitude (one: the rounding of the sum's last step).
"""

from __future__ import annotations

from typing import Any

import numpy as np

SIGN = np.int64(0x8000)


def ordered(bits: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """16-bit float patterns (f16 or bf16) as integers in the order of their values."""
    wide = bits.astype(np.int64)
    magnitude = wide & (SIGN - 1)
    return np.where(wide & SIGN, -magnitude, magnitude)


MANTISSA_BITS = {"f16": 10, "bf16": 7}


def bits_and_values(
    array: np.ndarray[Any, Any],
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The 16-bit patterns of f16 values or bf16 patterns (uint16), and their values (f64)."""
    if array.dtype == np.float16:
        return array.view(np.uint16), array.astype(np.float64)
    assert array.dtype == np.uint16, f"not f16 values or bf16 bit patterns: {array.dtype}"
    return array, (array.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def assert_within_ulps(
    got: np.ndarray[Any, Any],
    want: np.ndarray[Any, Any],
    ulps: int,
    what: str = "result",
    floor: int = 1,
    slack: np.ndarray[Any, Any] | None = None,
) -> None:
    """`got` (f16 values, or bf16 as uint16 patterns) is within `ulps` of `want` elementwise,
    or within `floor` ulps of the largest finite magnitude of `want`, or within `slack` (an
    absolute distance per element: the rounding spread of a sum that cancelled,
    `support.spread`); NaN where and only where `want` has NaN."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    mantissa = MANTISSA_BITS["f16" if want.dtype == np.float16 else "bf16"]
    got_bits, got_values = bits_and_values(got)
    want_bits, want_values = bits_and_values(want)
    distance = np.abs(ordered(got_bits) - ordered(want_bits))
    largest = float(np.max(np.abs(want_values[np.isfinite(want_values)]), initial=0.0))
    _, exponent = np.frexp(largest)  # largest = m * 2**exponent, 0.5 <= m < 1
    absolute = floor * 2.0 ** (int(exponent) - 1 - mantissa) if largest > 0 else 0.0
    with np.errstate(invalid="ignore"):
        apart = np.abs(got_values - want_values)
        near = (distance <= ulps) | (apart <= absolute)
        if slack is not None:
            near |= apart <= slack
    nan_got, nan_want = np.isnan(got_values), np.isnan(want_values)
    ok = (nan_got & nan_want) | (~nan_got & ~nan_want & near)
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, (
        f"{what}: {bad.size} of {ok.size} values more than {ulps} ulps apart, the first at "
        f"flat index {bad[0]}: got {float(got_values.flat[bad[0]])} (bits "
        f"{int(got_bits.flat[bad[0]]):#06x}), want {float(want_values.flat[bad[0]])} (bits "
        f"{int(want_bits.flat[bad[0]]):#06x}), {int(distance.flat[bad[0]])} ulps"
    )
