"""The `cpu` DeviceAPI: memory in NumPy arrays that host code may read and write.

TVM's `cpu_device_api.cc`: `exist` is true, `total_global_memory` is the machine's
RAM (or the capacity the system gives the global scope), every other attribute is
unsupported (None) unless the system sets it. Kernels of a CPU device may take plain
host arrays. Unlike TVM (whose CPU streams are null), streams work as on any device,
so async programs are checked the same way wherever they run.
"""

from __future__ import annotations

import os

from .device_api import DeviceAPI


def physical_memory_bytes() -> int | None:
    """Physical RAM of this machine (TVM's CPU `kTotalGlobalMemory`), None if unknown."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


class CPUDeviceAPI(DeviceAPI):
    """Host memory: every scope of a CPU device is visible to host code."""

    api_name = "cpu"
    renewable = True  # all its state is the base class's

    def host_can_access(self, scope: str) -> bool:
        return True

    @property
    def kernels_reach_host_memory(self) -> bool:
        return True

    def _get_attr(self, kind: str) -> object | None:
        if kind in self.attrs:
            return self.attrs[kind]
        if kind == "exist":
            return True
        if kind == "total_global_memory":
            capacity = self.scopes["global"].capacity
            return capacity if capacity is not None else physical_memory_bytes()
        return None
