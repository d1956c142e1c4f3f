"""The `ray` DeviceAPI on a local two-raylet Ray cluster (`ray.cluster_utils.Cluster`).

One cluster serves the whole file (`ray_cluster`, started once per test session: a Ray
start costs 15-20 s here): a head node with the custom resource `n0` and a second raylet
with `n1`, so that `examples/two_nodes.toml` puts `cuda:1` and `cpu:1` on another raylet
and copies to them cross between two object stores. When the session ends the fixture
stops the actors, Ray and both raylets, and checks that no process Ray started is left.

Results of the ray system are compared bit for bit with the in-process run (the default
system: the same device names, simulated and cpu APIs in this process), on every example
and on a sample of the differential fuzzer's programs.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from support import EXAMPLES, ROOT
from support.level1_programs import Drawn, inputs_for, programs
from xdsl.dialects.builtin import ModuleOp

import devplan
from devplan.runtime import ray_device, registry
from devplan.runtime.cpu import CPUDeviceAPI
from devplan.runtime.device_api import Buffer, DeviceAPI
from devplan.runtime.errors import DeviceError, DeviceLostError, HostAccessError
from devplan.runtime.executor import random_inputs
from devplan.runtime.ray_cluster import shutdown_actors
from devplan.runtime.ray_device import RayDeviceAPI
from devplan.runtime.report import Report
from devplan.runtime.runtime import Runtime
from devplan.runtime.simulated import SimulatedDeviceAPI
from devplan.system.description import System
from devplan.system.devices import Device
from devplan.tools import run as run_tool

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

TWO_NODES = EXAMPLES / "two_nodes.toml"
SMALL_STORE = 80 * 2**20


def _ray_processes(before: set[int]) -> list[psutil.Process]:
    me = psutil.Process()
    return [p for p in me.children(recursive=True) if p.pid not in before]


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _named(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline()[:2]) or process.name()
    except psutil.Error:
        return f"process {process.pid}"


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[System]:
    """A head raylet (`n0`) and a second raylet (`n1`), and the system that uses them."""
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 1,
            "resources": {"n0": 1},
            "object_store_memory": SMALL_STORE,
            "include_dashboard": False,
        },
    )
    try:
        cluster.add_node(num_cpus=1, resources={"n1": 1}, object_store_memory=SMALL_STORE)
        ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
        yield System.load(TWO_NODES)
    finally:
        # Taken while the tree is whole: a worker whose raylet stops first is no longer
        # a descendant of this process.
        started = _ray_processes(before)
        names = {p.pid: _named(p) for p in started}
        shutdown_actors()
        ray.shutdown()
        cluster.shutdown()
        deadline = time.monotonic() + 20
        left = [p for p in started if _alive(p)]
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = [p for p in left if _alive(p)]
        for p in left:
            with contextlib.suppress(psutil.Error):
                p.kill()
        assert not left, f"Ray processes outlived the tests: {[names[p.pid] for p in left]}"


def _run(
    source: str | Path | ModuleOp, inputs: list[Any], system: System | None
) -> list[np.ndarray]:
    module = source if isinstance(source, ModuleOp) else devplan.parse(source)
    result = devplan.execute(module, inputs, system=system, kernel_backend="numpy", strict=True)
    return result.outputs


def _same_bits_as_in_process(source: str | Path, inputs: list[Any], system: System) -> None:
    """`source` run on `system` and on the default system, lowered and compiled once."""
    module = devplan.parse(source)
    _same_bits(_run(module, inputs, system), _run(module, inputs, None))


def _same_bits(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        assert g.shape == w.shape
        assert g.tobytes() == w.tobytes()


EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.mlir") if p.name != "targets.mlir")
"""Every example with a @main (targets.mlir has none)."""


def test_every_example_gives_the_in_process_bits_across_two_nodes(ray_cluster: System) -> None:
    for name in EXAMPLE_FILES:
        path = EXAMPLES / name
        _same_bits_as_in_process(path, random_inputs(devplan.parse(path), seed=0), ray_cluster)


@settings(max_examples=3, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(programs())
def test_fuzz_programs_give_the_in_process_bits_across_two_nodes(
    ray_cluster: System, drawn: Drawn
) -> None:
    _same_bits_as_in_process(drawn.text, inputs_for(devplan.parse(drawn.text), drawn), ray_cluster)


def test_mlp_across_two_nodes_reports_the_network_and_compiles_once(ray_cluster: System) -> None:
    text = (EXAMPLES / "mlp.mlir").read_text()
    module = devplan.parse(text)
    inputs = random_inputs(module, seed=0)
    first = devplan.execute(devplan.parse(text), inputs, system=ray_cluster, kernel_backend="numpy")
    _same_bits(first.outputs, _run(text, inputs, None))
    runtime = Runtime.from_system(ray_cluster)
    api = runtime.api("cuda:1")
    assert isinstance(api, RayDeviceAPI)
    compiled = ray.get(api._actor.handle.ping.remote())[1]  # pyright: ignore[reportPrivateUsage]
    runtime.teardown()
    second = devplan.execute(
        devplan.parse(text), inputs, system=ray_cluster, kernel_backend="numpy"
    )
    assert ray.get(api._actor.handle.ping.remote())[1] == compiled > 0  # pyright: ignore[reportPrivateUsage]
    network = second.report.links["n0<->n1"]
    assert network.copies > 0
    assert network.bytes > 0
    assert second.report.model_seconds == first.report.model_seconds


def _in_process(*, actor_api: str, node: object, **kwargs: Any) -> DeviceAPI:
    """A stand-in for `api = "ray"`: the device's `actor_api` in this process."""
    return {"cpu": CPUDeviceAPI, "simulated": SimulatedDeviceAPI}[actor_api](**kwargs)


