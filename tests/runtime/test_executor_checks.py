# ruff: noqa: E501  (IR lines are as long as IR lines are)
"""Run-time checks of the executor: each fault is one message naming the op (with its
location), the device and the buffer; nothing is clamped, wrapped or ignored."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import devplan
from devplan.system.description import System

G = '#vdev.device<"cuda", 0, ?, "global">'
"""Global memory of cuda:0 (the host cannot touch it)."""
H = '#vdev.device<"cuda", 0, ?, "host">'
"""Host-visible memory of cuda:0."""


def failure(text: str, *inputs: Any, **options: Any) -> list[str]:
    """The lines of the error a run of `text` raises (the file is called <string>)."""
    with pytest.raises(devplan.DevplanError) as info:
        devplan.execute(devplan.parse(text), list(inputs), **options)
    return str(info.value).splitlines()


def test_out_of_bounds_kernel_access_names_thread_block_buffer_and_launch() -> None:
    lines = failure(
        f"""kernel.module @k target #target.target<"cuda"> {{
  kernel.func @bad(%a: memref<?xf32>) {{
    %tx = kernel.thread_id x
    %v = memref.load %a[%tx] : memref<?xf32>
    memref.store %v, %a[%tx] : memref<?xf32>
    kernel.return
  }}
}}
func.func @main() {{
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %d = device.alloc() : memref<4xf32, {G}>
  device.launch @k::@bad on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c8, %c1, %c1) args(%d) : memref<4xf32, {G}>
  device.free %d : memref<4xf32, {G}>
  func.return
}}
"""
    )
    assert lines[0] == (
        "<string>:4:5: error: in kernel @bad: out-of-bounds load from argument 0 (%a): "
        "index [4] is outside shape (4) (block (0, 0, 0), thread (4, 0, 0))"
    )
    assert lines[3] == "<string>:13:3: note: @k::@bad launched here on cuda:0"


def test_host_code_cannot_read_device_memory() -> None:
    lines = failure(
        f"""func.func @main() -> f32 {{
  %c0 = arith.constant 0 : index
  %d = device.alloc() : memref<4xf32, {G}>
  %v = memref.load %d[%c0] : memref<4xf32, {G}>
  device.free %d : memref<4xf32, {G}>
  func.return %v : f32
}}
"""
    )
    assert lines[0] == (
        f"<string>:4:3: error: 'memref.load' in host code reads memory of {G}: host code "
        "cannot access buffer %d at <string>:3:3 (cuda:0 scope 'global', 4xfloat32, 16 B): "
        "the host reaches memory of cuda:0 in scope 'global' only through copies "
        "(copy_data_from_to)"
    )


def test_host_code_may_use_a_host_visible_scope_of_a_device() -> None:
    h = '#vdev.device<"cuda", 0, ?, "host">'
    result = devplan.execute(
        devplan.parse(
            f"""func.func @main() -> f32 {{
  %c0 = arith.constant 0 : index
  %x = arith.constant 2.5 : f32
  %d = device.alloc() : memref<4xf32, {h}>
  memref.store %x, %d[%c0] : memref<4xf32, {h}>
  %v = memref.load %d[%c0] : memref<4xf32, {h}>
  device.free %d : memref<4xf32, {h}>
  func.return %v : f32
}}
"""
        ),
        [],
    )
    assert result.outputs == [np.float32(2.5)]


def test_launch_argument_on_another_device_is_an_error() -> None:
    lines = failure(
        """kernel.module @k target #target.target<"cuda"> {
  kernel.func @touch(%a: memref<?xf32>) {
    kernel.return
  }
}
func.func @on1(%x: memref<4xf32, #vdev.device<"cuda">>) {
  %c1 = arith.constant 1 : index
  device.launch @k::@touch on #vdev.device<"cuda", 1> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%x) : memref<4xf32, #vdev.device<"cuda">>
  func.return
}
func.func @main() {
  %d = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0>>
  %x = "memref.memory_space_cast"(%d) : (memref<4xf32, #vdev.device<"cuda", 0>>) -> memref<4xf32, #vdev.device<"cuda">>
  func.call @on1(%x) : (memref<4xf32, #vdev.device<"cuda">>) -> ()
  device.free %d : memref<4xf32, #vdev.device<"cuda", 0>>
  func.return
}
"""
    )
    assert lines[0] == (
        "<string>:8:3: error: 'device.launch' kernel @k::@touch (<string>:8:3) on cuda:1 got "
        "buffer %d at <string>:12:3 (cuda:0 scope 'global', 4xfloat32, 16 B) as argument 0; "
        "kernels reach only memory of their own device"
    )


def test_copy_into_a_freed_buffer_names_the_alloc_and_the_free() -> None:
    lines = failure(
        f"""func.func @main(%h: memref<4xf32>) {{
  %d = device.alloc() : memref<4xf32, {G}>
  device.free %d : memref<4xf32, {G}>
  device.copy %h to %d : memref<4xf32> to memref<4xf32, {G}>
  func.return
}}
""",
        np.ones(4, np.float32),
    )
    assert lines[0] == (
        "<string>:4:3: error: 'device.copy' use after free in copy %h -> %d (<string>:4:3): "
        "buffer %d at <string>:2:3 (cuda:0 scope 'global', 4xfloat32, 16 B) was freed at "
        "<string>:3:3"
    )


def test_double_free_names_both_frees_and_the_alloc() -> None:
    lines = failure(
        f"""func.func @main() {{
  %d = device.alloc() : memref<4xf32, {G}>
  device.free %d : memref<4xf32, {G}>
  device.free %d : memref<4xf32, {G}>
  func.return
}}
"""
    )
    assert lines[0] == (
        "<string>:4:3: error: 'device.free' double free at <string>:4:3: buffer %d at "
        "<string>:2:3 (cuda:0 scope 'global', 4xfloat32, 16 B) was already freed at "
        "<string>:3:3"
    )


def test_host_double_dealloc_names_the_first_dealloc() -> None:
    lines = failure(
        """func.func @main() {
  %h = memref.alloc() : memref<4xf32>
  memref.dealloc %h : memref<4xf32>
  memref.dealloc %h : memref<4xf32>
  func.return
}
"""
    )
    assert lines[0] == (
        "<string>:4:3: error: 'memref.dealloc' double free: %h was already freed by "
        "memref.dealloc at <string>:3:3"
    )


def test_host_use_after_dealloc() -> None:
    lines = failure(
        """func.func @main() -> f32 {
  %c0 = arith.constant 0 : index
  %h = memref.alloc() : memref<4xf32>
  memref.dealloc %h : memref<4xf32>
  %v = memref.load %h[%c0] : memref<4xf32>
  func.return %v : f32
}
"""
    )
    assert lines[0] == (
        "<string>:5:3: error: 'memref.load' uses %h, host memory freed by memref.dealloc at "
        "<string>:4:3"
    )


def test_out_of_device_memory_names_device_scope_capacity_request_and_use(
    simulated_system: Callable[..., System],
) -> None:
    lines = failure(
        f"""func.func @main() {{
  %a = device.alloc() : memref<200xf32, {G}>
  %b = device.alloc() : memref<100xf32, {G}>
  device.free %a : memref<200xf32, {G}>
  device.free %b : memref<100xf32, {G}>
  func.return
}}
""",
        system=simulated_system({"cuda:0": {"global": "1 KiB"}}),
    )
    assert lines[0] == (
        "<string>:3:3: error: 'device.alloc' out of device memory on cuda:0 scope 'global': "
        "%b at <string>:3:3 requests 400 bytes, capacity 1024 bytes, 800 bytes in use by "
        "1 allocation(s)"
    )


def test_a_simulated_allocation_the_machine_cannot_hold_is_out_of_host_memory_at_the_op(
    simulated_system: Callable[..., System],
) -> None:
    # Within the scope's declared 2,000,000 TiB, but 1 EiB exceeds any machine's address
    # space; NumPy's MemoryError was reported unlocated, as a large *input* to the run.
    big = f"memref<268435456x1073741824xf32, {G}>"
    lines = failure(
        f"""func.func @main() {{
  %big = device.alloc() : {big}
  device.free %big : {big}
  func.return
}}
""",
        system=simulated_system({"cuda:0": {"global": "2000000 TiB"}}),
    )
    assert lines[0] == (
        "<string>:2:3: error: 'device.alloc' out of host memory: %big at <string>:2:3 on "
        f"cuda:0 requests {2**60} bytes, which this machine cannot give (cuda:0 keeps its "
        "memory in host memory)"
    )


def test_host_read_of_a_pending_async_write_before_waiting() -> None:
    lines = failure(
        f"""func.func @main(%h: memref<4xf32>) -> f32 {{
  %c0 = arith.constant 0 : index
  %d = device.alloc() : memref<4xf32, {G}>
  device.copy %h to %d : memref<4xf32> to memref<4xf32, {G}>
  %r = memref.alloc() : memref<4xf32>
  %t = device.copy_async [] %d to %r : memref<4xf32, {G}> to memref<4xf32>
  %v = memref.load %r[%c0] : memref<4xf32>
  device.wait %t
  device.free %d : memref<4xf32, {G}>
  func.return %v : f32
}}
""",
        np.ones(4, np.float32),
    )
    assert lines[0] == (
        "<string>:7:3: error: 'memref.load' host reads %r (host memory, 4xfloat32) while it "
        "has a pending async write: copy %d -> %r (<string>:6:3) (token #1 on stream "
        "cuda:0/s1); wait on its token first (device.wait)"
    )


def test_reading_after_the_wait_sees_the_copied_data() -> None:
    result = devplan.execute(
        devplan.parse(
            f"""func.func @main(%h: memref<4xf32>) -> f32 {{
  %c3 = arith.constant 3 : index
  %d = device.alloc() : memref<4xf32, {G}>
  %t0 = device.copy_async [] %h to %d : memref<4xf32> to memref<4xf32, {G}>
  %r = memref.alloc() : memref<4xf32>
  %t1 = device.copy_async [%t0] %d to %r : memref<4xf32, {G}> to memref<4xf32>
  device.wait %t1
  %v = memref.load %r[%c3] : memref<4xf32>
  device.free %d : memref<4xf32, {G}>
  func.return %v : f32
}}
"""
        ),
        [np.arange(4, dtype=np.float32)],
    )
    assert result.outputs == [np.float32(3.0)]


LEAKY = f"""func.func @main() {{
  %d = device.alloc() : memref<4xf32, {G}>
  func.return
}}
"""


def test_leaks_are_reported() -> None:
    result = devplan.execute(devplan.parse(LEAKY), [])
    assert [b.label for b in result.leaks] == ["%d at <string>:2:3"]
    assert result.report.leaks == [
        "buffer %d at <string>:2:3 (cuda:0 scope 'global', 4xfloat32, 16 B)"
    ]


def test_leaks_are_an_error_when_strict() -> None:
    assert failure(LEAKY, strict=True) == [
        "error: 1 device buffer(s) leaked at the end of @main (never freed): buffer %d at "
        "<string>:2:3 (cuda:0 scope 'global', 4xfloat32, 16 B)"
    ]


def test_block_larger_than_the_device_allows_is_a_run_time_error() -> None:
    lines = failure(
        """kernel.module @k target #target.target<"cuda"> {
  kernel.func @nop() {
    kernel.return
  }
}
func.func @main(%n: index) {
  %c1 = arith.constant 1 : index
  device.launch @k::@nop on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%n, %c1, %c1) args()
  func.return
}
""",
        4096,
    )
    assert lines[0] == (
        "<string>:8:3: error: 'device.launch' block (4096, 1, 1) has 4096 threads, more than "
        "max_threads_per_block = 1024 of cuda:0"
    )


BLOCK_OF_N_ALONG_Z = """kernel.module @k target #target.target<"cuda"> {
  kernel.func @nop() {
    kernel.return
  }
}
func.func @main(%n: index) {
  %c1 = arith.constant 1 : index
  device.launch @k::@nop on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %n) args()
  func.return
}
"""


def test_block_beyond_cudas_64_along_z_is_a_run_time_error() -> None:
    lines = failure(BLOCK_OF_N_ALONG_Z, 128)
    assert lines[0] == (
        "<string>:8:3: error: 'device.launch' block (1, 1, 128) on cuda:0: 128 threads along z, "
        "more than the limit of 64 (max_thread_dimensions [1024, 1024, 64])"
    )


def test_block_of_64_along_z_runs() -> None:
    result = devplan.execute(devplan.parse(BLOCK_OF_N_ALONG_Z), [64])
    assert result.outputs == []
    assert result.report.devices["cuda:0"].launches == 1


def test_empty_grid_is_an_error_not_a_no_op() -> None:
    lines = failure(
        """kernel.module @k target #target.target<"cuda"> {
  kernel.func @nop() {
    kernel.return
  }
}
func.func @main(%n: index) {
  %c1 = arith.constant 1 : index
  device.launch @k::@nop on #vdev.device<"cuda", 0> grid(%n, %c1, %c1) block(%c1, %c1, %c1) args()
  func.return
}
""",
        0,
    )
    assert lines[0] == (
        "<string>:8:3: error: 'device.launch' grid (0, 1, 1) on cuda:0: every size must be "
        "at least 1"
    )


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
    from devplan.system.description import System, SystemDescriptionError

    with pytest.raises(SystemDescriptionError) as info:
        System.from_text(
            _SYSTEM_WITH_GPU_ATTRS.format(attrs=f"max_threads_per_block = {value}"), "sys.toml"
        )
    assert str(info.value).startswith(
        "sys.toml: device[1]: attrs.max_threads_per_block: expected an integer, got "
    )


def test_integer_device_attribute_bounds_launches() -> None:
    from devplan.system.description import System

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
    from devplan.runtime.runtime import Runtime
    from devplan.system.description import System
    from devplan.system.devices import Device

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


def _identity(type_: str) -> str:
    return f"func.func @main(%x: {type_}) -> {type_} {{\n  func.return %x : {type_}\n}}\n"


def test_integer_argument_beyond_every_float_is_an_error_not_a_crash() -> None:
    # float(10**400) raises OverflowError: it was an internal error, not a user one.
    lines = failure(_identity("f64"), 10**400)
    assert lines == [
        "error: argument 0 %x of @main(f64) -> f64 is f64, and 100000... (an integer of "
        "401 digits) does not fit in it"
    ]


@pytest.mark.parametrize(
    ("type_", "value", "valid"), [("si8", 200, "-128 to 127"), ("ui8", -1, "0 to 255")]
)
def test_signed_and_unsigned_arguments_are_checked_against_their_own_range(
    type_: str, value: int, valid: str
) -> None:
    # Both were wrapped silently (si8 200 ran as -56, ui8 -1 as 255).
    assert failure(_identity(type_), value) == [
        f"error: argument 0 %x of @main({type_}) -> {type_} is {type_}, and {value} does "
        f"not fit in it (valid: {valid})"
    ]


def test_a_signless_argument_takes_its_bits_read_as_signed_or_unsigned() -> None:
    result = devplan.execute(devplan.parse(_identity("i8")), [200])
    assert result.outputs == [np.int8(-56)]


def test_a_masked_array_argument_is_refused_rather_than_its_mask_ignored() -> None:
    masked = np.ma.array(np.arange(3, dtype=np.float32), mask=[False, True, False])
    lines = failure(_identity("memref<3xf32>"), masked)  # ran on [0, 1, 2] before
    assert lines == [
        "error: argument 0 %x of @main(memref<3xf32>) -> memref<3xf32> is memref<3xf32> and "
        "got a masked array, whose mask devplan would ignore; pass the values to use "
        "(.filled(value), or .data to use the masked ones)"
    ]


def test_a_bf16_argument_of_floats_is_told_how_to_give_bit_patterns() -> None:
    # The message said "convert it with .astype", and .astype(np.uint16) turns 1.5 into 1.
    values = np.array([1.5, -0.25], np.float32)
    lines = failure(_identity("memref<2xbf16>"), values)
    assert len(lines) == 1
    assert ".astype(np.uint16) would give integer values, not bits" in lines[0]
    assert "(convert it with .astype)" not in lines[0]
    bits = (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    result = devplan.execute(devplan.parse(_identity("memref<2xbf16>")), [bits])
    np.testing.assert_array_equal(result.outputs[0], [0x3FC0, 0xBE80])


@pytest.mark.parametrize("type_", ["memref<*xf32>", "memref<4xf128>", "i128"])
def test_random_inputs_name_the_argument_whose_type_the_executor_cannot_hold(type_: str) -> None:
    from devplan.runtime.executor import random_inputs

    # It said "error: the executor does not support values of type ...", naming no argument.
    with pytest.raises(devplan.DevplanError) as info:
        random_inputs(devplan.parse(_identity(type_)), seed=0)
    assert str(info.value) == (
        f"error: argument 0 %x of @main({type_}) -> {type_} has type {type_}, which the "
        "executor cannot pass in"
    )


def test_a_result_the_executor_cannot_return_is_located_at_the_return() -> None:
    # Host code computes in i4; only returning it has no NumPy type (it was unlocated).
    assert failure(_identity("i4"), 3) == [
        "<string>:2:3: error: 'func.return' result 0 of @main is i4, which the executor "
        "cannot return (it has no NumPy type for it)",
        "  func.return %x : i4",
        "  ^",
    ]


@pytest.mark.parametrize(
    ("seed", "given"),
    [(-1, "int -1"), (1.5, "float 1.5"), (True, "bool True"), (None, "NoneType None")],
)
def test_random_inputs_seed_must_be_a_whole_number_0_or_more(seed: object, given: str) -> None:
    from devplan.runtime.executor import random_inputs

    # -1 and 1.5 were NumPy's ValueError and TypeError; None drew other inputs every call.
    with pytest.raises(devplan.DevplanError) as info:
        random_inputs(devplan.parse(_identity("f32")), seed=seed)  # type: ignore[arg-type]
    assert str(info.value) == (
        f"error: random_inputs: seed must be a whole number 0 or more, got {given}"
    )


def test_a_level_1_tensor_too_large_for_the_host_is_an_error_at_its_op(
    simulated_system: Callable[..., System],
) -> None:
    """The error is at the tensor op (its line and caret) and names the allocation, not
    the `memref.alloc` the op was lowered to, which the user never wrote."""
    lines = failure(
        """func.func @main() -> tensor<1024x1024x512xf32> {
  %e = tensor.empty() : tensor<1024x1024x512xf32>
  func.return %e : tensor<1024x1024x512xf32>
}
""",
        system=simulated_system({}),
    )
    assert lines[0] == (
        "<string>:2:3: error: allocating memref<1024x1024x512xf32> needs 2147483648 bytes: "
        "out of host memory (the host holds 1073741824 bytes)"
    )
    assert lines[1] == "  %e = tensor.empty() : tensor<1024x1024x512xf32>"
