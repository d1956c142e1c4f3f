"""The oracle's MLIR runner utilities: the text `printMemref*` and the scalar printers of
MLIR's `libmlir_runner_utils` / `libmlir_c_runner_utils` write, for a level-1 program
that calls them.

Written from MLIR's definitions (`RunnerUtils.h`, `CRunnerUtils.cpp`), apart from the
runtime's printers, so that the two check each other:

* `printMemref<T>(x)` on a tensor cast to `tensor<*xT>`: a header line,
  `Unranked Memref base@ = 0x<address> rank = R offset = 0 sizes = [..] strides = [..]
  data = `, then the elements in nested brackets. Between two elements of the innermost
  level MLIR writes `, ` and then (rank - depth) spaces, where depth counts the levels
  above; a level above the innermost ends each of its rows but the last with `, ` and a
  newline. A rank-0 value prints as `[x]`. Strides are those of a dense row-major array
  (a tensor has no other layout).
* `printF32`/`printF64`: C's `%g` (glibc spells a NaN with its sign bit set `-nan`);
  `printI64`/`printU64`: decimal, signed or unsigned; `printOpen` `( `, `printClose`
  ` )`, `printComma` `, `, `printNewline` a newline. None adds a newline of its own.

Integers print in decimal (an `i1` as 0 or 1), floats as `%g`. The address is the one of
the NumPy array holding the tensor (MLIR's is its buffer's; tests ignore it).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

MEMREF_PRINTERS: dict[str, str] = {
    "printMemrefF16": "f",
    "printMemrefF32": "f",
    "printMemrefF64": "f",
    "printMemrefI32": "i",
    "printMemrefI64": "i",
}
"""The `printMemref*` functions the oracle evaluates, and the kind of element each takes
(its element type is checked by the caller against the name)."""

SCALAR_PRINTERS = (
    "printF32", "printF64", "printI64", "printU64", "printOpen", "printClose", "printComma",
    "printNewline",
)  # fmt: skip


def _g(x: float) -> str:
    if x != x:
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return f"{x:g}"


def _element(value: Any) -> str:
    """Floats as `%g`; integers (`i1` as 0 or 1) in decimal."""
    kind: str = np.asarray(value).dtype.kind
    return _g(float(value)) if kind == "f" else str(int(value))


def _nested(array: np.ndarray[Any, Any]) -> str:
    rank = array.ndim
    if rank == 0:
        return f"[{_element(array[()])}]"

    def level(sub: np.ndarray[Any, Any], depth: int) -> str:
        if sub.ndim == 0:
            return _element(sub[()])
        inner = [level(sub[i], depth + 1) for i in range(sub.shape[0])]
        pad = " " * (depth + 1)
        separator = ", \n" + pad if sub.ndim > 1 else ", " + pad
        return "[" + separator.join(inner) + "]"

    return level(array, 0)


def memref_text(array: np.ndarray[Any, Any]) -> str:
    """What `printMemref*` prints for the dense array `array`, without the final newline."""
    strides = [math.prod(array.shape[d + 1 :]) for d in range(array.ndim)]
    address = array.__array_interface__["data"][0]
    return (
        f"Unranked Memref base@ = {address:#x} rank = {array.ndim} offset = 0 "
        f"sizes = [{', '.join(map(str, array.shape))}] "
        f"strides = [{', '.join(map(str, strides))}] data = \n{_nested(array)}"
    )


def scalar_text(name: str, args: Sequence[Any]) -> str:
    """What the scalar printer `name` writes for `args`."""
    fixed = {"printOpen": "( ", "printClose": " )", "printComma": ", ", "printNewline": "\n"}
    if name in fixed:
        return fixed[name]
    value = args[0]
    if name in ("printF32", "printF64"):
        return _g(float(value))
    if name == "printU64":
        return str(int(value) % (1 << 64))
    return str(int(value))


def write(text: str) -> None:
    """Print as the runner does: to stdout, in program order."""
    sys.stdout.write(text)


__all__ = ["MEMREF_PRINTERS", "SCALAR_PRINTERS", "memref_text", "scalar_text", "write"]
