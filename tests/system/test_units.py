"""Sizes, bandwidths and latencies with units (`system/units.py`)."""

from __future__ import annotations

import pytest

from devplan.system.units import parse_bandwidth, parse_latency, parse_size


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1 B", 1),
        ("48 KiB", 49152),
        ("48KiB", 49152),
        ("1 KB", 1000),
        ("2 MB", 2_000_000),
        ("3 MiB", 3 * 2**20),
        ("16 GB", 16 * 10**9),
        ("1.5 GiB", 3 * 2**29),
        ("1 TiB", 2**40),
    ],
)
def test_sizes_take_decimal_and_binary_units(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    ("text", "rate"),
    [("1 B/s", 1.0), ("5 KB/s", 5e3), ("24 GB/s", 24e9), ("300 MB/s", 3e8), ("2 GiB/s", 2.0**31)],
)
def test_bandwidths_take_decimal_and_binary_byte_rates(text: str, rate: float) -> None:
    assert parse_bandwidth(text) == rate


@pytest.mark.parametrize(
    ("text", "seconds"), [("10 us", 1e-5), ("5 ns", 5e-9), ("2 ms", 2e-3), ("1 s", 1.0)]
)
def test_latencies_take_ns_us_ms_and_s(text: str, seconds: float) -> None:
    assert parse_latency(text) == seconds
