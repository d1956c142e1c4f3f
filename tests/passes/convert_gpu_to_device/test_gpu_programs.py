"""MLIR-style gpu programs: the bugs found running MLIR's GPU integration tests, and the
refusals of what devplan does not convert, each a located error."""

# ruff: noqa: E501  (IR lines in test programs are long)
from __future__ import annotations

import numpy as np
import pytest

import devplan
from devplan.diagnostics import DevplanError


def run(source: str, backend: str = "numpy") -> devplan.runtime.executor.ExecutionResult:  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    module = devplan.parse(source)
    devplan.apply(module, "convert-gpu-to-device")
    return devplan.execute(module, [], entry="main", kernel_backend=backend)  # pyright: ignore[reportUnknownVariableType]


def error_of(source: str) -> str:
    with pytest.raises(DevplanError) as e:
        run(source)
    return str(e.value)


KERNEL_MODULE = """
  gpu.module @k {
    gpu.func @f(%a: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %a[%t] : memref<4xf32>
      gpu.return
    }
  }
"""


def test_callee_holding_the_launch_before_its_caller_converts_and_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = f"""
module attributes {{gpu.container_module}} {{
{KERNEL_MODULE}
  func.func @callee(%m: memref<4xf32>) {{
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @k::@f blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
    return
  }}
  func.func @main() {{
    %h = memref.alloc() : memref<4xf32>
    %m = gpu.alloc () : memref<4xf32>
    call @callee(%m) : (memref<4xf32>) -> ()
    gpu.memcpy %h, %m : memref<4xf32>, memref<4xf32>
    %u = memref.cast %h : memref<4xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    gpu.dealloc %m : memref<4xf32>
    return
  }}
  func.func private @printMemrefF32(memref<*xf32>)
}}
"""
    run(source)
    assert capsys.readouterr().out.splitlines()[1] == "[1,  1,  1,  1]"


def test_kernel_argument_from_a_call_result_gives_valid_ir() -> None:
    source = f"""
module attributes {{gpu.container_module}} {{
{KERNEL_MODULE}
  func.func @main() {{
    %c1 = arith.constant 1 : index
    %m = call @make() : () -> memref<4xf32>
    gpu.launch_func @k::@f blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.dealloc %m : memref<4xf32>
    return
  }}
  func.func @make() -> memref<4xf32> {{
    %m = gpu.alloc () : memref<4xf32>
    return %m : memref<4xf32>
  }}
}}
"""
    module = devplan.parse(source)
    devplan.apply(module, "convert-gpu-to-device")  # verifies the result
    assert 'func.func @make() -> memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>' in str(module)


def test_kernel_argument_from_a_call_returning_host_memory_is_refused() -> None:
    source = f"""
module attributes {{gpu.container_module}} {{
{KERNEL_MODULE}
  func.func @main() {{
    %c1 = arith.constant 1 : index
    %m = call @make() : () -> memref<4xf32>
    gpu.launch_func @k::@f blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    return
  }}
  func.func @make() -> memref<4xf32> {{
    %m = memref.alloc () : memref<4xf32>
    return %m : memref<4xf32>
  }}
}}
"""
    assert error_of(source).startswith(
        "<string>:16:5: error: memref<4xf32> comes from 'memref.alloc' in host memory, but is used as device memory"
    )


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_empty_kernel_runs_on_both_backends(backend: str) -> None:
    source = """
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @empty() kernel {
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@empty blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
"""
    result = run(source, backend)
    assert result.outputs == []
    assert result.report.devices["cuda:0"].launches == 1


def test_host_cast_to_an_unranked_memref_runs(capsys: pytest.CaptureFixture[str]) -> None:
    source = """
func.func @main() {
  %m = memref.alloc() : memref<2xi32>
  %u = memref.cast %m : memref<2xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}
func.func private @printMemrefI32(memref<*xi32>)
"""
    module = devplan.parse(source)
    devplan.execute(module, [], entry="main")
    assert capsys.readouterr().out.endswith("data = \n[0,  0]\n")


def test_launch_inside_an_unregistered_op_is_refused_at_the_launch() -> None:
    source = f"""
module attributes {{gpu.container_module}} {{
{KERNEL_MODULE}
  func.func @main(%m: memref<4xf32>) {{
    %c1 = arith.constant 1 : index
    "test.wrapper"() ({{
      gpu.launch_func @k::@f blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
      "test.end"() : () -> ()
    }}) : () -> ()
    return
  }}
}}
"""
    ctx = devplan.context()
    ctx.allow_unregistered = True
    module = devplan.parse(source, ctx)
    with pytest.raises(DevplanError) as e:
        devplan.apply(module, "convert-gpu-to-device")
    assert str(e.value).startswith(
        "<string>:16:7: error: 'gpu.launch_func' is inside 'test.wrapper', an op devplan does not know"
    )


