"""DeviceAPI: TVM's methods on the cpu and simulated APIs, and every run-time memory check."""

from __future__ import annotations

import numpy as np
import pytest

from devplan.runtime.cpu import CPUDeviceAPI
from devplan.runtime.device_api import DEVICE_ATTR_KINDS, Buffer, DeviceAPI
from devplan.runtime.errors import (
    CopySizeError,
    DeviceError,
    DoubleFreeError,
    HostAccessError,
    OutOfDeviceMemoryError,
    UnknownDeviceAPIError,
    UseAfterFreeError,
    WrongDeviceError,
)
from devplan.runtime.registry import (
    DeviceAPIRegistry,
    get_device_api,
    list_device_apis,
    register_builtin_device_apis,
    register_device_api,
)
from devplan.runtime.scheduler import Scheduler
from devplan.runtime.simulated import SimulatedDeviceAPI
from devplan.runtime.storage import STORAGE_CACHE
from devplan.system.devices import Device

CPU = Device("cpu", 0)
GPU = Device("cuda", 0)
GPU1 = Device("cuda", 1)


def make_pair(
    global_bytes: int = 1 << 20, scheduler: Scheduler | None = None
) -> tuple[CPUDeviceAPI, SimulatedDeviceAPI]:
    scheduler = scheduler or Scheduler()
    cpu = CPUDeviceAPI(CPU, scheduler=scheduler)
    gpu = SimulatedDeviceAPI(
        GPU,
        scopes={"global": global_bytes, "shared": 48 << 10, "host": 1 << 20},
        attrs={"warp_size": 32, "max_threads_per_block": 1024, "compute_version": "8.0"},
        host_scopes=["host"],
        scheduler=scheduler,
    )
    return cpu, gpu


# -- get_attr / set_device ---------------------------------------------------------------------


def test_cpu_get_attr_follows_tvm_exist_and_memory_only() -> None:
    cpu = CPUDeviceAPI(CPU)
    assert cpu.get_attr(CPU, "exist") is True
    total = cpu.get_attr(CPU, "total_global_memory")
    assert isinstance(total, int)
    assert total > 0
    assert cpu.get_attr(CPU, "warp_size") is None
    assert cpu.get_attr(CPU, "max_threads_per_block") is None


def test_cpu_total_global_memory_is_the_global_capacity_when_given() -> None:
    cpu = CPUDeviceAPI(CPU, scopes={"global": 1 << 30})
    assert cpu.get_attr(CPU, "total_global_memory") == 1 << 30


def test_simulated_get_attr_from_constructor_and_scopes() -> None:
    _, gpu = make_pair(global_bytes=4096)
    assert gpu.get_attr(GPU, "warp_size") == 32
    assert gpu.get_attr(GPU, "compute_version") == "8.0"
    assert gpu.get_attr(GPU, "total_global_memory") == 4096
    assert gpu.get_attr(GPU, "max_shared_memory_per_block") == 48 << 10
    assert gpu.get_attr(GPU, "image_pitch_alignment") is None
    gpu.alloc_data_space(GPU, (256,), "float32", label="%a")
    assert gpu.get_attr(GPU, "available_global_memory") == 4096 - 1024


def test_get_attr_unknown_kind_lists_the_valid_names() -> None:
    _, gpu = make_pair()
    with pytest.raises(DeviceError) as info:
        gpu.get_attr(GPU, "warpsize")
    assert str(info.value).startswith("unknown device attribute 'warpsize' for cuda:0; valid: ")
    assert "warp_size" in str(info.value)


def test_attr_kinds_are_tvms_in_enum_order() -> None:
    assert DEVICE_ATTR_KINDS[0] == "exist"
    assert DEVICE_ATTR_KINDS[14] == "total_global_memory"
    assert len(DEVICE_ATTR_KINDS) == 17


def test_constructor_rejects_unknown_attribute_names() -> None:
    with pytest.raises(DeviceError, match=r"device cuda:0: unknown attribute\(s\) warps; valid"):
        SimulatedDeviceAPI(GPU, attrs={"warps": 32})


def test_set_device_accepts_its_device_and_rejects_another() -> None:
    _, gpu = make_pair()
    gpu.set_device(GPU)
    with pytest.raises(
        WrongDeviceError, match=r"set_device for cuda:1 called on the DeviceAPI of cuda:0"
    ):
        gpu.set_device(GPU1)


