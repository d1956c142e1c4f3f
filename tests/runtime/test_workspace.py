"""The workspace pool: TVM's page rounding, reuse rules and release at teardown."""

from __future__ import annotations

import numpy as np
import pytest

from devplan.runtime.errors import DeviceError, DoubleFreeError, OutOfDeviceMemoryError
from devplan.runtime.simulated import SimulatedDeviceAPI
from devplan.runtime.workspace import PAGE_SIZE, page_rounded
from devplan.system.devices import Device

GPU = Device("cuda", 0)
KIB = 1024


def make_gpu(capacity: int = 1 << 20) -> SimulatedDeviceAPI:
    return SimulatedDeviceAPI(GPU, scopes={"global": capacity})


def pool_of(gpu: SimulatedDeviceAPI):  # type: ignore[no-untyped-def]
    pool = gpu._pool  # pyright: ignore[reportPrivateUsage]
    assert pool is not None
    return pool


def test_sizes_round_up_to_4_kib_pages_and_zero_takes_one_page() -> None:
    assert PAGE_SIZE == 4 * KIB
    assert [page_rounded(n) for n in (0, 1, 4096, 4097)] == [4096, 4096, 4096, 8192]
    gpu = make_gpu()
    w = gpu.alloc_workspace(GPU, 0, label="%w")
    assert w.nbytes == 0
    assert gpu.scopes["global"].in_use == 4 * KIB


def test_with_no_free_page_the_pool_allocates() -> None:
    gpu = make_gpu()
    gpu.alloc_workspace(GPU, 100, label="%a")
    gpu.alloc_workspace(GPU, 100, label="%b")
    assert pool_of(gpu).device_allocations == 2
    assert gpu.scopes["global"].in_use == 8 * KIB


def test_one_free_page_big_enough_is_reused() -> None:
    gpu = make_gpu()
    a = gpu.alloc_workspace(GPU, 8 * KIB, label="%a")
    gpu.free_workspace(GPU, a)
    b = gpu.alloc_workspace(GPU, 100, label="%b")
    pool = pool_of(gpu)
    assert pool.device_allocations == 1
    assert pool.allocated[0].size == 8 * KIB  # reused whole, even though larger
    assert b.nbytes == 100


def test_one_free_page_too_small_is_returned_and_reallocated_bigger() -> None:
    gpu = make_gpu()
    a = gpu.alloc_workspace(GPU, 4 * KIB, label="%a")
    gpu.free_workspace(GPU, a)
    gpu.alloc_workspace(GPU, 12 * KIB, label="%b")
    pool = pool_of(gpu)
    assert pool.device_allocations == 2
    assert gpu.scopes["global"].in_use == 12 * KIB
    assert pool.held_bytes == 12 * KIB


def test_with_several_free_pages_the_smallest_that_fits_is_taken() -> None:
    gpu = make_gpu()
    ws = [gpu.alloc_workspace(GPU, n * KIB, label=f"%w{n}") for n in (16, 4, 8)]
    for w in ws:
        gpu.free_workspace(GPU, w)
    pool = pool_of(gpu)
    assert [p.size for p in pool.free_list] == [4 * KIB, 8 * KIB, 16 * KIB]
    gpu.alloc_workspace(GPU, 5 * KIB, label="%x")
    assert pool.allocated[-1].size == 8 * KIB
    assert [p.size for p in pool.free_list] == [4 * KIB, 16 * KIB]
    assert pool.device_allocations == 3


def test_with_several_free_pages_none_fitting_the_largest_is_reallocated() -> None:
    gpu = make_gpu()
    ws = [gpu.alloc_workspace(GPU, n * KIB, label=f"%w{n}") for n in (4, 8)]
    for w in ws:
        gpu.free_workspace(GPU, w)
    gpu.alloc_workspace(GPU, 20 * KIB, label="%big")
    pool = pool_of(gpu)
    assert [p.size for p in pool.free_list] == [4 * KIB]
    assert pool.allocated[-1].size == 20 * KIB
    assert pool.device_allocations == 3
    assert gpu.scopes["global"].in_use == 24 * KIB


