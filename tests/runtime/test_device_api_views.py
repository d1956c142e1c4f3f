"""Views of device buffers (`DeviceAPI.view`): no memory of their own, the base's elements
in kernels and copies, and a lifetime that ends with their base."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from devplan.runtime.cpu import CPUDeviceAPI
from devplan.runtime.errors import DeviceError, HostAccessError, UseAfterFreeError
from devplan.runtime.scheduler import Scheduler
from devplan.runtime.simulated import SimulatedDeviceAPI
from devplan.system.devices import Device

CPU = Device("cpu", 0)
GPU = Device("cuda", 0)


def make_pair() -> tuple[CPUDeviceAPI, SimulatedDeviceAPI]:
    scheduler = Scheduler()
    cpu = CPUDeviceAPI(CPU, scheduler=scheduler)
    gpu = SimulatedDeviceAPI(GPU, scopes={"global": 1 << 20}, scheduler=scheduler)
    return cpu, gpu


def filled(gpu: SimulatedDeviceAPI) -> Any:
    base = gpu.alloc_data_space(GPU, (4, 6), "float32", label="%a")
    gpu.copy_data_from_to(np.arange(24, dtype=np.float32).reshape(4, 6), base)
    return base


def test_a_view_allocates_nothing_and_copies_only_its_elements() -> None:
    _, gpu = make_pair()
    base = filled(gpu)
    stats = gpu.scopes["global"]
    before = (stats.allocations, stats.in_use)
    view = gpu.view(base, 8, (2, 3), (12, 1), label="%s")  # rows 1 and 3, columns 2..4
    assert (stats.allocations, stats.in_use) == before
    assert view.nbytes == 6 * 4
    out = np.zeros((2, 3), np.float32)
    gpu.copy_data_from_to(view, out)
    assert out.tolist() == [[8, 9, 10], [20, 21, 22]]
    assert gpu.live_buffers() == [base]  # a view is no allocation to free or leak


def test_a_copy_into_a_view_writes_its_base() -> None:
    _, gpu = make_pair()
    base = filled(gpu)
    column = gpu.view(base, 1, (4,), (6,), label="%c")
    gpu.copy_data_from_to(np.full(4, -1, np.float32), column)
    whole = np.zeros((4, 6), np.float32)
    gpu.copy_data_from_to(base, whole)
    assert whole[:, 1].tolist() == [-1, -1, -1, -1]
    assert whole[:, 0].tolist() == [0, 6, 12, 18]


def test_a_kernel_reads_a_strided_view_in_place() -> None:
    _, gpu = make_pair()
    base = filled(gpu)
    view = gpu.view(base, 8, (2, 3), (12, 1), label="%s")
    seen: list[np.ndarray[Any, Any]] = []
    gpu.launch(GPU, lambda views: seen.append(views[0]), [view], name="@k")
    (array,) = seen
    assert not array.flags.c_contiguous
    assert array.strides == (48, 4)
    assert array.tolist() == [[8, 9, 10], [20, 21, 22]]


def test_a_view_of_a_row_major_view_is_a_view_of_its_base() -> None:
    _, gpu = make_pair()
    base = filled(gpu)
    rows = gpu.view(base, 6, (12,), (1,), label="%r")  # rows 1 and 2, flat
    tail = gpu.view(rows, 3, (2, 2), (6, 1), label="%t")
    assert tail.base is base
    assert tail.offset == 9
    strided = gpu.view(base, 0, (2,), (2,), label="%e")
    with pytest.raises(DeviceError, match="the source is a strided view; view its base"):
        gpu.view(strided, 0, (1,), (1,))


def test_a_view_past_its_base_is_an_error() -> None:
    _, gpu = make_pair()
    base = filled(gpu)
    with pytest.raises(DeviceError, match=r"reach element 26 of a buffer of 24 elements"):
        gpu.view(base, 12, (3, 3), (6, 1), label="%s")


def test_a_view_is_not_freed_and_ends_with_its_base() -> None:
    _, gpu = make_pair()
    base = filled(gpu)
    view = gpu.view(base, 0, (6,), (1,), label="%s")
    with pytest.raises(DeviceError, match="a view is not freed; it ends when its base is freed"):
        gpu.free_data_space(GPU, view)
    gpu.free_data_space(GPU, base, at="f.mlir:9:3")
    with pytest.raises(UseAfterFreeError, match=r"view %s .* freed at f.mlir:9:3 \(the free"):
        gpu.copy_data_from_to(view, np.zeros(6, np.float32))


def test_the_host_sees_a_view_only_where_it_sees_the_base() -> None:
    cpu, gpu = make_pair()
    view = gpu.view(filled(gpu), 0, (2,), (1,), label="%s")
    with pytest.raises(HostAccessError, match="host code cannot access view %s"):
        gpu.host_view(view)
    base = cpu.alloc_data_space(CPU, (4,), "float32", label="%h")
    cpu.host_view(cpu.view(base, 1, (2,), (2,)), write=True)[...] = 7
    assert cpu.host_view(base).tolist() == [0, 7, 0, 7]
