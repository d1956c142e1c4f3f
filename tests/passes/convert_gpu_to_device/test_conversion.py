"""convert-gpu-to-device: converted programs run on the executor, and everything the
pass cannot convert is one located error (xDSL's gpu dialect is written generically).
"""

# ruff: noqa: E501  (IR lines in test programs are long)
from __future__ import annotations

import numpy as np
import pytest

import devplan
from devplan.diagnostics import DevplanError

SCALE_KERNEL = """
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<?xf32>, f32) -> (), kernel}> ({
    ^bb0(%a: memref<?xf32>, %k: f32):
      %c0 = arith.constant 0 : index
      %i = "gpu.global_id"() <{dimension = #gpu<dim x>}> : () -> index
      %n = memref.dim %a, %c0 : memref<?xf32>
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %a[%i] : memref<?xf32>
        %s = arith.mulf %v, %k : f32
        memref.store %s, %a[%i] : memref<?xf32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "scale"} : () -> ()
  }) : () -> ()
"""

SYNC = f"""
builtin.module attributes {{gpu.container_module}} {{
{SCALE_KERNEL}
  func.func @main(%h: memref<?xf32>, %k: f32, %n: index) -> memref<?xf32> {{
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : i32
    %c63 = arith.constant 63 : index
    %c64i = arith.constant 64 : index
    %m = arith.addi %n, %c63 : index
    %g = arith.divui %m, %c64i : index
    %gi = arith.index_cast %g : index to i32
    %one = arith.constant 1 : i32
    %d = "gpu.alloc"(%n) <{{operandSegmentSizes = array<i32: 0, 1, 0>}}> : (index) -> memref<?xf32>
    "gpu.memcpy"(%d, %h) {{operandSegmentSizes = array<i32: 0, 1, 1>}} : (memref<?xf32>, memref<?xf32>) -> ()
    "gpu.launch_func"(%gi, %one, %one, %c64, %one, %one, %d, %k) <{{kernel = @kernels::@scale, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}}> : (i32, i32, i32, i32, i32, i32, memref<?xf32>, f32) -> ()
    "gpu.memcpy"(%h, %d) {{operandSegmentSizes = array<i32: 0, 1, 1>}} : (memref<?xf32>, memref<?xf32>) -> ()
    "gpu.dealloc"(%d) {{operandSegmentSizes = array<i32: 0, 1>}} : (memref<?xf32>) -> ()
    func.return %h : memref<?xf32>
  }}
}}
"""

ASYNC = f"""
builtin.module attributes {{gpu.container_module}} {{
{SCALE_KERNEL}
  func.func @main(%h: memref<?xf32>, %k: f32, %n: index) -> memref<?xf32> {{
    %c1 = arith.constant 1 : index
    %t0 = "gpu.wait"() : () -> !gpu.async.token
    %d, %t1 = "gpu.alloc"(%t0, %n) <{{operandSegmentSizes = array<i32: 1, 1, 0>}}> : (!gpu.async.token, index) -> (memref<?xf32>, !gpu.async.token)
    %t2 = "gpu.memcpy"(%t1, %d, %h) {{operandSegmentSizes = array<i32: 1, 1, 1>}} : (!gpu.async.token, memref<?xf32>, memref<?xf32>) -> !gpu.async.token
    %t3 = "gpu.launch_func"(%t2, %n, %c1, %c1, %c1, %c1, %c1, %d, %k) <{{kernel = @kernels::@scale, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}}> : (!gpu.async.token, index, index, index, index, index, index, memref<?xf32>, f32) -> !gpu.async.token
    %t4 = "gpu.launch_func"(%t3, %n, %c1, %c1, %c1, %c1, %c1, %d, %k) <{{kernel = @kernels::@scale, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}}> : (!gpu.async.token, index, index, index, index, index, index, memref<?xf32>, f32) -> !gpu.async.token
    %t5 = "gpu.memcpy"(%t4, %h, %d) {{operandSegmentSizes = array<i32: 1, 1, 1>}} : (!gpu.async.token, memref<?xf32>, memref<?xf32>) -> !gpu.async.token
    %t6 = "gpu.wait"(%t5) : (!gpu.async.token) -> !gpu.async.token
    %t7 = "gpu.dealloc"(%t6, %d) {{operandSegmentSizes = array<i32: 1, 1>}} : (!gpu.async.token, memref<?xf32>) -> !gpu.async.token
    "gpu.wait"(%t7) : (!gpu.async.token) -> ()
    func.return %h : memref<?xf32>
  }}
}}
"""


