"""`with_deep_stack`: devplan's entry points run where deep input fits.

xDSL parses, verifies and prints nested IR recursively, and the executor runs `func.call`
recursively, so an entry point runs on a long-lived worker thread with a big stack and a
raised recursion limit; a pool keeps one worker per call active at once.
"""

from __future__ import annotations

import contextvars
import functools
import os
import queue
import sys
import threading
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from .errors import DevplanError

RECURSION_LIMIT = 60_000
"""Python frames devplan's entry points may use: about 400 nested regions in IR, or
5000 nested host calls at run time, fit well within it."""
_STACK_BYTES = 1 << 30
"""Stack of the threads entry points run on (address space; only what is used is
touched), so that RECURSION_LIMIT frames fit."""

_P = ParamSpec("_P")
_R = TypeVar("_R")
_Job = tuple[Callable[[], Any], "queue.SimpleQueue[tuple[bool, Any]]"]

_deep = threading.local()
"""`active` is set on the deep-stack workers: a wrapped call made there runs in place."""
_deep_calls: list[int] = []
"""The recursion limit before the first active deep call, then one entry per active call
(calls from several threads share the raised limit until the last one ends)."""
_deep_calls_lock = threading.Lock()


class _DeepWorker:
    """A long-lived daemon thread with a `_STACK_BYTES` stack that runs entry-point calls.

    Starting a thread with a big stack costs about as much as a small `devplan.execute`
    (the stack is mapped and unmapped each time), so workers are kept: a call takes an
    idle worker from `_idle` (or starts one), hands it the call and blocks until the
    answer comes back. A worker goes back to `_idle` when its call has ended, so calls
    from several user threads at once run on as many workers, each in parallel with the
    others as far as the GIL lets them, and the pool never holds more workers than calls
    were ever active at once.
    """

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        previous = threading.stack_size(_STACK_BYTES)
        try:
            thread = threading.Thread(target=self._serve, name="devplan deep stack", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)

    def _serve(self) -> None:
        _deep.active = True
        while True:
            call, answer = self.jobs.get()
            try:
                outcome: tuple[bool, Any] = (True, call())
            except BaseException as e:  # handed to the caller's thread
                outcome = (False, e)
            del call
            _idle.append(self)  # before answering: the caller's next call may reuse it
            answer.put(outcome)
            del outcome


_idle: list[_DeepWorker] = []
"""Workers waiting for a call (list.append and list.pop are atomic)."""
_idle_lock = threading.Lock()
"""Serialises starting a worker (`threading.stack_size` is process-wide)."""


def _forget_workers_after_fork() -> None:
    """In a forked child: the workers were threads of the parent and do not exist here;
    calls start new ones. The locks may have been held by threads that are gone."""
    global _idle_lock, _deep_calls_lock
    _idle.clear()
    _idle_lock = threading.Lock()
    _deep_calls_lock = threading.Lock()
    if _deep_calls and not getattr(_deep, "active", False):
        # No call is active on the thread that forked: none will end in the child.
        sys.setrecursionlimit(_deep_calls[0])
        _deep_calls.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers_after_fork)


def _run_deep(call: Callable[[], _R]) -> _R:
    """`call()` on an idle deep-stack worker, under the raised recursion limit."""
    try:
        worker = _idle.pop()
    except IndexError:
        with _idle_lock:
            worker = _DeepWorker()
    answer: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
    with _deep_calls_lock:
        if not _deep_calls:
            _deep_calls.append(sys.getrecursionlimit())
            sys.setrecursionlimit(max(_deep_calls[0], RECURSION_LIMIT))
        _deep_calls.append(0)
    try:
        worker.jobs.put((call, answer))
        ok, value = answer.get()
    finally:
        with _deep_calls_lock:
            _deep_calls.pop()
            if len(_deep_calls) == 1:  # the last one: restore the caller's limit
                sys.setrecursionlimit(_deep_calls.pop())
    if ok:
        return value
    if isinstance(value, RecursionError):
        raise DevplanError(
            "error: the input is nested too deeply for devplan (more than "
            f"{RECURSION_LIMIT} Python frames: deeper regions, attributes or calls "
            "than it can follow)"
        ) from value
    raise value


def with_deep_stack(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run `fn` on a thread with a large stack and a high recursion limit.

    xDSL parses, verifies and prints nested IR recursively, and the executor runs
    `func.call` recursively, so deep but valid inputs need more than Python's default
    1000 frames (and than the main thread's C stack). Calls run on long-lived worker
    threads with big stacks (`_DeepWorker`), one per call active at once; beyond
    `RECURSION_LIMIT` the `RecursionError` becomes a `DevplanError` saying the input is
    nested too deeply. Nested calls of wrapped functions (from code running on a
    worker) run in place, on the worker. The call sees the caller's context variables
    (a copy of them), such as where remarks go.
    """

    @functools.wraps(fn)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if getattr(_deep, "active", False):
            return fn(*args, **kwargs)
        context = contextvars.copy_context()
        return _run_deep(lambda: context.run(fn, *args, **kwargs))

    return run
