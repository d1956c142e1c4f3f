"""What a run did, per device and per link, and its Chrome trace.

A `Report` is collected from a runtime's DeviceAPIs and its stream scheduler after
(or during) a run: per device the allocations, frees, peak and current bytes per
memory scope, kernel launches with their cost-model and wall time, and copies that
stayed on the device; per link the copies and bytes that crossed it and how long
the link was busy under the cost model; the run's wall time beside its time under
the cost model; and the buffers still live (leaks). `format()` renders a table,
`as_dict()` plain data, and `write_chrome_trace(path)` a Chrome trace-event file
that Perfetto (ui.perfetto.dev) and chrome://tracing open: one process per device,
one thread per stream (kernels) and per copy engine (copies, one per direction of
a link), with `ph: "X"` complete events whose `ts`/`dur` are cost-model
microseconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

from ..diagnostics import DevplanError
from . import compile_clock
from .device_api import DeviceAPI
from .scheduler import Scheduler
from .streams import Slice, Token, TraceEntry, as_tokens


@dataclass
class DeviceReport:
    """One device's statistics."""

    device: str
    api: str
    allocations: int = 0
    frees: int = 0
    peak_bytes: dict[str, int] = field(default_factory=dict[str, int])
    in_use_bytes: dict[str, int] = field(default_factory=dict[str, int])
    capacity_bytes: dict[str, int | None] = field(default_factory=dict[str, int | None])
    launches: int = 0
    kernel_seconds: float = 0.0
    """Kernel time under the cost model (as the launches declared it)."""
    kernel_wall_seconds: float = 0.0
    """Time the kernels' emulation actually took."""
    local_copies: int = 0
    """Copies with both ends on this device (no link crossed)."""
    local_copy_bytes: int = 0


@dataclass
class LinkReport:
    """One link's traffic (both directions)."""

    link: str
    copies: int = 0
    bytes: int = 0
    busy_seconds: float = 0.0
    """Time the link's copy engines were busy under the cost model."""


