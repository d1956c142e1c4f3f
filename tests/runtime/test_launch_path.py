# ruff: noqa: E501  (IR lines are as long as IR lines are)
"""The executor's launch path: repeated launches reuse what was checked, and every check
still holds when something changes (a free, other arguments, other sizes, queued work);
the statistics of many launches are totals, so a run's memory does not grow with them."""

from __future__ import annotations

import itertools
import json
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import devplan
from devplan.runtime import scheduler
from devplan.runtime.registry import register_device_api
from devplan.runtime.simulated import SimulatedDeviceAPI
from devplan.system.description import DEFAULT_SYSTEM_TOML, System
from devplan.system.devices import Device

G = '#vdev.device<"cuda", 0, ?, "global">'
M = f"memref<4xf32, {G}>"

KERNELS = """
kernel.module @k target #target.target<"cuda"> {
  kernel.func @bump(%x: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %v = memref.load %x[%c0] : memref<?xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %x[%c0] : memref<?xf32>
    kernel.return
  }
  kernel.func @fill(%x: memref<?xf32>, %v: f32) {
    %i = kernel.thread_id x
    memref.store %v, %x[%i] : memref<?xf32>
    kernel.return
  }
}
"""


def program(body: str, args: str = "%n: index", result: str = "memref<4xf32>") -> str:
    return (
        KERNELS
        + f"""
func.func @main({args}) -> {result} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %h = memref.alloc() : memref<4xf32>
{body}
  func.return %h : memref<4xf32>
}}
"""
    )


BUMPS = program(
    f"""
  %d = device.alloc() : {M}
  device.copy %h to %d : memref<4xf32> to {M}
  scf.for %i = %c0 to %n step %c1 {{
    device.launch @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : {M}
  }}
  device.copy %d to %h : {M} to memref<4xf32>
  device.free %d : {M}"""
)
"""`%n` launches of a 1-thread kernel at one launch site: h[0] = n."""


