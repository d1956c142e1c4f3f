"""DeviceAPIs by name: what the `api` of a system's device means (TVM's `device_api.<name>`).

A `DeviceAPIRegistry` maps names to factories, called as `factory(device=, scopes=,
attrs=, host_scopes=, scheduler=)`. Nothing is registered when a module is imported:
`Runtime.from_system` builds the registry it looks names up in (`device_apis()`), by an
explicit call that registers the built-in APIs (`register_builtin_device_apis`: `cpu`,
`simulated`, `cuda`, `ray`) and then those a user registered for the process
(`register_device_api`), which may replace built-in ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .cpu import CPUDeviceAPI
from .cuda import CUDADeviceAPI
from .device_api import DeviceAPI
from .errors import DeviceError, UnknownDeviceAPIError
from .simulated import SimulatedDeviceAPI

DeviceAPIFactory = Callable[..., DeviceAPI]
"""Called as `factory(device=, scopes=, attrs=, host_scopes=, scheduler=)`."""


def _ray_device_api(**kwargs: Any) -> DeviceAPI:
    """The `ray` factory: its module (the actor protocol, the cluster, sockets) is imported
    when a system has a ray device, not by every runtime."""
    from .ray_device import ray_device_api

    return ray_device_api(**kwargs)


class DeviceAPIRegistry:
    """DeviceAPI factories by the name a system description gives as a device's `api`."""

    def __init__(self) -> None:
        self._factories: dict[str, DeviceAPIFactory] = {}

    def register(self, name: str, factory: DeviceAPIFactory, override: bool = False) -> None:
        """Register `factory` as `name`; a name already taken needs `override`."""
        if name in self._factories and not override:
            raise _already_registered(name)
        self._factories[name] = factory

    def get(self, name: str) -> DeviceAPIFactory:
        """The factory registered as `name`."""
        factory = self._factories.get(name)
        if factory is None:
            raise UnknownDeviceAPIError(
                f"Device API {name} is not enabled: no DeviceAPI registered as '{name}'; "
                f"registered: {', '.join(self.names())}"
            )
        return factory

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories


def register_builtin_device_apis(registry: DeviceAPIRegistry) -> None:
    """Register devplan's DeviceAPIs in `registry`: `cpu`, `simulated`, `cuda` (which
    imports numba.cuda only when a device is built) and `ray` (which imports Ray, the
    `devplan[ray]` extra, only when a device is built)."""
    registry.register("cpu", CPUDeviceAPI)
    registry.register("simulated", SimulatedDeviceAPI)
    registry.register("cuda", CUDADeviceAPI)
    registry.register("ray", _ray_device_api)


_user_apis: dict[str, DeviceAPIFactory] = {}
"""The DeviceAPIs registered for the process by `register_device_api`."""


def register_device_api(name: str, factory: DeviceAPIFactory, override: bool = False) -> None:
    """Register a DeviceAPI under `name` for every runtime this process builds from a
    system (the `api` key of a system's device); replacing a built-in or an earlier
    registration needs `override`."""
    if not override and name in device_apis():
        raise _already_registered(name)
    _user_apis[name] = factory


def device_apis() -> DeviceAPIRegistry:
    """The DeviceAPIs a runtime built now knows: the built-in ones, then the process's own
    (`register_device_api`)."""
    registry = DeviceAPIRegistry()
    register_builtin_device_apis(registry)
    for name, factory in _user_apis.items():
        registry.register(name, factory, override=True)
    return registry


def get_device_api(name: str) -> DeviceAPIFactory:
    """The factory `device_apis()` holds for `name`."""
    return device_apis().get(name)


def list_device_apis() -> list[str]:
    """The names `device_apis()` holds, sorted."""
    return device_apis().names()


def _already_registered(name: str) -> DeviceError:
    return DeviceError(
        f"a DeviceAPI named '{name}' is already registered; pass override=True to replace it"
    )


__all__ = [
    "DeviceAPIFactory",
    "DeviceAPIRegistry",
    "device_apis",
    "get_device_api",
    "list_device_apis",
    "register_builtin_device_apis",
    "register_device_api",
]
