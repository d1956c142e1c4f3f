"""`with_deep_stack`: entry points run on long-lived big-stack workers, from any number of
user threads at once, re-entrantly, see the caller's context variables, and give back
their result or error unchanged."""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar

import pytest
from xdsl.dialects import func

import devplan
from devplan.diagnostics import RECURSION_LIMIT, with_deep_stack

NESTED_IFS = 300


def nested_ifs(depth: int) -> str:
    opening = "".join("  " * i + "scf.if %c {\n" for i in range(depth))
    closing = "".join("  " * i + "}\n" for i in reversed(range(depth)))
    return f"func.func @f(%c: i1) {{\n{opening}{closing}  func.return\n}}\n"


@with_deep_stack
def worker_thread() -> int:
    return threading.get_ident()


@with_deep_stack
def depth_here(n: int) -> int:
    """Recurse `n` Python frames deep and report the depth reached."""
    return n if n == 0 else 1 + depth_here.__wrapped__(n - 1)  # type: ignore[attr-defined]


def test_calls_in_turn_are_served_by_one_worker_not_a_thread_each() -> None:
    first = worker_thread()
    assert first != threading.get_ident()
    assert all(worker_thread() == first for _ in range(20))


def test_a_nested_call_runs_in_place_on_the_worker() -> None:
    @with_deep_stack
    def outer() -> tuple[int, int]:
        return threading.get_ident(), worker_thread()

    here, inner = outer()
    assert here == inner


def test_a_call_sees_the_callers_context_variables_and_changes_none_of_them() -> None:
    where: ContextVar[str] = ContextVar("where", default="unset")

    @with_deep_stack
    def reads_then_sets() -> str:
        seen = where.get()
        where.set("worker")
        return seen

    token = where.set("caller")
    try:
        assert reads_then_sets() == "caller"
        assert where.get() == "caller"
    finally:
        where.reset(token)
    assert reads_then_sets() == "unset"


def test_a_call_runs_deeper_than_the_default_recursion_limit() -> None:
    assert depth_here(20_000) == 20_000


def test_the_recursion_limit_is_the_callers_again_after_calls_and_errors() -> None:
    before = sys.getrecursionlimit()
    assert before < RECURSION_LIMIT

    @with_deep_stack
    def fails() -> None:
        assert sys.getrecursionlimit() >= RECURSION_LIMIT
        raise KeyError("the error")

    with pytest.raises(KeyError, match="the error"):
        fails()
    worker_thread()
    assert sys.getrecursionlimit() == before


def test_unbounded_recursion_is_a_devplan_error_not_a_crash() -> None:
    @with_deep_stack
    def forever(n: int) -> int:
        return forever.__wrapped__(n + 1)  # type: ignore[attr-defined]

    with pytest.raises(devplan.DevplanError, match="nested too deeply"):
        forever(0)
    assert worker_thread() != threading.get_ident()  # the worker survived it


def test_calls_from_many_threads_at_once_all_get_their_own_results() -> None:
    text = nested_ifs(NESTED_IFS)
    barrier = threading.Barrier(6)

    def parse(i: int) -> tuple[str, list[str]]:
        barrier.wait()
        module = devplan.parse(text.replace("@f", f"@f{i}"))
        function = next(op for op in module.walk() if isinstance(op, func.FuncOp))
        return function.sym_name.data, [op.name for op in module.walk()]

    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(parse, range(6)))
    for i, (name, ops) in enumerate(results):
        assert name == f"f{i}"
        assert ops.count("scf.if") == NESTED_IFS
    assert sys.getrecursionlimit() < RECURSION_LIMIT


def test_a_call_blocked_on_another_threads_call_does_not_deadlock() -> None:
    # Two calls active at once need two workers: the first waits for the second.
    started = threading.Event()
    release = threading.Event()

    @with_deep_stack
    def waits() -> str:
        started.set()
        assert release.wait(30)
        return "released"

    @with_deep_stack
    def releases() -> str:
        release.set()
        return "released it"

    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(waits)
        assert started.wait(30)
        assert releases() == "released it"
        assert waiting.result(30) == "released"


def test_a_forked_child_starts_its_own_worker() -> None:
    worker_thread()  # the parent has an idle worker now, which a child does not inherit
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer within the parent's wait, or be killed
        try:
            os.write(write, str(depth_here(5_000)).encode())
        finally:
            os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], 60)
    answer = os.read(read, 64) if ready else b""
    os.close(read)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert answer == b"5000"
