"""Runtime: DeviceAPIs built from a system description, copies routed per TVM, teardown."""

from __future__ import annotations

import numpy as np
import pytest

from devplan.runtime.cpu import CPUDeviceAPI
from devplan.runtime.errors import DeviceError, HostAccessError, PendingWriteError
from devplan.runtime.registry import DeviceAPIRegistry, register_device_api
from devplan.runtime.runtime import Runtime
from devplan.runtime.simulated import SimulatedDeviceAPI
from devplan.system.description import System, SystemDescriptionError
from devplan.system.devices import Device

CPU, GPU0, GPU1 = Device("cpu", 0), Device("cuda", 0), Device("cuda", 1)

SMALL = """
[[device]]
type = "cpu"
id = 0
target = { kind = "llvm" }
api = "cpu"
scopes = { global = "1 MiB" }

[[device]]
type = "cuda"
id = 0
target = { kind = "cuda", arch = "sm_80", max_num_threads = 512 }
api = "simulated"
scopes = { global = "4 KiB", shared = "1 KiB", host = "1 MiB" }

[[same_memory]]
scopes = ["cpu:0/global", "cuda:0/host"]

[[link]]
between = ["cpu:0", "cuda:0"]
bandwidth = "1 GB/s"
latency = "10 us"
"""


def test_default_system_gives_one_api_per_device() -> None:
    rt = Runtime.from_system(System.default())
    assert rt.devices == [CPU, GPU0, GPU1]
    assert rt.host == CPU
    assert isinstance(rt.api("cpu:0"), CPUDeviceAPI)
    assert isinstance(rt.api(GPU1), SimulatedDeviceAPI)
    assert rt.api("cuda:0").api_name == "simulated"


def test_attributes_and_capacities_come_from_the_system() -> None:
    rt = Runtime.from_system(System.from_text(SMALL, "small.toml"))
    gpu = rt.api(GPU0)
    assert gpu.get_attr(GPU0, "max_threads_per_block") == 512
    assert gpu.get_attr(GPU0, "compute_version") == "8.0"
    assert gpu.get_attr(GPU0, "total_global_memory") == 4096
    assert gpu.get_attr(GPU0, "max_shared_memory_per_block") == 1024
    assert gpu.scopes["global"].capacity == 4096
    with pytest.raises(DeviceError, match="out of device memory on cuda:0 scope 'global'"):
        gpu.alloc_data_space(GPU0, (2048,), "float32", label="%big")


def test_host_visible_scopes_come_from_the_system() -> None:
    rt = Runtime.from_system(System.from_text(SMALL, "small.toml"))
    gpu = rt.api(GPU0)
    pinned = gpu.alloc_data_space(GPU0, (4,), "float32", scope="host", label="%p")
    gpu.host_view(pinned)[...] = 1
    back = np.zeros(4, np.float32)
    gpu.copy_data_from_to(pinned, back)
    assert back.tolist() == [1, 1, 1, 1]  # the host's write reached the buffer
    device_only = gpu.alloc_data_space(GPU0, (4,), "float32", label="%d")
    with pytest.raises(HostAccessError) as info:
        gpu.host_view(device_only)
    assert str(info.value) == (
        "host code cannot access buffer %d (cuda:0 scope 'global', 4xfloat32, 16 B): the host "
        "reaches memory of cuda:0 in scope 'global' only through copies (copy_data_from_to)"
    )


def test_unknown_device_lists_the_devices() -> None:
    rt = Runtime.from_system(System.default())
    with pytest.raises(
        DeviceError, match=r"no device cuda:7 in this runtime; devices: cpu:0, cuda:0, cuda:1"
    ):
        rt.api("cuda:7")


def test_malformed_device_name_is_a_device_error() -> None:
    rt = Runtime.from_system(System.default())
    with pytest.raises(DeviceError, match=r"malformed device 'cuda:x': expected 'type:id'"):
        rt.api("cuda:x")


def test_copy_picks_the_api_tvm_would_and_moves_data_across_gpus() -> None:
    rt = Runtime.from_system(System.default())
    a = rt.api(GPU0).alloc_data_space(GPU0, (8,), "float64", label="%a")
    b = rt.api(GPU1).alloc_data_space(GPU1, (8,), "float64", label="%b")
    rt.copy(np.arange(8.0), a)
    rt.copy(a, b)
    out = np.zeros(8)
    token = rt.copy(b, out)
    assert token.stream.device == GPU1
    assert out.tolist() == list(range(8))


def test_async_copy_then_wait_and_the_host_check() -> None:
    rt = Runtime.from_system(System.default())
    gpu = rt.api(GPU0)
    a = gpu.alloc_data_space(GPU0, (4,), "float32", label="%a")
    rt.copy(np.ones(4, np.float32), a)
    out = np.zeros(4, np.float32)
    token = rt.copy(a, out, gpu.create_stream(GPU0), label="%t")
    assert rt.pending_writes(out) == [token]
    with pytest.raises(
        PendingWriteError,
        match="host reads a host array while it has a pending async write: copy %t",
    ):
        rt.check_host_access(out)
    rt.wait(token)
    rt.check_host_access(out)
    assert out.tolist() == [1, 1, 1, 1]


def test_check_host_access_of_device_memory_is_a_host_access_error() -> None:
    rt = Runtime.from_system(System.default())
    a = rt.api(GPU0).alloc_data_space(GPU0, (4,), "float32", label="%a")
    with pytest.raises(HostAccessError, match="host code cannot access buffer %a"):
        rt.check_host_access(a)


