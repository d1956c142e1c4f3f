"""The oracle's linalg (`devplan.reference.linalg`): `linalg.generic` over its iteration
space, and each named op from its MLIR definition, checked against the op's generic form
(xDSL's `linalg-generalize-named-ops`), which checks the definitions and the oracle both."""

# ruff: noqa: E501  (IR lines in test programs are long)

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support.named_linalg_ops import CASES, Case, program, value
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.transforms.linalg_generalize_named_ops import LinalgGeneralizeNamedOpsPass

import devplan
from devplan.diagnostics import DevplanError
from devplan.reference.program import evaluate

Array = np.ndarray[Any, Any]


def _compare(named: Array, generic: Array) -> None:
    assert named.dtype == generic.dtype
    assert named.shape == generic.shape
    if named.dtype.kind != "f":
        np.testing.assert_array_equal(named, generic)
    else:
        rtol = 1e-12 if named.dtype == np.float64 else 1e-5
        np.testing.assert_allclose(named, generic, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}-{'-'.join(c.ins)}" for c in CASES])
def test_named_op_agrees_with_its_generic_form(case: Case) -> None:
    rng = np.random.default_rng(len(case.op) + len(case.ins))
    inputs = [value(case, s, rng) for s in (*case.ins, case.out)]
    module = devplan.parse(program(case))
    (named,) = evaluate(module, inputs)
    LinalgGeneralizeNamedOpsPass().apply(devplan.context(), module)
    module.verify()
    assert any(isinstance(op, GenericOp) for op in module.walk())
    (generic,) = evaluate(module, inputs)
    _compare(np.asarray(named), np.asarray(generic))


def run(body: str, signature: str, inputs: list[object]) -> list[Any]:
    return evaluate(devplan.parse(f"func.func @main{signature} {{{body}\n}}"), inputs)


def test_generic_with_sum_maps_index_and_dynamic_shapes() -> None:
    # out[i] = sum_k x[2 * i + k] * w[k] * k, every length dynamic, k from linalg.index.
    body = """
  %r = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i * 2 + k)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x, %w : tensor<?xi64>, tensor<?xi64>) outs(%o : tensor<?xi64>) {
  ^bb0(%v: i64, %wk: i64, %acc: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %p = arith.muli %v, %wk : i64
    %q = arith.muli %p, %ki : i64
    %s = arith.addi %acc, %q : i64
    linalg.yield %s : i64
  } -> tensor<?xi64>
  func.return %r : tensor<?xi64>"""
    signature = "(%x: tensor<?xi64>, %w: tensor<?xi64>, %o: tensor<?xi64>) -> tensor<?xi64>"
    x, w, o = np.arange(9, dtype=np.int64), np.array([5, 6, 7], np.int64), np.ones(4, np.int64)
    (out,) = run(body, signature, [x, w, o])
    expected = [1 + sum(x[2 * i + k] * w[k] * k for k in range(3)) for i in range(4)]
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(DevplanError, match=r"<string>:2:3: .*reaches index 9 of dimension 0"):
        run(body, signature, [np.arange(9, dtype=np.int64), w, np.ones(5, np.int64)])


def test_generic_reduction_sums_in_loop_order_with_several_outputs() -> None:
    body = """
  %r:2 = linalg.generic {indexing_maps = [affine_map<(k, i) -> (i, k)>, affine_map<(k, i) -> (i)>, affine_map<(k, i) -> (i)>], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<2x4xf32>) outs(%s, %m : tensor<2xf32>, tensor<2xf32>) {
  ^bb0(%v: f32, %acc: f32, %mx: f32):
    %a = arith.addf %acc, %v : f32
    %b = arith.maximumf %mx, %v : f32
    linalg.yield %a, %b : f32, f32
  } -> (tensor<2xf32>, tensor<2xf32>)
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<2xf32>"""
    x = np.array([[1e8, 1.0, -1e8, 1.0], [3.0, -2.0, 7.0, 0.5]], np.float32)
    s, m = run(body, "(%x: tensor<2x4xf32>, %s: tensor<2xf32>, %m: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)",
               [x, np.zeros(2, np.float32), np.full(2, -np.inf, np.float32)])  # fmt: skip
    sequential = np.float32(0)
    for v in x[0]:
        sequential = np.float32(sequential + v)
    assert s[0] == sequential == np.float32(1.0)  # 1e8 + 1 rounds away in f32, in order
    np.testing.assert_array_equal(m, [1e8, 7.0])


