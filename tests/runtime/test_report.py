"""Report: per-device and per-link statistics, the table, and the Chrome trace's structure."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from devplan.diagnostics import DevplanError
from devplan.runtime.report import Report
from devplan.runtime.runtime import Runtime
from devplan.system.description import System
from devplan.system.devices import Device

CPU, GPU0, GPU1 = Device("cpu", 0), Device("cuda", 0), Device("cuda", 1)
MB = 1_000_000


def noop(args: list[np.ndarray | int | float | bool]) -> None:
    pass


@pytest.fixture
def system(simulated_system: Callable[..., System]) -> System:
    """cpu:0 and two simulated GPUs: 1 MB takes 10 us + 1 ms from the host to cuda:0 and
    5 us + 0.1 ms from cuda:0 to cuda:1."""
    return simulated_system(
        {"cuda:0": {"global": "1 GiB", "shared": "48 KiB"}, "cuda:1": {"global": "1 GiB"}},
        [("cpu:0", "cuda:0", "1 GB/s", "10 us"), ("cuda:0", "cuda:1", "10 GB/s", "5 us")],
    )


@pytest.fixture
def overlapped(system: System) -> Runtime:
    """H2D copy of 1 MB on one stream overlapping a 2 ms kernel on another, then D2D and D2H."""
    rt = Runtime.from_system(system)
    gpu, gpu1 = rt.api(GPU0), rt.api(GPU1)
    a = gpu.alloc_data_space(GPU0, (MB,), "uint8", label="%a")
    b = gpu.alloc_data_space(GPU0, (16,), "float32", label="%b")
    c = gpu1.alloc_data_space(GPU1, (MB,), "uint8", label="%c")
    copies, compute = gpu.create_stream(GPU0), gpu.create_stream(GPU0)
    t_copy = rt.copy(np.zeros(MB, np.uint8), a, copies, label="%t0")
    t_kernel = gpu.launch(GPU0, noop, [b], name="@kernels::@busy", seconds=2e-3, stream=compute)
    rt.wait(t_copy, t_kernel)
    rt.copy(a, c, label="%d2d")
    rt.copy(b, np.zeros(16, np.float32), label="%d2h")
    gpu.free_data_space(GPU0, a, at="f.mlir:20:3")
    gpu.alloc_workspace(GPU0, 10, label="%w")
    return rt


def test_report_counts_per_device(overlapped: Runtime) -> None:
    report = overlapped.report()
    gpu = report.devices["cuda:0"]
    assert (gpu.api, gpu.allocations, gpu.frees, gpu.launches) == ("simulated", 3, 1, 1)
    assert gpu.peak_bytes == {"global": MB + 64, "shared": 0}  # %w came after %a's free
    assert gpu.in_use_bytes["global"] == 64 + 4096
    assert gpu.capacity_bytes["global"] == 1 << 30
    assert gpu.kernel_seconds == pytest.approx(2e-3)
    assert report.devices["cuda:1"].launches == 0
    assert report.devices["cpu:0"].api == "cpu"


def test_report_counts_per_link_and_the_two_times(overlapped: Runtime) -> None:
    report = overlapped.report()
    pcie, nvlink = report.links["cpu:0<->cuda:0"], report.links["cuda:0<->cuda:1"]
    assert (pcie.copies, pcie.bytes) == (2, MB + 64)
    assert (nvlink.copies, nvlink.bytes) == (1, MB)
    assert pcie.busy_seconds == pytest.approx(10e-6 + 1e-3 + 10e-6 + 64e-9)
    # The copy overlapped the kernel: 2 ms, then D2D (5 us + 0.1 ms), then D2H (10 us + 64 ns).
    assert report.model_seconds == pytest.approx(2e-3 + 105e-6 + 10e-6 + 64e-9)
    assert report.wall_seconds > 0


def test_report_lists_leaks(overlapped: Runtime) -> None:
    report = overlapped.report()
    assert report.leaks == [
        "buffer %b (cuda:0 scope 'global', 16xfloat32, 64 B)",
        "workspace buffer %w (cuda:0 scope 'global', 10xuint8, 10 B)",
        "buffer %c (cuda:1 scope 'global', 1000000xuint8, 1000000 B)",
    ]


def test_report_format_is_a_readable_table(overlapped: Runtime) -> None:
    text = overlapped.report(wall_seconds=0.5).format()
    lines = text.splitlines()
    assert lines[0] == "run: wall time 500.000 ms, cost-model time 2.115 ms"
    header = next(line for line in lines if line.startswith("device"))
    assert header.split() == [
        "device", "api", "allocs", "frees", "peak", "per", "scope", "launches",
        "kernel", "(model)", "kernel", "(wall)", "on-device", "copies",
    ]  # fmt: skip
    gpu_row = next(line for line in lines if line.startswith("cuda:0"))
    assert "simulated" in gpu_row
    assert "global 976.6 KiB" in gpu_row
    assert "2.000 ms" in gpu_row
    link_row = next(line for line in lines if line.startswith("cuda:0<->cuda:1"))
    assert link_row.split()[:4] == ["cuda:0<->cuda:1", "1", "976.6", "KiB"]
    assert "leaked buffers (3):" in lines


def test_report_as_dict_is_json_data(overlapped: Runtime) -> None:
    data = overlapped.report().as_dict()
    round_tripped = json.loads(json.dumps(data))
    assert round_tripped["devices"]["cuda:0"]["launches"] == 1
    assert round_tripped["links"]["cpu:0<->cuda:0"]["copies"] == 2
    assert set(round_tripped) == {
        "devices",
        "links",
        "wall_seconds",
        "model_seconds",
        "compile_seconds",
        "leaks",
    }


def test_report_of_a_clean_run_says_no_leaks(system: System) -> None:
    rt = Runtime.from_system(system)
    assert rt.teardown() == []
    assert rt.report().format().endswith("leaked buffers: none")


# -- Chrome trace -------------------------------------------------------------------------------


def load_trace(tmp_path: Path, run: Runtime) -> list[dict[str, Any]]:
    path = tmp_path / "trace.json"
    run.report().write_chrome_trace(path)
    document = json.loads(path.read_text())
    assert set(document) == {"traceEvents", "displayTimeUnit"}
    return document["traceEvents"]


def test_trace_has_one_process_per_device(tmp_path: Path, overlapped: Runtime) -> None:
    events = load_trace(tmp_path, overlapped)
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert sorted(names.values()) == ["cpu:0 (cpu)", "cuda:0 (simulated)", "cuda:1 (simulated)"]
    assert all(e["ph"] == "M" and e["tid"] == 0 for e in events if e["name"] == "process_name")


def test_trace_has_one_thread_per_stream_and_copy_engine(
    tmp_path: Path, overlapped: Runtime
) -> None:
    events = load_trace(tmp_path, overlapped)
    pids = {e["args"]["name"].split()[0]: e["pid"] for e in events if e["name"] == "process_name"}
    threads = {
        (e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"
    }
    gpu_tracks = sorted(name for (pid, _), name in threads.items() if pid == pids["cuda:0"])
    assert gpu_tracks == [
        "copy cpu:0->cuda:0",
        "copy cuda:0->cpu:0",
        "copy cuda:0->cuda:1",
        "cuda:0/default",
        "cuda:0/s1",
        "cuda:0/s2",
    ]
    assert len(set(threads)) == len(threads)  # (pid, tid) pairs are unique


def test_trace_complete_events_carry_microsecond_times_on_their_tracks(
    tmp_path: Path, overlapped: Runtime
) -> None:
    events = load_trace(tmp_path, overlapped)
    threads = {
        (e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"
    }
    complete = [e for e in events if e["ph"] == "X"]
    assert all({"name", "cat", "ts", "dur", "pid", "tid", "args"} <= set(e) for e in complete)
    by_name = {e["name"]: e for e in complete}
    kernel, h2d = by_name["@kernels::@busy"], by_name["%t0"]
    assert threads[(kernel["pid"], kernel["tid"])] == "cuda:0/s2"
    assert kernel["cat"] == "kernel"
    assert kernel["ts"] == 0
    assert kernel["dur"] == pytest.approx(2000)
    assert threads[(h2d["pid"], h2d["tid"])] == "copy cpu:0->cuda:0"
    assert h2d["cat"] == "copy"
    assert h2d["ts"] == 0
    assert h2d["dur"] == pytest.approx(1010)
    assert h2d["args"] == {"bytes": MB, "stream": "cuda:0/s1"}
    d2d = by_name["%d2d"]
    assert d2d["ts"] == pytest.approx(2000)
    assert d2d["dur"] == pytest.approx(105)
    assert all((e["pid"], e["tid"]) in threads for e in complete)


def test_a_trace_whose_modelled_times_overflow_is_an_error_not_invalid_json(
    tmp_path: Path, simulated_system: Callable[..., System]
) -> None:
    # 1 MB over 1e-300 B/s takes 1e306 s, 1e312 us: json.dumps wrote "Infinity".
    slow = simulated_system(
        {"cuda:0": {"global": "1 GiB"}}, [("cpu:0", "cuda:0", "1e-300 B/s", "1 us")]
    )
    rt = Runtime.from_system(slow)
    a = rt.api(GPU0).alloc_data_space(GPU0, (MB,), "uint8", label="%a")
    rt.copy(np.zeros(MB, np.uint8), a, label="%t0")
    trace = tmp_path / "t.json"
    with pytest.raises(DevplanError) as info:
        rt.report().write_chrome_trace(trace)
    assert str(info.value) == (
        f"error: cannot write the trace to '{trace}': a modelled time is not finite (the "
        "system's bandwidths or latencies make a copy or kernel take longer than a float "
        "holds)"
    )
    assert not trace.exists()


def test_a_huge_modelled_time_is_printed_in_scientific_notation(
    simulated_system: Callable[..., System],
) -> None:
    # 1 MB over 1e-290 B/s: it printed all 302 digits of 1e296 s.
    slow = simulated_system(
        {"cuda:0": {"global": "1 GiB"}}, [("cpu:0", "cuda:0", "1e-290 B/s", "1 us")]
    )
    rt = Runtime.from_system(slow)
    a = rt.api(GPU0).alloc_data_space(GPU0, (MB,), "uint8", label="%a")
    rt.copy(np.zeros(MB, np.uint8), a, label="%t0")
    assert "cost-model time 1e+296 s" in rt.report().format()


def test_report_of_a_run_that_did_nothing_shows_every_device_and_link_at_zero() -> None:
    rt = Runtime.from_system(System.default())
    report = Report.collect(rt.apis.values(), rt.scheduler, wall_seconds=0.0)
    assert report.model_seconds == 0.0
    lines = [" ".join(line.split()) for line in report.format().splitlines()]
    assert lines[0] == "run: wall time 0.0 us, cost-model time 0.0 us"
    assert "cpu:0 cpu 0 0 - 0 0.0 us 0.0 us 0 (0 B)" in lines
    assert "cuda:0 simulated 0 0 - 0 0.0 us 0.0 us 0 (0 B)" in lines
    assert "cuda:1 simulated 0 0 - 0 0.0 us 0.0 us 0 (0 B)" in lines
    assert "cpu:0<->cuda:0 0 0 B 0.0 us" in lines
    assert "cuda:0<->cuda:1 0 0 B 0.0 us" in lines
    assert lines[-1] == "leaked buffers: none"
    assert [e for e in report.chrome_trace()["traceEvents"] if e["ph"] == "X"] == []  # type: ignore[index, union-attr]


def test_report_counts_every_launch_but_keeps_only_the_first_tokens_for_the_trace(
    system: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    from devplan.runtime import scheduler

    monkeypatch.setattr(scheduler, "TRACE_TOKENS", 10)
    rt = Runtime.from_system(system)
    gpu = rt.api(GPU0)
    buffer = gpu.alloc_data_space(GPU0, (4,), np.float32, label="x")
    for _ in range(50):
        gpu.launch(GPU0, noop, [buffer], name="k", seconds=1e-6)
    gpu.free_data_space(GPU0, buffer)
    report = rt.report()
    assert report.devices["cuda:0"].launches == 50
    assert report.devices["cuda:0"].kernel_seconds == pytest.approx(50e-6)
    assert len(rt.scheduler.tokens) == 10
    assert report.untraced == 40
    assert len([s for s in report.slices if not s.track.startswith("copy ")]) == 10
    assert "(40 more not traced)" in report.format()


def test_a_numba_kernels_first_launch_compile_is_compile_time_not_kernel_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    import devplan
    from devplan.runtime.kernels import numba_backend

    compile_for = numba_backend.compile_for

    def slowly(dispatcher: Any, args: Any, what: str) -> None:
        from devplan.runtime.compile_clock import compiling

        with compiling(what):
            time.sleep(0.5)
        compile_for(dispatcher, args, what)

    monkeypatch.setattr(numba_backend, "compile_for", slowly)
    module = devplan.parse(
        "func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {\n"
        "  %y = arith.addf %x, %x : tensor<8xf32>\n"
        "  func.return %y : tensor<8xf32>\n}\n"
    )
    x = np.arange(8, dtype=np.float32)
    result = devplan.execute(module, [x], kernel_backend="numba")
    np.testing.assert_array_equal(result.outputs[0], x + x)
    report = result.report
    assert report.compile_seconds >= 0.5
    assert sum(d.kernel_wall_seconds for d in report.devices.values()) < 0.5
    assert "compiling: wall time " in report.format()
