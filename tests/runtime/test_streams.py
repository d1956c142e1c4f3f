"""Streams: deferred in-order execution, dependencies, races, and cost-model timing."""

from __future__ import annotations

import numpy as np
import pytest

from devplan.runtime.cpu import CPUDeviceAPI
from devplan.runtime.errors import (
    DeviceError,
    PendingWriteError,
    RaceError,
    StreamError,
    WrongDeviceError,
)
from devplan.runtime.scheduler import Scheduler
from devplan.runtime.simulated import SimulatedDeviceAPI
from devplan.system.cost import CostModel, LinkCost, NoLinkError
from devplan.system.devices import Device

CPU = Device("cpu", 0)
GPU = Device("cuda", 0)
GPU1 = Device("cuda", 1)
MB = 1_000_000
# 1 GB/s and 10 us: a 1 MB copy takes 10 us + 1 ms.
PCIE = LinkCost("cpu:0", "cuda:0", bandwidth=1e9, latency=10e-6)
PCIE1 = LinkCost("cpu:0", "cuda:1", bandwidth=1e9, latency=10e-6)


def runtime_of(
    *links: LinkCost,
) -> tuple[Scheduler, CPUDeviceAPI, SimulatedDeviceAPI, SimulatedDeviceAPI]:
    scheduler = Scheduler(CostModel(links or (PCIE,), host="cpu:0"), host=CPU)
    cpu = CPUDeviceAPI(CPU, scheduler=scheduler)
    gpu = SimulatedDeviceAPI(GPU, scopes={"global": 1 << 26}, scheduler=scheduler)
    gpu1 = SimulatedDeviceAPI(GPU1, scopes={"global": 1 << 26}, scheduler=scheduler)
    return scheduler, cpu, gpu, gpu1


def add_one(args: list[np.ndarray | int | float | bool]) -> None:
    view = args[0]
    assert isinstance(view, np.ndarray)
    view += 1


# -- deferred execution and host checks ------------------------------------------------------------


def test_async_copy_runs_only_when_waited_on() -> None:
    sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    gpu.copy_data_from_to(np.full(4, 3, np.float32), a)
    s = gpu.create_stream(GPU)
    out = np.zeros(4, np.float32)
    token = gpu.copy_data_from_to(a, out, s, label="%t = copy %a -> %out")
    assert out.tolist() == [0, 0, 0, 0]  # not yet: the copy is queued
    sched.wait(token)
    assert out.tolist() == [3, 3, 3, 3]


def test_reading_an_async_copy_destination_before_waiting_is_reported() -> None:
    sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    s = gpu.create_stream(GPU)
    out = np.zeros(4, np.float32)
    token = gpu.copy_data_from_to(a, out, s, label="%t = copy %a -> %out")
    assert gpu.pending_writes(out) == [token]
    with pytest.raises(PendingWriteError) as info:
        sched.check_host_access(out, "%out")
    assert str(info.value) == (
        "host reads %out while it has a pending async write: copy %t = copy %a -> %out "
        "(token #0 on stream cuda:0/s1); wait on its token first (device.wait)"
    )
    sched.wait(token)
    assert gpu.pending_writes(out) == []
    sched.check_host_access(out, "%out")


def test_host_view_of_a_buffer_with_a_pending_write_is_an_error() -> None:
    sched, cpu, _, _ = runtime_of()
    h = cpu.alloc_data_space(CPU, (4,), "float32", label="%h")
    s = cpu.create_stream(CPU)
    token = cpu.launch(CPU, add_one, [h], name="@add_one", stream=s)
    with pytest.raises(
        PendingWriteError, match=r"host reads buffer %h .* pending async write: kernel @add_one"
    ):
        cpu.host_view(h)
    sched.wait(token)
    assert cpu.host_view(h).tolist() == [1, 1, 1, 1]


def test_host_writing_a_source_an_async_copy_still_reads_is_an_error() -> None:
    sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    src = np.ones(4, np.float32)
    gpu.copy_data_from_to(src, a, gpu.create_stream(GPU), label="%t")
    sched.check_host_access(src, "%src")  # reading it is fine
    with pytest.raises(
        PendingWriteError, match=r"host writes %src while it has a pending async access: copy %t"
    ):
        sched.check_host_access(src, "%src", write=True)


