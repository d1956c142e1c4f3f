"""The ulps comparison of f16/bf16 results (`support.ulps`) passes and fails where it should."""

from __future__ import annotations

import numpy as np
import pytest

import devplan
from support.spread import slack
from support.ulps import assert_within_ulps


def bf16(values: list[float]) -> np.ndarray:
    """bf16 bit patterns (uint16) of values exact in bf16."""
    return (np.array(values, np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def test_ulps_count_steps_of_the_type_across_zero_and_keep_nan_apart() -> None:
    want = np.array([1.0, -2.0, 0.0, np.inf, np.nan, 1024.0], np.float16)
    got = want.copy()
    got[0] = np.nextafter(np.float16(1), np.float16(2))  # 1 ulp
    got[2] = -0.0  # 0 ulps: -0 and +0 are the same place
    assert_within_ulps(got, want, 1, floor=0)
    with pytest.raises(AssertionError, match=r"1 of 6 values more than 0 ulps apart.*index 0"):
        assert_within_ulps(got, want, 0, floor=0)
    assert_within_ulps(got, want, 0)  # 1 ulp at 1.0 is within one ulp of 1024.0
    with pytest.raises(AssertionError, match=r"index 0: got -1.0 .* 30720 ulps"):  # the sign
        assert_within_ulps(-want, want, 4)
    got[4] = 1.0
    with pytest.raises(AssertionError, match=r"index 4: got 1.0 \(bits 0x3c00\), want nan"):
        assert_within_ulps(got, want, 4)


def test_bf16_patterns_and_results_of_cancelling_sums() -> None:
    want = bf16([1.0, -2.0, 1e-3])
    got = want.copy()
    got[1] += 2  # -2 - 2 ulps
    assert_within_ulps(got, want, 2, floor=0)
    with pytest.raises(AssertionError, match="2 ulps"):
        assert_within_ulps(got, want, 1, floor=0)
    # 1e-3 where the oracle has 1e-3 + 4e-3: far in its own ulps, within one ulp of 2.0.
    got[2] = bf16([5e-3])[0]
    assert_within_ulps(got, want, 2)
    got[2] = bf16([3e-2])[0]
    with pytest.raises(AssertionError, match="index 2"):
        assert_within_ulps(got, want, 2)


def test_the_spread_of_a_cancelling_sum_follows_its_terms_not_its_result() -> None:
    text = """
func.func @main(%x: tensor<2xbf16>) -> (tensor<2xbf16>, tensor<2xi32>) {
  %c = arith.constant dense<[-256.0, 3.0]> : tensor<2xbf16>
  %s = arith.subf %x, %c : tensor<2xbf16>
  %t = arith.addf %s, %c : tensor<2xbf16>
  %i = arith.constant dense<1> : tensor<2xi32>
  func.return %t, %i : tensor<2xbf16>, tensor<2xi32>
}
"""
    inputs: list[object] = [bf16([1.0, 1.0])]
    want = [bf16([1.0, 1.0]), np.array([1, 1], np.int32)]
    spread, exact = slack(devplan.parse(text), text, inputs, want)
    # Magnitudes 1 + 256 + 256 (512 in bf16) and 1 + 3 + 3, of which all but the result's 1
    # cancelled; 4 ops round on the way, each by at most 2^-8. Integers have no spread.
    assert spread.tolist() == [4 * 2.0**-8 * 511, 4 * 2.0**-8 * 6]
    assert exact.tolist() == [0, 0]