# -- allocation ------------------------------------------------------------


def test_alloc_data_space_by_shape_records_shape_dtype_scope_and_label() -> None:
    _, gpu = make_pair()
    buf = gpu.alloc_data_space(GPU, (4, 8), "float32", label="%a @ f.mlir:3:8")
    assert (buf.shape, buf.dtype, buf.scope, buf.nbytes) == ((4, 8), np.float32, "global", 128)
    assert buf.alignment == 64
    assert buf.label == "%a @ f.mlir:3:8"
    assert buf.describe() == "buffer %a @ f.mlir:3:8 (cuda:0 scope 'global', 4x8xfloat32, 128 B)"


def test_alloc_data_space_empty_scope_means_global() -> None:
    _, gpu = make_pair()
    assert gpu.alloc_data_space(GPU, (1,), "int8", scope="").scope == "global"


def test_alloc_data_space_flat_gives_aligned_bytes() -> None:
    cpu = CPUDeviceAPI(CPU)
    buf = cpu.alloc_data_space_flat(CPU, 256, 256, "float64", label="%w")
    assert (buf.shape, buf.dtype, buf.alignment) == ((32,), np.float64, 256)
    assert cpu.host_view(buf).ctypes.data % 256 == 0
    untyped = cpu.alloc_data_space_flat(CPU, 10, 1)
    assert (untyped.shape, untyped.dtype) == ((10,), np.uint8)


def test_alloc_data_space_flat_rejects_bad_alignment_and_partial_elements() -> None:
    cpu = CPUDeviceAPI(CPU)
    with pytest.raises(DeviceError, match="alignment 48 is not a power of two"):
        cpu.alloc_data_space_flat(CPU, 64, 48, label="%x")
    with pytest.raises(DeviceError, match=r"10 bytes is not a whole number of float32 elements"):
        cpu.alloc_data_space_flat(CPU, 10, 64, "float32", label="%x")


def test_alloc_in_an_unknown_scope_lists_the_scopes() -> None:
    _, gpu = make_pair()
    with pytest.raises(DeviceError) as info:
        gpu.alloc_data_space(GPU, (4,), "float32", scope="texture", label="%t")
    assert str(info.value) == (
        "device cuda:0 has no memory scope 'texture' (for %t); scopes it allocates: global, host"
    )


def test_alloc_in_shared_scope_from_the_host_is_an_error() -> None:
    _, gpu = make_pair()
    with pytest.raises(
        DeviceError, match=r"cannot allocate %s in scope 'shared' of cuda:0 from the host"
    ):
        gpu.alloc_data_space(GPU, (4,), "float32", scope="shared", label="%s")


def test_alloc_rejects_unknown_dtype_and_negative_shape() -> None:
    _, gpu = make_pair()
    with pytest.raises(DeviceError, match="unknown dtype 'floot32'"):
        gpu.alloc_data_space(GPU, (4,), "floot32", label="%a")
    with pytest.raises(DeviceError, match=r"negative shape \(-1,\)"):
        gpu.alloc_data_space(GPU, (-1,), "float32", label="%a")


@pytest.mark.parametrize("shape", [(2.5,), ("3",), (True,), 5, None])
def test_alloc_shape_of_anything_but_whole_numbers_is_an_error_not_truncated(
    shape: object,
) -> None:
    _, gpu = make_pair()  # (2.5,) allocated 2 elements, ("3",) and (True,) 3 and 1
    with pytest.raises(DeviceError) as info:
        gpu.alloc_data_space(GPU, shape, "float32", label="%a")  # type: ignore[arg-type]
    assert str(info.value) == (
        f"alloc_data_space of %a on cuda:0: shape must be a sequence of whole numbers, "
        f"got {shape!r}"
    )


@pytest.mark.parametrize(
    ("dtype", "problem"),
    [
        (None, "a dtype is needed, got None"),  # it was float64
        (object, "device memory holds numbers (bool, int, uint, float, complex), not object"),
    ],
)
def test_alloc_dtype_must_be_a_numeric_dtype(dtype: object, problem: str) -> None:
    _, gpu = make_pair()
    with pytest.raises(DeviceError) as info:
        gpu.alloc_data_space(GPU, (4,), dtype, label="%a")  # type: ignore[arg-type]
    assert str(info.value) == f"alloc_data_space of %a on cuda:0: {problem}"


