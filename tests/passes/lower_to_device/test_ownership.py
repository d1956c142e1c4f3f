"""Buffer ownership in lower-to-device (`ownership.py`): which values a loop may take the
buffer of, run under `strict` (a leak or a use after free is an error)."""

from __future__ import annotations

import numpy as np

import devplan
from devplan.reference.program import evaluate

LOOP_IN_A_BRANCH = """func.func @main(%x: tensor<4xf32>, %c: i1) -> (tensor<4xf32>, tensor<4xf32>) {
  %lb = arith.constant 0 : index
  %ub = arith.constant 3 : index
  %st = arith.constant 1 : index
  %y = arith.addf %x, %x : tensor<4xf32>
  %r = scf.if %c -> (tensor<4xf32>) {
    %l = scf.for %i = %lb to %ub step %st iter_args(%a = %y) -> (tensor<4xf32>) {
      %b = arith.addf %a, %a : tensor<4xf32>
      scf.yield %b : tensor<4xf32>
    }
    scf.yield %l : tensor<4xf32>
  } else {
    scf.yield %y : tensor<4xf32>
  }
  func.return %r, %y : tensor<4xf32>, tensor<4xf32>
}
"""


def test_a_loop_in_a_branch_does_not_take_the_buffer_of_a_value_from_outside_it() -> None:
    """%y is defined outside the scf.if and returned after it: the loop inside starts
    from a copy of it (taking its buffer would free %y before the return)."""
    x = np.arange(4, dtype=np.float32) + 1
    module = devplan.parse(LOOP_IN_A_BRANCH)
    for branch in (True, False):
        result = devplan.execute(module, [x, branch], kernel_backend="numpy", strict=True)
        expected = evaluate(module, [x, branch])
        np.testing.assert_array_equal(result.outputs[0], 16 * x if branch else 2 * x)
        for got, want in zip(result.outputs, expected, strict=True):
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(result.outputs[1], 2 * x)
