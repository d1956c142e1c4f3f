"""Every devplan pass by name, as a zero-argument factory of its class.

A factory imports its pass's module only when called, so that listing the passes (tool
start-up, xdsl-opt's universe) imports none of them. `universe.py` hands this table to
xDSL's universe, where xdsl-opt, devplan-opt and `devplan.apply` find the passes.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _classify_regions() -> type[ModulePass]:
    from .classify_regions import ClassifyRegionsPass

    return ClassifyRegionsPass


def _outline_device_regions() -> type[ModulePass]:
    from .outline_device_regions import OutlineDeviceRegionsPass

    return OutlineDeviceRegionsPass


def _convert_gpu_to_device() -> type[ModulePass]:
    from .convert_gpu_to_device import ConvertGpuToDevicePass

    return ConvertGpuToDevicePass


def _async_to_host() -> type[ModulePass]:
    from .async_to_host import AsyncToHostPass

    return AsyncToHostPass


def _elide_copies() -> type[ModulePass]:
    from .elide_copies import ElideCopiesPass

    return ElideCopiesPass


def _lower_to_device() -> type[ModulePass]:
    from .lower_to_device import LowerToDevicePass

    return LowerToDevicePass


def _convert_elementwise_to_linalg() -> type[ModulePass]:
    from .convert_elementwise_to_linalg import ConvertElementwiseToLinalgPass

    return ConvertElementwiseToLinalgPass


def _linalg_generalize_named_ops() -> type[ModulePass]:
    from .linalg_generalize_named_ops import LinalgGeneralizeNamedOpsPass

    return LinalgGeneralizeNamedOpsPass


def _host_linalg_to_loops() -> type[ModulePass]:
    from .host_linalg_to_loops import HostLinalgToLoopsPass

    return HostLinalgToLoopsPass


def _default_pipeline() -> type[ModulePass]:
    from .default_pipeline import DefaultPipelinePass

    return DefaultPipelinePass


def _plan_devices() -> type[ModulePass]:
    from .plan_devices import PlanDevicesPass

    return PlanDevicesPass


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "classify-regions": _classify_regions,
    "outline-device-regions": _outline_device_regions,
    "convert-gpu-to-device": _convert_gpu_to_device,
    "async-to-host": _async_to_host,
    "elide-copies": _elide_copies,
    "plan-devices": _plan_devices,
    "convert-elementwise-to-linalg": _convert_elementwise_to_linalg,
    "generalize-named-linalg-ops": _linalg_generalize_named_ops,
    "lower-to-device": _lower_to_device,
    "host-linalg-to-loops": _host_linalg_to_loops,
    "default-pipeline": _default_pipeline,
}
"""Pass name -> factory of its class."""