def test_flat_and_workspace_sizes_must_be_whole_numbers() -> None:
    _, gpu = make_pair()
    with pytest.raises(DeviceError, match=r"alignment must be a whole number, got 8\.0$"):
        gpu.alloc_data_space_flat(GPU, 16, 8.0)  # type: ignore[arg-type]
    with pytest.raises(DeviceError, match=r"nbytes must be a whole number, got '16'$"):
        gpu.alloc_workspace(GPU, "16")  # type: ignore[arg-type]


def test_wrongly_typed_handles_are_named_not_attribute_errors() -> None:
    _, gpu = make_pair()
    with pytest.raises(DeviceError, match=r"^free_data_space: expected a Buffer, got NoneType"):
        gpu.free_data_space(GPU, None)  # type: ignore[arg-type]
    with pytest.raises(DeviceError, match=r"^copy_data_from_to: dst must be a Buffer or a Num"):
        gpu.copy_data_from_to(gpu.alloc_data_space(GPU, (4,), "float32"), [0.0] * 4)  # type: ignore[arg-type]
    with pytest.raises(DeviceError, match=r"^alloc_data_space: device must be a Device such"):
        gpu.alloc_data_space("cuda:0", (4,), "float32")  # type: ignore[arg-type]


def test_out_of_device_memory_names_device_scope_capacity_request_and_use() -> None:
    _, gpu = make_pair(global_bytes=1024)
    gpu.alloc_data_space(GPU, (128,), "float32", label="%a")
    with pytest.raises(OutOfDeviceMemoryError) as info:
        gpu.alloc_data_space(GPU, (129,), "float32", label="%b @ f.mlir:4:8")
    assert str(info.value) == (
        "out of device memory on cuda:0 scope 'global': %b @ f.mlir:4:8 requests 516 bytes, "
        "capacity 1024 bytes, 512 bytes in use by 1 allocation(s)"
    )


def test_capacity_is_per_scope() -> None:
    _, gpu = make_pair(global_bytes=1024)
    gpu.alloc_data_space(GPU, (256,), "float32", label="%g")
    gpu.alloc_data_space(GPU, (256,), "float32", scope="host", label="%h")
    assert gpu.scopes["global"].in_use == 1024
    assert gpu.scopes["host"].in_use == 1024


def test_freed_memory_can_be_allocated_again_and_peak_is_kept() -> None:
    _, gpu = make_pair(global_bytes=1024)
    a = gpu.alloc_data_space(GPU, (256,), "float32", label="%a")
    gpu.free_data_space(GPU, a)
    gpu.alloc_data_space(GPU, (200,), "float32", label="%b")
    stats = gpu.scopes["global"]
    assert (stats.in_use, stats.peak, stats.allocations, stats.frees) == (800, 1024, 2, 1)


# -- frees ------------------------------------------------------------


def test_double_free_names_both_places() -> None:
    _, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    gpu.free_data_space(GPU, a, at="f.mlir:9:3")
    with pytest.raises(DoubleFreeError) as info:
        gpu.free_data_space(GPU, a, at="f.mlir:10:3")
    assert str(info.value) == (
        "double free at f.mlir:10:3: buffer %a (cuda:0 scope 'global', 4xfloat32, 16 B) "
        "was already freed at f.mlir:9:3"
    )


def test_free_of_a_buffer_from_another_device_is_an_error() -> None:
    scheduler = Scheduler()
    _, gpu0 = make_pair(scheduler=scheduler)
    gpu1 = SimulatedDeviceAPI(GPU1, scheduler=scheduler)
    b = gpu1.alloc_data_space(GPU1, (4,), "float32", label="%b")
    with pytest.raises(WrongDeviceError) as info:
        gpu0.free_data_space(GPU, b)
    assert str(info.value) == (
        "free_data_space of buffer %b (cuda:1 scope 'global', 4xfloat32, 16 B) on the "
        "DeviceAPI of cuda:0: the buffer belongs to cuda:1; free it there"
    )


def test_free_data_space_of_a_workspace_buffer_is_an_error() -> None:
    _, gpu = make_pair()
    w = gpu.alloc_workspace(GPU, 100, label="%w")
    with pytest.raises(
        DeviceError, match="allocated by alloc_workspace; free it with free_workspace"
    ):
        gpu.free_data_space(GPU, w)


