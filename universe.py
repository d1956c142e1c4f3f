"""devplan's xDSL universe: every devplan dialect and pass, for plain `xdsl-opt`.

Registered under the `xdsl.universe` entry-point group in `pyproject.toml`. Values
are zero-argument factories so that tool start-up imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _target() -> Dialect:
    from .dialects.target import TargetDialect

    return TargetDialect


def _vdev() -> Dialect:
    from .dialects.vdev import Vdev

    return Vdev


def _device() -> Dialect:
    from .dialects.device import Device

    return Device


def _kernel() -> Dialect:
    from .dialects.kernel import Kernel

    return Kernel


def _async() -> Dialect:
    from .upstream.async_ import Async

    return Async


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "target": _target,
    "vdev": _vdev,
    "device": _device,
    "kernel": _kernel,
    "async": _async,
}
"""Dialect name -> factory."""


def _classify_regions() -> type[ModulePass]:
    from .passes.classify_regions import ClassifyRegionsPass

    return ClassifyRegionsPass


def _outline_device_regions() -> type[ModulePass]:
    from .passes.outline_device_regions import OutlineDeviceRegionsPass

    return OutlineDeviceRegionsPass


def _convert_gpu_to_device() -> type[ModulePass]:
    from .passes.convert_gpu_to_device.conversion import ConvertGpuToDevicePass

    return ConvertGpuToDevicePass


def _async_to_host() -> type[ModulePass]:
    from .passes.async_to_host import AsyncToHostPass

    return AsyncToHostPass


def _elide_copies() -> type[ModulePass]:
    from .passes.elide_copies import ElideCopiesPass

    return ElideCopiesPass


def _lower_to_device() -> type[ModulePass]:
    from .passes.lower_to_device import LowerToDevicePass

    return LowerToDevicePass


def _default_pipeline() -> type[ModulePass]:
    from .passes.default_pipeline import DefaultPipelinePass

    return DefaultPipelinePass


def _plan_devices() -> type[ModulePass]:
    from .passes.plan_devices.planner import PlanDevicesPass

    return PlanDevicesPass


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "classify-regions": _classify_regions,
    "outline-device-regions": _outline_device_regions,
    "convert-gpu-to-device": _convert_gpu_to_device,
    "async-to-host": _async_to_host,
    "elide-copies": _elide_copies,
    "plan-devices": _plan_devices,
    "lower-to-device": _lower_to_device,
    "default-pipeline": _default_pipeline,
}
"""Pass name -> factory."""

UNIVERSE = Universe(all_dialects=DIALECTS, all_passes=PASSES)