def line_of(text: str, needle: str) -> int:
    """The line number of the first line of `text` holding `needle`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def error_of(text: str, *inputs: Any, backend: str = "numpy") -> str:
    with pytest.raises(devplan.DevplanError) as info:
        devplan.execute(devplan.parse(text), list(inputs), kernel_backend=backend)
    return str(info.value)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_repeated_launches_at_one_site_all_run_and_are_counted(backend: str) -> None:
    module = devplan.parse(BUMPS)
    for n in (1, 2, 500):
        result = devplan.execute(module, [n], kernel_backend=backend)
        assert result.outputs[0].tolist() == [float(n), 0.0, 0.0, 0.0]
        gpu = result.report.devices["cuda:0"]
        assert gpu.launches == n
        assert gpu.kernel_seconds > 0
        assert gpu.kernel_wall_seconds > 0
        assert len(result.report.tokens) == n + 2  # the launches and the two copies


ASYNC_BUMPS = program(
    f"""
  %d = device.alloc() : {M}
  device.copy %h to %d : memref<4xf32> to {M}
  scf.for %i = %c0 to %n step %c1 {{
    %t = device.launch async [] @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : {M}
    device.wait %t
  }}
  device.copy %d to %h : {M} to memref<4xf32>
  device.free %d : {M}"""
)
"""`%n` async launches, each waited for: h[0] = n."""


def test_later_runs_of_a_program_launch_on_streams_and_totals_of_their_own_run() -> None:
    # Each run after the first renews the runtime of the last, and its launch sites.
    module = devplan.parse(ASYNC_BUMPS)
    model_seconds: dict[int, float] = {}
    for n in (1, 3, 1):
        result = devplan.execute(module, [n])
        assert result.outputs[0].tolist() == [float(n), 0.0, 0.0, 0.0]
        assert result.report.devices["cuda:0"].launches == n
        kernels = [t for t in result.report.tokens if t.kind == "kernel"]
        assert [t.stream.name for t in kernels] == ["cuda:0/s1"] * n
        assert result.report.tracks["cuda:0"][:2] == ["cuda:0/default", "cuda:0/s1"]
        assert model_seconds.setdefault(n, result.report.model_seconds) == pytest.approx(
            result.report.model_seconds, rel=1e-12
        )


def test_a_launch_after_its_buffer_was_freed_is_a_use_after_free_at_the_launch() -> None:
    text = program(
        f"""
  %d = device.alloc() : {M}
  scf.for %i = %c0 to %n step %c1 {{
    device.launch @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : {M}
    %last = arith.cmpi eq, %i, %c1 : index
    scf.if %last {{
      device.free %d : {M}
    }}
  }}"""
    )
    message = error_of(text, 5)
    assert message.startswith("<string>:")
    assert "error: 'device.launch' use after free in kernel @k::@bump" in message
    assert message.startswith(f"<string>:{line_of(text, 'device.launch')}:5:")  # not the free
    assert f"freed at <string>:{line_of(text, 'device.free')}:7" in message


def test_a_launch_after_a_host_array_argument_was_deallocated_is_an_error_at_the_launch() -> None:
    text = program(
        """
  %a = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    device.launch @k::@bump on #vdev.device<"cpu", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a) : memref<4xf32>
    %last = arith.cmpi eq, %i, %c1 : index
    scf.if %last {
      memref.dealloc %a : memref<4xf32>
    }
  }"""
    ).replace('target #target.target<"cuda">', 'target #target.target<"llvm">')
    message = error_of(text, 5)
    at = f"<string>:{line_of(text, 'memref.dealloc')}:7"
    assert f"'device.launch' argument 0 is host memory freed by memref.dealloc at {at}" in message


def test_a_new_buffer_each_iteration_is_launched_on_not_the_last_one() -> None:
    text = program(
        f"""
  scf.for %i = %c0 to %n step %c1 {{
    %d = device.alloc() : {M}
    device.copy %h to %d : memref<4xf32> to {M}
    device.launch @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : {M}
    device.launch @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : {M}
    device.copy %d to %h : {M} to memref<4xf32>
    device.free %d : {M}
  }}"""
    )
    result = devplan.execute(devplan.parse(text), [6])
    assert result.outputs[0].tolist() == [12.0, 0.0, 0.0, 0.0]


def test_scalar_arguments_that_change_between_launches_reach_the_kernel() -> None:
    text = program(
        f"""
  %d = device.alloc() : {M}
  scf.for %i = %c0 to %n step %c1 {{
    %v = arith.index_cast %i : index to i64
    %f = arith.sitofp %v : i64 to f32
    device.launch @k::@fill on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c4, %c1, %c1) args(%d, %f) : {M}, f32
    %zero = arith.constant -0.0 : f32
    device.launch @k::@fill on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c4, %c1, %c1) args(%d, %zero) : {M}, f32
    device.launch @k::@fill on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c4, %c1, %c1) args(%d, %f) : {M}, f32
  }}
  device.copy %d to %h : {M} to memref<4xf32>
  device.free %d : {M}"""
    )
    result = devplan.execute(devplan.parse(text), [3])
    assert result.outputs[0].tolist() == [2.0] * 4


def test_a_block_that_grows_past_the_device_limit_is_rejected_at_that_launch() -> None:
    text = program(
        f"""
  %d = device.alloc() : {M}
  %c256 = arith.constant 256 : index
  scf.for %i = %c1 to %n step %c1 {{
    %b = arith.muli %i, %c256 : index
    device.launch @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%b, %c1, %c1) args(%d) : {M}
  }}
  device.free %d : {M}"""
    )
    message = error_of(text, 10)
    assert "block (1280, 1, 1) has 1280 threads, more than max_threads_per_block = 1024 of cuda:0" in message


def test_a_launch_after_queued_async_work_on_its_buffer_is_checked_for_races() -> None:
    text = program(
        f"""
  %d = device.alloc() : {M}
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %n step %c1 {{
    device.launch @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : {M}
    %now = arith.cmpi eq, %i, %c2 : index
    scf.if %now {{
      %t = device.launch async [] @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : {M}
    }}
  }}
  device.free %d : {M}"""
    )
    message = error_of(text, 5)
    assert "race on buffer %d" in message
    assert "are not ordered" in message


def test_a_fault_on_a_repeated_launch_reads_as_the_same_fault_on_a_first_launch() -> None:
    # @walk moves a counter in x[0] and stores at x[x[0]]: the fifth launch stores at x[4].
    walk = """
  kernel.func @walk(%x: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %v = memref.load %x[%c0] : memref<?xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %x[%c0] : memref<?xf32>
    %j = arith.fptosi %w : f32 to i64
    %i = arith.index_cast %j : i64 to index
    memref.store %w, %x[%i] : memref<?xf32>
    kernel.return
  }
}
"""
    text = program(
        f"""
  memref.store %start, %h[%c0] : memref<4xf32>
  %d = device.alloc() : {M}
  device.copy %h to %d : memref<4xf32> to {M}
  scf.for %i = %c0 to %n step %c1 {{
    device.launch @k::@walk on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : {M}
  }}
  device.copy %d to %h : {M} to memref<4xf32>
  device.free %d : {M}""",
        args="%n: index, %start: f32",
    ).replace("\n}\n", walk, 1)
    assert devplan.execute(devplan.parse(text), [2, 0.0]).outputs[0].tolist() == [2.0, 1.0, 2.0, 0.0]
    for backend in ("numpy", "numba"):
        on_the_fourth = error_of(text, 10, 0.0, backend=backend)
        on_the_first = error_of(text, 1, 3.0, backend=backend)
        assert on_the_fourth == on_the_first
        assert "out-of-bounds store to argument 0 (%x): index [4] is outside shape (4)" in on_the_first
        assert "note: @k::@walk launched here on cuda:0" in on_the_first


def test_many_launches_keep_totals_not_records(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduler, "TRACE_TOKENS", 50)
    module = devplan.parse(BUMPS)

    def traced_bytes(n: int) -> int:
        tracemalloc.start()
        try:
            result = devplan.execute(module, [n])
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert result.report.devices["cuda:0"].launches == n
        assert len(result.report.tokens) == 50
        assert result.report.untraced == n + 2 - 50
        return peak

    traced_bytes(3_000)  # the first large run grows caches that later runs reuse
    few, many = traced_bytes(300), traced_bytes(3_000)
    assert many < few + 64 * 1024, (few, many)


def test_the_trace_of_repeated_launches_has_one_bar_per_launch_in_order(tmp_path: Path) -> None:
    result = devplan.execute(devplan.parse(BUMPS), [3])
    path = tmp_path / "trace.json"
    result.report.write_chrome_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    bars = [e for e in events if e.get("ph") == "X" and "@k::@bump" in e["name"]]
    assert len(bars) == 3
    starts = [e["ts"] for e in bars]
    assert starts == sorted(starts)
    assert all(a["ts"] + a["dur"] <= b["ts"] + 1e-9 for a, b in itertools.pairwise(bars))


def test_a_repeated_launch_on_an_array_the_host_changed_sees_the_change() -> None:
    # A CPU kernel takes a host array: its view is the array itself, so host stores
    # between launches are seen by the next launch.
    text = program(
        """
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %h[%c1] : memref<4xf32>
    %two = arith.constant 2.0 : f32
    %w = arith.addf %v, %two : f32
    memref.store %w, %h[%c1] : memref<4xf32>
    device.launch @k::@bump on #vdev.device<"cpu", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%h) : memref<4xf32>
  }"""
    ).replace('target #target.target<"cuda">', 'target #target.target<"llvm">')
    result = devplan.execute(devplan.parse(text), [4], kernel_backend="numba")
    assert result.outputs[0].tolist() == [4.0, 8.0, 0.0, 0.0]
    np.testing.assert_array_equal(
        result.outputs[0], devplan.execute(devplan.parse(text), [4]).outputs[0]
    )


class CountingLaunchesAPI(SimulatedDeviceAPI):
    """A DeviceAPI that launches its own way (here: counting, then as usual)."""

    launched = 0

    def launch(self, device: Device, kernel: Any, args: Any, **options: Any) -> Any:
        CountingLaunchesAPI.launched += 1
        return super().launch(device, kernel, args, **options)


def test_a_device_api_that_launches_its_own_way_is_asked_for_every_launch() -> None:
    register_device_api("test-counting", CountingLaunchesAPI, override=True)
    text = DEFAULT_SYSTEM_TOML.replace('api = "simulated"', 'api = "test-counting"')
    system = System.from_text(text, "counting.toml")
    CountingLaunchesAPI.launched = 0
    result = devplan.execute(devplan.parse(BUMPS), [7], system=system)
    assert result.outputs[0][0] == 7.0
    assert CountingLaunchesAPI.launched == 7


def test_many_async_copies_to_new_buffers_keep_no_records_of_finished_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scheduler, "TRACE_TOKENS", 50)
    module = devplan.parse(
        program(
            f"""
  scf.for %i = %c0 to %n step %c1 {{
    %d = device.alloc() : {M}
    %t = device.copy_async [] %h to %d : memref<4xf32> to {M}
    %u = device.launch async [%t] @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : {M}
    device.wait %u
    device.free %d : {M}
  }}"""
        )
    )

    def traced_bytes(n: int) -> int:
        tracemalloc.start()
        try:
            result = devplan.execute(module, [n])
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert result.report.devices["cuda:0"].launches == n
        return peak

    traced_bytes(1_000)  # the first large run grows caches that later runs reuse
    few, many = traced_bytes(100), traced_bytes(1_000)
    assert many < few + 64 * 1024, (few, many)
