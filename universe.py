"""devplan's xDSL universe: every devplan dialect and pass, for plain `xdsl-opt`.

Registered under the `xdsl.universe` entry-point group in `pyproject.toml`. Values
are zero-argument factories so that tool start-up imports nothing heavy; the passes
come from `passes/registry.py`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.universe import Universe

from .passes.registry import PASSES


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


UNIVERSE = Universe(all_dialects=DIALECTS, all_passes=PASSES)