# -- use after free ------------------------------------------------------------


def test_use_after_free_in_a_copy_names_the_buffer_and_the_free() -> None:
    _, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    gpu.free_data_space(GPU, a, at="f.mlir:9:3")
    with pytest.raises(UseAfterFreeError) as info:
        gpu.copy_data_from_to(np.zeros(4, np.float32), a)
    assert str(info.value) == (
        "use after free in copy host array 4xfloat32 -> %a: buffer %a (cuda:0 scope 'global', "
        "4xfloat32, 16 B) was freed at f.mlir:9:3"
    )


def test_use_after_free_in_a_launch_and_a_host_view() -> None:
    cpu, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    gpu.free_data_space(GPU, a, at="f.mlir:9:3")
    with pytest.raises(
        UseAfterFreeError, match=r"use after free in kernel @k on cuda:0: buffer %a"
    ):
        gpu.launch(GPU, lambda views: None, [a], name="@k")
    h = cpu.alloc_data_space(CPU, (4,), "float32", label="%h")
    cpu.free_data_space(CPU, h, at="f.mlir:12:3")
    with pytest.raises(UseAfterFreeError, match=r"use after free in host access: buffer %h"):
        cpu.host_view(h)


# -- host access ------------------------------------------------------------


def test_host_cannot_view_simulated_global_memory() -> None:
    _, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    with pytest.raises(HostAccessError) as info:
        gpu.host_view(a)
    assert str(info.value) == (
        "host code cannot access buffer %a (cuda:0 scope 'global', 4xfloat32, 16 B): the host "
        "reaches memory of cuda:0 in scope 'global' only through copies (copy_data_from_to)"
    )


def test_host_cannot_take_a_device_view_outside_a_kernel() -> None:
    _, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    with pytest.raises(
        HostAccessError, match=r"device_view of buffer %a .* outside a kernel running on cuda:0"
    ):
        gpu.device_view(a)


def test_host_visible_scope_of_a_simulated_device_can_be_viewed() -> None:
    _, gpu = make_pair()
    pinned = gpu.alloc_data_space(GPU, (4,), "float32", scope="host", label="%p")
    gpu.host_view(pinned)[...] = 7
    out = np.zeros(4, np.float32)
    gpu.copy_data_from_to(pinned, out)
    assert out.tolist() == [7, 7, 7, 7]


def test_cpu_memory_is_host_visible() -> None:
    cpu = CPUDeviceAPI(CPU)
    a = cpu.alloc_data_space(CPU, (2, 2), "int32", label="%a")
    cpu.host_view(a)[...] = [[1, 2], [3, 4]]
    assert cpu.host_view(a).sum() == 10


def test_new_device_memory_is_zeroed() -> None:
    cpu = CPUDeviceAPI(CPU)
    assert not cpu.host_view(cpu.alloc_data_space(CPU, (8,), "float64")).any()


# -- copies ------------------------------------------------------------


def test_copy_host_to_device_to_host_round_trips() -> None:
    _, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (3, 2), "float32", label="%a")
    src = np.arange(6, dtype=np.float32).reshape(3, 2)
    gpu.copy_data_from_to(src, a)
    back = np.zeros_like(src)
    gpu.copy_data_from_to(a, back)
    np.testing.assert_array_equal(back, src)


def test_copy_device_to_device_on_one_device() -> None:
    _, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (4,), "int32", label="%a")
    b = gpu.alloc_data_space(GPU, (4,), "int32", label="%b")
    gpu.copy_data_from_to(np.array([1, 2, 3, 4], np.int32), a)
    gpu.copy_data_from_to(a, b)
    out = np.zeros(4, np.int32)
    gpu.copy_data_from_to(b, out)
    assert out.tolist() == [1, 2, 3, 4]


def test_copy_between_two_devices_is_done_by_the_source_api() -> None:
    scheduler = Scheduler()
    _, gpu0 = make_pair(scheduler=scheduler)
    gpu1 = SimulatedDeviceAPI(GPU1, scheduler=scheduler)
    a = gpu0.alloc_data_space(GPU, (4,), "float32", label="%a")
    b = gpu1.alloc_data_space(GPU1, (4,), "float32", label="%b")
    gpu0.copy_data_from_to(np.full(4, 2.5, np.float32), a)
    with pytest.raises(WrongDeviceError) as info:
        gpu1.copy_data_from_to(a, b)
    assert str(info.value) == (
        "copy %a -> %b from cuda:0 to cuda:1 is performed by the DeviceAPI of cuda:0 "
        "(the non-CPU side, as in TVM), not by that of cuda:1"
    )
    gpu0.copy_data_from_to(a, b)
    out = np.zeros(4, np.float32)
    gpu1.copy_data_from_to(b, out)
    assert out.tolist() == [2.5] * 4