def test_one_stream_runs_in_submission_order() -> None:
    _sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    s = gpu.create_stream(GPU)
    out = np.zeros(4, np.float32)
    gpu.copy_data_from_to(np.full(4, 10, np.float32), a, s)
    gpu.launch(GPU, add_one, [a], name="@add_one", stream=s)
    gpu.copy_data_from_to(a, out, s)
    gpu.stream_sync(GPU, s)
    assert out.tolist() == [11, 11, 11, 11]


def test_blocking_operation_runs_what_its_stream_queued_before() -> None:
    _, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    gpu.copy_data_from_to(np.full(4, 1, np.float32), a, gpu.get_current_stream(GPU))
    out = np.zeros(4, np.float32)
    gpu.copy_data_from_to(a, out)  # blocking, on the current (default) stream
    assert out.tolist() == [1, 1, 1, 1]


def test_unordered_writes_on_two_streams_are_a_race() -> None:
    sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    s1, s2 = gpu.create_stream(GPU), gpu.create_stream(GPU)
    gpu.copy_data_from_to(np.zeros(4, np.float32), a, s1, label="%t1")
    gpu.launch(GPU, add_one, [a], name="@add_one", stream=s2)
    with pytest.raises(RaceError) as info:
        sched.sync_all()
    assert str(info.value) == (
        "race on buffer %a (cuda:0 scope 'global', 4xfloat32, 16 B): copy %t1 (token #0 on "
        "stream cuda:0/s1) and kernel @add_one (token #1 on stream cuda:0/s2) are not ordered "
        "and both write it; make one wait on the other's token"
    )


def test_blocking_launch_races_with_a_pending_write_on_another_stream() -> None:
    # The default stream is idle, so the launch runs at once: it is still checked
    # against what other streams have queued.
    _, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    s1 = gpu.create_stream(GPU)
    gpu.copy_data_from_to(np.zeros(4, np.float32), a, s1, label="%t1")
    with pytest.raises(RaceError) as info:
        gpu.launch(GPU, add_one, [a], name="@add_one")
    assert str(info.value) == (
        "race on buffer %a (cuda:0 scope 'global', 4xfloat32, 16 B): kernel @add_one "
        "(token #1 on stream cuda:0/default) and copy %t1 (token #0 on stream cuda:0/s1) "
        "are not ordered and both write it; make one wait on the other's token"
    )


def test_waiting_on_a_finished_token_does_not_order_later_work_on_its_stream() -> None:
    sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    s1, s2 = gpu.create_stream(GPU), gpu.create_stream(GPU)
    first = gpu.copy_data_from_to(np.zeros(4, np.float32), a, s1, label="%t1")
    sched.wait(first)
    gpu.launch(GPU, add_one, [a], name="@add_one", stream=s2, wait_for=[first])
    # Back on s1: nothing orders this copy after @add_one.
    gpu.copy_data_from_to(np.ones(4, np.float32), a, s1, label="%t3")
    with pytest.raises(RaceError, match=r"copy %t3 .* and kernel @add_one .* both write it"):
        sched.sync_all()


def test_a_chain_of_waits_orders_across_three_streams() -> None:
    sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    s1, s2, s3 = (gpu.create_stream(GPU) for _ in range(3))
    t1 = gpu.copy_data_from_to(np.full(4, 1, np.float32), a, s1)
    t2 = gpu.launch(GPU, add_one, [a], name="@add_one", stream=s2, wait_for=[t1])
    marker = gpu.launch(GPU, lambda _: None, [], name="@nothing", stream=s3, wait_for=[t2])
    out = np.zeros(4, np.float32)
    t4 = gpu.copy_data_from_to(a, out, s3)  # ordered after t2 through s3's marker
    assert marker.stream is t4.stream
    sched.wait(t4)
    assert out.tolist() == [2, 2, 2, 2]


def test_wait_for_orders_operations_across_streams() -> None:
    sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    s1, s2 = gpu.create_stream(GPU), gpu.create_stream(GPU)
    t1 = gpu.copy_data_from_to(np.full(4, 4, np.float32), a, s1)
    t2 = gpu.launch(GPU, add_one, [a], name="@add_one", stream=s2, wait_for=[t1])
    out = np.zeros(4, np.float32)
    sched.wait(gpu.copy_data_from_to(a, out, s2, wait_for=[t2]))
    assert out.tolist() == [5, 5, 5, 5]


