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
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerAttr
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


# ---- memref.atomic_rmw ------------------------------------------------------------------

ATOMIC_KINDS = (
    "addf", "addi", "assign", "maximumf", "maxs", "maxu", "minimumf", "mins", "minu",
    "mulf", "muli", "ori", "andi", "maxnumf", "minnumf",
)  # fmt: skip
"""MLIR's `AtomicRMWKind` words, indexed by the op's `kind` value."""


def atomic_kind(op: Operation) -> str:
    """The `AtomicRMWKind` word of a `memref.atomic_rmw`."""
    kind = op.properties["kind"]
    assert isinstance(kind, IntegerAttr)
    return ATOMIC_KINDS[kind.value.data]


def atomic_combine(kind: str, old: Any, value: Any, dtype: np.dtype[Any]) -> Any:
    """The value an atomic read-modify-write of `kind` stores (in the memory's type)."""
    with np.errstate(all="ignore"):
        old, value = dtype.type(old), dtype.type(value)
        if kind in ("maxu", "minu"):
            unsigned = np.dtype(f"u{dtype.itemsize}")
            a, b = old.astype(unsigned), value.astype(unsigned)
            return (max if kind == "maxu" else min)(a, b).astype(dtype)
        match kind:
            case "addf" | "addi":
                return dtype.type(old + value)
            case "mulf" | "muli":
                return dtype.type(old * value)
            case "assign":
                return value
            case "maxs" | "maxnumf":
                return np.fmax(old, value) if kind == "maxnumf" else max(old, value)
            case "mins" | "minnumf":
                return np.fmin(old, value) if kind == "minnumf" else min(old, value)
            case "maximumf":
                return np.maximum(old, value)
            case "minimumf":
                return np.minimum(old, value)
            case "ori":
                return old | value
            case _:
                assert kind == "andi"
                return old & value


def atomic_rmw_lanes(
    faults: Any,
    site: int,
    buffer: Any,
    mem: Any,
    idx: Sequence[Any],
    value: Any,
    kind: str,
) -> Any:
    """`memref.atomic_rmw` over a box of lanes: one lane after another in lane order,
    each reading the value the previous one left; each lane gets the value it read."""
    from .lanes import arr  # pyright: ignore[reportPrivateUsage]

    lanes, mask = faults.lanes, faults.mask
    shape = lanes.shape
    indices = [np.broadcast_to(np.asarray(arr(i)), shape) for i in idx]
    values = np.broadcast_to(np.asarray(arr(value)), shape)
    active = np.ones(shape, bool) if mask is None else np.broadcast_to(np.asarray(mask), shape)
    out = np.zeros(shape, mem.dtype)
    with ATOMIC_LOCK:  # launches running at once (Python threads) update it in turn
        _atomic_lanes(faults, site, buffer, mem, indices, values, active, out, kind)
    return out


ATOMIC_LOCK = threading.Lock()
"""Held by each `atomic_rmw_lanes`: the GIL lets two launches' Python threads interleave
between a lane's read and its write."""


def _atomic_lanes(
    faults: Any, site: int, buffer: Any, mem: Any, indices: Any, values: Any, active: Any,
    out: Any, kind: str,
) -> None:  # fmt: skip
    from .lanes import _report_oob  # pyright: ignore[reportPrivateUsage]

    lanes, shape = faults.lanes, faults.lanes.shape
    for pos in np.argwhere(active):
        lane = tuple(pos)
        at = tuple(int(i[lane]) for i in indices)
        if any(not 0 <= i < n for i, n in zip(at, mem.shape, strict=True)):
            _report_oob(
                type(faults)(faults.kernel, lanes, _only(shape, lane)), site, buffer, mem, at
            )
        out[lane] = mem[at]
        mem[at] = atomic_combine(kind, mem[at], values[lane], mem.dtype)


def _only(shape: tuple[int, ...], lane: tuple[int, ...]) -> Any:
    mask = np.zeros(shape, bool)
    mask[lane] = True
    return mask
