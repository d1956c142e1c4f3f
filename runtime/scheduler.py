"""The `Scheduler`: deferred, ordered execution of the tokens on streams, and a timeline.

Every operation a DeviceAPI is asked to do on device memory — a copy, a kernel
launch, a stream-to-stream wait — becomes a `Token` queued on a `Stream`
(`streams.py`). Its *data effect* runs later, when the stream is synchronised or when
something that depends on it must run (a token waited on, a blocking operation on the
same stream, a free of a buffer it touches). A program that reads an async copy's
destination before waiting for it therefore sees stale data *and* an error from
`Scheduler.check_host_access`, exactly the bug it has on a real GPU.

Ordering (happens-before) between tokens:

1. tokens on one stream run in submission order;
2. a token runs after every token it was given in `wait_for`;
3. `sync_stream_from_to(src, dst)` queues a marker on `dst` that waits for the last
   token queued on `src`.

When a token runs, every still-pending token that touches one of its buffers (a
write against its reads, any access against its writes) must be ordered after it;
otherwise the two are a race and `RaceError` names both. Happens-before is decided
by vector clocks (one entry per stream), so the check costs O(streams) per buffer.

Launches that run at once: a kernel token may name memory it touches only through
atomic read-modify-writes (`atomics`). Two unordered tokens that meet only in such memory
do not race; either may wait for the other there (a spin-wait on a counter), so neither
may run to completion first. When such a token is to run, the scheduler gathers the
pending tokens unordered with it that share such memory with it (and theirs, in turn),
runs their predecessors, and runs them all at once, one OS thread each, joining all of
them (`_execute_together`) under one watchdog (`kernels/watchdog.py`): when one faults,
the loops of the others stop, and the fault of the first in program order is raised.
Every other token runs alone, in the deterministic order above, with its race checks.

Cost: most operations of a program are blocking ones on an idle stream (nothing they
wait for is pending). Such a token runs at once, without entering the pending tables;
when nothing at all is pending (`Scheduler.queued == 0`) its race check and the host's
pending-write checks pass without looking; a blocking launch then skips even the
access records (`run_now`), and a launch the executor repeats skips the token too
(`run_kernel_now`: the trace keeps a tuple, made a token when asked). The pending table
and race names of a memory go when nothing pending touches it any more. Messages are
formatted only when raised (`Name`). A finished token keeps only what the report needs,
and the report's statistics are totals kept as tokens are submitted and run (`Totals`):
the scheduler keeps the first `TRACE_TOKENS` tokens for the trace and drops the rest, so
its memory does not grow with the number of operations.

Timeline: each token also gets simulated start and end times under a `CostModel`
when it is submitted (they depend only on tokens submitted earlier). A stream
starts a token when its previous token and all its dependencies have ended and
the host has issued it; a copy also waits for the copy engine of each link it
crosses (one engine per direction of a link), so copies serialise per link while
kernels on other streams overlap with them. Copy and kernel times come from the
one cost model of `system/cost.py` (`CostModel`): per hop `latency + bytes /
bandwidth`, two devices without a direct link staged through the host (two hops, two
engines); kernel time is given by the caller (the executor asks the same `CostModel`).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..system.cost import CostModel, Hop
from ..system.devices import Device
from . import compile_clock
from .errors import Name, PendingWriteError, RaceError, StreamError, name_text
from .streams import NO_CLOCK, NO_PREDECESSORS, Stream, Token, TokenKind, TraceEntry, as_tokens

_Arg = TypeVar("_Arg")


def _key(memory: object) -> int:
    # NumPy arrays are unhashable; a buffer or array is identified by its object.
    return id(memory)


def _pending_predecessors(
    last: Token | None, wait_for: Sequence[Token]
) -> tuple[list[Token], dict[int, int]]:
    """The tokens not yet run among a new token's predecessors (its stream's last token
    and `wait_for`), and the merge of their vector clocks.

    Only tokens not yet run can order anything still to run, so only their clocks are
    merged: every token a finished one was ordered after has finished too, and a stream
    runs its tokens in order, so a finished token's clock names no token that is still
    pending (which is all `Scheduler._ordered` asks about).
    """
    if (last is None or last.done) and not wait_for:
        return [], NO_CLOCK  # the common case: its stream is idle, it waits for nothing
    preds: list[Token] = []
    clock: dict[int, int] = {}
    if last is not None and not last.done:
        preds.append(last)
        clock.update(last.clock)
    for dep in wait_for:
        if not isinstance(dep, Token):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise StreamError(f"wait_for takes tokens, got {dep!r}")
        if not dep.done:
            preds.append(dep)
            for uid, seq in dep.clock.items():
                if clock.get(uid, -1) < seq:
                    clock[uid] = seq
    return preds, clock


TRACE_TOKENS = 100_000
"""How many tokens (the first ones) a scheduler keeps for the trace."""


def _wall_since(began: float, compiled: float) -> float:
    """The wall seconds since `began` (a `perf_counter` reading), less those spent
    compiling kernels since the compile clock read `compiled`: a kernel's first launch
    compiles it, and that is reported as compile time, not as the kernel's."""
    return max(0.0, time.perf_counter() - began - (compile_clock.seconds() - compiled))