def test_sync_stream_from_to_orders_later_work_after_the_source_queue() -> None:
    sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    s1, s2 = gpu.create_stream(GPU), gpu.create_stream(GPU)
    gpu.copy_data_from_to(np.full(4, 7, np.float32), a, s1)
    gpu.sync_stream_from_to(GPU, s1, s2)
    gpu.launch(GPU, add_one, [a], name="@add_one", stream=s2)
    sched.sync_all()  # no race: s2 waits for s1
    out = np.zeros(4, np.float32)
    gpu.copy_data_from_to(a, out)
    assert out.tolist() == [8, 8, 8, 8]


def test_free_first_runs_the_queued_work_that_uses_the_buffer() -> None:
    _, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    out = np.zeros(4, np.float32)
    s1 = gpu.create_stream(GPU)
    gpu.copy_data_from_to(np.full(4, 2, np.float32), a, s1)
    gpu.copy_data_from_to(a, out, s1)
    assert out.tolist() == [0, 0, 0, 0]  # queued, not run yet
    gpu.free_data_space(GPU, a)
    assert out.tolist() == [2, 2, 2, 2]


def test_free_of_a_buffer_with_unordered_queued_work_is_a_race() -> None:
    _, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    out = np.zeros(4, np.float32)
    gpu.copy_data_from_to(np.full(4, 2, np.float32), a, gpu.create_stream(GPU))
    gpu.copy_data_from_to(a, out, gpu.create_stream(GPU))
    with pytest.raises(RaceError) as info:
        # The second copy reads %a unordered with the first's write.
        gpu.free_data_space(GPU, a)
    assert str(info.value) == (
        "race on buffer %a (cuda:0 scope 'global', 4xfloat32, 16 B): "
        "copy host array 4xfloat32 -> %a (token #0 on stream cuda:0/s1) and copy %a -> host "
        "array 4xfloat32 (token #1 on stream cuda:0/s2) are not ordered and one writes it; "
        "make one wait on the other's token"
    )


# -- stream handles ------------------------------------------------------------


def test_current_stream_receives_operations_given_no_stream() -> None:
    _, _, gpu, _ = runtime_of()
    default = gpu.get_current_stream(GPU)
    assert default.name == "cuda:0/default"
    s = gpu.create_stream(GPU)
    gpu.set_stream(GPU, s)
    assert gpu.get_current_stream(GPU) is s
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    token = gpu.copy_data_from_to(np.zeros(4, np.float32), a)
    assert token.stream is s
    assert token.done


def test_freed_stream_finishes_its_queue_and_cannot_be_used() -> None:
    _, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    s = gpu.create_stream(GPU)
    token = gpu.copy_data_from_to(np.zeros(4, np.float32), a, s)
    gpu.free_stream(GPU, s)
    assert token.done
    with pytest.raises(StreamError, match="copy_data_from_to: stream cuda:0/s1 was freed"):
        gpu.copy_data_from_to(np.zeros(4, np.float32), a, s)


def test_default_stream_cannot_be_freed_and_streams_are_per_device() -> None:
    _, _, gpu, gpu1 = runtime_of()
    with pytest.raises(DeviceError, match="the default stream of cuda:0 cannot be freed"):
        gpu.free_stream(GPU, gpu.get_current_stream(GPU))
    other = gpu1.create_stream(GPU1)
    with pytest.raises(
        WrongDeviceError, match="set_stream: stream cuda:1/s1 belongs to cuda:1, not cuda:0"
    ):
        gpu.set_stream(GPU, other)


# -- timeline under the cost model ------------------------------------------------------------


def test_copy_time_is_latency_plus_bytes_over_bandwidth() -> None:
    sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (MB,), "uint8", label="%a")
    token = gpu.copy_data_from_to(np.zeros(MB, np.uint8), a)
    assert token.end - token.start == pytest.approx(10e-6 + 1e-3)
    assert sched.host_time == pytest.approx(token.end)  # a blocking copy holds the host


