# ruff: noqa: E501  (IR lines in test programs are long)
"""Views (`views.py`): slices, ranked casts and reshapes of row-major elements on one
device become `device.view`s of their source: nothing allocated or copied, kernels read
them in place, and a value written after its view was taken leaves the view as it was."""

from __future__ import annotations

import numpy as np
import pytest

import devplan
from devplan.reference.program import evaluate

G0 = '{vdev.device = #vdev.device<"cuda", 0>}'
VIEWS = f"""
func.func @main(%x: tensor<6x8xf32> {G0}, %i: index, %n: index, %shape: tensor<2xi32>) -> (tensor<?x3xf32> {G0}, tensor<4x12xf32> {G0}, tensor<?x8xf32> {G0}, tensor<8x6xf32> {G0}, tensor<16xf32> {G0}) {{
  %s = tensor.extract_slice %x[%i, 1] [%n, 3] [2, 2] : tensor<6x8xf32> to tensor<?x3xf32>
  %a = arith.addf %s, %s : tensor<?x3xf32>
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<6x8xf32> into tensor<48xf32>
  %wide = tensor.expand_shape %flat [[0, 1]] output_shape [4, 12] : tensor<48xf32> into tensor<4x12xf32>
  %b = arith.mulf %wide, %wide : tensor<4x12xf32>
  %dyn = tensor.cast %x : tensor<6x8xf32> to tensor<?x8xf32>
  %c = arith.negf %dyn : tensor<?x8xf32>
  %r = tensor.reshape %x(%shape) : (tensor<6x8xf32>, tensor<2xi32>) -> tensor<8x6xf32>
  %d = arith.addf %r, %r : tensor<8x6xf32>
  %rows = tensor.extract_slice %x[%i, 0] [2, 8] [1, 1] : tensor<6x8xf32> to tensor<2x8xf32>
  %both = tensor.collapse_shape %rows [[0, 1]] : tensor<2x8xf32> into tensor<16xf32>
  %e = arith.subf %both, %both : tensor<16xf32>
  return %a, %b, %c, %d, %e : tensor<?x3xf32>, tensor<4x12xf32>, tensor<?x8xf32>, tensor<8x6xf32>, tensor<16xf32>
}}
"""


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_slices_and_reshapes_on_one_device_allocate_and_copy_nothing(backend: str) -> None:
    """Each op is a view of %x on cuda:0 (the collapse of whole rows too): the device
    allocates only %x's upload and the five results, and moves only those bytes; the
    kernels read the views in place."""
    inputs = [np.arange(48, dtype=np.float32).reshape(6, 8), 1, 3, np.array([8, 6], np.int32)]
    expected = evaluate(devplan.parse(VIEWS), inputs)
    result = devplan.execute(devplan.parse(VIEWS), inputs, kernel_backend=backend)
    for i, (got, want) in enumerate(zip(result.outputs, expected, strict=True)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=f"output {i}")
    gpu = result.report.devices["cuda:0"]
    assert (gpu.allocations, gpu.frees, gpu.launches, gpu.local_copies) == (6, 6, 5, 0)
    link = result.report.links["cpu:0<->cuda:0"]
    assert (link.copies, link.bytes) == (6, 4 * (48 + 3 * 3 + 48 + 48 + 48 + 16))
    assert not result.leaks


LIVE_VIEWS = f"""
func.func @main(%x: tensor<4x4xf32> {G0}, %n: index) -> (tensor<4x4xf32> {G0}, tensor<2x4xf32> {G0}, tensor<4xf32> {G0}, tensor<4x4xf32> {G0}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = arith.addf %x, %x : tensor<4x4xf32>
  %top = tensor.extract_slice %e[0, 0] [2, 4] [1, 1] : tensor<4x4xf32> to tensor<2x4xf32>
  %row = tensor.extract_slice %e[1, 0] [1, 4] [1, 1] : tensor<4x4xf32> to tensor<4xf32>
  %z = arith.constant dense<-1.0> : tensor<2x4xf32>
  %put = tensor.insert_slice %z into %e[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x4xf32>
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%a = %row) -> (tensor<4xf32>) {{
    %b = arith.addf %a, %a : tensor<4xf32>
    scf.yield %b : tensor<4xf32>
  }}
  %loop = scf.for %k = %c0 to %n step %c1 iter_args(%a = %e) -> (tensor<4x4xf32>) {{
    %b = arith.mulf %a, %a : tensor<4x4xf32>
    scf.yield %b : tensor<4x4xf32>
  }}
  %after = arith.addf %top, %top : tensor<2x4xf32>
  return %put, %after, %acc, %loop : tensor<4x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4x4xf32>
}}
"""


def test_a_value_written_after_its_view_was_taken_leaves_the_view_as_it_was() -> None:
    """%top and %row view %e; %e is then written in place (insert_slice into its copy, a
    loop whose iteration argument it is), and the views are read after: the writes go to
    copies (the loop's init and the insert's destination are cloned, elide-copies keeps
    the clones), so the views still read %e, which is freed after its last view's use."""
    inputs = [np.arange(16, dtype=np.float32).reshape(4, 4), 2]
    expected = evaluate(devplan.parse(LIVE_VIEWS), inputs)
    result = devplan.execute(devplan.parse(LIVE_VIEWS), inputs, kernel_backend="numpy")
    for i, (got, want) in enumerate(zip(result.outputs, expected, strict=True)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=f"output {i}")
    e = 2 * inputs[0]
    np.testing.assert_array_equal(result.outputs[1], 2 * e[:2])
    np.testing.assert_array_equal(result.outputs[2], 4 * e[1])
    assert not result.leaks