def converted(source: str, device: str = "cuda:0") -> str:
    module = devplan.parse(source)
    devplan.apply(module, f'convert-gpu-to-device{{device="{device}"}}')
    return str(module)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_sync_program_runs_after_conversion(backend: str) -> None:
    module = devplan.parse(SYNC)
    devplan.apply(module, 'convert-gpu-to-device{device="cuda:0"}')
    h = np.arange(200, dtype=np.float32)
    result = devplan.execute(module, [h.copy(), 2.5, 200], kernel_backend=backend)
    np.testing.assert_array_equal(result.outputs[0], h * 2.5)
    assert not result.leaks


def test_async_program_runs_after_conversion_on_the_second_gpu() -> None:
    module = devplan.parse(ASYNC)
    devplan.apply(module, 'convert-gpu-to-device{device="cuda:1"}')
    assert '#vdev.device<"cuda", 1, ?, "global">' in str(module)
    h = np.arange(10, dtype=np.float32)
    result = devplan.execute(module, [h.copy(), 3.0, 10])
    np.testing.assert_array_equal(result.outputs[0], h * 9)
    assert not result.leaks


def test_converted_program_is_classified_and_outlined() -> None:
    module = devplan.parse(SYNC)
    devplan.apply(
        module, 'convert-gpu-to-device{device="cuda:0"},outline-device-regions,classify-regions'
    )
    text = str(module)
    assert (
        'func.func @main(%h: memref<?xf32>, %k: f32, %n: index) -> memref<?xf32> attributes {device.region = "mixed"}'
        in text
    )
    assert "func.func @main_cuda0" in text
    h = np.arange(100, dtype=np.float32)
    result = devplan.execute(module, [h.copy(), 2.0, 100])
    np.testing.assert_array_equal(result.outputs[0], h * 2)


def test_container_module_attribute_is_dropped() -> None:
    assert "gpu.container_module" not in converted(SYNC)
    assert '"gpu.' not in converted(SYNC)


# ---- refusals: one located error each ------------------------------------------------


def error_of(source: str, pipeline: str = 'convert-gpu-to-device{device="cuda:0"}') -> str:
    module = devplan.parse(source)
    with pytest.raises(DevplanError) as e:
        devplan.apply(module, pipeline)
    return str(e.value)


def line_of(source: str, needle: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if needle in line)


def test_gpu_launch_with_a_body_is_outlined_and_runs() -> None:
    source = """
func.func @main(%h: memref<4xf32>) -> memref<4xf32> {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %d = "gpu.alloc"() <{operandSegmentSizes = array<i32: 0, 0, 0>}> : () -> memref<4xf32>
  "gpu.launch"(%c1, %c1, %c1, %c4, %c1, %c1) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
  ^bb0(%a0: index, %a1: index, %a2: index, %tx: index, %a4: index, %a5: index, %a6: index, %a7: index, %a8: index, %a9: index, %a10: index, %a11: index):
    %i = arith.index_cast %tx : index to i32
    %f = arith.sitofp %i : i32 to f32
    memref.store %f, %d[%tx] : memref<4xf32>
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  "gpu.memcpy"(%h, %d) {operandSegmentSizes = array<i32: 0, 1, 1>} : (memref<4xf32>, memref<4xf32>) -> ()
  "gpu.dealloc"(%d) {operandSegmentSizes = array<i32: 0, 1>} : (memref<4xf32>) -> ()
  func.return %h : memref<4xf32>
}
"""
    module = devplan.parse(source)
    devplan.apply(module, "convert-gpu-to-device")
    text = str(module)
    assert "kernel.module @main_kernel" in text
    assert "device.launch @main_kernel::@main_kernel" in text
    result = devplan.execute(module, [np.zeros(4, np.float32)], kernel_backend="numpy")
    np.testing.assert_array_equal(result.outputs[0], [0, 1, 2, 3])


