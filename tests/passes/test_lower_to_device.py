# ruff: noqa: E501  (IR lines in test programs are long)
"""lower-to-device on hand-planned level-1 programs, run on the executor against the oracle.

The inputs follow the placement contract plan-devices guarantees (every tensor op
placed, copies where values cross devices), written out here so the lowering is tested
on its own. `H`, `G0`, `G1` are the host (cpu:0), cuda:0 and cuda:1 of the default system.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import devplan
from devplan.dialects import device as dev
from devplan.dialects.kernel import KernelFuncOp
from devplan.reference.program import evaluate

H = '#vdev.device<"cpu", 0, #target.target<"llvm">, "global">'
G0 = '#vdev.device<"cuda", 0, #target.target<"cuda">, "global">'
G1 = '#vdev.device<"cuda", 1, #target.target<"cuda">, "global">'


def numpy_dtype(element: str) -> np.dtype[Any]:
    """`i32` -> int32, `f64` -> float64."""
    return np.dtype(element.replace("i", "int").replace("f", "float"))


def planned(text: str) -> str:
    return text.replace("{H}", H).replace("{G0}", G0).replace("{G1}", G1)


def lowered(text: str) -> ModuleOp:
    return devplan.apply(devplan.parse(planned(text)), "lower-to-device,classify-regions")


def assert_matches_oracle(text: str, inputs: list[Any], backend: str = "numpy") -> Any:
    """Run the lowered program (no leaks allowed) and compare with the oracle."""
    expected = evaluate(devplan.parse(planned(text)), inputs)
    result = devplan.execute(lowered(text), inputs, kernel_backend=backend, strict=True)
    assert len(result.outputs) == len(expected)
    for got, want in zip(result.outputs, expected, strict=True):
        assert got.dtype == want.dtype
        assert got.shape == want.shape
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(got, want)
    return result


SPLIT = """
func.func @main(%a: tensor<1000xf32> {vdev.device = {H}}, %b: tensor<1000xf32> {vdev.device = {H}})
    -> (tensor<1000xf32> {vdev.device = {H}}) {
  %a1 = vdev.device_copy %a from {H} to {G0} : tensor<1000xf32>
  %b1 = vdev.device_copy %b from {H} to {G0} : tensor<1000xf32>
  %c = arith.addf %a1, %b1 {vdev.device = {G0}} : tensor<1000xf32>
  %c1 = vdev.device_copy %c from {G0} to {H} : tensor<1000xf32>
  %d = arith.mulf %c1, %a {vdev.device = {H}} : tensor<1000xf32>
  func.return %d : tensor<1000xf32>
}
"""


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_program_split_between_cpu_and_gpu_runs_each_part_where_planned(backend: str) -> None:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(1000).astype(np.float32) for _ in range(2))
    result = assert_matches_oracle(SPLIT, [a, b], backend)
    devices = result.report.devices
    assert devices["cpu:0"].launches == 1
    assert devices["cuda:0"].launches == 1
    assert devices["cuda:0"].allocations == devices["cuda:0"].frees == 3


CONTROL = """
func.func @helper(%x: tensor<?x5xf32> {vdev.device = {G0}}) -> (tensor<?x5xf32> {vdev.device = {G0}}) {
  %y = math.exp %x {vdev.device = {G0}} : tensor<?x5xf32>
  func.return %y : tensor<?x5xf32>
}
func.func @twice(%x: tensor<?x5xf32> {vdev.device = {G0}})
    -> (tensor<?x5xf32> {vdev.device = {G0}}, tensor<?x5xf32> {vdev.device = {G0}}) {
  func.return %x, %x : tensor<?x5xf32>, tensor<?x5xf32>
}
func.func @main(%a: tensor<?x5xf32> {vdev.device = {H}}, %w: tensor<5x3xf32> {vdev.device = {H}},
                %flag: i1, %n: index, %rows: index)
    -> (tensor<?x3xf32> {vdev.device = {H}}, tensor<i32> {vdev.device = {G1}}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %ag = vdev.device_copy %a from {H} to {G0} : tensor<?x5xf32>
  %wg = vdev.device_copy %w from {H} to {G0} : tensor<5x3xf32>
  %e = func.call @helper(%ag) {vdev.device = [{G0}]} : (tensor<?x5xf32>) -> tensor<?x5xf32>
  %p:2 = func.call @twice(%e) {vdev.device = [{G0}, {G0}]} : (tensor<?x5xf32>) -> (tensor<?x5xf32>, tensor<?x5xf32>)
  %s = arith.addf %p#0, %p#1 {vdev.device = {G0}} : tensor<?x5xf32>
  %r = scf.if %flag -> (tensor<?x5xf32>) {
    %t = arith.mulf %s, %s {vdev.device = {G0}} : tensor<?x5xf32>
    scf.yield %t : tensor<?x5xf32>
  } else {
    scf.yield %s : tensor<?x5xf32>
  } {vdev.device = [{G0}]}
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %r) -> (tensor<?x5xf32>) {
    %next = arith.subf %acc, %ag {vdev.device = {G0}} : tensor<?x5xf32>
    scf.yield %next : tensor<?x5xf32>
  } {vdev.device = [{G0}]}
  %empty = tensor.empty(%rows) {vdev.device = {G0}} : tensor<?x3xf32>
  %bias = arith.constant {vdev.device = {G0}} dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %f = linalg.fill {vdev.device = {G0}} ins(%zero : f32) outs(%empty : tensor<?x3xf32>) -> tensor<?x3xf32>
  %mm = linalg.matmul {vdev.device = {G0}} ins(%l, %wg : tensor<?x5xf32>, tensor<5x3xf32>) outs(%f : tensor<?x3xf32>) -> tensor<?x3xf32>
  %mh = vdev.device_copy %mm from {G0} to {H} : tensor<?x3xf32>
  %k = arith.constant {vdev.device = {G1}} dense<7> : tensor<i32>
  %k2 = arith.muli %k, %k {vdev.device = {G1}} : tensor<i32>
  func.return %mh, %k2 : tensor<?x3xf32>, tensor<i32>
}
"""


@pytest.mark.parametrize(("flag", "trips"), [(True, 0), (False, 0), (True, 3), (False, 2)])
def test_calls_branches_loops_and_matmul_free_every_buffer_and_match_the_oracle(
    flag: bool, trips: int
) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 5)).astype(np.float32)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    result = assert_matches_oracle(CONTROL, [a, w, flag, trips, 6])
    assert result.leaks == []


def test_control_flow_program_runs_on_the_numba_backend_too() -> None:
    a = np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)
    w = np.ones((5, 3), np.float32)
    assert_matches_oracle(CONTROL, [a, w, True, 2, 4], "numba")


MATMUL = """
func.func @main(%a: tensor<{m}x{k}x{t}> {vdev.device = {H}}, %b: tensor<{k}x{n}x{t}> {vdev.device = {H}},
                %c: tensor<{m}x{n}x{t}> {vdev.device = {H}})
    -> (tensor<{m}x{n}x{t}> {vdev.device = {H}}) {
  %a1 = vdev.device_copy %a from {H} to {G1} : tensor<{m}x{k}x{t}>
  %b1 = vdev.device_copy %b from {H} to {G1} : tensor<{k}x{n}x{t}>
  %c1 = vdev.device_copy %c from {H} to {G1} : tensor<{m}x{n}x{t}>
  %r = linalg.matmul {vdev.device = {G1}} ins(%a1, %b1 : tensor<{m}x{k}x{t}>, tensor<{k}x{n}x{t}>) outs(%c1 : tensor<{m}x{n}x{t}>) -> tensor<{m}x{n}x{t}>
  %r1 = vdev.device_copy %r from {G1} to {H} : tensor<{m}x{n}x{t}>
  func.return %r1 : tensor<{m}x{n}x{t}>
}
"""


@pytest.mark.parametrize(
    ("m", "k", "n", "element"),
    [
        (17, 5, 33, "i32"),
        (16, 32, 16, "f32"),
        (1, 40, 3, "i64"),
        (20, 1, 18, "f64"),
        (9, 3, 260, "f32"),  # a second block of columns, 4 of its 256 threads storing
        (0, 1, 1, "f32"),  # no rows (or columns) to read: the loop over k runs no step
        (1, 1, 0, "f32"),
        (0, 3, 0, "i32"),
        (2, 0, 3, "f32"),
    ],
)
def test_matmul_adds_the_product_to_its_output_for_sizes_off_the_rows_and_blocks(
    m: int, k: int, n: int, element: str
) -> None:
    text = MATMUL
    for key, value in (("{m}", m), ("{k}", k), ("{n}", n), ("{t}", element)):
        text = text.replace(key, str(value))
    dtype = numpy_dtype(element)
    rng = np.random.default_rng(2)
    a, b, c = (rng.integers(-50, 50, shape).astype(dtype) for shape in ((m, k), (k, n), (m, n)))
    assert_matches_oracle(text, [a, b, c])


INTEGERS = """
func.func @main(%a: tensor<3x4x{t}> {vdev.device = {G0}}, %b: tensor<3x4x{t}> {vdev.device = {G0}})
    -> (tensor<3x4x{t}> {vdev.device = {G0}}, tensor<3x4x{t}> {vdev.device = {G0}},
        tensor<3x4x{t}> {vdev.device = {G0}}) {
  %s = arith.muli %a, %b {vdev.device = {G0}} : tensor<3x4x{t}>
  %q = arith.divsi %s, %b {vdev.device = {G0}} : tensor<3x4x{t}>
  %r = arith.remsi %a, %b {vdev.device = {G0}} : tensor<3x4x{t}>
  %x = arith.xori %r, %q {vdev.device = {G0}} : tensor<3x4x{t}>
  %m = arith.maxui %a, %b {vdev.device = {G0}} : tensor<3x4x{t}>
  func.return %s, %x, %m : tensor<3x4x{t}>, tensor<3x4x{t}>, tensor<3x4x{t}>
}
"""


@pytest.mark.parametrize("element", ["i8", "i16", "i32", "i64"])
def test_integer_kernels_wrap_and_divide_as_the_oracle_does_bit_for_bit(element: str) -> None:
    dtype = numpy_dtype(element)
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, (3, 4), endpoint=True).astype(dtype)
    b = rng.integers(1, info.max, (3, 4)).astype(dtype) * rng.choice(
        np.array([-1, 1], dtype), (3, 4)
    )
    assert_matches_oracle(INTEGERS.replace("{t}", element), [a, b])


def test_identical_kernels_are_generated_once_per_module() -> None:
    module = lowered(
        """
