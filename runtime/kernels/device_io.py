"""What kernels say to the outside: `kernel.printf` output and `kernel.assert` failures.

Both backends produce the same text:

* `kernel.printf` formats with C's `printf` rules (length modifiers such as `ll`, `h`
  are accepted and ignored, floats print as doubles, as C's varargs promote them) and
  writes to standard output, one call per printing thread.
* A failing `kernel.assert` stops the launch with a located error whose lines name each
  failing thread as CUDA's device runtime does:
  `file.cc:7: func: block: [0,0,0], thread: [1,0,0] Assertion `msg` failed.`
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir import Operation

from ...diagnostics import diagnostic_at
from .common import KernelError

_SPEC = re.compile(r"%([-+ #0]*)(\d+|\*)?(\.\d+)?(hh|h|ll|l|j|z|t|L)?([diouxXeEfFgGcs%])")


def python_format(fmt: str) -> tuple[str, list[str]]:
    """A C `printf` format as a Python `%` format, and the conversion of each argument."""
    conversions: list[str] = []

    def replace(m: re.Match[str]) -> str:
        flags, width, precision, _length, conv = m.groups()
        if conv == "%":
            return "%%"
        if width == "*":
            raise ValueError("a '*' width is not supported")
        conversions.append(conv)
        return f"%{flags}{width or ''}{precision or ''}{'d' if conv == 'u' else conv}"

    return _SPEC.sub(replace, fmt), conversions


def _convert(value: Any, conversion: str) -> Any:
    if conversion in "eEfFgG":
        return float(value)
    if conversion == "c":
        return chr(int(value) & 0xFF)
    if conversion == "u":
        return int(value) & 0xFFFFFFFFFFFFFFFF
    return int(value)


def print_one(fmt: str, conversions: Sequence[str], values: Sequence[Any]) -> None:
    """One thread's `printf`."""
    text = fmt % tuple(_convert(v, c) for v, c in zip(values, conversions, strict=True))
    sys.stdout.write(text)


def assertion_line(origin: str, message: str, block: Sequence[int], thread: Sequence[int]) -> str:
    """CUDA's message for one failing thread."""
    b = ",".join(str(int(i)) for i in block)
    t = ",".join(str(int(i)) for i in thread)
    return f"{origin}: block: [{b}], thread: [{t}] Assertion `{message}` failed."


def assertion_error(op: Operation, kernel: str, lines: Sequence[str]) -> KernelError:
    """The launch's error for failed assertions (one line per failing thread)."""
    count = len(lines)
    text = (
        f"in kernel @{kernel}: device-side assertion failed in {count} "
        f"thread{'s' if count != 1 else ''}:\n" + "\n".join(lines)
    )
    return KernelError(diagnostic_at(op, text))


# ---- the NumPy backend: all lanes at once ---------------------------------------------------


def printf_lanes(
    lanes: Any, mask: Any, fmt: str, conversions: Sequence[str], args: Sequence[Any]
) -> None:
    """`kernel.printf` over a box of lanes: each active lane in order (blocks z, y, x,
    then threads z, y, x)."""
    from .lanes import arr

    shape = lanes.shape
    values = [np.broadcast_to(np.asarray(arr(a)), shape) for a in args]
    active = np.ones(shape, bool) if mask is None else np.broadcast_to(np.asarray(arr(mask)), shape)
    for pos in np.argwhere(active):
        index = tuple(pos)
        print_one(fmt, conversions, [v[index] for v in values])


def assert_lanes(
    lanes: Any, mask: Any, cond: Any, op: Operation, kernel: str, message: str, origin: str
) -> None:
    """`kernel.assert` over a box of lanes: raise naming every active lane where `cond`
    is false."""
    from .lanes import arr

    shape = lanes.shape
    bad = ~np.broadcast_to(np.asarray(arr(cond), bool), shape)
    if mask is not None:
        bad = bad & np.broadcast_to(np.asarray(arr(mask)), shape)
    if not bad.any():
        return
    lines: list[str] = []
    for pos in np.argwhere(bad):
        block, thread = lanes.locate(pos)
        lines.append(assertion_line(origin, message, block, thread))
    raise assertion_error(op, kernel, lines)
