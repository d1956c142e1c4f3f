# ruff: noqa: E501  (IR lines in test programs are long)
"""How lower-to-device launches a `linalg.generic` (`generic.py`): the shared fill kernel
for a scalar broadcast, run-time shape checks an output sized from its input may skip,
and the bodies it refuses. Lowering only, or the numpy backend (no Numba compile)."""

from __future__ import annotations

import numpy as np
import pytest

import devplan
from devplan.dialects.kernel import KernelFuncOp

BROADCASTS = """
func.func @main(%v: f32) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %e = tensor.empty() : tensor<4x3xf32>
  %a = linalg.fill ins(%v : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v : f32) outs(%e : tensor<4x3xf32>) {
  ^bb0(%s: f32, %o: f32):
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  func.return %a, %b : tensor<4x3xf32>, tensor<4x3xf32>
}
"""


def test_a_generic_broadcasting_a_scalar_launches_the_fill_kernel_linalg_fill_does() -> None:
    module = devplan.apply(devplan.parse(BROADCASTS), "plan-devices,lower-to-device")
    kernels = [k.sym_name.data for k in module.walk() if isinstance(k, KernelFuncOp)]
    assert kernels == ["fill_f32"]  # over flat views of the 4x3 buffers


SQUARE = """
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x?xf32>
  %e = tensor.empty(%rows, %rows) : tensor<?x?xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<?x?xf32>
  func.return %neg : tensor<?x?xf32>
}
"""


def test_an_output_sized_from_another_dimension_of_its_input_is_checked_at_run_time() -> None:
    # the output is rows x rows: sized from dimension 0 of %x, its dimension 1 is not
    # known to match %x's dimension 1, so a 2x3 input must fail rather than be cut to 2x2
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    (square,) = devplan.execute(devplan.parse(SQUARE), [x], kernel_backend="numpy").outputs
    np.testing.assert_array_equal(square, -x)
    with pytest.raises(
        devplan.DevplanError,
        match=r"<string>:6:3: error: assertion failed: 'linalg.generic' on tensors of different "
        r"shapes: dimension 1 of outs\[0\] differs from dimension 1 of ins\[0\]",
    ):
        devplan.execute(devplan.parse(SQUARE), [x[:2]], kernel_backend="numpy")


YIELDS_NOTHING = """
func.func @main(%x: tensor<4x8xf32>, %i: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%i : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""


def test_a_body_yielding_fewer_values_than_outputs_is_a_located_error() -> None:
    # xDSL parses it; before the check, lower-to-device built an scf.for that failed to verify
    with pytest.raises(
        devplan.DevplanError,
        match=r"<string>:3:3: error: 'linalg.generic' is not lowered by lower-to-device: its "
        r"body yields 0 value\(s\) for 1 output\(s\)",
    ):
        devplan.apply(devplan.parse(YIELDS_NOTHING), "plan-devices,lower-to-device")