def test_copy_from_host_is_done_by_the_device_api_not_the_cpu_api() -> None:
    cpu, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    with pytest.raises(WrongDeviceError, match="performed by the DeviceAPI of cuda:0"):
        cpu.copy_data_from_to(np.zeros(4, np.float32), a)


def test_copy_size_mismatch_names_both_sides() -> None:
    _, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    with pytest.raises(CopySizeError) as info:
        gpu.copy_data_from_to(np.zeros(5, np.float32), a)
    assert str(info.value) == (
        "copy host array 5xfloat32 -> %a: the size in bytes must match exactly: source host "
        "array 5xfloat32 has 20 bytes, destination buffer %a (cuda:0 scope 'global', "
        "4xfloat32, 16 B) has 16 bytes"
    )


def test_copy_with_equal_bytes_but_other_dtype_copies_raw_bytes() -> None:
    _, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (4,), "uint8", label="%a")
    gpu.copy_data_from_to(np.array([1], np.int32), a)
    out = np.zeros(4, np.uint8)
    gpu.copy_data_from_to(a, out)
    assert out.view(np.int32)[0] == 1


def test_copy_from_a_non_contiguous_host_array_is_an_error() -> None:
    _, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    with pytest.raises(CopySizeError, match="source host array is not contiguous"):
        gpu.copy_data_from_to(np.zeros(8, np.float32)[::2], a)


def test_workspace_memory_is_not_host_transferable() -> None:
    _, gpu = make_pair()
    w = gpu.alloc_workspace(GPU, 16, "float32", label="%w")
    with pytest.raises(DeviceError) as info:
        gpu.copy_data_from_to(np.zeros(4, np.float32), w)
    assert str(info.value) == (
        "copy host array 4xfloat32 -> %w: workspace buffer %w (cuda:0 scope 'global', "
        "4xfloat32, 16 B) is workspace memory, which is not transferable to or from the "
        "host; use alloc_data_space"
    )


# -- kernels ------------------------------------------------------------


def test_launch_gives_the_kernel_device_views_and_scalars() -> None:
    _, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    gpu.copy_data_from_to(np.arange(4, dtype=np.float32), a)

    def scale(args: list[np.ndarray | int | float | bool]) -> None:
        view, factor = args
        assert isinstance(view, np.ndarray)
        assert isinstance(factor, int)
        view *= factor

    gpu.launch(GPU, scale, [a, 3], name="@scale")
    out = np.zeros(4, np.float32)
    gpu.copy_data_from_to(a, out)
    assert out.tolist() == [0, 3, 6, 9]


def test_launch_with_a_buffer_of_another_device_is_an_error() -> None:
    scheduler = Scheduler()
    _, gpu0 = make_pair(scheduler=scheduler)
    gpu1 = SimulatedDeviceAPI(GPU1, scheduler=scheduler)
    b = gpu1.alloc_data_space(GPU1, (4,), "float32", label="%b")
    with pytest.raises(WrongDeviceError) as info:
        gpu0.launch(GPU, lambda views: None, [b], name="@k")
    assert str(info.value) == (
        "kernel @k on cuda:0 got buffer %b (cuda:1 scope 'global', 4xfloat32, 16 B) as "
        "argument 0; kernels reach only memory of their own device"
    )


def test_simulated_kernels_cannot_take_host_arrays_but_cpu_kernels_can() -> None:
    cpu, gpu = make_pair()
    with pytest.raises(HostAccessError, match="kernel @k on cuda:0 got a host array as argument 0"):
        gpu.launch(GPU, lambda views: None, [np.zeros(2)], name="@k")
    host = np.zeros(2)

    def fill(args: list[np.ndarray | int | float | bool]) -> None:
        view = args[0]
        assert isinstance(view, np.ndarray)
        view[...] = 5

    cpu.launch(CPU, fill, [host], name="@fill")
    assert host.tolist() == [5, 5]