@dataclass
class Report:
    """Statistics of a run; see the module docstring."""

    devices: dict[str, DeviceReport]
    links: dict[str, LinkReport]
    wall_seconds: float
    model_seconds: float
    leaks: list[str]
    trace: list[TraceEntry] = field(repr=False)
    """The run's first operations (up to `scheduler.TRACE_TOKENS`) in submission order, as
    the scheduler keeps them (`tokens` makes them tokens when asked)."""
    tracks: dict[str, list[str]] = field(repr=False)
    """Per device, the names of its trace tracks (streams first, then copy engines)."""
    untraced: int = 0
    """Operations beyond `scheduler.TRACE_TOKENS`, counted in the statistics but not traced."""
    copy_wall_seconds: float = 0.0
    """Time the copies actually took."""
    compile_seconds: float = 0.0
    """Wall time spent compiling kernels and host code's Numba functions, or loading them
    from the cache, during the run (`compile_clock`); not in any device's
    `kernel_wall_seconds`."""

    @cached_property
    def tokens(self) -> list[Token]:
        """The run's first operations (up to `scheduler.TRACE_TOKENS`) in submission order:
        the trace's slices come from them (made on first use: most reports are only
        printed)."""
        return as_tokens(self.trace)

    @cached_property
    def slices(self) -> list[Slice]:
        """The trace's bars: per copy hop and per kernel (made on first use: a long run
        has one per launch, and most reports are only printed)."""
        return [s for t in self.tokens for s in t.slices]

    @classmethod
    def collect(
        cls,
        apis: Iterable[DeviceAPI],
        scheduler: Scheduler,
        wall_seconds: float | None = None,
        compile_seconds: float | None = None,
    ) -> Report:
        """Gather the statistics of `apis`, whose streams `scheduler` runs (the compile
        clock's seconds since the scheduler was made unless `compile_seconds` says)."""
        apis = list(apis)
        devices = {str(api.device): _device_report(api) for api in apis}
        links: dict[str, LinkReport] = {}
        for link in scheduler.cost_model.links.values():
            links[link.name] = LinkReport(link.name)
        tracks: dict[str, list[str]] = {name: [] for name in devices}
        for stream in scheduler.streams:
            tracks.setdefault(stream.device_name, []).append(stream.name)
        totals = scheduler.totals
        for name, (launches, model, wall) in totals.kernels.items():
            if name in devices:
                device = devices[name]
                device.launches = int(launches)
                device.kernel_seconds = model
                device.kernel_wall_seconds = wall
        for name, (copies, nbytes) in totals.local_copies.items():
            if name in devices:
                devices[name].local_copies = copies
                devices[name].local_copy_bytes = nbytes
        for name, (copies, nbytes, busy) in totals.links.items():
            links[name] = LinkReport(name, int(copies), int(nbytes), busy)
        for name, copy_tracks in totals.copy_tracks.items():
            tracks.setdefault(name, []).extend(copy_tracks)
        trace = list(scheduler.trace)
        leaks = [buffer.describe() for api in apis for buffer in api.live_buffers()]
        wall = time.perf_counter() - scheduler.created if wall_seconds is None else wall_seconds
        compiled = (
            compile_clock.seconds() - scheduler.compiled
            if compile_seconds is None
            else compile_seconds
        )
        return cls(
            devices, links, wall, scheduler.model_time, leaks, trace, tracks,
            scheduler.submitted - len(trace), totals.copy_wall_seconds, compiled,
        )  # fmt: skip

    # -- rendering ------------------------------------------------------------------------

    def as_dict(self) -> dict[str, object]:
        """Plain data (JSON-serialisable): devices, links, times, leaks."""
        return {
            "devices": {name: asdict(d) for name, d in self.devices.items()},
            "links": {name: asdict(link) for name, link in self.links.items()},
            "wall_seconds": self.wall_seconds,
            "model_seconds": self.model_seconds,
            "compile_seconds": self.compile_seconds,
            "leaks": list(self.leaks),
        }

    def format(self) -> str:
        """A readable table of the run."""
        lines = [
            f"run: wall time {_seconds(self.wall_seconds)}, "
            f"cost-model time {_seconds(self.model_seconds)}",
            f"compiling: wall time {_seconds(self.compile_seconds)} "
            "(not in the kernel times below)",
            "",
        ]
        device_rows = [
            [
                d.device,
                d.api,
                str(d.allocations),
                str(d.frees),
                ", ".join(f"{s} {format_bytes(b)}" for s, b in d.peak_bytes.items() if b) or "-",
                str(d.launches),
                _seconds(d.kernel_seconds),
                _seconds(d.kernel_wall_seconds),
                f"{d.local_copies} ({format_bytes(d.local_copy_bytes)})",
            ]
            for d in self.devices.values()
        ]
        lines += _table(
            [
                "device",
                "api",
                "allocs",
                "frees",
                "peak per scope",
                "launches",
                "kernel (model)",
                "kernel (wall)",
                "on-device copies",
            ],
            device_rows,
        )
        if self.links:
            link_rows = [
                [k.link, str(k.copies), format_bytes(k.bytes), _seconds(k.busy_seconds)]
                for k in self.links.values()
            ]
            lines += ["", *_table(["link", "copies", "bytes", "busy (model)"], link_rows)]
        lines.append("")
        if self.leaks:
            lines.append(f"leaked buffers ({len(self.leaks)}):")
            lines += [f"  {leak}" for leak in self.leaks]
        else:
            lines.append("leaked buffers: none")
        if self.untraced:
            lines.append(
                f"trace: the first {len(self.trace)} operations ({self.untraced} more not traced)"
            )
        return "\n".join(lines)

    def chrome_trace(self) -> dict[str, object]:
        """The Chrome trace-event document (see `write_chrome_trace`)."""
        events: list[dict[str, object]] = []
        pids = {name: i + 1 for i, name in enumerate(self.tracks)}
        tids: dict[tuple[str, str], int] = {}
        for device, pid in pids.items():
            api = self.devices[device].api if device in self.devices else "host"
            events.append(_meta("process_name", pid, 0, f"{device} ({api})"))
            events.append(_meta("process_sort_index", pid, 0, pid))
            for tid, track in enumerate(self.tracks[device], start=1):
                tids[(device, track)] = tid
                events.append(_meta("thread_name", pid, tid, track))
                events.append(_meta("thread_sort_index", pid, tid, tid))
        for piece in self.slices:
            events.append(
                {
                    "name": piece.name,
                    "cat": "copy" if piece.track.startswith("copy ") else "kernel",
                    "ph": "X",
                    "ts": piece.start * 1e6,
                    "dur": (piece.end - piece.start) * 1e6,
                    "pid": pids[piece.device],
                    "tid": tids[(piece.device, piece.track)],
                    "args": dict(piece.args),
                }
            )
        return {"traceEvents": events, "displayTimeUnit": "ns"}

    def write_chrome_trace(self, path: str | Path) -> None:
        """Write the trace as JSON to `path` (open it in ui.perfetto.dev).

        A modelled time that overflowed to infinity (a link of 1e-300 B/s) is an error:
        JSON has no infinity, and `json.dumps` would write `Infinity`, which no trace
        viewer reads."""
        try:
            text = json.dumps(self.chrome_trace(), indent=1, allow_nan=False)
        except ValueError:
            raise DevplanError(
                f"error: cannot write the trace to '{path}': a modelled time is not finite "
                "(the system's bandwidths or latencies make a copy or kernel take longer "
                "than a float holds)"
            ) from None
        Path(path).write_text(text)


def _device_report(api: DeviceAPI) -> DeviceReport:
    report = DeviceReport(str(api.device), api.api_name or type(api).__name__)
    for scope, stats in api.scopes.items():
        report.allocations += stats.allocations
        report.frees += stats.frees
        report.peak_bytes[scope] = stats.peak
        report.in_use_bytes[scope] = stats.in_use
        report.capacity_bytes[scope] = stats.capacity
    return report


def _meta(name: str, pid: int, tid: int, value: object) -> dict[str, object]:
    key = "sort_index" if name.endswith("sort_index") else "name"
    return {"name": name, "ph": "M", "pid": pid, "tid": tid, "args": {key: value}}


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def format_bytes(n: int) -> str:
    """`n` bytes with a binary unit: `512 B`, `4.0 KiB`, `40.0 GiB`."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _seconds(s: float) -> str:
    if s >= 1e9:  # a modelled time under an absurd link: 1.2e+301 s, not 302 digits
        return f"{s:.4g} s"
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3f} ms"
    return f"{s * 1e6:.1f} us"
