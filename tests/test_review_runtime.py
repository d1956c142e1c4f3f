# ruff: noqa: E501  (IR lines are as long as IR lines are)
"""Runtime review: paths around the executor's checks that must end in one located
message, never a Python exception or a silently ignored value."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import devplan

G = '#vdev.device<"cuda", 0, ?, "global">'
"""Global memory of cuda:0 (the host cannot touch it)."""
H = '#vdev.device<"cuda", 0, ?, "host">'
"""Host-visible memory of cuda:0."""


def failure(text: str, *inputs: Any, **options: Any) -> list[str]:
    """The lines of the error a run of `text` raises (the file is called <string>)."""
    with pytest.raises(devplan.DevplanError) as info:
        devplan.execute(devplan.parse(text), list(inputs), **options)
    return str(info.value).splitlines()


def _load_through_space_cast(space: str) -> str:
    return f"""func.func @main() -> f32 {{
  %c0 = arith.constant 0 : index
  %d = device.alloc() : memref<4xf32, {space}>
  %h = "memref.memory_space_cast"(%d) : (memref<4xf32, {space}>) -> memref<4xf32>
  %v = memref.load %h[%c0] : memref<4xf32>
  device.free %d : memref<4xf32, {space}>
  func.return %v : f32
}}
"""


def test_space_cast_to_host_type_does_not_let_host_read_device_memory() -> None:
    lines = failure(_load_through_space_cast(G))
    assert lines[0].startswith(
        "<string>:5:3: error: 'memref.load' in host code reads memory of cuda:0: host code "
        "cannot access buffer %d"
    )


def test_space_cast_to_host_type_does_not_let_host_write_device_memory() -> None:
    lines = failure(
        f"""func.func @main() {{
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %d = device.alloc() : memref<4xf32, {G}>
  %h = "memref.memory_space_cast"(%d) : (memref<4xf32, {G}>) -> memref<4xf32>
  memref.store %one, %h[%c0] : memref<4xf32>
  device.free %d : memref<4xf32, {G}>
  func.return
}}
"""
    )
    assert lines[0].startswith("<string>:6:3: error: 'memref.store' in host code writes memory")


def test_space_cast_of_host_visible_device_memory_reads_it() -> None:
    result = devplan.execute(devplan.parse(_load_through_space_cast(H)), [])
    assert result.outputs == [np.float32(0.0)]


def test_async_launch_with_arguments_the_kernel_rejects_is_reported_at_the_launch() -> None:
    lines = failure(
        f"""kernel.module @k target #target.target<"cuda"> {{
  kernel.func @f(%a: memref<4xf32>) {{
    kernel.return
  }}
}}
func.func @main() {{
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %d = device.alloc(%c8) : memref<?xf32, {G}>
  %t = device.launch async [] @k::@f on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : memref<?xf32, {G}>
  device.wait %t
  device.free %d : memref<?xf32, {G}>
  func.return
}}
"""
    )
    assert lines[0] == (
        "<string>:10:3: error: 'device.launch' launching kernel @f: argument 0 (%a) is an "
        "array of float32 with shape (8,); the parameter is memref<4xf32>"
    )


_SYSTEM_WITH_GPU_ATTRS = """
[[device]]
type = "cpu"
id = 0
target = {{ kind = "llvm" }}
api = "cpu"
scopes = {{ global = "1 GiB" }}

[[device]]
type = "cuda"
id = 0
target = {{ kind = "cuda", arch = "sm_80" }}
api = "simulated"
scopes = {{ global = "1 GiB" }}
attrs = {{ {attrs} }}
"""


@pytest.mark.parametrize("value", ['"lots"', "1.5"])
def test_integer_device_attribute_that_is_not_an_integer_is_rejected(value: str) -> None:
    from devplan.runtime.system import System, SystemDescriptionError

    with pytest.raises(SystemDescriptionError) as info:
        System.from_text(
            _SYSTEM_WITH_GPU_ATTRS.format(attrs=f"max_threads_per_block = {value}"), "sys.toml"
        )
    assert str(info.value).startswith(
        "sys.toml: device[1]: attrs.max_threads_per_block: expected an integer, got "
    )


def test_integer_device_attribute_bounds_launches() -> None:
    from devplan.runtime.system import System

    system = System.from_text(
        _SYSTEM_WITH_GPU_ATTRS.format(attrs="max_threads_per_block = 64"), "sys.toml"
    )
    lines = failure(
        """kernel.module @k target #target.target<"cuda"> {
  kernel.func @f(%n: index) {
    kernel.return
  }
}
func.func @main() {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  device.launch @k::@f on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c128, %c1, %c1) args(%c1) : index
  func.return
}
""",
        system=system,
    )
    assert "more than max_threads_per_block = 64 of cuda:0" in lines[0]


def test_workspace_on_a_reused_page_reads_as_zeros() -> None:
    # DeviceAPI promises that a new buffer reads as zeros; a workspace that gets the
    # page of one freed before must not see what that one's kernel wrote.
    from devplan.runtime.device_api import Device
    from devplan.runtime.runtime import Runtime
    from devplan.runtime.system import System

    gpu = Device("cuda", 0)
    api = Runtime.from_system(System.default()).api(gpu)
    first = api.alloc_workspace(gpu, 64, np.float32)

    def fill(views: list[Any]) -> None:
        views[0][:] = 7

    api.launch(gpu, fill, [first], name="fill")
    api.free_workspace(gpu, first)
    second = api.alloc_workspace(gpu, 64, np.float32)
    seen: list[Any] = []

    def read(views: list[Any]) -> None:
        seen.append(views[0].copy())

    api.launch(gpu, read, [second], name="read")
    api.free_workspace(gpu, second)
    assert seen[0].tolist() == [0.0] * 16


def test_finite_float_argument_beyond_the_type_range_is_an_error() -> None:
    lines = failure(
        """func.func @main(%x: f32) -> f32 {
  func.return %x : f32
}
""",
        1e39,
    )
    assert lines == [
        "error: argument 0 %x of @main(f32) -> f32 is f32, and 1e+39 does not fit in it"
    ]


def test_infinite_float_argument_stays_infinite() -> None:
    result = devplan.execute(
        devplan.parse("func.func @main(%x: f32) -> f32 {\n  func.return %x : f32\n}\n"),
        [float("inf")],
    )
    assert result.outputs == [np.float32(np.inf)]
