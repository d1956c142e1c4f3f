"""The `simulated` DeviceAPI: an accelerator whose memory the host cannot touch.

Buffers are opaque handles; their bytes live inside the API object. The host gets
nothing but copies (`host_view` raises), except in the scopes the system declares
host-visible (such as a GPU's pinned `"host"` scope). Kernels see device memory
through `device_view` only while they run on this device. Each scope's capacity is
enforced. Attributes come from the constructor (the `Runtime` fills them from the
system: the device's target and description); `total_global_memory`,
`available_global_memory` and `max_shared_memory_per_block` default to what the
scopes say.
"""

from __future__ import annotations

from .device_api import DeviceAPI


class SimulatedDeviceAPI(DeviceAPI):
    """Isolated device memory with per-scope capacities."""

    api_name = "simulated"
    renewable = True  # all its state is the base class's

    def host_can_access(self, scope: str) -> bool:
        return scope in self.host_scopes

    def _get_attr(self, kind: str) -> object | None:
        if kind in self.attrs:
            return self.attrs[kind]
        global_scope = self.scopes["global"]
        if kind == "exist":
            return True
        if kind == "total_global_memory":
            return global_scope.capacity
        if kind == "available_global_memory":
            if global_scope.capacity is None:
                return None
            return global_scope.capacity - global_scope.in_use
        if kind == "max_shared_memory_per_block" and "shared" in self.scopes:
            return self.scopes["shared"].capacity
        return None