def test_gpu_kernel_unit_attribute_marks_a_kernel() -> None:
    source = """
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = () -> ()}> ({
      "gpu.return"() : () -> ()
    }) {sym_name = "f", gpu.kernel} : () -> ()
  }) : () -> ()
}
"""
    module = devplan.parse(source)
    devplan.apply(module, "convert-gpu-to-device")
    assert "kernel.func @f()" in str(module)


def test_loop_written_with_branches_in_a_kernel_is_refused_at_the_branch() -> None:
    source = """
func.func @main() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    cf.br ^loop
  ^loop:
    %t = arith.constant true
    cf.cond_br %t, ^loop, ^exit
  ^exit:
    gpu.terminator
  }
  return
}
"""
    assert error_of(source).startswith(
        "<string>:8:5: error: a branch back to an earlier block (a loop in cf form) cannot be converted"
    )


def test_host_register_of_a_function_result_is_refused_at_the_register() -> None:
    source = """
func.func @main() {
  %m = call @make() : () -> memref<4xf32>
  gpu.host_register %m : memref<4xf32>
  return
}
func.func @make() -> memref<4xf32> {
  %m = memref.alloc() : memref<4xf32>
  return %m : memref<4xf32>
}
"""
    assert error_of(source).startswith(
        "<string>:4:3: error: gpu.host_register of memory that is not a memref.alloc"
    )


def test_unregistered_host_memory_passed_to_a_launch_is_refused() -> None:
    source = """
func.func @main() {
  %m = memref.alloc() : memref<4xf32>
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %f = arith.constant 1.0 : f32
    memref.store %f, %m[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}
"""
    assert "comes from 'memref.alloc' in host memory, but is used as device memory" in error_of(
        source
    )


def test_printf_with_too_few_arguments_is_refused_at_the_printf() -> None:
    source = """
func.func @main() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.printf "%d and %d\\n", %tx : index
    gpu.terminator
  }
  return
}
"""
    assert "<string>:5:5: error: " in error_of(source)
    assert "'kernel.printf' format has 2 conversion(s) for 1 argument(s)" in error_of(source)