def test_frees_out_of_stack_order_keep_the_free_list_sorted() -> None:
    gpu = make_gpu()
    a, b, c = (gpu.alloc_workspace(GPU, n * KIB, label=f"%w{n}") for n in (8, 4, 12))
    gpu.free_workspace(GPU, a)
    gpu.free_workspace(GPU, c)
    gpu.free_workspace(GPU, b)
    assert [p.size for p in pool_of(gpu).free_list] == [4 * KIB, 8 * KIB, 12 * KIB]


def test_workspace_memory_returns_to_the_device_only_at_teardown() -> None:
    gpu = make_gpu()
    w = gpu.alloc_workspace(GPU, 10 * KIB, label="%w")
    gpu.free_workspace(GPU, w)
    assert gpu.scopes["global"].in_use == 12 * KIB
    assert gpu.teardown() == []
    assert gpu.scopes["global"].in_use == 0
    assert gpu.scopes["global"].peak == 12 * KIB


def test_pool_pages_count_against_capacity_and_the_message_says_so() -> None:
    gpu = make_gpu(capacity=16 * KIB)
    w = gpu.alloc_workspace(GPU, 12 * KIB, label="%w")
    gpu.free_workspace(GPU, w)
    with pytest.raises(OutOfDeviceMemoryError) as info:
        gpu.alloc_data_space(GPU, (2048,), "float32", label="%a")
    assert str(info.value) == (
        "out of device memory on cuda:0 scope 'global': %a requests 8192 bytes, capacity "
        "16384 bytes, 12288 bytes in use by 1 allocation(s), of which 12288 held by the "
        "workspace pool"
    )


def test_double_free_workspace_is_an_error() -> None:
    gpu = make_gpu()
    w = gpu.alloc_workspace(GPU, 64, label="%w")
    gpu.free_workspace(GPU, w, at="f.mlir:5:3")
    with pytest.raises(
        DoubleFreeError,
        match=r"double free: workspace buffer %w .* was already freed at f.mlir:5:3",
    ):
        gpu.free_workspace(GPU, w)


def test_free_workspace_of_a_data_buffer_is_an_error() -> None:
    gpu = make_gpu()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    with pytest.raises(
        DeviceError, match="not allocated by alloc_workspace; free it with free_data_space"
    ):
        gpu.free_workspace(GPU, a)


def test_kernels_see_workspace_buffers_and_live_ones_are_leaks() -> None:
    gpu = make_gpu()
    w = gpu.alloc_workspace(GPU, 16, "float32", label="%w")

    def fill(args: list[np.ndarray | int | float | bool]) -> None:
        view = args[0]
        assert isinstance(view, np.ndarray)
        assert view.shape == (4,)
        view[...] = 1

    gpu.launch(GPU, fill, [w], name="@fill")
    assert gpu.live_buffers() == [w]


def test_workspace_is_typed_and_shaped_as_asked() -> None:
    gpu = make_gpu()
    w = gpu.alloc_workspace(GPU, 96, "float32", shape=(4, 6), label="%w")
    assert (w.shape, w.dtype, w.nbytes) == ((4, 6), np.dtype("float32"), 96)
    shapes: list[tuple[int, ...]] = []
    gpu.launch(GPU, lambda views: shapes.append(np.shape(views[0])), [w], name="@k")
    assert shapes == [(4, 6)]  # what a kernel sees
    flat = gpu.alloc_workspace(GPU, 96, "float32", label="%flat")
    assert flat.shape == (24,)


def test_workspace_shape_that_does_not_fill_its_bytes_is_an_error() -> None:
    gpu = make_gpu()
    with pytest.raises(DeviceError) as info:
        gpu.alloc_workspace(GPU, 96, "float32", shape=(4, 5), label="%w")
    assert str(info.value) == (
        "alloc_workspace of %w on cuda:0: shape (4, 5) of float32 is not 96 bytes"
    )