# -- leaks and teardown ------------------------------------------------------------


def test_live_buffers_lists_what_was_not_freed() -> None:
    _, gpu = make_pair()
    a = gpu.alloc_data_space(GPU, (4,), "float32", label="%a")
    b = gpu.alloc_data_space(GPU, (4,), "float32", label="%b")
    gpu.free_data_space(GPU, a)
    assert gpu.live_buffers() == [b]
    assert gpu.teardown() == [b]


def test_allocation_after_teardown_is_an_error() -> None:
    _, gpu = make_pair()
    gpu.teardown()
    with pytest.raises(DeviceError, match="allocation of %a on cuda:0 after teardown"):
        gpu.alloc_data_space(GPU, (4,), "float32", label="%a")


# -- registry and user device kinds ------------------------------------------------------------


def test_a_new_registry_is_empty_until_the_builtin_apis_are_registered() -> None:
    registry = DeviceAPIRegistry()
    assert registry.names() == []
    register_builtin_device_apis(registry)
    assert registry.get("cpu") is CPUDeviceAPI
    assert registry.get("simulated") is SimulatedDeviceAPI
    assert registry.names() == ["cpu", "cuda", "ray", "simulated"]


def test_builtin_apis_are_known_to_every_runtime() -> None:
    assert get_device_api("cpu") is CPUDeviceAPI
    assert get_device_api("simulated") is SimulatedDeviceAPI
    assert {"cpu", "simulated", "cuda"} <= set(list_device_apis())


def test_unknown_api_name_lists_the_registered_ones() -> None:
    with pytest.raises(
        UnknownDeviceAPIError, match=r"Device API nope is not enabled: .* registered: .*cpu"
    ):
        get_device_api("nope")


def test_registering_a_name_twice_needs_override() -> None:
    with pytest.raises(DeviceError, match="a DeviceAPI named 'cpu' is already registered"):
        register_device_api("cpu", CPUDeviceAPI)
    registry = DeviceAPIRegistry()
    register_builtin_device_apis(registry)
    with pytest.raises(DeviceError, match="a DeviceAPI named 'cpu' is already registered"):
        registry.register("cpu", CPUDeviceAPI)