@dataclass
class Totals:
    """What the report counts, summed as tokens are submitted and run."""

    kernels: dict[str, list[float]] = field(default_factory=dict[str, list[float]])
    """Per device name: [launches, cost-model seconds, wall seconds]."""
    local_copies: dict[str, list[int]] = field(default_factory=dict[str, list[int]])
    """Per device name: [copies within the device, bytes]."""
    links: dict[str, list[float]] = field(default_factory=dict[str, list[float]])
    """Per link name: [copies, bytes, busy cost-model seconds]."""
    copy_tracks: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    """Per device name, its copy-engine tracks in order of first use."""
    copy_wall_seconds: float = 0.0
    end: float = 0.0
    """The latest simulated end of a token."""

    def submitted(self, token: Token) -> None:
        if token.end > self.end:
            self.end = token.end
        device = token.stream.device_name
        if token.kind == "kernel":
            totals = self.kernels.get(device)
            if totals is None:
                totals = self.kernels[device] = [0, 0.0, 0.0]
            totals[0] += 1
            totals[1] += token.end - token.start
        elif token.kind == "copy":
            for hop in token.hops:
                if hop.link is None:
                    local = self.local_copies.setdefault(device, [0, 0])
                    local[0] += 1
                    local[1] += token.nbytes
                else:
                    link = self.links.setdefault(hop.link.name, [0, 0, 0.0])
                    link[0] += 1
                    link[1] += token.nbytes
                    link[2] += hop.seconds(token.nbytes)
                tracks = self.copy_tracks.setdefault(device, [])
                track = f"copy {hop.src}->{hop.dst}"
                if track not in tracks:
                    tracks.append(track)

    def kernel_totals(self, device: str) -> list[float]:
        """The row of `kernels` of the device named `device` (made when missing)."""
        totals = self.kernels.get(device)
        if totals is None:
            totals = self.kernels[device] = [0, 0.0, 0.0]
        return totals

    def ran(self, token: Token) -> None:
        if token.kind == "kernel":
            self.kernels[token.stream.device_name][2] += token.wall_seconds
        elif token.kind == "copy":
            self.copy_wall_seconds += token.wall_seconds


