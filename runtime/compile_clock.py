"""Time spent compiling kernels, kept apart from the time kernels run.

A kernel compiles in a `compiling(what)` block: when `compile_kernel` generates its
source (which the NumPy backend compiles there and then), and on the Numba backends at its
first launch, when Numba compiles the generated source for the arguments' types or loads
it from the cache (`numba_compile_for`). Host code's integer ops, which call `semantics`'
Numba functions, compile those the same way at their first run. A block that lasts
longer than a second prints its progress line (`diagnostics.progress`: `compiling kernel
@matmul for cuda:0 (numba)`).

The clock is one per process. The scheduler reads it before and after each kernel it
times, and moves what was spent compiling meanwhile out of the kernel's wall time; the
report shows the run's compiles on a line of their own. Kernels running at once on
several threads may see another's compile: the split between them is then approximate,
the totals are not.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from typing import Any

from ..diagnostics.progress import progress

_lock = threading.Lock()
_spent = [0.0]
"""Wall seconds spent in `compiling` blocks so far."""
_blocks: list[tuple[str, float]] = []
"""What each finished `compiling` block compiled, and its wall seconds, in order."""


def seconds() -> float:
    """Wall seconds spent compiling in this process so far."""
    return _spent[0]


def compiles() -> list[tuple[str, float]]:
    """Each `compiling` block finished so far in this process, in order: what it compiled
    (`compiling kernel @add for cpu:0 (numba)`) and its wall seconds (a block inside
    another counts in both)."""
    with _lock:
        return list(_blocks)


@contextmanager
def compiling(what: str) -> Generator[None]:
    """Count the block as compile time; after a second, tell the progress sink `what`."""
    began = time.perf_counter()
    try:
        with progress(what):
            yield
    finally:
        spent = time.perf_counter() - began
        with _lock:
            _spent[0] += spent
            _blocks.append((what, spent))


def numba_compile_for(dispatcher: Any, args: Sequence[Any], what: str) -> None:
    """Compile `dispatcher` (a Numba function) for the types of `args`, or load that from
    the cache, in a `compiling` block, before it is called with them: Numba would compile
    inside the call, unseen. A later call with other types still compiles in the call."""
    with compiling(f"compiling {what}"):
        dispatcher.compile(tuple(dispatcher.typeof_pyval(a) for a in args))
