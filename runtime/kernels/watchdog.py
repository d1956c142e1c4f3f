"""The watchdog of kernels that may not end: a stop flag their `scf.while` loops poll.

A kernel holding an `scf.while` can wait for memory another launch (or another thread
of its own launch) changes. devplan runs the threads of a launch in an order of its
choosing, and runs two launches at once only when they meet through atomics (see
`streams.Scheduler`), so such a wait can be one that never ends. As GPU drivers do, a
watchdog then stops the kernel: every launch of a kernel with an `scf.while` runs under
a `Watch`, whose flag one monitor thread raises after `DEVPLAN_KERNEL_TIMEOUT` seconds
(default `DEFAULT_TIMEOUT`); each iteration of a loop reads the flag, and a loop that sees it
raised stops its kernel, which then fails with a located error at the loop
(`timeout_error`). Launches that run together share one `Watch`: the scheduler raises
its flag when one of them faults, so that the others, which may be waiting for the
faulted one, stop too (`StoppedError`, not reported: the fault is).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ...diagnostics import DevplanError
from .common import Kernel, KernelError

TIMEOUT_VARIABLE = "DEVPLAN_KERNEL_TIMEOUT"
DEFAULT_TIMEOUT = 60.0
"""Seconds a kernel with an `scf.while` may run before the watchdog stops it."""


def timeout_seconds() -> float:
    """The watchdog's limit: `DEVPLAN_KERNEL_TIMEOUT` (seconds), else `DEFAULT_TIMEOUT`."""
    text = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise DevplanError(
            f"error: {TIMEOUT_VARIABLE}={text!r} is not a positive number of seconds; "
            f"set it to e.g. {DEFAULT_TIMEOUT:g} (the default)"
        )
    return value


class StoppedError(DevplanError):
    """A kernel stopped because another launch running with it faulted."""


class Watch:
    """One stop flag for the launches that run together (or for one launch alone)."""

    def __init__(self, timeout: float | None = None) -> None:
        self.timeout = timeout_seconds() if timeout is None else timeout
        self.flag = np.zeros(1, dtype=np.int64)
        """Non-zero: stop. Compiled loops read it atomically (`atomics.atomic_cas`)."""
        self.expired = False
        """Whether the time ran out (else a fault of another launch raised the flag)."""
        self._flags: list[tuple[np.ndarray[Any, Any], int]] = [(self.flag, 0)]
        self._lock = threading.Lock()

    def attach(self, array: np.ndarray[Any, Any], index: int) -> None:
        """Raise `array[index]` too when the flag is raised (a compiled kernel's flag)."""
        with self._lock:
            self._flags.append((array, index))
            if self.flag[0]:
                array[index] = 1

    def expire(self) -> None:
        """The time is up: raise the flag as a timeout."""
        self.expired = True
        self.stop()

    def stop(self) -> None:
        """Raise the flag: every loop polling it stops its kernel."""
        with self._lock:
            for array, index in self._flags:
                array[index] = 1

    @property
    def stopped(self) -> bool:
        return bool(self.flag[0])

    def __enter__(self) -> Watch:
        _MONITOR.add(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _MONITOR.remove(self)

    def error(
        self, kernel: Kernel, site: int, block: Sequence[int], thread: Sequence[int]
    ) -> DevplanError:
        """What a kernel that saw the flag at the loop `site` fails with."""
        if not self.expired:
            return StoppedError(f"kernel @{kernel.name} stopped: a launch running with it faulted")
        return timeout_error(kernel, site, self.timeout, block, thread)


class _Monitor:
    """One thread for every `Watch` of the process: it raises the flag of each watch
    whose time is up. (A `threading.Timer` per launch costs a thread start, about 0.2 ms;
    registering here costs a lock.)"""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._deadlines: dict[Watch, float] = {}
        self._until: float | None = None
        """The time the thread sleeps until (None: until woken)."""
        self._thread: threading.Thread | None = None

    def forget_after_fork(self) -> None:
        """In a forked child: none of the parent's threads runs there, and the lock may
        have been held at the fork, so the child starts a monitor of its own when needed."""
        self.__init__()

    def add(self, watch: Watch) -> None:
        deadline = time.monotonic() + watch.timeout
        with self._cond:
            self._deadlines[watch] = deadline
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="devplan kernel watchdog", daemon=True
                )
                self._thread.start()
            elif self._until is None or deadline < self._until:
                self._cond.notify()

    def remove(self, watch: Watch) -> None:
        with self._cond:
            self._deadlines.pop(watch, None)

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for watch, deadline in list(self._deadlines.items()):
                    if deadline <= now:
                        del self._deadlines[watch]
                        watch.expire()
                self._until = min(self._deadlines.values(), default=None)
                self._cond.wait(None if self._until is None else self._until - now)


_MONITOR = _Monitor()

if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_MONITOR.forget_after_fork)


def timeout_error(
    kernel: Kernel, site: int, seconds: float, block: Sequence[int], thread: Sequence[int]
) -> KernelError:
    return kernel.error(
        site,
        f"this scf.while was still looping after {seconds:g} s ({TIMEOUT_VARIABLE}); the "
        "watchdog stopped the kernel. A loop that waits for memory another thread of its "
        "own launch changes may never end here (devplan runs a launch's threads in an "
        "order of its choosing), nor one that waits for a launch ordered after it",
        block,
        thread,
    )


_local = threading.local()


def current() -> Watch | None:
    """The `Watch` the scheduler set for launches running together on this thread."""
    return getattr(_local, "watch", None)


@contextmanager
def shared(watch: Watch) -> Generator[Watch]:
    """Run the launches of this thread under `watch` (instead of one `Watch` each)."""
    previous = current()
    _local.watch = watch
    try:
        yield watch
    finally:
        _local.watch = previous


@contextmanager
def watching() -> Generator[Watch]:
    """The `Watch` of one launch: the shared one, else a new one, watched."""
    watch = current()
    if watch is not None:
        yield watch
        return
    with Watch() as watch:
        yield watch


__all__ = [
    "DEFAULT_TIMEOUT",
    "TIMEOUT_VARIABLE",
    "StoppedError",
    "Watch",
    "current",
    "shared",
    "timeout_error",
    "timeout_seconds",
    "watching",
]
