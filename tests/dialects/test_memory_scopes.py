"""Memory-scope rules without a system description: built-in scopes, what the host and
kernels reach."""

from __future__ import annotations

import pytest

from devplan.dialects.memory_scopes import (
    BUILTIN_SCOPES,
    host_can_access,
    kernel_can_reach,
    scopes_of,
)
from devplan.dialects.virtual_device import DeviceAttr

make = DeviceAttr.make


# --- memory scopes without a system --------------------------------------------------------


def test_builtin_scopes() -> None:
    assert BUILTIN_SCOPES == ("global", "shared", "local", "global.texture", "host")


def test_scopes_per_device_type() -> None:
    assert scopes_of("cuda") == ("global", "shared", "local", "host")
    assert "global.texture" in scopes_of("opencl")
    assert "host" not in scopes_of("cpu")
    assert scopes_of("dsp") == ("global",)


@pytest.mark.parametrize(
    ("memory", "visible"),
    [
        (None, True),
        (make("cpu", 0, None, "global"), True),
        (make("cpu", 1, None, "shared"), True),
        (make("cuda", 0, None, "host"), True),
        (make(None, None, None, "host"), True),
        (make("cuda", 0, None, "global"), False),
        (make("cuda", 0), False),
        (make("hexagon", 0, None, "vtcm"), False),
    ],
)
def test_host_can_access_cpu_memory_and_host_scopes_only(
    memory: DeviceAttr | None, visible: bool
) -> None:
    assert host_can_access(memory) is visible


@pytest.mark.parametrize(
    ("launch", "memory", "reachable"),
    [
        ("cpu:0", None, True),
        ("cuda:0", None, False),
        ("cuda:0", "cuda:0/global", True),
        ("cuda:0", "cuda:0", True),
        ("cuda:0", "cuda/global", True),
        ("cuda:0", "cuda:0/host", True),
        ("cuda:0", "cuda:1/global", False),
        ("cuda:0", "cpu:0/global", False),
        ("cuda:0", "cuda:0/shared", False),
        ("cuda:0", "cuda:0/local", False),
        ("cpu:0", "cuda:0/host", True),
        ("cpu:0", "cuda:0/global", False),
        ("cpu:0", "cpu:0/global", True),
        ("hexagon:0", "hexagon:0/vtcm", True),
    ],
)
def test_kernel_can_reach_global_and_host_memory_of_its_own_device(
    launch: str, memory: str | None, reachable: bool
) -> None:
    space = DeviceAttr.from_string(memory) if memory is not None else None
    assert kernel_can_reach(DeviceAttr.from_string(launch), space) is reachable