def test_generic_broadcast_of_a_dynamic_vector_and_shape_mismatch_is_located() -> None:
    body = """
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<?xf64>) outs(%o : tensor<?x?xf64>) {
  ^bb0(%v: f64, %out: f64):
    %s = arith.addf %v, %out : f64
    linalg.yield %s : f64
  } -> tensor<?x?xf64>
  func.return %r : tensor<?x?xf64>"""
    signature = "(%b: tensor<?xf64>, %o: tensor<?x?xf64>) -> tensor<?x?xf64>"
    (out,) = run(body, signature, [np.array([1.0, 2.0, 3.0]), np.ones((2, 3))])
    np.testing.assert_array_equal(out, [[2.0, 3.0, 4.0], [2.0, 3.0, 4.0]])
    with pytest.raises(DevplanError, match=r"<string>:2:3: error: loop d1 runs to 4"):
        run(body, signature, [np.ones(4), np.ones((2, 3))])


def test_linalg_reduce_transpose_and_broadcast_follow_numpy() -> None:
    body = """
  %e = tensor.empty() : tensor<3xi32>
  %z = arith.constant 0 : i32
  %init = linalg.fill ins(%z : i32) outs(%e : tensor<3xi32>) -> tensor<3xi32>
  %s = linalg.reduce ins(%x : tensor<2x3xi32>) outs(%init : tensor<3xi32>) dimensions = [0]
    (%in: i32, %acc: i32) {
      %r = arith.addi %in, %acc : i32
      linalg.yield %r : i32
    }
  %et = tensor.empty() : tensor<3x2xi32>
  %t = linalg.transpose ins(%x : tensor<2x3xi32>) outs(%et : tensor<3x2xi32>) permutation = [1, 0]
  %eb = tensor.empty() : tensor<4x3xi32>
  %b = linalg.broadcast ins(%s : tensor<3xi32>) outs(%eb : tensor<4x3xi32>) dimensions = [0]
  func.return %t, %b : tensor<3x2xi32>, tensor<4x3xi32>"""
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    t, b = run(body, "(%x: tensor<2x3xi32>) -> (tensor<3x2xi32>, tensor<4x3xi32>)", [x])
    np.testing.assert_array_equal(t, x.T)
    np.testing.assert_array_equal(b, np.broadcast_to(x.sum(axis=0), (4, 3)))


def test_integer_division_by_zero_in_linalg_div_is_located() -> None:
    body = """
  %r = linalg.div ins(%a, %b : tensor<2xi32>, tensor<2xi32>) outs(%a : tensor<2xi32>) -> tensor<2xi32>
  func.return %r : tensor<2xi32>"""
    signature = "(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32>"
    (q,) = run(body, signature, [np.array([-7, 7], np.int32), np.array([2, -2], np.int32)])
    np.testing.assert_array_equal(q, [-3, -3])  # truncation toward zero
    with pytest.raises(DevplanError, match=r"<string>:2:3: .*divides by zero"):
        run(body, signature, [np.array([1, 2], np.int32), np.array([1, 0], np.int32)])


def test_output_map_that_is_not_a_permutation_of_the_parallel_loops_is_refused() -> None:
    body = """
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i + j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x2xf64>) outs(%o : tensor<3xf64>) {
  ^bb0(%v: f64, %acc: f64):
    %s = arith.addf %acc, %v : f64
    linalg.yield %s : f64
  } -> tensor<3xf64>
  func.return %r : tensor<3xf64>"""
    with pytest.raises(DevplanError, match=r"<string>:2:3: error: .*output #0 has map"):
        run(
            body,
            "(%x: tensor<2x2xf64>, %o: tensor<3xf64>) -> tensor<3xf64>",
            [np.ones((2, 2)), np.zeros(3)],
        )


def test_fill_casts_its_value_to_the_output_element_type() -> None:
    body = """
  %r = linalg.fill ins(%v : f32) outs(%o : tensor<2xbf16>) -> tensor<2xbf16>
  func.return %r : tensor<2xbf16>"""
    (out,) = run(
        body,
        "(%v: f32, %o: tensor<2xbf16>) -> tensor<2xbf16>",
        [1.005859375, np.zeros(2, np.uint16)],
    )
    np.testing.assert_array_equal(out, [0x3F81, 0x3F81])  # 1 + 0.75 * 2^-7 rounds up