def test_teardown_returns_leaks_of_every_device() -> None:
    rt = Runtime.from_system(System.default())
    a = rt.api(GPU0).alloc_data_space(GPU0, (4,), "float32", label="%a")
    b = rt.api(CPU).alloc_data_space(CPU, (4,), "float32", label="%b")
    rt.api(GPU1).alloc_workspace(GPU1, 64, label="%w")
    rt.api(CPU).free_data_space(CPU, b)
    leaks = rt.teardown()
    assert [x.label for x in leaks] == ["%a", "%w"]
    assert a in rt.live_buffers()


def test_a_user_api_named_in_a_system_description() -> None:
    class PinnedEverythingAPI(SimulatedDeviceAPI):
        def host_can_access(self, scope: str) -> bool:
            return True

    register_device_api("test-pinned", PinnedEverythingAPI, override=True)
    text = SMALL.replace('api = "simulated"', 'api = "test-pinned"')
    rt = Runtime.from_system(System.from_text(text, "user.toml"))
    gpu = rt.api(GPU0)
    assert isinstance(gpu, PinnedEverythingAPI)
    assert gpu.api_name == "test-pinned"
    buf = gpu.alloc_data_space(GPU0, (2,), "int32", label="%x")
    gpu.host_view(buf)[...] = 3
    assert gpu.host_view(buf).tolist() == [3, 3]


def test_unknown_api_of_a_device_names_its_entry_and_the_registered_apis() -> None:
    system = System.from_text(SMALL.replace('api = "simulated"', 'api = "gpu"'), "sys.toml")
    registry = DeviceAPIRegistry()
    registry.register("cpu", CPUDeviceAPI)
    with pytest.raises(SystemDescriptionError) as info:
        Runtime.from_system(system, registry)
    assert str(info.value) == "sys.toml: device[1]: api: unknown DeviceAPI 'gpu' (valid: cpu)"


def test_a_runtime_takes_its_apis_from_the_registry_it_is_given() -> None:
    registry = DeviceAPIRegistry()
    registry.register("cpu", CPUDeviceAPI)
    registry.register("simulated", CPUDeviceAPI)
    rt = Runtime.from_system(System.from_text(SMALL, "small.toml"), registry)
    assert all(isinstance(api, CPUDeviceAPI) for api in rt.apis.values())


def test_system_naming_the_cuda_api_without_a_gpu_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from numba import cuda  # pyright: ignore[reportMissingTypeStubs]

    # As on a machine without an NVIDIA GPU, also where there is one.
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    text = SMALL.replace('api = "simulated"', 'api = "cuda"')
    with pytest.raises(DeviceError, match="cuda:0: no CUDA GPU is available"):
        Runtime.from_system(System.from_text(text, "cuda.toml"))


def _used_and_torn_down(system: System) -> Runtime:
    """A runtime of `system` after a run that copied into a GPU buffer and freed it."""
    rt = Runtime.from_system(system)
    gpu = rt.api(GPU0)
    b = gpu.alloc_data_space(GPU0, (4,), "float32", label="%b")
    rt.copy(np.ones(4, np.float32), b)
    gpu.set_stream(GPU0, gpu.create_stream(GPU0))
    gpu.free_data_space(GPU0, b)
    assert rt.teardown() == []
    return rt


def test_a_spare_runtime_torn_down_clean_is_renewed_to_what_from_system_builds() -> None:
    system = System.default()
    rt = _used_and_torn_down(system)
    report = rt.final_report(wall_seconds=1.0)  # not read yet
    renewed = Runtime.from_system(system, spare=rt)
    assert renewed is rt
    assert report().devices["cuda:0"].allocations == 1  # the old run's, gathered in time
    built = Runtime.from_system(system)
    assert renewed.report().devices == built.report().devices
    assert [s.name for s in renewed.scheduler.streams] == [s.name for s in built.scheduler.streams]
    gpu = renewed.api(GPU0)
    assert gpu.get_current_stream(GPU0) is renewed.scheduler.streams[1]
    b = gpu.alloc_data_space(GPU0, (2,), "float32", label="%again")
    assert renewed.teardown() == [b]


def test_a_spare_runtime_that_leaked_was_abandoned_or_is_of_another_kind_is_not_renewed() -> None:
    system = System.default()
    leaked = Runtime.from_system(system)
    leaked.api(GPU0).alloc_data_space(GPU0, (4,), "float32", label="%kept")
    leaked.teardown()
    abandoned = Runtime.from_system(system)
    abandoned.abandon()
    live = Runtime.from_system(system)  # never torn down
    other = _used_and_torn_down(System.from_text(SMALL, "small.toml"))
    for spare in (leaked, abandoned, live, other):
        assert Runtime.from_system(system, spare=spare) is not spare

    class PinnedEverythingAPI(SimulatedDeviceAPI):  # inherits `renewable`, never says it
        def host_can_access(self, scope: str) -> bool:
            return True

    registry = DeviceAPIRegistry()
    registry.register("cpu", CPUDeviceAPI)
    registry.register("simulated", PinnedEverythingAPI)
    user = Runtime.from_system(system, registry)
    user.teardown()
    assert Runtime.from_system(system, registry, spare=user) is not user
    built = _used_and_torn_down(system)  # built of the default registry's factories
    assert Runtime.from_system(system, registry, spare=built) is not built