func.func @main(%a: tensor<4xf32> {vdev.device = {G0}}, %b: tensor<2x2xf32> {vdev.device = {G1}})
    -> (tensor<4xf32> {vdev.device = {G0}}, tensor<2x2xf32> {vdev.device = {G1}}) {
  %x = arith.addf %a, %a {vdev.device = {G0}} : tensor<4xf32>
  %y = arith.addf %x, %a {vdev.device = {G0}} : tensor<4xf32>
  %z = arith.addf %b, %b {vdev.device = {G1}} : tensor<2x2xf32>
  %w = arith.addf %z, %b {vdev.device = {G1}} : tensor<2x2xf32>
  func.return %y, %w : tensor<4xf32>, tensor<2x2xf32>
}
"""
    )
    kernels = [op.sym_name.data for op in module.walk() if isinstance(op, KernelFuncOp)]
    launches = [str(op.kernel) for op in module.walk() if isinstance(op, dev.LaunchOp)]
    assert kernels == ["add_f32", "add_f32_2d"]
    assert launches == ["@cuda_kernels::@add_f32"] * 2 + ["@cuda_kernels::@add_f32_2d"] * 2


SMALL_BLOCKS = """
func.func @main(%a: tensor<100x9xf32> {vdev.device = {S}}, %b: tensor<9x100xf32> {vdev.device = {S}})
    -> (tensor<100x100xf32> {vdev.device = {S}}) {
  %t = math.tanh %b {vdev.device = {S}} : tensor<9x100xf32>
  %e = tensor.empty() {vdev.device = {S}} : tensor<100x100xf32>
  %m = linalg.matmul {vdev.device = {S}} ins(%a, %t : tensor<100x9xf32>, tensor<9x100xf32>) outs(%e : tensor<100x100xf32>) -> tensor<100x100xf32>
  func.return %m : tensor<100x100xf32>
}
"""


def test_launch_blocks_stay_within_the_targets_max_num_threads() -> None:
    small = '#vdev.device<"cuda", 0, #target.target<"cuda", {max_num_threads = 32}>, "global">'
    text = SMALL_BLOCKS.replace("{S}", small)
    module = devplan.apply(devplan.parse(text), "lower-to-device")
    threads: list[int] = []
    for launch in (op for op in module.walk() if isinstance(op, dev.LaunchOp)):
        sizes = [v.owner.value.value.data for v in launch.block]  # pyright: ignore
        threads.append(int(np.prod(sizes)))
    assert threads == [32, 32]  # tanh and matmul: 32 threads (1-D blocks)
    rng = np.random.default_rng(4)
    a = rng.standard_normal((100, 9)).astype(np.float32)
    b = rng.standard_normal((9, 100)).astype(np.float32)
    expected = evaluate(devplan.parse(text), [a, b])[0]
    got = devplan.execute(module, [a, b], strict=True).outputs[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_a_fault_in_a_generated_kernel_points_at_the_level_1_op() -> None:
    text = planned(
        """