def test_generic_all_reduce_with_xdsl_kind_attribute_converts() -> None:
    source = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (f32) -> (), kernel}> ({
    ^bb0(%x: f32):
      %r = "gpu.all_reduce"(%x) <{op = #gpu<all_reduce_op add>}> ({
      }) : (f32) -> f32
      "gpu.return"() : () -> ()
    }) {sym_name = "sum"} : () -> ()
  }) : () -> ()
}
"""
    module = devplan.parse(source)
    devplan.apply(module, "convert-gpu-to-device")
    text = str(module)
    assert "gpu.all_reduce" not in text
    assert "kernel.alloc_shared" in text
    assert "arith.addf" in text


def test_host_shared_alloc_is_the_devices_host_memory() -> None:
    source = """
func.func @main(%n: index) {
  %d = "gpu.alloc"(%n) <{operandSegmentSizes = array<i32: 0, 1, 0>, hostShared}> : (index) -> memref<?xf32>
  func.return
}
"""
    module = devplan.parse(source)
    devplan.apply(module, "convert-gpu-to-device")
    assert 'device.alloc(%n) : memref<?xf32, #vdev.device<"cuda", 0, ?, "host">>' in str(module)


def test_token_leaving_the_gpu_ops_is_refused_at_its_user() -> None:
    source = """
func.func @main() -> !gpu.async.token {
  %t = "gpu.wait"() : () -> !gpu.async.token
  func.return %t : !gpu.async.token
}
"""
    assert error_of(source).startswith("<string>:4:3: error: 'func.return' uses a !gpu.async.token")


def test_non_kernel_gpu_func_is_refused() -> None:
    source = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = () -> ()}> ({
      "gpu.return"() : () -> ()
    }) {sym_name = "helper"} : () -> ()
  }) : () -> ()
}
"""
    assert error_of(source).startswith("<string>:4:5: error: gpu.func @helper is not a kernel")


def test_global_memory_space_one_in_gpu_input_becomes_device_memory() -> None:
    # The vdev verifier leaves gpu-dialect input's integer memory spaces to this pass.
    kernel = SCALE_KERNEL.replace("memref<?xf32>", "memref<?xf32, 1>")
    text = converted(SYNC.replace(SCALE_KERNEL, kernel))
    assert (
        'kernel.func @scale(%a: memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>, %k: f32)'
        in text
    )


def test_workgroup_memory_space_is_refused() -> None:
    source = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<4xf32, 3>) -> (), kernel}> ({
    ^bb0(%a: memref<4xf32, 3>):
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}
"""
    message = error_of(source)
    assert message.startswith(
        "<string>:4:5: error: memory space 3 : i64 of memref<4xf32, 3 : i64> has no devplan equivalent"
    )


def test_host_memory_passed_to_a_kernel_is_refused_at_the_launch() -> None:
    source = f"""
builtin.module attributes {{gpu.container_module}} {{
{SCALE_KERNEL}
  func.func @main(%k: f32) {{
    %c1 = arith.constant 1 : index
    %h = memref.alloc(%c1) : memref<?xf32>
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1, %h, %k) <{{kernel = @kernels::@scale, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}}> : (index, index, index, index, index, index, memref<?xf32>, f32) -> ()
    func.return
  }}
}}
"""
    message = error_of(source)
    assert message.startswith(
        f"<string>:{line_of(source, 'gpu.launch_func')}:5: error: memref<?xf32> comes from 'memref.alloc' in host memory"
    )


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("cuda", "device 'cuda' must name a device type and id"),
        ("cuda:x", "invalid device 'cuda:x'"),
        ("tpu:0", "no target for device type 'tpu'"),
    ],
)
def test_bad_device_option_is_a_clear_error(option: str, expected: str) -> None:
    message = error_of(SYNC, f'convert-gpu-to-device{{device="{option}"}}')
    assert message.startswith("error: convert-gpu-to-device: ")
    assert expected in message


@pytest.mark.parametrize(
    ("op", "line"),
    [
        ('%t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index', 3),
        ('%g = "gpu.global_id"() <{dimension = #gpu<dim y>}> : () -> index', 3),
        ('"gpu.barrier"() : () -> ()', 3),
    ],
)
def test_kernel_only_gpu_op_in_host_code_is_refused_at_the_op(op: str, line: int) -> None:
    source = f"""
func.func @main() {{
  {op}
  func.return
}}
"""
    name = op.split('"')[1]
    assert error_of(source, "convert-gpu-to-device").startswith(
        f"<string>:{line}:3: error: '{name}' is outside a gpu.func; it can only be converted inside a kernel"
    )