class DSPDeviceAPI(DeviceAPI):
    """A user's DSP: word-addressed memory the host cannot see, one attribute of its own."""

    api_name = "test-dsp"

    def host_can_access(self, scope: str) -> bool:
        return False

    def _get_attr(self, kind: str) -> object | None:
        return {"exist": True, "device_name": "toy-dsp", "warp_size": 1}.get(kind)

    def _allocate_storage(self, nbytes: int, alignment: int) -> np.ndarray:
        # The DSP addresses 32-bit words: storage is allocated in whole words.
        return super()._allocate_storage(-(-nbytes // 4) * 4, max(alignment, 4))[:nbytes]


def test_user_registers_a_device_api_for_a_kind_of_their_own() -> None:
    register_device_api("test-dsp", DSPDeviceAPI, override=True)
    dsp = Device("dsp", 0)
    api = get_device_api("test-dsp")(device=dsp, scopes={"global": 4096}, scheduler=Scheduler())
    assert isinstance(api, DSPDeviceAPI)
    assert api.get_attr(dsp, "device_name") == "toy-dsp"
    buf = api.alloc_data_space(dsp, (3,), "int16", label="%x")
    assert isinstance(buf, Buffer)
    api.copy_data_from_to(np.array([1, -2, 3], np.int16), buf)

    def negate(args: list[np.ndarray | int | float | bool]) -> None:
        view = args[0]
        assert isinstance(view, np.ndarray)
        np.negative(view, out=view)

    api.launch(dsp, negate, [buf], name="@negate")
    out = np.zeros(3, np.int16)
    api.copy_data_from_to(buf, out)
    assert out.tolist() == [-1, 2, -3]
    with pytest.raises(HostAccessError, match="host code cannot access buffer %x"):
        api.host_view(buf)
    with pytest.raises(
        OutOfDeviceMemoryError, match="out of device memory on dsp:0 scope 'global'"
    ):
        api.alloc_data_space(dsp, (4096,), "int16", label="%big")


# -- reuse of freed storage ------------------------------------------------------------------

MIB_OF_FLOATS = (1 << 18,)  # 1 MiB of float32: large enough for STORAGE_CACHE


def test_freed_large_storage_is_reused_and_reads_as_zeros() -> None:
    STORAGE_CACHE.clear()
    cpu = CPUDeviceAPI(CPU)
    a = cpu.alloc_data_space(CPU, MIB_OF_FLOATS, "float32", label="%a")
    cpu.host_view(a, write=True)[...] = 7
    cpu.free_data_space(CPU, a)
    assert STORAGE_CACHE.held == 1 << 20
    b = cpu.alloc_data_space(CPU, MIB_OF_FLOATS, "float32", label="%b")
    assert STORAGE_CACHE.held == 0  # %b took %a's block ...
    assert not cpu.host_view(b).any()  # ... and sees zeros, not %a's data


def test_storage_still_viewed_after_free_is_not_reused() -> None:
    STORAGE_CACHE.clear()
    cpu = CPUDeviceAPI(CPU)
    a = cpu.alloc_data_space(CPU, MIB_OF_FLOATS, "float32", label="%a")
    view = cpu.host_view(a, write=True)
    view[...] = 7
    cpu.free_data_space(CPU, a)
    assert STORAGE_CACHE.held == 0
    b = cpu.alloc_data_space(CPU, MIB_OF_FLOATS, "float32", label="%b")
    cpu.host_view(b, write=True)[...] = 1
    assert (view == 7).all()  # the old view's memory is not handed to %b


def gpu_buffer_on_reused_storage() -> tuple[SimulatedDeviceAPI, Buffer]:
    """A simulated GPU and a buffer %b on the freed storage of a buffer that held 7s."""
    STORAGE_CACHE.clear()
    _, gpu = make_pair(global_bytes=4 << 20)
    a = gpu.alloc_data_space(GPU, MIB_OF_FLOATS, "float32", label="%a")
    gpu.copy_data_from_to(np.full(MIB_OF_FLOATS, 7, np.float32), a)
    gpu.free_data_space(GPU, a)
    b = gpu.alloc_data_space(GPU, MIB_OF_FLOATS, "float32", label="%b")
    assert STORAGE_CACHE.held == 0  # %b is on %a's block
    return gpu, b


def test_copy_into_reused_storage_writes_every_byte() -> None:
    gpu, b = gpu_buffer_on_reused_storage()
    source = np.arange(MIB_OF_FLOATS[0], dtype=np.float32)
    gpu.copy_data_from_to(source, b)
    out = np.empty_like(source)
    gpu.copy_data_from_to(b, out)
    np.testing.assert_array_equal(out, source)


def test_copy_from_reused_storage_reads_zeros() -> None:
    gpu, b = gpu_buffer_on_reused_storage()
    out = np.ones(MIB_OF_FLOATS, np.float32)
    gpu.copy_data_from_to(b, out)
    assert not out.any()


def test_kernel_on_reused_storage_reads_zeros() -> None:
    gpu, b = gpu_buffer_on_reused_storage()
    seen: list[float] = []
    gpu.launch(GPU, lambda views: seen.append(float(np.sum(views[0]))), [b], name="@sum")
    assert seen == [0.0]


def test_a_kernel_sees_one_view_per_buffer_and_a_reused_buffer_reads_as_zeros() -> None:
    _, gpu = make_pair()
    seen: list[np.ndarray] = []

    def keep(args: list[np.ndarray | int | float | bool]) -> None:
        view = args[0]
        assert isinstance(view, np.ndarray)
        seen.append(view)
        view[:] = 7.0

    buffer = gpu.alloc_data_space(GPU, (1024,), np.float32, label="a")
    gpu.launch(GPU, keep, [buffer], name="k")
    gpu.launch(GPU, keep, [buffer], name="k")
    assert seen[0] is seen[1]
    gpu.free_data_space(GPU, buffer)
    again = gpu.alloc_data_space(GPU, (1024,), np.float32, label="b")
    gpu.launch(GPU, keep, [again], name="k")
    assert seen[2] is not seen[0]
    gpu.free_data_space(GPU, again)
    zeros = gpu.alloc_data_space(GPU, (1024,), np.float32, label="c")
    gpu.launch(GPU, lambda args: seen.append(np.array(args[0])), [zeros], name="k")
    assert not seen[-1].any()
    gpu.free_data_space(GPU, zeros)