func.func @main(%a: tensor<4xi32> {vdev.device = {G0}}, %b: tensor<4xi32> {vdev.device = {G0}})
    -> (tensor<4xi32> {vdev.device = {G0}}) {
  %q = arith.divsi %a, %b {vdev.device = {G0}} : tensor<4xi32>
  func.return %q : tensor<4xi32>
}
"""
    )
    module = devplan.apply(devplan.parse(text), "lower-to-device")
    a = np.arange(4, dtype=np.int32)
    with pytest.raises(devplan.DevplanError, match=r"<string>:4:3: error: .*divides by zero"):
        devplan.execute(module, [a, np.array([1, 0, 1, 1], np.int32)])


def test_an_unplanned_module_is_refused_at_the_first_unplaced_op() -> None:
    module = devplan.parse(
        "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %b = arith.addf %a, %a : tensor<4xf32>\n"
        "  func.return %b : tensor<4xf32>\n}"
    )
    with pytest.raises(devplan.DevplanError, match="has no placement; lower-to-device lowers"):
        devplan.apply(module, "lower-to-device")


def test_a_call_result_placed_apart_from_where_its_callee_returns_it_is_refused() -> None:
    """A module planned by hand (or edited after planning) whose call result's device is
    not the callee's result device: a located error, not a buffer on either device."""
    cpu = '#vdev.device<"cpu", 0, #target.target<"llvm">, "global">'
    gpu = '#vdev.device<"cuda", 0, #target.target<"cuda">, "global">'
    module = devplan.parse(
        f'builtin.module attributes {{vdev.targets = [#target.target<"cuda">]}} {{\n'
        f"  func.func @f(%x: tensor<4xf32> {{vdev.device = {cpu}}}) -> "
        f"(tensor<4xf32> {{vdev.device = {cpu}}}) {{\n"
        "    func.return %x : tensor<4xf32>\n  }\n"
        f"  func.func @main(%x: tensor<4xf32> {{vdev.device = {cpu}}}) -> "
        f"(tensor<4xf32> {{vdev.device = {gpu}}}) {{\n"
        f"    %r = func.call @f(%x) {{vdev.device = [{gpu}]}} : (tensor<4xf32>) -> tensor<4xf32>\n"
        "    func.return %r : tensor<4xf32>\n  }\n}"
    )
    with pytest.raises(
        devplan.DevplanError,
        match=r"<string>:6:5: error: 'func.call' result 0 is placed on #vdev.device<\"cuda\", 0"
        r".* but @f returns it on #vdev.device<\"cpu\", 0",
    ):
        devplan.apply(module, "lower-to-device")