class Scheduler:
    """The streams, pending tokens, host clock and copy engines shared by a runtime's APIs."""

    def __init__(self, cost_model: CostModel | None = None, host: Device | None = None) -> None:
        self.cost_model = cost_model if cost_model is not None else CostModel.zero()
        self.host = host if host is not None else Device("cpu", 0)
        self.host_time = 0.0
        """Simulated time the host has reached (it advances by waiting)."""
        self.trace: list[TraceEntry] = []
        """The first `TRACE_TOKENS` operations submitted (for the trace): tokens, and
        kernels run by `run_kernel_now` as plain tuples (made tokens when asked)."""
        self.submitted = 0
        """How many tokens were submitted (the next token's id)."""
        self.totals = Totals()
        self.streams: list[Stream] = []
        self._stream_counts: dict[Device, int] = {}
        """Streams made so far per device (the next one's index)."""
        self.engine_ready: dict[tuple[str, str], float] = {}
        self.current: Token | None = None
        """The token whose effect is running (kernels may take device views then)."""
        self.queued = 0
        """How many tokens are queued and not yet run (0: every check of pending work
        passes at once)."""
        self._pending: dict[int, dict[Stream, deque[tuple[Token, bool]]]] = {}
        """Per memory, per stream, the not-yet-run tokens touching it (True: writing it)."""
        self._names: dict[int, Name] = {}
        self.created = time.perf_counter()
        self.compiled = compile_clock.seconds()
        """The compile clock when the scheduler was made (the report counts from there)."""

    # -- streams -------------------------------------------------------------------------

    def new_stream(self, device: Device) -> Stream:
        index = self._stream_counts.get(device, 0)
        self._stream_counts[device] = index + 1
        stream = Stream(device, index, len(self.streams))
        self.streams.append(stream)
        return stream

    def free_stream(self, stream: Stream) -> None:
        self.sync(stream)
        stream.freed = True

    # -- submission ----------------------------------------------------------------------

    def submit(
        self,
        stream: Stream,
        kind: TokenKind,
        label: Name,
        effect: Callable[[], None] | None,
        *,
        reads: Sequence[tuple[object, Name]] = (),
        writes: Sequence[tuple[object, Name]] = (),
        wait_for: Sequence[Token] = (),
        seconds: float = 0.0,
        hops: Sequence[Hop] = (),
        nbytes: int = 0,
        blocking: bool = False,
        atomics: Sequence[object] = (),
    ) -> Token:
        """Queue an operation; with `blocking`, run it (and what it needs) before returning.

        Each memory in `reads`/`writes` comes with its `Name` for race messages; `atomics`
        are those of them it touches only through atomic read-modify-writes.
        """
        if stream.freed:
            raise StreamError(f"stream {stream.name} was freed; create a new stream")
        if self.queued:
            # Names serve race messages, and races need pending work: with none, an
            # operation runs at once or becomes the only pending one (named below).
            names = self._names
            for memory, name in reads:
                names[id(memory)] = name
            for memory, name in writes:
                names[id(memory)] = name
        last = stream.last
        seq = stream.count
        preds, clock = _pending_predecessors(last, wait_for)
        immediate = blocking and not preds
        if not immediate:
            if clock is NO_CLOCK:
                clock = {}
            clock[stream.uid] = seq
        token = Token(
            self.submitted, kind, label, stream, seq, clock, preds,
            tuple(m for m, _ in reads), tuple(m for m, _ in writes), effect, nbytes, tuple(hops),
            tuple(atomics),
        )  # fmt: skip
        self._schedule(token, stream, wait_for, seconds, hops)
        self._keep(token)
        stream.last = token
        stream.count = seq + 1
        if immediate:
            # Nothing it waits for is pending (so its stream's queue is empty): it runs
            # now, without entering the pending tables, and no token will ever merge its
            # clock (only clocks of pending tokens are merged).
            self._execute(token, queued=False)
            if self.host_time < token.end:
                self.host_time = token.end
            return token
        if not self.queued:
            for memory, name in (*reads, *writes):
                self._names[id(memory)] = name
        self._enqueue(token)
        if blocking:
            self.wait(token)
        return token

    def run_now(
        self,
        stream: Stream,
        kind: TokenKind,
        label: Name,
        effect: Callable[[_Arg], None],
        arg: _Arg,
        seconds: float,
    ) -> Token:
        """Run `effect(arg)` at once as a blocking operation on `stream` that touches
        nothing pending: the caller has checked that nothing is queued (`queued == 0`),
        so it needs no access records, clock or race check."""
        if stream.freed:
            raise StreamError(f"stream {stream.name} was freed; create a new stream")
        seq = stream.count
        token = Token(
            self.submitted, kind, label, stream, seq, NO_CLOCK, NO_PREDECESSORS, (), (), None
        )
        start = stream.ready if stream.ready > self.host_time else self.host_time
        token.start = start
        token.end = stream.ready = start + seconds
        self._keep(token)
        stream.last = token
        stream.count = seq + 1
        self.current = token
        began, compiled = time.perf_counter(), compile_clock.seconds()
        try:
            effect(arg)
        finally:
            self.current = None
            token.wall_seconds = _wall_since(began, compiled)
            token.done = True
            self.totals.ran(token)
        if self.host_time < token.end:
            self.host_time = token.end
        return token

    def run_kernel_now(
        self,
        stream: Stream,
        totals: list[float],
        label: Name,
        run: Callable[[Any, Any, Any], None],
        grid: Any,
        block: Any,
        args: Any,
        seconds: float,
    ) -> None:
        """`run(grid, block, args)` at once as a blocking kernel on `stream`, as `run_now`
        does, for a launch site that repeats a launch checked before: no token is made
        (the trace keeps a tuple while it has room), and `totals` is the device's row of
        `Totals.kernels` (`kernel_totals`). The caller has checked that nothing is queued."""
        if stream.freed:
            raise StreamError(f"stream {stream.name} was freed; create a new stream")
        start = stream.ready if stream.ready > self.host_time else self.host_time
        end = stream.ready = self.host_time = start + seconds
        seq = stream.count
        stream.count = seq + 1
        uid = self.submitted
        self.submitted = uid + 1
        began = time.perf_counter()
        try:
            run(grid, block, args)
        finally:
            wall = time.perf_counter() - began
            totals[0] += 1
            totals[1] += seconds
            totals[2] += wall
            if end > self.totals.end:
                self.totals.end = end
            if len(self.trace) < TRACE_TOKENS:
                self.trace.append((uid, label, stream, seq, start, end, wall))

    @property
    def tokens(self) -> list[Token]:
        """The first `TRACE_TOKENS` operations submitted, in order (for the trace)."""
        return as_tokens(self.trace)

    def _keep(self, token: Token) -> None:
        """Count `token` in the totals; keep it for the trace while there is room."""
        self.submitted += 1
        self.totals.submitted(token)
        if len(self.trace) < TRACE_TOKENS:
            self.trace.append(token)

    def _enqueue(self, token: Token) -> None:
        """Put `token` on its stream's queue and in the pending table of each memory."""
        stream = token.stream
        stream.queue.append(token)
        self.queued += 1
        written = {_key(m) for m in token.writes}
        for key in {_key(m) for m in (*token.reads, *token.writes)}:
            queues = self._pending.setdefault(key, {})
            queues.setdefault(stream, deque()).append((token, key in written))

    def _schedule(
        self,
        token: Token,
        stream: Stream,
        wait_for: Sequence[Token],
        seconds: float,
        hops: Sequence[Hop],
    ) -> None:
        start = stream.ready if stream.ready > self.host_time else self.host_time
        for dep in wait_for:
            if dep.end > start:
                start = dep.end
        token.start = start
        if token.kind == "copy":
            now = start
            spans: list[tuple[float, float]] = []
            for hop in hops:
                engine = (hop.src, hop.dst)
                begin = max(now, self.engine_ready.get(engine, 0.0))
                now = begin + hop.seconds(token.nbytes)
                self.engine_ready[engine] = now
                spans.append((begin, now))
            token.spans = tuple(spans)
            token.end = now
        else:
            token.end = start + seconds
        stream.ready = token.end

    # -- execution -----------------------------------------------------------------------

    def wait(self, token: Token) -> None:
        """Run `token` and everything ordered before it; the host clock reaches its end."""
        stack = [token]
        while stack:
            top = stack[-1]
            if top.done:
                stack.pop()
                continue
            waiting = [p for p in top.preds if not p.done]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            self._execute(top)
        self.host_time = max(self.host_time, token.end)

    def sync(self, stream: Stream) -> None:
        """`StreamSync`: returns once everything queued on `stream` has run."""
        if stream.last is not None:
            self.wait(stream.last)

    def sync_all(self) -> None:
        for stream in self.streams:
            self.sync(stream)

    def quiesce(self, memory: object) -> None:
        """Run every pending token that touches `memory` (before it is freed)."""
        if not self.queued:
            return
        for token in self.pending_accesses(memory):
            self.wait(token)

    def _execute(self, token: Token, queued: bool = True) -> None:
        if queued and token.atomics:
            partners = self._atomic_partners(token)
            if token.done:
                return  # a partner's predecessor ran with it
            if partners:
                self._execute_together([token, *partners])
                return
        if queued:
            head = token.stream.queue.popleft()
            assert head is token, "a stream's tokens run in order"
        if self.queued:
            self._check_race(token)
        self.current = token
        began, compiled = time.perf_counter(), compile_clock.seconds()
        try:
            if token.effect is not None:
                token.effect()
        finally:
            self.current = None
            token.wall_seconds = _wall_since(began, compiled)
            self._finish(token, queued)

    def _finish(self, token: Token, queued: bool) -> None:
        token.done = True
        self.totals.ran(token)
        if queued:
            self.queued -= 1
            for key in {_key(m) for m in (*token.reads, *token.writes)}:
                queues = self._pending[key]
                queue = queues[token.stream]
                # Tokens of one stream run in order, so this one is at the front.
                if queue and queue[0][0] is token:
                    queue.popleft()
                if not queue:
                    # Nothing pending touches it on this stream (or at all): its
                    # entries go, so a long run keeps none for memory it is done with.
                    del queues[token.stream]
                    if not queues:
                        del self._pending[key]
                        self._names.pop(key, None)
        # A finished token is kept for the report only: what it ran, what it waited
        # for and touched, and its clock (see `_pending_predecessors`) are no longer
        # needed. Dropping them keeps a long run's tokens small and cheap for the
        # garbage collector to scan.
        token.effect = None
        token.preds = NO_PREDECESSORS
        token.reads = token.writes = token.atomics = ()
        token.clock = NO_CLOCK

    # -- launches that run at once -------------------------------------------------------

    def _atomic_partners(self, token: Token) -> list[Token]:
        """The pending tokens that must run at the same time as `token`: those not ordered
        with it that touch some memory it touches only atomically, and only atomically
        too (and, in turn, their partners). Either may wait for the other through that
        memory (a spin-wait on a counter), so neither may run to completion first. Each
        partner's predecessors are run first (none is ordered after `token`, or the
        partner would be too)."""
        group = [token]
        found: list[Token] = []
        i = 0
        while i < len(group):
            member = group[i]
            i += 1
            for memory in member.atomics:
                for queue in list(self._pending.get(_key(memory), {}).values()):
                    for other, _ in list(queue):
                        if (
                            other.done
                            or any(other is m for m in group)
                            or not any(memory is m for m in other.atomics)
                        ):
                            continue  # (memory may be an array: compared by identity)
                        if any(self._ordered(m, other) or self._ordered(other, m) for m in group):
                            continue
                        group.append(other)
                        found.append(other)
        for other in found:
            for pred in other.preds:
                if not pred.done:
                    self.wait(pred)
        return [t for t in found if not t.done]

    def _execute_together(self, tokens: list[Token]) -> None:
        """Run the effects of `tokens` at once, one OS thread each, under one watchdog
        (`kernels/watchdog.py`): a fault of one stops the others' loops. After all have
        ended, the fault of the first in program order is raised (a kernel the watchdog
        stopped because another faulted reports nothing of its own)."""
        from .kernels import watchdog

        tokens = sorted(tokens, key=lambda t: t.id)
        for token in tokens:
            head = token.stream.queue.popleft()
            assert head is token, "a stream's tokens run in order"
        for token in tokens:
            self._check_race(token)
        errors: list[BaseException | None] = [None] * len(tokens)
        watch = watchdog.Watch()

        def run(i: int, token: Token) -> None:
            began, compiled = time.perf_counter(), compile_clock.seconds()
            with watchdog.shared(watch):
                try:
                    if token.effect is not None:
                        token.effect()
                except BaseException as e:  # reported below, on the scheduler's thread
                    errors[i] = e
                    if not isinstance(e, watchdog.StoppedError):
                        watch.stop()
                finally:
                    token.wall_seconds = _wall_since(began, compiled)

        self.current = tokens[0]
        threads = [
            threading.Thread(target=run, args=(i, t), name=f"devplan {t.label}", daemon=True)
            for i, t in enumerate(tokens)
        ]
        try:
            with watch:
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
        finally:
            self.current = None
            for token in tokens:
                self._finish(token, True)
        faults = [e for e in errors if e is not None]
        first = next((e for e in faults if not isinstance(e, watchdog.StoppedError)), None)
        if first is not None:
            raise first
        if faults:
            raise faults[0]

    def _check_race(self, token: Token) -> None:
        written = {_key(m) for m in token.writes}
        atomic = {_key(m) for m in token.atomics}
        for key in {_key(m) for m in (*token.reads, *token.writes)}:
            token_writes = key in written
            for stream, queue in self._pending.get(key, {}).items():
                if stream is token.stream:
                    continue  # later tokens of its own stream are ordered after it
                # The first conflicting token of a stream decides: the rest follow it.
                # Atomic updates on both sides do not conflict.
                found = next(
                    (
                        (t, w)
                        for t, w in queue
                        if (w or token_writes)
                        and not (key in atomic and any(_key(m) == key for m in t.atomics))
                    ),
                    None,
                )
                if found is not None and not self._ordered(token, found[0]):
                    other, both = found[0], token_writes and found[1]
                    name = self._names.get(key)
                    raise RaceError(
                        f"race on {'a buffer' if name is None else name_text(name)}: "
                        f"{token.describe()} and {other.describe()} are not ordered and "
                        f"{'both write it' if both else 'one writes it'}; "
                        "make one wait on the other's token"
                    )

    @staticmethod
    def _ordered(earlier: Token, later: Token) -> bool:
        """Whether `earlier` happens before `later` (vector clocks)."""
        return later.clock.get(earlier.stream.uid, -1) >= earlier.seq

    # -- host-side checks ----------------------------------------------------------------

    def pending_writes(self, memory: object) -> list[Token]:
        """Tokens not yet run that write `memory`, in submission order."""
        return self.pending_writes_by_key(_key(memory))

    def pending_writes_by_key(self, key: int) -> list[Token]:
        if not self.queued:
            return []
        queues = self._pending.get(key, {}).values()
        return sorted((t for q in queues for t, writes in q if writes), key=lambda t: t.id)

    def pending_accesses(self, memory: object) -> list[Token]:
        """Tokens not yet run that read or write `memory`, in submission order."""
        if not self.queued:
            return []
        queues = self._pending.get(_key(memory), {}).values()
        return sorted((t for q in queues for t, _ in q), key=lambda t: t.id)

    def check_host_access(self, memory: object, name: Name, write: bool = False) -> None:
        """Raise if the host may not read (or, with `write`, write) `memory` yet."""
        if not self.queued:
            return  # nothing is pending at all: the common, synchronous case
        pending = self.pending_accesses(memory) if write else self.pending_writes(memory)
        if pending:
            first = pending[0]
            kind = "access" if write and first not in self.pending_writes(memory) else "write"
            raise PendingWriteError(
                f"host {'writes' if write else 'reads'} {name_text(name)} while it has a "
                f"pending async {kind}: {first.describe()}; wait on its token first (device.wait)"
            )

    @property
    def model_time(self) -> float:
        """Simulated time at which everything submitted so far has ended."""
        return max(self.host_time, self.totals.end)


__all__ = ["TRACE_TOKENS", "Scheduler", "Totals"]
