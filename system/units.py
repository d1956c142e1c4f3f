"""Quantities with a unit, as system descriptions write them: sizes, bandwidths, latencies.

`"48 KiB"`, `"24 GB/s"`, `"10 us"`: a number and one of the units below, decimal (KB,
GB/s) or binary (KiB, GiB/s). A bare number is an error, never guessed; each parser
raises `ValueError` with a readable reason, which the reader places at its entry and key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal

SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}
BANDWIDTH_UNITS: dict[str, float] = {
    "B/s": 1.0,
    "KB/s": 1e3,
    "MB/s": 1e6,
    "GB/s": 1e9,
    "KiB/s": float(2**10),
    "MiB/s": float(2**20),
    "GiB/s": float(2**30),
}
LATENCY_UNITS: dict[str, float] = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

_QUANTITY = re.compile(r"\s*(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*([A-Za-z/]+)\s*")


def _quantity(text: object, units: Mapping[str, float], what: str, example: str) -> float:
    """The number in `text` times its unit; `ValueError` with a readable reason."""
    valid = ", ".join(units)
    if not isinstance(text, str):
        raise ValueError(f'expected a {what} string with a unit such as "{example}", got {text!r}')
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise ValueError(f"bad {what} '{text}': expected a number and a unit, e.g. \"{example}\"")
    number, unit = match.groups()
    if unit not in units:
        raise ValueError(f"bad {what} unit '{unit}' in '{text}' (valid: {valid})")
    # Decimal keeps "10 us" exactly 1e-05 rather than 10 * 1e-06.
    value = float(Decimal(number) * Decimal(repr(units[unit])))
    if not math.isfinite(value):
        raise ValueError(f"bad {what} '{text}': the number is too large to represent")
    return value


def parse_size(text: object) -> int:
    """`"48 KiB"` -> 49152 (bytes); must be a positive whole number of bytes."""
    value = _quantity(text, SIZE_UNITS, "size", "16 GiB")
    if value <= 0 or value != int(value):
        raise ValueError(f"bad size '{text}': expected a positive whole number of bytes")
    return int(value)


def parse_bandwidth(text: object) -> float:
    """`"24 GB/s"` -> 24e9 (bytes per second); must be positive."""
    value = _quantity(text, BANDWIDTH_UNITS, "bandwidth", "24 GB/s")
    if value <= 0:
        raise ValueError(f"bad bandwidth '{text}': expected a positive rate")
    return value


def parse_latency(text: object) -> float:
    """`"10 us"` -> 1e-05 (seconds)."""
    return _quantity(text, LATENCY_UNITS, "latency", "10 us")


__all__ = [
    "BANDWIDTH_UNITS",
    "LATENCY_UNITS",
    "SIZE_UNITS",
    "parse_bandwidth",
    "parse_latency",
    "parse_size",
]