def _modelled(report: Report) -> list[object]:
    """Everything a report has that does not depend on wall time."""
    devices = [
        (d.device, d.api, d.allocations, d.frees, d.peak_bytes, d.launches, d.kernel_seconds,
         d.local_copies, d.local_copy_bytes)
        for d in report.devices.values()
    ]  # fmt: skip
    links = [(k.link, k.copies, k.bytes, k.busy_seconds) for k in report.links.values()]
    return [report.model_seconds, devices, links, report.leaks]


def test_ray_devices_leave_the_modelled_times_as_in_process(
    ray_cluster: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same system with each ray device's `actor_api` run in this process instead:
    the same bits and the same report, to the last bit of every modelled time (the
    network's terms, `tests/system/test_nodes.py`, are the cost model's alone)."""
    module = devplan.parse(EXAMPLES / "mlp.mlir")
    inputs = random_inputs(module, seed=0)
    ray_run = devplan.execute(module, inputs, system=ray_cluster, kernel_backend="numpy")
    with monkeypatch.context() as patch:
        patch.setitem(registry._user_apis, "ray", _in_process)  # pyright: ignore[reportPrivateUsage]
        local_run = devplan.execute(module, inputs, system=ray_cluster, kernel_backend="numpy")
    assert ray_run.report.links["n0<->n1"].busy_seconds > 0
    _same_bits(ray_run.outputs, local_run.outputs)
    assert _modelled(ray_run.report) == _modelled(local_run.report)


def _shown_report() -> list[str]:
    """The report README's "More than one machine" shows (a listing: not run there)."""
    section = (ROOT / "README.md").read_text().split("## More than one machine\n")[1]
    section = section.split("\n## ")[0]
    listings = re.findall(r"^```\n(.*?)^```$", section, re.DOTALL | re.MULTILINE)
    return next(b for b in listings if b.startswith("run: wall time")).splitlines()


def test_the_readme_shows_the_report_devplan_run_prints_across_two_nodes(
    ray_cluster: System, capsys: pytest.CaptureFixture[str]
) -> None:
    """README's command, run in this process on the test cluster (the numpy backend: a
    report's figures do not depend on it). `...` in a shown line stands for any text."""
    argv = [str(EXAMPLES / "mlp.mlir"), "--random-args", "0", "--system", str(TWO_NODES)]
    assert run_tool.main([*argv, "--stats", "--kernel-backend", "numpy"]) == 0
    printed = capsys.readouterr().out.splitlines()
    shown = _shown_report()
    start = next(i for i, line in enumerate(printed) if line.startswith("run: wall time"))
    for want, got in zip(shown, printed[start:], strict=False):
        pattern = ".*?".join(re.escape(part) for part in re.split(r" *\.\.\. *", want.rstrip()))
        assert re.fullmatch(pattern, got.rstrip()), f"README shows {want!r}, devplan-run {got!r}"
    assert len(printed) - start >= len(shown)


def test_host_access_to_a_ray_buffer_is_the_simulated_error(ray_cluster: System) -> None:
    runtime = Runtime.from_system(ray_cluster)
    local = Runtime.from_system(System.default())
    messages: list[str] = []
    for rt in (runtime, local):
        api = rt.api("cuda:0")
        buffer = api.alloc_data_space(Device("cuda", 0), (4,), "float32", label="%a")
        with pytest.raises(HostAccessError) as caught:
            api.host_view(buffer)
        messages.append(str(caught.value))
        api.free_data_space(Device("cuda", 0), buffer)
    assert messages[0] == messages[1]
    assert runtime.teardown() == []
    assert local.teardown() == []


def test_device_to_device_copies_go_actor_to_actor(
    ray_cluster: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = Runtime.from_system(ray_cluster)
    data = np.arange(12, dtype=np.int32)
    bufs: list[Buffer] = []
    for name in ("cuda:0", "cuda:1"):
        device = Device.parse(name)
        bufs.append(runtime.api(name).alloc_data_space(device, (12,), "int32", label=name))
    runtime.copy(data, bufs[0])

    def through_the_driver(*args: object) -> None:
        raise AssertionError("a device-to-device copy went through the driver")

    fetched: list[object] = []
    get = ray.get

    def recorded(refs: Any, *args: Any, **kwargs: Any) -> Any:
        values = get(refs, *args, **kwargs)
        fetched.extend(values if isinstance(refs, list) else [values])
        return values

    with monkeypatch.context() as patch:
        patch.setattr(RayDeviceAPI, "fetch", through_the_driver)
        patch.setattr(ray, "get", recorded)
        runtime.copy(bufs[0], bufs[1])
        runtime.synchronize()  # waits for both actors
    assert fetched  # the waits happened here
    assert not [v for v in fetched if isinstance(v, np.ndarray)]  # the bytes never came here
    out = np.zeros(12, np.int32)
    runtime.copy(bufs[1], out)
    assert out.tolist() == data.tolist()
    for b in bufs:
        runtime.api(b.device).free_data_space(b.device, b)
    assert runtime.teardown() == []


def test_a_killed_actor_is_a_lost_device_naming_device_and_node(ray_cluster: System) -> None:
    runtime = Runtime.from_system(ray_cluster)
    near, far = runtime.api("cuda:0"), runtime.api("cuda:1")
    assert isinstance(far, RayDeviceAPI)
    a = near.alloc_data_space(Device("cuda", 0), (8,), "float32", label="%a")
    b = far.alloc_data_space(Device("cuda", 1), (8,), "float32", label="%b")
    stream = far.create_stream(Device("cuda", 1))
    runtime.copy(np.ones(8, np.float32), a)
    runtime.copy(a, b, stream=near.create_stream(Device("cuda", 0)))
    ray.kill(far._actor.handle, no_restart=True)  # pyright: ignore[reportPrivateUsage]
    started = time.monotonic()
    with pytest.raises(DeviceLostError, match=r"device cuda:1 on node n1 is lost"):
        runtime.synchronize()  # runs the copy into the dead actor and waits for it
    with pytest.raises(DeviceLostError, match=r"device cuda:1 on node n1 is lost"):
        far.stream_sync(Device("cuda", 1), stream)
    with pytest.raises(DeviceLostError, match="cuda:1 on node n1"):
        far.alloc_data_space(Device("cuda", 1), (8,), "float32", label="%c")
    assert time.monotonic() - started < 30
    near.free_data_space(Device("cuda", 0), a)
    assert far.teardown() == []  # no leak reported for the lost device
    assert near.teardown() == []
    # The next runtime gets a new actor (none is restarted in place).
    fresh = Runtime.from_system(ray_cluster).api("cuda:1")
    assert isinstance(fresh, RayDeviceAPI)
    assert fresh._actor is not far._actor
    assert fresh.teardown() == []


def test_a_copy_from_a_lost_device_blames_the_source_not_the_destination(
    ray_cluster: System,
) -> None:
    runtime = Runtime.from_system(ray_cluster)
    near, far = runtime.api("cuda:0"), runtime.api("cuda:1")
    assert isinstance(near, RayDeviceAPI)
    assert isinstance(far, RayDeviceAPI)
    a = far.alloc_data_space(Device("cuda", 1), (8,), "float32", label="%a")
    b = near.alloc_data_space(Device("cuda", 0), (8,), "float32", label="%b")
    runtime.copy(np.ones(8, np.float32), a)
    runtime.synchronize()
    ray.kill(far._actor.handle, no_restart=True)  # pyright: ignore[reportPrivateUsage]
    runtime.copy(a, b)  # from the dead actor into the live one
    with pytest.raises(DeviceLostError, match=r"device cuda:1 on node n1 is lost"):
        runtime.synchronize()
    assert near.lost is None  # the destination is not lost, and still works:
    runtime.copy(np.full(8, 2, np.float32), b)
    out = np.zeros(8, np.float32)
    runtime.copy(b, out)
    assert out.tolist() == [2.0] * 8
    near.free_data_space(Device("cuda", 0), b)
    assert far.teardown() == []
    assert near.teardown() == []


def test_a_source_that_dies_after_handing_over_a_copy_is_the_lost_device(
    ray_cluster: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The source actor crashes once its `read_out` has put the bytes in the store and
    before the destination's `write_in` takes them: the bytes were the source's, so the
    copy fails as a copy from a lost device (Ray says the bytes' owner died)."""
    runtime = Runtime.from_system(ray_cluster)
    near, far = runtime.api("cuda:0"), runtime.api("cuda:1")
    assert isinstance(near, RayDeviceAPI)
    assert isinstance(far, RayDeviceAPI)
    a = far.alloc_data_space(Device("cuda", 1), (8,), "float32", label="%a")
    b = near.alloc_data_space(Device("cuda", 0), (8,), "float32", label="%b")
    runtime.copy(np.ones(8, np.float32), a)
    runtime.synchronize()
    handle = far._actor.handle  # pyright: ignore[reportPrivateUsage]
    pid = ray.get(handle.ping.remote(), timeout=30)[0]
    call = RayDeviceAPI._call  # pyright: ignore[reportPrivateUsage]

    def crash_after_read_out(api: RayDeviceAPI, method: str, *args: Any, **kwargs: Any) -> Any:
        ref = call(api, method, *args, **kwargs)
        if method == "read_out":
            assert ray.wait([ref], timeout=30)[0]  # the bytes are in the store
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(ray.exceptions.RayActorError):  # Ray knows it died
                ray.get(handle.ping.remote(), timeout=30)
        return ref

    with monkeypatch.context() as patch:
        patch.setattr(RayDeviceAPI, "_call", crash_after_read_out)
        runtime.copy(a, b)  # the destination's write_in comes after the crash
    with pytest.raises(DeviceLostError, match=r"device cuda:1 on node n1 is lost"):
        runtime.synchronize()
    assert near.lost is None  # the destination is not lost, and still works:
    runtime.copy(np.full(8, 3, np.float32), b)
    out = np.zeros(8, np.float32)
    runtime.copy(b, out)
    assert out.tolist() == [3.0] * 8
    near.free_data_space(Device("cuda", 0), b)
    assert far.teardown() == []
    assert near.teardown() == []


def test_a_kernel_fault_on_a_ray_device_reads_as_in_process(ray_cluster: System) -> None:
    path = EXAMPLES / "errors" / "shift.mlir"
    inputs = random_inputs(devplan.parse(path), seed=0)
    messages: list[str] = []
    for system in (ray_cluster, None):
        with pytest.raises(devplan.DevplanError) as caught:
            _run(path, inputs, system)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert "out-of-bounds load" in messages[0]


G0 = '#vdev.device<"cuda", 0, ?, "global">'
G1 = '#vdev.device<"cuda", 1, ?, "global">'
LOOP = f"""
kernel.module @k target #target.target<"cuda"> {{
  kernel.func @bump(%x: memref<1xf32>) {{
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %v = memref.load %x[%c0] : memref<1xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %x[%c0] : memref<1xf32>
    kernel.return
  }}
}}
func.func @main(%n: index) -> memref<1xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = memref.alloc() : memref<1xf32>
  %far = device.alloc() : memref<1xf32, {G1}>
  device.copy %h to %far : memref<1xf32> to memref<1xf32, {G1}>
  %d = device.alloc() : memref<1xf32, {G0}>
  device.copy %h to %d : memref<1xf32> to memref<1xf32, {G0}>
  scf.for %i = %c0 to %n step %c1 {{
    device.launch @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : memref<1xf32, {G0}>
  }}
  device.copy %d to %h : memref<1xf32, {G0}> to memref<1xf32>
  device.free %d : memref<1xf32, {G0}>
  device.free %far : memref<1xf32, {G1}>
  func.return %h : memref<1xf32>
}}
"""  # noqa: E501
"""Launches on cuda:0 (node n0) while a buffer of cuda:1 (node n1) is live."""


def test_killing_an_actor_during_a_run_stops_the_run_at_the_op_that_needed_it(
    ray_cluster: System,
) -> None:
    module = devplan.parse(LOOP)
    assert _run(LOOP, [3], ray_cluster)[0].tolist() == [3.0]  # actors up, kernel compiled
    runtime = Runtime.from_system(ray_cluster)
    near, far = runtime.api("cuda:0"), runtime.api("cuda:1")
    assert isinstance(near, RayDeviceAPI)
    assert isinstance(far, RayDeviceAPI)
    runtime.teardown()
    pid = ray.get(near._actor.handle.ping.remote(), timeout=30)[0]  # pyright: ignore[reportPrivateUsage]
    killer = threading.Timer(1.0, lambda: os.kill(pid, signal.SIGKILL))  # a crash
    killer.start()
    started = time.monotonic()
    with pytest.raises(DeviceLostError) as caught:  # placed at the op, as device errors are
        devplan.execute(module, [10**6], system=ray_cluster, kernel_backend="numpy")
    assert isinstance(caught.value, devplan.DevplanError)
    killer.join()
    message = str(caught.value)
    assert "device cuda:0 on node n0 is lost: its Ray actor died" in message
    assert "device.launch" in message  # placed at the launch that waited for it
    assert time.monotonic() - started < 60
    # The run's buffer on cuda:1 was freed: its actor has no session open.
    assert ray.get(far._actor.handle.ping.remote(), timeout=30)[2] == 0  # pyright: ignore[reportPrivateUsage]


WAIT = f"""{LOOP.split("func.func")[0]}
func.func @main() -> memref<1xf32> {{
  %c1 = arith.constant 1 : index
  %h = memref.alloc() : memref<1xf32>
  %d = device.alloc() : memref<1xf32, {G0}>
  device.copy %h to %d : memref<1xf32> to memref<1xf32, {G0}>
  device.launch @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : memref<1xf32, {G0}>
  device.wait all
  device.copy %d to %h : memref<1xf32, {G0}> to memref<1xf32>
  device.free %d : memref<1xf32, {G0}>
  func.return %h : memref<1xf32>
}}
"""  # noqa: E501
"""One launch on cuda:0, then `device.wait all`, then the result copied to the host."""


def test_a_crashed_actor_is_not_restarted_and_device_wait_finds_it_lost(
    ray_cluster: System,
) -> None:
    module = devplan.parse(WAIT)
    assert _run(module, [], ray_cluster)[0].tolist() == [1.0]  # actors up, kernel compiled
    runtime = Runtime.from_system(ray_cluster)
    near = runtime.api("cuda:0")
    assert isinstance(near, RayDeviceAPI)
    handle = near._actor.handle  # pyright: ignore[reportPrivateUsage]
    pid = ray.get(handle.ping.remote(), timeout=30)[0]
    runtime.teardown()
    os.kill(pid, signal.SIGKILL)  # a crash (ray.kill would forbid a restart itself)
    for _ in range(2):  # the second call is made once Ray knows of the death: a restarted
        with pytest.raises(ray.exceptions.RayActorError):  # actor would answer it
            ray.get(handle.ping.remote(), timeout=30)
    with pytest.raises(DeviceLostError) as caught:
        devplan.execute(module, [], system=ray_cluster, kernel_backend="numpy")
    message = str(caught.value)
    assert "device cuda:0 on node n0 is lost: its Ray actor died" in message
    assert "device.wait all" in message  # the first op that waits for the actor


SPIN = f"""
kernel.module @s target #target.target<"cuda"> {{
  kernel.func @spin(%x: memref<1xf32>, %n: index) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1.0 : f32
    scf.for %i = %c0 to %n step %c1 {{
      %v = memref.load %x[%c0] : memref<1xf32>
      %w = arith.addf %v, %one : f32
      memref.store %w, %x[%c0] : memref<1xf32>
    }}
    kernel.return
  }}
}}
func.func @main(%n: index) -> memref<1xf32> {{
  %c1 = arith.constant 1 : index
  %h = memref.alloc() : memref<1xf32>
  %d = device.alloc() : memref<1xf32, {G0}>
  device.copy %h to %d : memref<1xf32> to memref<1xf32, {G0}>
  device.launch @s::@spin on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d, %n) : memref<1xf32, {G0}>, index
  device.copy %d to %h : memref<1xf32, {G0}> to memref<1xf32>
  device.free %d : memref<1xf32, {G0}>
  func.return %h : memref<1xf32>
}}
"""  # noqa: E501
"""One kernel on cuda:0 looping `n` times (minutes for n = 10**8 on the numpy backend)."""


def test_an_actor_past_the_deadline_is_a_lost_device_and_nothing_hangs(
    ray_cluster: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = devplan.parse(SPIN)
    assert _run(module, [3], ray_cluster)[0].tolist() == [3.0]  # actors up, kernel compiled
    monkeypatch.setenv("DEVPLAN_RAY_TIMEOUT", "1")
    started = time.monotonic()
    with pytest.raises(DeviceLostError) as caught:
        devplan.execute(module, [10**8], system=ray_cluster, kernel_backend="numpy")
    assert time.monotonic() - started < 20
    message = str(caught.value)
    assert "device cuda:0 on node n0 is lost: it did not answer within 1 s" in message
    assert "device.copy %d to %h" in message  # the copy to the host waited for it


def test_launches_and_copies_into_an_actor_do_not_wait_for_it(
    ray_cluster: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the copy of the result to the host and the end of the run wait for actors,
    however many launches and copies into actors a run makes (up to `MAX_INFLIGHT`
    calls and `MAX_INFLIGHT_BYTES` of copies)."""
    waits: list[str] = []
    settle = RayDeviceAPI._settle  # pyright: ignore[reportPrivateUsage]

    def counted(api: RayDeviceAPI, extra: Sequence[Any] = ()) -> list[Any]:
        waits.append(str(api.device))
        return settle(api, extra)

    module = devplan.parse(LOOP)
    assert _run(module, [2], ray_cluster)[0].tolist() == [2.0]  # actors up, kernel compiled
    monkeypatch.setattr(RayDeviceAPI, "_settle", counted)
    for n in (1, 50):
        waits.clear()
        assert _run(module, [n], ray_cluster)[0].tolist() == [float(n)]
        # the result's copy to the host, then each ray device's teardown
        assert waits == ["cuda:0", "cuda:0", "cpu:1", "cuda:1"]
    # Copies of more bytes than the bound wait (their bytes fill Ray's object store).
    monkeypatch.setattr(ray_device, "MAX_INFLIGHT_BYTES", 3)
    waits.clear()
    assert _run(module, [50], ray_cluster)[0].tolist() == [50.0]
    assert waits == ["cuda:1", "cuda:0", "cuda:0", "cuda:0", "cpu:1", "cuda:1"]


def test_a_node_the_cluster_lacks_and_a_bad_deadline_are_clear_errors(
    ray_cluster: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = System.from_text(TWO_NODES.read_text().replace('resource = "n1"', 'resource = "n7"'))
    with pytest.raises(DeviceError, match=r"device cpu:1: no node of the Ray cluster has the "
                       r"resource 'n7' that node n1 is found by; start that node's raylet with "
                       r"ray start --resources='\{\"n7\": 1\}'"):  # fmt: skip
        Runtime.from_system(missing)
    monkeypatch.setenv("DEVPLAN_RAY_TIMEOUT", "soon")
    with pytest.raises(DeviceError, match="DEVPLAN_RAY_TIMEOUT must be a positive number of "
                       "seconds, got 'soon'"):  # fmt: skip
        Runtime.from_system(ray_cluster)


def test_a_ray_address_nothing_listens_at_is_a_clear_error_at_once() -> None:
    """`RAY_ADDRESS` naming a port nobody listens at: exit 1 with one message, within
    seconds (Ray alone retries for minutes, then fails with a traceback)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "RAY_ADDRESS": f"127.0.0.1:{port}"}
    command = ["devplan-run", "examples/mlp.mlir", "--random-args", "0"]
    run = subprocess.run(
        [str(Path(sys.executable).parent / command[0]), *command[1:], "--system", str(TWO_NODES)],
        env=env,
        cwd=Path(devplan.__file__).parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (
        f"cannot connect to the Ray cluster at RAY_ADDRESS=127.0.0.1:{port}: Connection refused "
        "(start its head with `ray start --head --port=PORT`)\n"
    )
