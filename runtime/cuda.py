"""The `cuda` DeviceAPI: a real NVIDIA GPU through `numba.cuda` (TVM's `cuda_device_api.cc`).

Buffers are `numba.cuda` device arrays (`cudaMalloc`); the host reaches them only
through copies (`copy_to_device` / `copy_to_host`, i.e. `cudaMemcpy`), and kernels —
which must be `numba.cuda.jit` kernels, since the NumPy and Numba-CPU kernel
backends cannot run on GPU memory — get the device arrays from `device_view`.
Attributes come from the device (`MAX_THREADS_PER_BLOCK`, `WARP_SIZE`, compute
capability as `"8.0"`, the name, memory info) and the system's `attrs` override
them. Capacities of the system's scopes are enforced as on a simulated device, and
a failing `cudaMalloc` is reported as out of device memory.

Each allocation, copy and launch runs with its GPU current (`numba.cuda.gpus[id]`), so
several cuda devices each keep their buffers and run their kernels on their own GPU.

Streams are devplan's ordered, deferred streams (`scheduler.py`): each operation runs
synchronously on the GPU when its token runs, so ordering and race checks are the
same as on simulated devices; overlap is visible in the cost model, not measured.

Without a GPU the constructor raises a clear error. Under Numba's CUDA simulator
(`NUMBA_ENABLE_CUDASIM=1`) it runs on simulated device arrays, which is how the
tests exercise it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np

from ..system.devices import Device
from .device_api import Buffer, DeviceAPI, KernelArg
from .errors import DeviceError, OutOfDeviceMemoryError
from .scheduler import Scheduler
from .streams import Token

_DEVICE_ATTRIBUTES = {
    "max_threads_per_block": "MAX_THREADS_PER_BLOCK",
    "warp_size": "WARP_SIZE",
    "max_shared_memory_per_block": "MAX_SHARED_MEMORY_PER_BLOCK",
    "max_clock_rate": "CLOCK_RATE",
    "multi_processor_count": "MULTIPROCESSOR_COUNT",
    "max_registers_per_block": "MAX_REGISTERS_PER_BLOCK",
    "l2_cache_size_bytes": "L2_CACHE_SIZE",
}
"""`DeviceAttrKind` names and the numba `Device` attributes (cudaDeviceGetAttribute) they read."""


def _numba_cuda() -> Any:
    from numba import cuda  # pyright: ignore[reportMissingTypeStubs]

    return cuda


def _cuda_api_errors() -> tuple[type[Exception], ...]:
    try:
        from numba.cuda.cudadrv.driver import (  # pyright: ignore[reportMissingTypeStubs]
            CudaAPIError,
        )
    except ImportError:  # the simulator has no driver module
        return ()
    return (CudaAPIError,)


def _simulated() -> bool:
    from numba.core import config  # pyright: ignore[reportMissingTypeStubs]

    return bool(getattr(config, "ENABLE_CUDASIM", False))


def _zeroed(array: Any) -> Any:
    """`array` (fresh device memory, which cudaMalloc leaves as it was) set to zeros: a new
    buffer reads as zeros on every DeviceAPI."""
    if _simulated():
        array.copy_to_device(np.zeros(array.shape, array.dtype))
    else:
        from numba.cuda.cudadrv import driver  # pyright: ignore[reportMissingTypeStubs]

        cast(Any, driver).device_memset(array, 0, array.nbytes)  # cudaMemset
    return array


class CUDADeviceAPI(DeviceAPI):
    """An NVIDIA GPU through numba.cuda; none of its memory is visible to the host."""

    api_name = "cuda"
    kernel_backends = ("numba-cuda",)

    def __init__(
        self,
        device: Device,
        scopes: Mapping[str, int | None] | None = None,
        attrs: Mapping[str, object] | None = None,
        scheduler: Scheduler | None = None,
        host_scopes: Iterable[str] = (),
    ) -> None:
        cuda = _numba_cuda()
        if not cuda.is_available():
            raise DeviceError(
                f"{device}: no CUDA GPU is available (numba.cuda.is_available() is false); "
                'describe the device with api = "simulated" to run without a GPU'
            )
        count = len(cuda.gpus)
        if not 0 <= device.id < count:
            raise DeviceError(f"{device}: there are {count} CUDA GPU(s), ids 0 to {count - 1}")
        if visible := sorted(set(host_scopes)):
            raise DeviceError(
                f"{device}: the cuda DeviceAPI keeps all memory on the GPU, so scope(s) "
                f"{', '.join(visible)} cannot be host-visible; drop them from the system's "
                'host-visible or [[same_memory]] entries, or use api = "simulated"'
            )
        cuda.select_device(device.id)
        self._cuda = cuda
        self._context: Any = cuda.current_context()
        # Pinned host scopes would need cudaHostAlloc-backed buffers; none are offered.
        super().__init__(device, scopes, attrs, scheduler, host_scopes=())

    def host_can_access(self, scope: str) -> bool:
        return False

    def launch(
        self,
        device: Device,
        kernel: Callable[[list[Any]], None],
        args: Sequence[KernelArg],
        **options: Any,
    ) -> Token:
        """`DeviceAPI.launch`, the kernel running with this GPU current (numba.cuda
        launches on the current device)."""
        gpu = self._cuda.gpus[self.device.id]

        def on_this_gpu(views: list[Any]) -> None:
            with gpu:
                kernel(views)

        return super().launch(device, on_this_gpu, args, **options)

    def _get_attr(self, kind: str) -> object | None:
        if kind in self.attrs:
            return self.attrs[kind]
        gpu: Any = self._context.device
        if kind == "exist":
            return True
        if kind == "compute_version":
            major, minor = gpu.compute_capability
            return f"{major}.{minor}"
        if kind == "device_name":
            name = getattr(gpu, "name", None)
            return name.decode() if isinstance(name, bytes) else name
        if kind == "max_thread_dimensions":
            dims = [getattr(gpu, f"MAX_BLOCK_DIM_{axis}", None) for axis in "XYZ"]
            return None if None in dims else f"[{dims[0]}, {dims[1]}, {dims[2]}]"
        if kind in ("total_global_memory", "available_global_memory"):
            info = self._context.get_memory_info()
            value = info.total if kind == "total_global_memory" else info.free
            return int(value) if math.isfinite(value) else None
        attribute = _DEVICE_ATTRIBUTES.get(kind)
        return None if attribute is None else getattr(gpu, attribute, None)

    def _allocate_storage(self, nbytes: int, alignment: int) -> Any:
        # cudaMalloc aligns to 256 bytes (TVM checks `256 % alignment == 0`).
        if 256 % alignment:
            raise DeviceError(
                f"{self.device}: alignment {alignment} is beyond CUDA's 256-byte allocations"
            )
        try:
            with self._cuda.gpus[self.device.id]:
                return _zeroed(self._cuda.device_array(nbytes, dtype=np.uint8))
        except (MemoryError, *_cuda_api_errors()) as e:
            raise OutOfDeviceMemoryError(
                f"out of device memory on {self.device}: cudaMalloc of {nbytes} bytes failed: {e}"
            ) from None

    def _storage_of(self, buffer: Buffer, overwrite: bool = False) -> Any:
        # A reused workspace page is zeroed on the GPU (device arrays have no `fill`).
        storage = self._storage[buffer.id]
        if self._unzeroed and buffer.id in self._unzeroed:
            self._unzeroed.discard(buffer.id)
            if not overwrite:
                with self._cuda.gpus[self.device.id]:
                    _zeroed(storage)
        return storage

    def _view_array(self, storage: Any, view: Buffer) -> Any:
        """A device array strided in the base's GPU memory (the simulator's: a NumPy
        view in its array)."""
        size = view.dtype.itemsize
        strides = tuple(t * size for t in view.strides)
        if _simulated():
            from numba.cuda.simulator.cudadrv.devicearray import (  # pyright: ignore[reportMissingTypeStubs, reportMissingImports]
                FakeCUDAArray,
            )

            array: Any = storage._ary  # pyright: ignore[reportUnknownMemberType]
            strided = np.ndarray(view.shape, view.dtype, array, view.offset * size, strides)
            return FakeCUDAArray(strided)
        from numba.cuda.cudadrv.devicearray import (  # pyright: ignore[reportMissingTypeStubs]
            DeviceNDArray,
        )

        pointer = storage.gpu_data.view(view.offset * size)
        return DeviceNDArray(view.shape, strides, view.dtype, gpu_data=pointer)

    def _copy_bytes(self, src: Any, dst: Any) -> None:
        # cudaMemcpy: host arrays are NumPy arrays, everything else lives on a GPU.
        with self._cuda.gpus[self.device.id]:
            if not isinstance(dst, np.ndarray):
                dst.copy_to_device(src)
            elif not isinstance(src, np.ndarray):
                src.copy_to_host(dst)
            else:
                dst[...] = src