def test_shuffle_results_match_a_numpy_model() -> None:
    """xor/down/up/idx over 50 threads (subgroups of 32), width 16, against NumPy."""
    source = """
func.func @main() {
  %out = memref.alloc() : memref<4x50xi32>
  %u = memref.cast %out : memref<4x50xi32> to memref<*xi32>
  gpu.host_register %u : memref<*xi32>
  %c1 = arith.constant 1 : index
  %c50 = arith.constant 50 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c50, %sy = %c1, %sz = %c1) {
    %v = arith.index_cast %tx : index to i32
    %o = arith.constant 5 : i32
    %w = arith.constant 16 : i32
    %m1 = arith.constant -1 : i32
    %r0 = arith.constant 0 : index
    %r1 = arith.constant 1 : index
    %r2 = arith.constant 2 : index
    %r3 = arith.constant 3 : index
    %a, %av = gpu.shuffle xor %v, %o, %w : i32
    %b, %bv = gpu.shuffle down %v, %o, %w : i32
    %c, %cv = gpu.shuffle up %v, %o, %w : i32
    %d, %dv = gpu.shuffle idx %v, %o, %w : i32
    %a2 = arith.select %av, %a, %m1 : i32
    %b2 = arith.select %bv, %b, %m1 : i32
    %c2 = arith.select %cv, %c, %m1 : i32
    %d2 = arith.select %dv, %d, %m1 : i32
    memref.store %a2, %out[%r0, %tx] : memref<4x50xi32>
    memref.store %b2, %out[%r1, %tx] : memref<4x50xi32>
    memref.store %c2, %out[%r2, %tx] : memref<4x50xi32>
    memref.store %d2, %out[%r3, %tx] : memref<4x50xi32>
    gpu.terminator
  }
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}
func.func private @printMemrefI32(memref<*xi32>)
"""
    n, warp, width, offset = 50, 32, 16, 5
    expected = np.full((4, n), -1)
    for t in range(n):
        lane = t % warp
        base = t - lane + (lane // width) * width
        local = lane - (lane // width) * width
        for row, src in enumerate((local ^ offset, local + offset, local - offset, offset)):
            if 0 <= src < width and base + src < n:
                expected[row, t] = base + src
    for backend in ("numpy", "numba"):
        module = devplan.parse(source)
        devplan.apply(module, "convert-gpu-to-device")
        import contextlib
        import io

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            devplan.execute(module, [], entry="main", kernel_backend=backend)
        rows = out.getvalue().split("data = \n")[1].replace("[", "").replace("]", "")
        got = np.array([int(x) for x in rows.replace(",", " ").split()]).reshape(4, n)
        np.testing.assert_array_equal(got, expected, err_msg=backend)


@pytest.mark.parametrize("shape", [(), (300,), (3, 5, 129)])
def test_memset_fills_every_element_once_whatever_the_rank_and_size(shape: tuple[int, ...]) -> None:
    """gpu.memset becomes a fill launch over ceil(n / 128) blocks: sizes that are not a
    multiple of the block, several blocks, and rank 0 all end fully filled, and nothing
    else (the buffer is the function's output, so a stray store would fault)."""
    text = "x".join(map(str, shape))
    type_ = f"memref<{text}xi32>" if shape else "memref<i32>"
    source = f"""
func.func @main() -> {type_} {{
  %m = gpu.alloc () : {type_}
  %h = memref.alloc() : {type_}
  %v = arith.constant 41 : i32
  gpu.memset %m, %v : {type_}, i32
  gpu.memcpy %h, %m : {type_}, {type_}
  gpu.dealloc %m : {type_}
  return %h : {type_}
}}
"""
    module = devplan.parse(source)
    devplan.apply(module, "convert-gpu-to-device")
    result = devplan.execute(module, [], entry="main", kernel_backend="numpy")
    np.testing.assert_array_equal(result.outputs[0], np.full(shape, 41, dtype=np.int32))


def test_async_regions_run_in_program_order_with_their_values() -> None:
    """async-to-host: a fork (two regions taking one value) and a join (a region taking
    both results) give what sequential execution gives; no async op is left."""
    source = """
func.func @main() -> i32 {
  %t0, %a = async.execute -> !async.value<i32> {
    %x = arith.constant 3 : i32
    async.yield %x : i32
  }
  %t1, %b = async.execute [%t0] (%a as %x : !async.value<i32>) -> !async.value<i32> {
    %y = arith.muli %x, %x : i32
    async.yield %y : i32
  }
  %t2, %c = async.execute [%t0] (%a as %x : !async.value<i32>) -> !async.value<i32> {
    %one = arith.constant 1 : i32
    %z = arith.addi %x, %one : i32
    async.yield %z : i32
  }
  %t3, %d = async.execute [%t1, %t2] (%b as %y : !async.value<i32>, %c as %z : !async.value<i32>) -> !async.value<i32> {
    %s = arith.subi %y, %z : i32
    async.yield %s : i32
  }
  %r = async.await %d : !async.value<i32>
  return %r : i32
}
"""
    module = devplan.parse(source)
    devplan.apply(module, "async-to-host")
    assert not [op for op in module.walk() if op.name.startswith("async.")]
    assert devplan.execute(module, [], entry="main").outputs[0] == 5


def test_global_address_space_memory_runs_like_memory_space_one() -> None:
    """`memref<..., #gpu.address_space<global>>` is device global memory, as space 1 is."""
    source = """
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @f(%a: memref<4xf32, #gpu.address_space<global>>) kernel {
      %t = gpu.thread_id x
      %i = arith.index_cast %t : index to i32
      %v = arith.sitofp %i : i32 to f32
      memref.store %v, %a[%t] : memref<4xf32, #gpu.address_space<global>>
      gpu.return
    }
  }
  func.func @main() -> memref<4xf32> {
    %m = gpu.alloc () : memref<4xf32, #gpu.address_space<global>>
    %h = memref.alloc() : memref<4xf32>
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @k::@f blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%m : memref<4xf32, #gpu.address_space<global>>)
    gpu.memcpy %h, %m : memref<4xf32>, memref<4xf32, #gpu.address_space<global>>
    gpu.dealloc %m : memref<4xf32, #gpu.address_space<global>>
    return %h : memref<4xf32>
  }
}
"""
    np.testing.assert_array_equal(run(source).outputs[0], np.arange(4, dtype=np.float32))
