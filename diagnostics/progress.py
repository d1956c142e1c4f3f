"""Progress of long work: one line on stderr when something runs longer than ~1 s.

Work that may be slow (a pass, a kernel compile) runs inside `progress(what)`, where
`what` says what is running (`"running pass 'plan-devices'"`, `"compiling kernel @add
for cuda:0"`). If the block is still running after `DELAY` seconds, the sink gets `what`
once, from a timer thread. Where progress goes is the caller's choice, held in a context
variable as the remark sink is: by default nowhere (a library does not print). The tools
send it to stderr, prefixed with their name, unless `--quiet`, or stderr is not a
terminal and `--progress` was not given; a Python caller may use `print_progress`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager
from contextvars import ContextVar

ProgressSink = Callable[[str], None]
"""Where a progress line's text goes."""

DELAY = 1.0
"""Seconds a block runs silently before its progress line is printed."""

_sink: ContextVar[ProgressSink | None] = ContextVar("devplan_progress_sink", default=None)


def print_progress(text: str) -> None:
    """The tools' sink: the line on stderr, flushed at once."""
    print(f"{text}...", file=sys.stderr, flush=True)


@contextmanager
def progress_to(sink: ProgressSink | None) -> Generator[None]:
    """Within the block, progress lines go to `sink` (nowhere when None)."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)


@contextmanager
def progress(what: str, delay: float = DELAY) -> Generator[None]:
    """Run the block; if it lasts more than `delay` seconds, tell the sink `what` once."""
    sink = _sink.get()
    if sink is None:
        yield
        return
    timer = threading.Timer(delay, sink, (what,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
