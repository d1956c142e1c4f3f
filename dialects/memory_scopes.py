"""Memory scopes that need no system description, and who may reach memory in them.

Memory scopes are strings (`"global"`, `"shared"`, `"local"`, `"global.texture"`,
`"host"`); a system description may declare more (`"vtcm"`) and widen what the host and
kernels reach (`System.host_visible`, `System.kernel_reachable`). These are the rules
that hold without one.
"""

from __future__ import annotations

from .virtual_device import DeviceAttr

BUILTIN_SCOPES: tuple[str, ...] = ("global", "shared", "local", "global.texture", "host")
"""Scopes every devplan tool knows; a system description may declare more (`"vtcm"`)."""

DEFAULT_SCOPE = "global"
"""What an unconstrained scope means at run time (TVM: `""` is global)."""

HOST_SCOPE = "host"
"""A device's host-visible memory (pinned / mapped host memory on a GPU)."""

KERNEL_PRIVATE_SCOPES: frozenset[str] = frozenset({"shared", "local"})
"""Scopes that exist only during one launch (per block / per thread): a kernel allocates
them (`kernel.alloc_shared`); they are never passed to a kernel as arguments."""

_GPU_SCOPES = ("global", "shared", "local", "host")
DEVICE_TYPE_SCOPES: dict[str, tuple[str, ...]] = {
    "cpu": ("global", "shared", "local"),
    "cuda": _GPU_SCOPES,
    "rocm": _GPU_SCOPES,
    "vulkan": _GPU_SCOPES,
    "metal": _GPU_SCOPES,
    "webgpu": _GPU_SCOPES,
    "opencl": (*_GPU_SCOPES, "global.texture"),
}
"""Built-in scopes per device type; other types (hexagon, ext_dev, user kinds) have
`global` and whatever their system entry declares."""


def scopes_of(type_name: str) -> tuple[str, ...]:
    """The built-in memory scopes a device of this type has."""
    return DEVICE_TYPE_SCOPES.get(type_name, (DEFAULT_SCOPE,))


def effective_scope(memory: DeviceAttr | None) -> str:
    """The scope of memory on `memory`; unconstrained means `global` (None = host global)."""
    if memory is None or memory.scope is None:
        return DEFAULT_SCOPE
    return memory.scope


def host_can_access(memory: DeviceAttr | None) -> bool:
    """Whether host code may read and write memory in `memory` directly.

    Host memory (no memory space), any scope of a `cpu` device, and any device's `host`
    scope are host-visible; everything else needs a copy. A system description may
    declare more (`System.host_visible`).
    """
    if memory is None or memory.type_name == "cpu":
        return True
    return memory.scope == HOST_SCOPE


def _agree(a: DeviceAttr, b: DeviceAttr) -> bool:
    """Type and id agree where both are constrained (a `?` matches anything)."""
    return all(
        x is None or y is None or x == y
        for x, y in ((a.type_name, b.type_name), (a.device_id, b.device_id))
    )


def kernel_can_reach(launch_device: DeviceAttr, memory: DeviceAttr | None) -> bool:
    """Whether memory in `memory` may be an argument of a kernel launched on `launch_device`.

    Kernels of a `cpu` device run on the host and reach what the host can access (plain
    host memory included); other kernels reach their own device's memory (unconstrained
    type or id on either side match) in any scope but the kernel-private ones
    (`shared`, `local`). A system description may declare more (`System.kernel_reachable`).
    """
    if effective_scope(memory) in KERNEL_PRIVATE_SCOPES:
        return False
    if launch_device.type_name == "cpu":
        return host_can_access(memory)
    return memory is not None and _agree(launch_device, memory)