def test_async_copy_overlaps_a_kernel_on_another_stream() -> None:
    sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (MB,), "uint8", label="%a")
    b = gpu.alloc_data_space(GPU, (4,), "float32", label="%b")
    copy = gpu.copy_data_from_to(np.zeros(MB, np.uint8), a, gpu.create_stream(GPU))
    kernel = gpu.launch(GPU, add_one, [b], name="@k", seconds=2e-3, stream=gpu.create_stream(GPU))
    assert sched.host_time == 0.0  # async submissions do not hold the host
    assert copy.start == kernel.start == 0.0
    sched.sync_all()
    assert sched.model_time == pytest.approx(2e-3)  # max, not the sum


def test_work_on_one_stream_is_serial_in_time() -> None:
    sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (MB,), "uint8", label="%a")
    s = gpu.create_stream(GPU)
    gpu.copy_data_from_to(np.zeros(MB, np.uint8), a, s)
    kernel = gpu.launch(GPU, lambda views: None, [a], name="@k", seconds=2e-3, stream=s)
    assert kernel.start == pytest.approx(1.01e-3)
    assert sched.model_time == pytest.approx(3.01e-3)


def test_copies_over_one_link_share_its_copy_engine() -> None:
    sched, _, gpu, _ = runtime_of()
    a = gpu.alloc_data_space(GPU, (MB,), "uint8", label="%a")
    b = gpu.alloc_data_space(GPU, (MB,), "uint8", label="%b")
    t1 = gpu.copy_data_from_to(np.zeros(MB, np.uint8), a, gpu.create_stream(GPU))
    t2 = gpu.copy_data_from_to(np.zeros(MB, np.uint8), b, gpu.create_stream(GPU))
    assert t2.slices[0].start == pytest.approx(t1.end)
    # The opposite direction has its own engine.
    t3 = gpu.copy_data_from_to(a, np.zeros(MB, np.uint8), gpu.create_stream(GPU), wait_for=[t1])
    assert t3.slices[0].start == pytest.approx(t1.end)
    assert sched.model_time == pytest.approx(2 * 1.01e-3)


def test_wait_advances_the_host_clock_to_the_token() -> None:
    sched, _, gpu, _ = runtime_of()
    b = gpu.alloc_data_space(GPU, (4,), "float32", label="%b")
    token = gpu.launch(GPU, add_one, [b], name="@k", seconds=5e-3, stream=gpu.create_stream(GPU))
    sched.wait(token)
    assert sched.host_time == pytest.approx(5e-3)
    later = gpu.launch(GPU, add_one, [b], name="@k", seconds=1e-3, stream=gpu.create_stream(GPU))
    assert later.start == pytest.approx(5e-3)  # issued by the host after its wait


def test_copy_between_unlinked_devices_is_staged_through_the_host() -> None:
    sched, _, gpu, gpu1 = runtime_of(PCIE, PCIE1)
    a = gpu.alloc_data_space(GPU, (MB,), "uint8", label="%a")
    b = gpu1.alloc_data_space(GPU1, (MB,), "uint8", label="%b")
    token = gpu.copy_data_from_to(a, b)
    assert [s.track for s in token.slices] == ["copy cuda:0->cpu:0", "copy cpu:0->cuda:1"]
    assert token.slices[0].args["staged_through"] == "cpu:0"
    assert token.end - token.start == pytest.approx(2 * 1.01e-3)
    assert sched.host_time == pytest.approx(token.end)


def test_copy_with_no_route_names_the_devices_and_the_fix() -> None:
    _, _, gpu, gpu1 = runtime_of(PCIE)
    a = gpu.alloc_data_space(GPU, (4,), "uint8", label="%a")
    b = gpu1.alloc_data_space(GPU1, (4,), "uint8", label="%b")
    with pytest.raises(NoLinkError) as info:
        gpu.copy_data_from_to(a, b)
    assert str(info.value) == (
        "cannot copy from cuda:0 to cuda:1: the system has no link between them and no route "
        "through the host cpu:0 (links: cpu:0<->cuda:0); add a [[link]] with "
        'between = ["cuda:0", "cuda:1"] to the system description'
    )


def test_many_queued_operations_do_not_exhaust_the_stack() -> None:
    sched, _, gpu, _ = runtime_of()
    b = gpu.alloc_data_space(GPU, (1,), "float32", label="%b")
    s = gpu.create_stream(GPU)
    for _ in range(5000):
        gpu.launch(GPU, add_one, [b], name="@k", seconds=1e-6, stream=s)
    out = np.zeros(1, np.float32)
    sched.wait(gpu.copy_data_from_to(b, out, s))
    assert out[0] == 5000
