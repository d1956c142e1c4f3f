"""Streams and the tokens queued on them, and what the trace keeps of each.

Every operation a DeviceAPI is asked to do on device memory — a copy, a kernel
launch, a stream-to-stream wait — becomes a `Token` queued on a `Stream` (TVM's
`TVMStreamHandle`). When a token runs, whether it races with another and when it
starts and ends on the simulated timeline is the `Scheduler`'s to decide
(`scheduler.py`). A finished token keeps only what the report needs; its bars in the
trace (`Slice`) are made when asked. Kernels the scheduler runs at once without a token
are kept as `KernelRun` tuples, made tokens by `as_tokens`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..system.cost import Hop
from ..system.devices import Device
from .errors import Name, name_text

TokenKind = Literal["copy", "kernel", "marker"]


@dataclass
class Slice:
    """One bar in the trace: a token's time on one track (a stream or a copy engine)."""

    device: str
    track: str
    name: str
    start: float
    end: float
    args: dict[str, object] = field(default_factory=dict[str, object])


class Stream:
    """An in-order queue of tokens on one device (TVM's `TVMStreamHandle`)."""

    __slots__ = (
        "count",
        "device",
        "device_name",
        "freed",
        "index",
        "last",
        "name",
        "queue",
        "ready",
        "uid",
    )

    def __init__(self, device: Device, index: int, uid: int) -> None:
        self.device = device
        self.device_name = str(device)
        self.index = index
        self.uid = uid
        """Position among all streams of the scheduler (the key of vector clocks)."""
        self.count = 0
        """Tokens submitted so far (the next token's sequence number)."""
        self.queue: deque[Token] = deque()
        self.last: Token | None = None
        self.ready = 0.0
        """Simulated time at which the last queued token ends."""
        self.freed = False
        self.name = f"{device}/{'default' if index == 0 else f's{index}'}"

    def __repr__(self) -> str:
        return f"Stream({self.name})"


class Token:
    """One queued operation; waiting on it waits for it and everything ordered before it."""

    __slots__ = (
        "_label", "_slices", "atomics", "clock", "done", "effect", "end", "hops", "id", "kind",
        "nbytes", "preds", "reads", "seq", "spans", "start", "stream", "wall_seconds", "writes",
    )  # fmt: skip

    def __init__(
        self,
        id: int,
        kind: TokenKind,
        label: Name,
        stream: Stream,
        seq: int,
        clock: dict[int, int],
        preds: list[Token],
        reads: tuple[object, ...],
        writes: tuple[object, ...],
        effect: Callable[[], None] | None,
        nbytes: int = 0,
        hops: tuple[Hop, ...] = (),
        atomics: tuple[object, ...] = (),
    ) -> None:
        self.id = id
        self.kind: TokenKind = kind
        self._label = label
        self.stream = stream
        self.seq = seq
        """Position on its stream."""
        self.clock = clock
        """Vector clock: per stream uid, the last sequence number ordered before (or at)
        this, counting only tokens not yet run when this one was submitted (see
        `Scheduler.submit`)."""
        self.preds = preds
        self.reads = reads
        self.writes = writes
        self.atomics = atomics
        """Memory among `reads`/`writes` it touches only through atomic read-modify-writes."""
        self.effect = effect
        self.start = 0.0
        self.end = 0.0
        self.nbytes = nbytes
        self.hops = hops
        self.done = False
        self.wall_seconds = 0.0
        self.spans: tuple[tuple[float, float], ...] = ()
        """A copy's (start, end) on the copy engine of each of its hops."""
        self._slices: list[Slice] | None = None

    @property
    def label(self) -> str:
        """What it does, for messages and the trace (formatted on first use)."""
        label = self._label
        if not isinstance(label, str):
            label = self._label = name_text(label)
        return label

    @property
    def slices(self) -> list[Slice]:
        """Its bars in the trace: one per copy hop, one for a kernel, none for a marker."""
        if self._slices is None:
            # Made when asked (reports), not per operation: they follow from its times.
            stream = self.stream
            slices: list[Slice] = []
            if self.kind == "kernel":
                args: dict[str, object] = {"stream": stream.name}
                slices.append(
                    Slice(stream.device_name, stream.name, self.label, self.start, self.end, args)
                )
            for hop, (begin, end) in zip(self.hops, self.spans, strict=True):
                args = {"bytes": self.nbytes, "stream": stream.name}
                if len(self.hops) > 1:  # staged: the first hop ends at the host
                    args["staged_through"] = self.hops[0].dst
                track = f"copy {hop.src}->{hop.dst}"
                slices.append(Slice(stream.device_name, track, self.label, begin, end, args))
            self._slices = slices
        return self._slices

    def describe(self) -> str:
        return f"{self.kind} {self.label} (token #{self.id} on stream {self.stream.name})"

    def __repr__(self) -> str:
        return f"Token({self.describe()}{', done' if self.done else ''})"


KernelRun = tuple[int, Name, Stream, int, float, float, float]
"""A kernel `Scheduler.run_kernel_now` ran, as the trace keeps it: id, label, stream,
position on the stream, simulated start and end, wall seconds."""

TraceEntry = Token | KernelRun
"""What a scheduler keeps for the trace per operation (`as_tokens` makes them tokens)."""

NO_PREDECESSORS: list[Token] = []
"""The predecessors of a finished token (shared, never changed)."""
NO_CLOCK: dict[int, int] = {}
"""The vector clock of a finished token, or of one that runs at once (shared, never changed)."""


def as_tokens(trace: Sequence[TraceEntry]) -> list[Token]:
    """The entries of a scheduler's `trace` as (finished) tokens."""
    tokens: list[Token] = []
    for entry in trace:
        if isinstance(entry, Token):
            tokens.append(entry)
            continue
        uid, label, stream, seq, start, end, wall = entry
        token = Token(uid, "kernel", label, stream, seq, NO_CLOCK, NO_PREDECESSORS, (), (), None)
        token.start, token.end, token.wall_seconds, token.done = start, end, wall, True
        tokens.append(token)
    return tokens


__all__ = [
    "NO_CLOCK",
    "NO_PREDECESSORS",
    "KernelRun",
    "Slice",
    "Stream",
    "Token",
    "TokenKind",
    "TraceEntry",
    "as_tokens",
]