DYNAMIC_ADD = """
func.func @main(%a: tensor<?xf32> {vdev.device = {G0}}, %b: tensor<?xf32> {vdev.device = {G0}})
    -> (tensor<?xf32> {vdev.device = {G0}}) {
  %c = arith.addf %a, %b {vdev.device = {G0}} : tensor<?xf32>
  func.return %c : tensor<?xf32>
}
"""


def test_elementwise_operands_of_different_dynamic_sizes_fail_at_the_op_instead_of_being_cut() -> (
    None
):
    module = lowered(DYNAMIC_ADD)
    assert "cf.assert" in str(module)
    for sizes in ((3, 4), (4, 3)):  # the kernel ran over operand 0: 3 results, or a fault
        a, b = (np.ones(n, np.float32) for n in sizes)
        with pytest.raises(
            devplan.DevplanError,
            match=r"<string>:4:3: error: assertion failed: 'arith.addf' on tensors of different "
            r"shapes: dimension 0 of operand 1 differs from dimension 0 of operand 0",
        ):
            devplan.execute(module, [a, b])
    assert_matches_oracle(DYNAMIC_ADD, [np.arange(5, dtype=np.float32)] * 2)


DYNAMIC_MATMUL = """
func.func @main(%a: tensor<?x?xf32> {vdev.device = {G0}}, %b: tensor<?x?xf32> {vdev.device = {G0}},
                %c: tensor<?x?xf32> {vdev.device = {G0}}) -> (tensor<?x?xf32> {vdev.device = {G0}}) {
  %m = linalg.matmul {vdev.device = {G0}} ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %m : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize(
    ("shapes", "mismatch"),
    [
        (
            ((2, 3), (4, 5), (2, 5)),
            "dimension 0 of ins\\[1\\] differs from dimension 1 of ins\\[0\\]",
        ),
        (
            ((2, 3), (3, 5), (3, 5)),
            "dimension 0 of outs\\[0\\] differs from dimension 0 of ins\\[0\\]",
        ),
        (
            ((2, 3), (3, 5), (2, 4)),
            "dimension 1 of outs\\[0\\] differs from dimension 1 of ins\\[1\\]",
        ),
    ],
)
def test_matmul_of_mismatched_dynamic_shapes_fails_at_the_op_instead_of_reading_zeros(
    shapes: tuple[tuple[int, int], ...], mismatch: str
) -> None:
    module = lowered(DYNAMIC_MATMUL)
    inputs = [np.ones(shape, np.float32) for shape in shapes]
    with pytest.raises(
        devplan.DevplanError,
        match=rf"<string>:4:3: error: assertion failed: 'linalg.matmul' on tensors of different shapes: {mismatch}",
    ):
        devplan.execute(module, inputs)


def test_matmul_of_agreeing_dynamic_shapes_matches_the_oracle() -> None:
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape).astype(np.float32) for shape in ((3, 0), (0, 2), (3, 2))]
    assert_matches_oracle(DYNAMIC_MATMUL, inputs)
    inputs = [rng.standard_normal(shape).astype(np.float32) for shape in ((3, 5), (5, 2), (3, 2))]
    assert_matches_oracle(DYNAMIC_MATMUL, inputs)


def test_a_constant_with_no_elements_lowers_to_an_empty_buffer() -> None:
    # xDSL's DenseIntOrFPElementsAttr.is_splat() raised IndexError on no data: exit 2.
    text = """
func.func @main() -> (tensor<0x3xf32> {vdev.device = {G0}}, tensor<2x0xi32> {vdev.device = {H}}) {
  %k = arith.constant {vdev.device = {G0}} dense<1.5> : tensor<0x3xf32>
  %m = arith.constant {vdev.device = {H}} dense<7> : tensor<2x0xi32>
  func.return %k, %m : tensor<0x3xf32>, tensor<2x0xi32>
}
"""
    result = assert_matches_oracle(text, [])
    assert [o.shape for o in result.outputs] == [(0, 3), (2, 0)]
