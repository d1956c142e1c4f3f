# ruff: noqa: E501  (IR lines are as long as IR lines are)
"""The executor on host code and device ops: semantics, inputs, outputs, caching."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import devplan
from devplan.execution import compile_program
from devplan.runtime.executor import ExecutionResult, random_inputs


def run(text: str, *inputs: Any, **options: Any) -> ExecutionResult:
    return devplan.execute(devplan.parse(text), list(inputs), **options)


def error_of(text: str, *inputs: Any, **options: Any) -> str:
    with pytest.raises(devplan.DevplanError) as info:
        run(text, *inputs, **options)
    return str(info.value)


# --- host scalar code -----------------------------------------------------------------


def test_scalar_arithmetic_returns_numpy_scalars_of_the_result_type() -> None:
    result = run(
        """
        func.func @main(%a: i32, %b: f32, %n: index) -> (i32, f32, index, i1) {
          %c3 = arith.constant 3 : i32
          %x = arith.muli %a, %c3 : i32
          %h = arith.constant 0.5 : f32
          %y = arith.addf %b, %h : f32
          %c1 = arith.constant 1 : index
          %m = arith.addi %n, %c1 : index
          %t = arith.cmpi slt, %a, %c3 : i32
          func.return %x, %y, %m, %t : i32, f32, index, i1
        }
        """,
        5,
        1.25,
        7,
    )
    x, y, m, t = result.outputs
    assert (x, y, m, t) == (15, 1.75, 8, False)
    assert (x.dtype, y.dtype, m.dtype, t.dtype) == (
        np.dtype(np.int32),
        np.dtype(np.float32),
        np.dtype(np.int64),
        np.dtype(np.bool_),
    )


def test_integer_arithmetic_wraps_to_the_type_width_like_mlir() -> None:
    result = run(
        """
        func.func @main(%a: i8) -> (i8, i8) {
          %c1 = arith.constant 1 : i8
          %s = arith.addi %a, %c1 : i8
          %c2 = arith.constant 2 : i8
          %d = arith.divui %a, %c2 : i8
          func.return %s, %d : i8, i8
        }
        """,
        127,
    )
    assert [int(v) for v in result.outputs] == [-128, 63]


def _i8(values: list[int]) -> np.ndarray:
    return np.array(values, np.int8)


def _u8(values: list[int]) -> np.ndarray:
    return _i8(values).view(np.uint8)


I8_REFERENCE = {
    "addi": lambda a, b: _i8([a]) + _i8([b]),
    "subi": lambda a, b: _i8([a]) - _i8([b]),
    "muli": lambda a, b: _i8([a]) * _i8([b]),
    "andi": lambda a, b: _i8([a]) & _i8([b]),
    "ori": lambda a, b: _i8([a]) | _i8([b]),
    "xori": lambda a, b: _i8([a]) ^ _i8([b]),
    "maxsi": lambda a, b: np.maximum(_i8([a]), _i8([b])),
    "minsi": lambda a, b: np.minimum(_i8([a]), _i8([b])),
    "maxui": lambda a, b: np.maximum(_u8([a]), _u8([b])).view(np.int8),
    "minui": lambda a, b: np.minimum(_u8([a]), _u8([b])).view(np.int8),
    "divsi": lambda a, b: _i8([int(np.trunc(a / b))]),
    "remsi": lambda a, b: np.fmod(_i8([a]), _i8([b])),
    "divui": lambda a, b: (_u8([a]) // _u8([b])).view(np.int8),
    "remui": lambda a, b: (_u8([a]) % _u8([b])).view(np.int8),
    "shli": lambda a, b: _i8([a]) << _i8([b % 8]),
    "shrsi": lambda a, b: _i8([a]) >> _i8([b % 8]),
    "shrui": lambda a, b: (_u8([a]) >> _u8([b % 8])).view(np.int8),
}


@pytest.mark.parametrize("name", sorted(I8_REFERENCE))
@pytest.mark.parametrize(("a", "b"), [(-128, 3), (127, 1), (-7, 2), (100, -3), (5, 7), (-1, -128)])
def test_i8_ops_agree_with_numpy(name: str, a: int, b: int) -> None:
    if name.startswith("sh"):
        b %= 8
    program = (
        f"func.func @main(%a: i8, %b: i8) -> i8 {{\n"
        f"  %r = arith.{name} %a, %b : i8\n"
        f"  func.return %r : i8\n}}\n"
    )
    (got,) = run(program, a, b).outputs
    assert got == I8_REFERENCE[name](a, b)[0]


F32_REFERENCE = {
    "addf": np.add,
    "subf": np.subtract,
    "mulf": np.multiply,
    "divf": np.divide,
    "maximumf": np.maximum,
    "minimumf": np.minimum,
    "maxnumf": np.fmax,
    "minnumf": np.fmin,
}


@pytest.mark.parametrize("name", sorted(F32_REFERENCE))
@pytest.mark.parametrize(("a", "b"), [(1.5, -2.25), (1.0, 0.0), (float("nan"), 2.0), (3e38, 3e38)])
def test_f32_ops_agree_with_numpy(name: str, a: float, b: float) -> None:
    program = (
        f"func.func @main(%a: f32, %b: f32) -> f32 {{\n"
        f"  %r = arith.{name} %a, %b : f32\n"
        f"  func.return %r : f32\n}}\n"
    )
    (got,) = run(program, a, b).outputs
    with np.errstate(all="ignore"):
        expected = F32_REFERENCE[name](np.float32(a), np.float32(b))
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float32


def test_signed_division_truncates_towards_zero() -> None:
    result = run(
        """
        func.func @main(%a: i32, %b: i32) -> (i32, i32, i32) {
          %q = arith.divsi %a, %b : i32
          %r = arith.remsi %a, %b : i32
          %f = arith.floordivsi %a, %b : i32
          func.return %q, %r, %f : i32, i32, i32
        }
        """,
        -7,
        2,
    )
    assert [int(v) for v in result.outputs] == [-3, -1, -4]


def test_f32_arithmetic_rounds_to_f32() -> None:
    (y,) = run(
        """
        func.func @main(%a: f32) -> f32 {
          %b = arith.constant 16777216.0 : f32
          %c = arith.addf %a, %b : f32
          func.return %c : f32
        }
        """,
        1.0,
    ).outputs
    assert y == np.float32(16777216.0)  # 2**24 + 1 is not an f32


def test_division_by_zero_in_host_code_is_a_located_error() -> None:
    text = error_of(
        "func.func @main(%a: i32) -> i32 {\n"
        "  %z = arith.constant 0 : i32\n"
        "  %q = arith.divsi %a, %z : i32\n"
        "  func.return %q : i32\n"
        "}\n",
        4,
    )
    assert text.splitlines()[0] == "<string>:3:3: error: 'arith.divsi' divides 4 by zero"


def test_math_and_casts_in_host_code() -> None:
    result = run(
        """
        func.func @main(%x: f32, %n: index) -> (f32, f32, i32, f64, index) {
          %s = math.sqrt %x : f32
          %e = math.exp %x : f32
          %i = arith.fptosi %e : f32 to i32
          %w = arith.extf %s : f32 to f64
          %k = arith.index_cast %i : i32 to index
          %m = arith.addi %k, %n : index
          func.return %s, %e, %i, %w, %m : f32, f32, i32, f64, index
        }
        """,
        4.0,
        3,
    )
    s, e, i, w, m = result.outputs
    assert (s, i, w, m) == (np.float32(2.0), 54, 2.0, 57)
    assert e == np.exp(np.float32(4.0))
    assert (e.dtype, w.dtype) == (np.dtype(np.float32), np.dtype(np.float64))


def test_float_to_int_of_nan_is_an_error_not_a_value() -> None:
    text = error_of(
        "func.func @main(%x: f32) -> i32 {\n"
        "  %i = arith.fptosi %x : f32 to i32\n"
        "  func.return %i : i32\n"
        "}\n",
        float("nan"),
    )
    assert text.splitlines()[0] == (
        "<string>:2:3: error: 'arith.fptosi' converts NaN or a value outside the range of i32 "
        "(nan to i32)"
    )


def test_scf_for_with_iter_args_and_scf_if() -> None:
    (total,) = run(
        """
        func.func @main(%n: index) -> index {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c2 = arith.constant 2 : index
          %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
            %r = arith.remui %i, %c2 : index
            %even = arith.cmpi eq, %r, %c0 : index
            %next = scf.if %even -> (index) {
              %a = arith.addi %acc, %i : index
              scf.yield %a : index
            } else {
              scf.yield %acc : index
            }
            scf.yield %next : index
          }
          func.return %s : index
        }
        """,
        10,
    ).outputs
    assert total == 0 + 2 + 4 + 6 + 8


def test_scf_while_and_recursive_calls() -> None:
    text = """
    func.func @fact(%n: i64) -> i64 {
      %c1 = arith.constant 1 : i64
      %small = arith.cmpi sle, %n, %c1 : i64
      %r = scf.if %small -> (i64) {
        scf.yield %c1 : i64
      } else {
        %m = arith.subi %n, %c1 : i64
        %f = func.call @fact(%m) : (i64) -> i64
        %p = arith.muli %n, %f : i64
        scf.yield %p : i64
      }
      func.return %r : i64
    }
    func.func @main(%n: i64) -> (i64, i64) {
      %c1 = arith.constant 1 : i64
      %c100 = arith.constant 100 : i64
      %w = scf.while (%x = %c1) : (i64) -> i64 {
        %go = arith.cmpi slt, %x, %c100 : i64
        scf.condition(%go) %x : i64
      } do {
      ^bb0(%y: i64):
        %d = arith.addi %y, %y : i64
        scf.yield %d : i64
      }
      %f = func.call @fact(%n) : (i64) -> i64
      func.return %w, %f : i64, i64
    }
    """
    assert [int(v) for v in run(text, 10).outputs] == [128, 3628800]


def test_host_memref_code_reads_and_writes_host_memory() -> None:
    (out,) = run(
        """
        func.func @main(%a: memref<2x3xf32>) -> memref<3x2xf32> {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c2 = arith.constant 2 : index
          %c3 = arith.constant 3 : index
          %t = memref.alloc() : memref<3x2xf32>
          scf.for %i = %c0 to %c2 step %c1 {
            scf.for %j = %c0 to %c3 step %c1 {
              %v = memref.load %a[%i, %j] : memref<2x3xf32>
              memref.store %v, %t[%j, %i] : memref<3x2xf32>
            }
          }
          func.return %t : memref<3x2xf32>
        }
        """,
        np.arange(6, dtype=np.float32).reshape(2, 3),
    ).outputs
    np.testing.assert_array_equal(out, np.arange(6, dtype=np.float32).reshape(2, 3).T)


def test_host_load_out_of_bounds_is_an_error_not_a_wrap() -> None:
    text = error_of(
        "func.func @main(%a: memref<4xf32>, %i: index) -> f32 {\n"
        "  %v = memref.load %a[%i] : memref<4xf32>\n"
        "  func.return %v : f32\n"
        "}\n",
        np.zeros(4, np.float32),
        -1,
    )
    assert text.splitlines()[0] == (
        "<string>:2:3: error: 'memref.load' index [-1] is out of bounds for "
        "memref<4xf32> of shape 4"
    )


def test_inputs_are_copied_so_a_run_does_not_change_them() -> None:
    a = np.ones(4, np.float32)
    run(
        """
        func.func @main(%a: memref<4xf32>) {
          %c0 = arith.constant 0 : index
          %x = arith.constant 9.0 : f32
          memref.store %x, %a[%c0] : memref<4xf32>
          func.return
        }
        """,
        a,
    )
    assert a[0] == 1.0


def test_an_input_returned_as_is_is_a_copy_of_the_callers_array() -> None:
    a = np.ones(4, np.float32)
    (out,) = run("func.func @main(%a: memref<4xf32>) -> memref<4xf32> {\n"
                 "  func.return %a : memref<4xf32>\n}\n", a).outputs  # fmt: skip
    np.testing.assert_array_equal(out, a)
    assert not np.shares_memory(out, a)


def test_an_input_a_callee_writes_leaves_the_callers_array_unchanged() -> None:
    a = np.ones(4, np.float32)
    run(
        """
        func.func @set(%m: memref<4xf32>) {
          %c0 = arith.constant 0 : index
          %x = arith.constant 9.0 : f32
          memref.store %x, %m[%c0] : memref<4xf32>
          func.return
        }
        func.func @main(%a: memref<4xf32>) -> f32 {
          %c0 = arith.constant 0 : index
          func.call @set(%a) : (memref<4xf32>) -> ()
          %v = memref.load %a[%c0] : memref<4xf32>
          func.return %v : f32
        }
        """,
        a,
    )
    assert a[0] == 1.0


def test_an_input_only_read_gives_the_same_results_as_a_copy() -> None:
    a = np.arange(8, dtype=np.float32)[::2]  # not contiguous: bound to a copy
    b = np.arange(4, dtype=np.float32)  # only read: bound in place, read-only
    text = """
        func.func @main(%a: memref<4xf32>, %b: memref<4xf32>) -> f32 {
          %c1 = arith.constant 1 : index
          %x = memref.load %a[%c1] : memref<4xf32>
          %y = memref.load %b[%c1] : memref<4xf32>
          %s = arith.addf %x, %y : f32
          func.return %s : f32
        }
        """
    assert run(text, a, b).outputs == [np.float32(3.0)]
    assert b.flags.writeable  # the caller's array itself is untouched


LAUNCH_READS_A_WRITES_B = """
    kernel.module @k target #target.target<"llvm"> {
      kernel.func @scale(%x: memref<?xf32>, %y: memref<?xf32>) {
        %i = kernel.thread_id x
        %v = memref.load %x[%i] : memref<?xf32>
        %w = arith.addf %v, %v : f32
        memref.store %w, %y[%i] : memref<?xf32>
        kernel.return
      }
    }
    func.func @main(%a: memref<4xf32>, %b: memref<4xf32>) -> f32 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      device.launch @k::@scale on #vdev.device<"cpu", 0> grid(%c1, %c1, %c1) block(%c4, %c1, %c1) args(%a, %b) : memref<4xf32>, memref<4xf32>
      %v = memref.load %b[%c0] : memref<4xf32>
      func.return %v : f32
    }
    """


def test_an_input_a_launch_only_reads_is_bound_in_place_and_one_it_writes_is_a_copy() -> None:
    from xdsl.dialects import func

    from devplan.runtime.executor.inputs import only_read_arguments

    module = devplan.parse(LAUNCH_READS_A_WRITES_B)
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    assert only_read_arguments(main) == (True, False)
    a, b = np.arange(4, dtype=np.float32), np.full(4, 7.0, np.float32)
    assert run(LAUNCH_READS_A_WRITES_B, a, b).outputs == [np.float32(0.0)]
    np.testing.assert_array_equal(b, 7.0)  # the kernel wrote a copy of the caller's b
    assert a.flags.writeable


# --- inputs ----------------------------------------------------------------------------

ADD_ONE = """
func.func @main(%a: memref<4xf32>, %k: i32) -> memref<4xf32> {
  func.return %a : memref<4xf32>
}
"""


def test_wrong_argument_count_names_the_signature() -> None:
    assert error_of(ADD_ONE, np.zeros(4, np.float32)) == (
        "error: @main(memref<4xf32>, i32) -> memref<4xf32> takes 2 argument(s), got 1"
    )


@pytest.mark.parametrize(
    ("inputs", "argument", "problem"),
    [
        pytest.param(
            (np.zeros(4, np.float64), 1),
            "argument 0 %a",
            "memref<4xf32> and needs dtype float32, got 4 of float64 (convert it with .astype)",
            id="wrong_dtype",
        ),
        pytest.param(
            (np.zeros((2, 2), np.float32), 1),
            "argument 0 %a",
            "memref<4xf32> and needs shape 4, got 2x2 of float32",
            id="wrong_shape",
        ),
        pytest.param(
            (np.zeros(4, np.float32), 1.5),
            "argument 1 %k",
            "i32, got float 1.5",
            id="scalar_of_the_wrong_kind",
        ),
    ],
)
def test_wrong_argument_is_named_with_the_signature_and_what_it_needs(
    inputs: tuple[object, ...], argument: str, problem: str
) -> None:
    assert error_of(ADD_ONE, *inputs) == (
        f"error: {argument} of @main(memref<4xf32>, i32) -> memref<4xf32> is {problem}"
    )


def test_scalar_that_does_not_fit_is_an_error() -> None:
    assert "and 4294967296 does not fit in it" in error_of(ADD_ONE, np.zeros(4, np.float32), 2**32)


def test_missing_entry_lists_the_functions() -> None:
    assert error_of(ADD_ONE, entry="nope") == "error: no function @nope to run (functions: @main)"


def test_unknown_kernel_backend_lists_the_valid_ones() -> None:
    assert error_of(ADD_ONE, np.zeros(4, np.float32), 1, kernel_backend="cuda") == (
        "error: unknown kernel backend 'cuda'; valid: numpy, numba, numba-cuda"
    )


def test_a_level_1_program_runs_through_the_default_pipeline_even_returning_its_argument() -> None:
    module = devplan.parse(
        "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  func.return %a : tensor<4xf32>\n"
        "}\n"
    )
    a = np.arange(4, dtype=np.float32)
    result = devplan.execute(module, [a], strict=True)
    np.testing.assert_array_equal(result.outputs[0], a)
    assert result.outputs[0] is not a  # the function returns a copy it owns


def test_unsupported_host_op_is_a_located_error() -> None:
    text = error_of(
        "func.func @main(%a: memref<4xf32>) -> memref<4xf32> {\n"
        '  "memref.copy"(%a, %a) : (memref<4xf32>, memref<4xf32>) -> ()\n'
        "  func.return %a : memref<4xf32>\n"
        "}\n",
        np.zeros(4, np.float32),
    )
    assert text.startswith(
        "<string>:2:3: error: 'memref.copy' is not supported by the executor in host code"
    )


def test_random_inputs_follow_the_argument_types() -> None:
    module = devplan.parse(ADD_ONE)
    a, k = random_inputs(module, "main", seed=0)
    assert isinstance(a, np.ndarray)
    assert (a.shape, a.dtype) == ((4,), np.dtype(np.float32))
    assert isinstance(k, int)
    assert 1 <= k <= 16
    b, _ = random_inputs(module, "main", seed=0)
    assert isinstance(b, np.ndarray)
    np.testing.assert_array_equal(a, b)


def test_random_bf16_inputs_are_standard_normal_values_as_bit_patterns() -> None:
    # They were integers in [0, 100) taken as bit patterns: denormals below 1e-37.
    module = devplan.parse("func.func @main(%a: tensor<1000xbf16>, %k: bf16) {\n  func.return\n}\n")
    a, k = random_inputs(module, "main", seed=0)
    assert isinstance(a, np.ndarray)
    assert a.dtype == np.dtype(np.uint16)
    values = (a.astype(np.uint32) << 16).view(np.float32)
    assert 0.8 < float(np.std(values)) < 1.2
    assert abs(float(np.mean(values))) < 0.1
    assert isinstance(k, float)


def test_a_bad_input_to_a_level_1_program_is_named_with_the_types_the_user_wrote() -> None:
    # The messages spoke of the lowered signature: memref<4xf32, #vdev.device<"cuda", ...>>.
    module = devplan.parse(
        "func.func @main(%a: tensor<4xf32>, %n: index) -> tensor<4xf32> {\n"
        "  %b = arith.addf %a, %a : tensor<4xf32>\n"
        '  %c = vdev.on_device %b to #vdev.device<"cuda", 0> : tensor<4xf32>\n'
        "  func.return %c : tensor<4xf32>\n}\n"
    )
    main = "@main(tensor<4xf32>, index) -> tensor<4xf32>"
    with pytest.raises(devplan.DevplanError) as info:
        devplan.execute(module, [np.ones(5, np.float32), 1])
    assert str(info.value) == (
        f"error: argument 0 %a of {main} is tensor<4xf32> and needs shape 4, got 5 of float32"
    )
    with pytest.raises(devplan.DevplanError) as info:
        devplan.execute(module, [np.ones(4, np.float32)])
    assert str(info.value) == f"error: {main} takes 2 argument(s), got 1"


def test_random_inputs_of_a_level_1_program_are_host_arrays_of_the_tensor_types() -> None:
    module = devplan.parse(
        'func.func @main(%a: tensor<2x3xi32> {vdev.device = #vdev.device<"cuda", 0>}) {\n'
        "  func.return\n}\n"
    )
    (a,) = random_inputs(module, "main", seed=0)
    assert isinstance(a, np.ndarray)
    assert (a.shape, a.dtype) == ((2, 3), np.dtype(np.int32))


def test_random_inputs_refuse_dynamic_shapes() -> None:
    module = devplan.parse("func.func @main(%a: memref<?xf32>) {\n  func.return\n}\n")
    with pytest.raises(devplan.DevplanError, match="has a dynamic shape"):
        random_inputs(module, "main", seed=0)


# --- compilation is done once ------------------------------------------------------------


def test_program_is_compiled_once_per_module_and_backend() -> None:
    module = devplan.parse(ADD_ONE)
    first = compile_program(module, "numpy")
    devplan.execute(module, [np.zeros(4, np.float32), 1])
    assert compile_program(module, "numpy") is first
    assert compile_program(module, "numba") is not first


def test_compiled_programs_are_kept_outside_the_module_object() -> None:
    module = devplan.parse(ADD_ONE)
    before = set(vars(module))
    devplan.execute(module, [np.zeros(4, np.float32), 1])
    assert set(vars(module)) == before


# --- device ops ----------------------------------------------------------------------------

G = '#vdev.device<"cuda", 0, ?, "global">'

SCALE_KERNEL = """
kernel.module @k target #target.target<"cuda"> {
  kernel.func @scale(%x: memref<?xf32>, %s: f32) {
    %i = kernel.thread_id x
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.mulf %v, %s : f32
    memref.store %w, %x[%i] : memref<?xf32>
    kernel.return
  }
}
"""


def test_argument_in_device_memory_is_uploaded_and_result_downloaded() -> None:
    result = run(
        SCALE_KERNEL
        + f"""
        func.func @main(%d: memref<4xf32, {G}>) -> memref<4xf32, {G}> {{
          %c1 = arith.constant 1 : index
          %c4 = arith.constant 4 : index
          %two = arith.constant 2.0 : f32
          device.launch @k::@scale on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c4, %c1, %c1) args(%d, %two) : memref<4xf32, {G}>, f32
          func.return %d : memref<4xf32, {G}>
        }}
        """,
        np.arange(8, dtype=np.float32)[::2],  # not contiguous: uploaded all the same
        strict=True,
    )
    np.testing.assert_array_equal(result.outputs[0], [0, 4, 8, 12])
    assert result.leaks == []  # the driver frees the buffers it made


def test_async_launch_fault_surfaces_at_the_wait_with_the_launch_site() -> None:
    text = error_of(
        SCALE_KERNEL.strip()
        + "\n"
        + f"""func.func @main() {{
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %d = device.alloc() : memref<4xf32, {G}>
  %t = device.launch async [] @k::@scale on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c8, %c1, %c1) args(%d, %two) : memref<4xf32, {G}>, f32
  device.wait %t
  device.free %d : memref<4xf32, {G}>
  func.return
}}
""",
    )
    lines = text.splitlines()
    assert lines[0].startswith("<string>:4:5: error: in kernel @scale: out-of-bounds load")
    assert lines[3] == "<string>:15:3: note: @k::@scale launched here on cuda:0"


def test_device_attr_reads_the_devices_attributes() -> None:
    (threads, memory) = run(
        """
        func.func @main() -> (index, i64) {
          %n = device.attr "max_threads_per_block" of #vdev.device<"cuda", 0> : index
          %m = device.attr "total_global_memory" of #vdev.device<"cuda", 1> : i64
          func.return %n, %m : index, i64
        }
        """
    ).outputs
    assert (int(threads), int(memory)) == (1024, 40 << 30)


def test_workspace_is_shaped_and_reused_by_kernels() -> None:
    result = run(
        SCALE_KERNEL
        + f"""
        func.func @main(%h: memref<2x2xf32>) -> memref<2x2xf32> {{
          %w = device.alloc_workspace() : memref<4xf32, {G}>
          %d = device.alloc() : memref<2x2xf32, {G}>
          device.copy %h to %d : memref<2x2xf32> to memref<2x2xf32, {G}>
          %r = memref.alloc() : memref<2x2xf32>
          device.copy %d to %r : memref<2x2xf32, {G}> to memref<2x2xf32>
          device.free_workspace %w : memref<4xf32, {G}>
          device.free %d : memref<2x2xf32, {G}>
          func.return %r : memref<2x2xf32>
        }}
        """,
        np.ones((2, 2), np.float32),
        strict=True,
    )
    np.testing.assert_array_equal(result.outputs[0], np.ones((2, 2)))


def test_wait_without_tokens_waits_for_everything() -> None:
    (value,) = run(
        f"""
        func.func @main(%h: memref<4xf32>) -> f32 {{
          %c2 = arith.constant 2 : index
          %d = device.alloc() : memref<4xf32, {G}>
          %r = memref.alloc() : memref<4xf32>
          %t0 = device.copy_async [] %h to %d : memref<4xf32> to memref<4xf32, {G}>
          %t1 = device.copy_async [%t0] %d to %r : memref<4xf32, {G}> to memref<4xf32>
          device.wait all
          %v = memref.load %r[%c2] : memref<4xf32>
          device.free %d : memref<4xf32, {G}>
          func.return %v : f32
        }}
        """,
        np.arange(4, dtype=np.float32),
    ).outputs
    assert value == 2.0


def test_async_copy_without_its_dependency_is_a_race() -> None:
    text = error_of(
        f"""func.func @main(%h: memref<4xf32>) {{
  %d = device.alloc() : memref<4xf32, {G}>
  %r = memref.alloc() : memref<4xf32>
  %t0 = device.copy_async [] %h to %d : memref<4xf32> to memref<4xf32, {G}>
  %t1 = device.copy_async [] %d to %r : memref<4xf32, {G}> to memref<4xf32>
  device.wait %t1
  device.free %d : memref<4xf32, {G}>
  func.return
}}
""",
        np.arange(4, dtype=np.float32),
    )
    assert text.splitlines()[0].startswith("<string>:6:3: error: 'device.wait' race on ")


def test_cpu_kernels_run_on_host_memory_and_cpu_device_memory() -> None:
    cpu = '#vdev.device<"cpu", 0>'
    h, c = run(
        f"""
        kernel.module @k target #target.target<"llvm"> {{
          kernel.func @double(%x: memref<?xf32>) {{
            %i = kernel.thread_id x
            %v = memref.load %x[%i] : memref<?xf32>
            %w = arith.addf %v, %v : f32
            memref.store %w, %x[%i] : memref<?xf32>
            kernel.return
          }}
        }}
        func.func @main(%h: memref<4xf32>, %c: memref<4xf32, {cpu}>) -> (memref<4xf32>, memref<4xf32, {cpu}>) {{
          %c1 = arith.constant 1 : index
          %c4 = arith.constant 4 : index
          device.launch @k::@double on {cpu} grid(%c1, %c1, %c1) block(%c4, %c1, %c1) args(%h) : memref<4xf32>
          device.launch @k::@double on {cpu} grid(%c1, %c1, %c1) block(%c4, %c1, %c1) args(%c) : memref<4xf32, {cpu}>
          func.return %h, %c : memref<4xf32>, memref<4xf32, {cpu}>
        }}
        """,
        np.arange(4, dtype=np.float32),
        np.ones(4, np.float32),
        strict=True,
    ).outputs
    np.testing.assert_array_equal(h, [0, 2, 4, 6])
    np.testing.assert_array_equal(c, [2, 2, 2, 2])


def test_compiled_program_does_not_keep_its_module_alive() -> None:
    import gc
    import weakref

    module = devplan.parse(ADD_ONE)
    devplan.execute(module, [np.zeros(4, np.float32), 1])
    ref = weakref.ref(module)
    del module
    gc.collect()
    assert ref() is None


def test_apply_drops_the_programs_compiled_from_the_module_it_changes() -> None:
    module = devplan.parse(
        "func.func @main() -> i32 {\n"
        "  %a = arith.constant 1 : i32\n"
        "  %b = arith.addi %a, %a : i32\n"
        "  func.return %b : i32\n}\n"
    )
    before = compile_program(module, "numpy")
    assert devplan.execute(module, []).outputs == [2]
    devplan.apply(module, "canonicalize")  # folds the add: new IR, the same result
    assert compile_program(module, "numpy") is not before
    assert devplan.execute(module, []).outputs == [2]


def test_bf16_constants_and_fill_values_reach_memory_as_their_bit_patterns() -> None:
    # A memref.global of bf16 took its values as uint16 integers (1.5 -> 1), and a bf16
    # scalar kernel argument was converted the same way (fill with 1.5 wrote 1.0).
    module = devplan.parse(
        "func.func @main() -> (tensor<3xbf16>, tensor<2xbf16>) {\n"
        "  %k = arith.constant dense<[1.5, -0.25, 0.1]> : tensor<3xbf16>\n"
        '  %d = vdev.on_device %k to #vdev.device<"cuda", 0> : tensor<3xbf16>\n'
        "  %s = arith.constant 1.5 : bf16\n"
        "  %e = tensor.empty() : tensor<2xbf16>\n"
        "  %f = linalg.fill ins(%s : bf16) outs(%e : tensor<2xbf16>) -> tensor<2xbf16>\n"
        "  func.return %d, %f : tensor<3xbf16>, tensor<2xbf16>\n}\n"
    )
    for backend in ("numpy", "numba"):
        constant, filled = devplan.execute(module, [], kernel_backend=backend).outputs
        assert [hex(b) for b in constant] == ["0x3fc0", "0xbe80", "0x3dcd"]  # 0.1 rounds up
        assert [hex(b) for b in filled] == ["0x3fc0", "0x3fc0"]


# --- runs of one program ----------------------------------------------------------------

SIZES = f"""
func.func @big() {{
  %d = device.alloc() : memref<64xf32, {G}>
  device.free %d : memref<64xf32, {G}>
  func.return
}}
func.func @small() {{
  %d = device.alloc() : memref<4xf32, {G}>
  device.free %d : memref<4xf32, {G}>
  func.return
}}
func.func @leaky() {{
  %d = device.alloc() : memref<4xf32, {G}>
  func.return
}}
"""


def test_each_report_of_a_program_says_its_own_run_while_later_runs_renew_the_runtime() -> None:
    module = devplan.parse(SIZES)
    big = devplan.execute(module, [], entry="big")  # its report is read only at the end
    small = devplan.execute(module, [], entry="small")
    again = devplan.execute(module, [], entry="small")
    for result, peak in ((big, 256), (small, 16), (again, 16)):
        gpu = result.report.devices["cuda:0"]
        assert (gpu.allocations, gpu.frees, gpu.peak_bytes["global"]) == (1, 1, peak)
        assert gpu.in_use_bytes["global"] == 0


def test_a_run_that_leaks_leaves_later_runs_of_its_program_only_their_own_leaks() -> None:
    module = devplan.parse(SIZES)
    for _ in range(2):
        leaky = devplan.execute(module, [], entry="leaky")
        assert [b.label for b in leaky.leaks] == ["%d at <string>:13:3"]
        assert leaky.report.devices["cuda:0"].in_use_bytes["global"] == 16
    clean = devplan.execute(module, [], entry="small", strict=True)
    assert clean.leaks == []
    assert clean.report.leaks == []
    assert clean.report.devices["cuda:0"].peak_bytes["global"] == 16
