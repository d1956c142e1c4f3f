"""The `cuda` DeviceAPI (numba.cuda): run under Numba's CUDA simulator in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from devplan.runtime.errors import DeviceError
from devplan.runtime.registry import get_device_api
from devplan.system.devices import Device

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from numba import cuda
    from devplan.runtime.errors import DoubleFreeError, HostAccessError, OutOfDeviceMemoryError
    from devplan.runtime.registry import get_device_api
    from devplan.runtime.scheduler import Scheduler
    from devplan.system.devices import Device

    GPU = Device("cuda", 0)
    api = get_device_api("cuda")(device=GPU, scopes={"global": 8192}, scheduler=Scheduler())
    print("compute_version", api.get_attr(GPU, "compute_version"))
    print("exist", api.get_attr(GPU, "exist"))
    try:
        get_device_api("cuda")(device=GPU, scopes={"global": 8192}, host_scopes=["host"])
    except Exception as e:
        print(type(e).__name__, e)

    a = api.alloc_data_space(GPU, (8,), "float32", label="%a")
    b = api.alloc_data_space(GPU, (8,), "float32", label="%b")
    api.copy_data_from_to(np.arange(8, dtype=np.float32), a)

    @cuda.jit
    def double(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2

    api.launch(GPU, lambda views: double[1, 8](views[0]), [a], name="@double")
    stream = api.create_stream(GPU)
    api.copy_data_from_to(a, b, stream)
    out = np.zeros(8, np.float32)
    api.scheduler.wait(api.copy_data_from_to(b, out, stream))
    print("out", out.tolist())
    for attempt in (
        lambda: api.host_view(a),
        lambda: api.alloc_data_space(GPU, (2048,), "float32", label="%big"),
    ):
        try:
            attempt()
        except (HostAccessError, OutOfDeviceMemoryError) as e:
            print(type(e).__name__, e)
    api.free_data_space(GPU, a, at="f.mlir:9:3")
    try:
        api.free_data_space(GPU, a, at="f.mlir:10:3")
    except DoubleFreeError as e:
        print("DoubleFreeError", e)
    w = api.alloc_workspace(GPU, 100, label="%w")
    api.free_workspace(GPU, w)
    print("leaks", [x.label for x in api.teardown()])
    """
)


def test_cuda_api_under_the_numba_simulator() -> None:
    """On a machine with an NVIDIA GPU, `DEVPLAN_CUDA_TESTS=gpu` runs it on the GPU."""
    on_gpu = os.environ.get("DEVPLAN_CUDA_TESTS") == "gpu"
    env = {**os.environ} if on_gpu else {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    if on_gpu:  # the GPU's own compute capability instead of the simulator's
        assert lines[0].startswith("compute_version ")
        lines[0] = "compute_version 5.2"
    assert lines == [
        "compute_version 5.2",  # the simulator's device
        "exist True",
        "DeviceError cuda:0: the cuda DeviceAPI keeps all memory on the GPU, so scope(s) host "
        "cannot be host-visible; drop them from the system's host-visible or [[same_memory]] "
        'entries, or use api = "simulated"',
        "out [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]",
        "HostAccessError host code cannot access buffer %a (cuda:0 scope 'global', 8xfloat32, "
        "32 B): the host reaches memory of cuda:0 in scope 'global' only through copies "
        "(copy_data_from_to)",
        "OutOfDeviceMemoryError out of device memory on cuda:0 scope 'global': %big requests "
        "8192 bytes, capacity 8192 bytes, 64 bytes in use by 2 allocation(s)",
        "DoubleFreeError double free at f.mlir:10:3: buffer %a (cuda:0 scope 'global', "
        "8xfloat32, 32 B) was already freed at f.mlir:9:3",
        "leaks ['%b']",
    ]


def test_cuda_api_without_a_gpu_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from numba import cuda  # pyright: ignore[reportMissingTypeStubs]

    # As on a machine without an NVIDIA GPU, also where there is one.
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    with pytest.raises(DeviceError) as info:
        get_device_api("cuda")(device=Device("cuda", 0))
    assert str(info.value) == (
        "cuda:0: no CUDA GPU is available (numba.cuda.is_available() is false); describe the "
        'device with api = "simulated" to run without a GPU'
    )
