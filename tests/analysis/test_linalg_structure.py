"""`structure_of`: the generic form (maps, iterators, bounds, flops and bytes per
iteration) of linalg ops, read off the ops' own definitions."""

# ruff: noqa: E501  (IR lines in test programs are long)

from __future__ import annotations

from typing import cast

import numpy as np
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import BroadcastOp, GenericOp, ReduceOp, TransposeOp
from xdsl.ir import Region
from xdsl.rewriter import Rewriter

import devplan
from devplan.analysis.linalg_structure import structure_of
from devplan.reference.program import evaluate

PROGRAM = """func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %o: tensor<1x4x6x6xf32>, %a: tensor<4x8xi8>, %b: tensor<8x2xi8>, %c: tensor<4x2xi32>, %d: tensor<?x5xf64>, %r: tensor<?xf64>) -> (tensor<1x4x6x6xf32>, tensor<4x2xi32>, tensor<?xf64>) {
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%o : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<4x8xi8>, tensor<8x2xi8>) outs(%c : tensor<4x2xi32>) -> tensor<4x2xi32>
  %red = linalg.reduce ins(%d : tensor<?x5xf64>) outs(%r : tensor<?xf64>) dimensions = [1]
    (%in: f64, %acc: f64) {
      %s = arith.addf %in, %acc : f64
      linalg.yield %s : f64
    }
  func.return %conv, %mm, %red : tensor<1x4x6x6xf32>, tensor<4x2xi32>, tensor<?xf64>
}"""


def test_structure_of_named_ops_and_reduce() -> None:
    module = devplan.parse(PROGRAM)
    conv, matmul, reduce = (
        op for op in module.walk() if op.name.startswith("linalg.") and op.name != "linalg.yield"
    )
    s = structure_of(conv)
    assert s is not None
    assert s.loop_bounds == (1, 4, 6, 6, 3, 3, 3)
    assert s.iterations == 1 * 4 * 36 * 27
    assert [str(i) for i in s.iterators] == ["parallel"] * 4 + ["reduction"] * 3
    assert str(s.maps[0]) == "(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, (d2 + d5), (d3 + d6))"
    assert (s.flops_per_iteration, s.bytes_per_iteration) == (2, 16)
    m = structure_of(matmul)
    assert m is not None  # two extsi, a muli and an addi; i8 + i8 read, i32 read and written
    assert (m.flops_per_iteration, m.bytes_per_iteration, m.loop_bounds) == (4, 10, (4, 2, 8))
    r = structure_of(reduce)
    assert r is not None
    assert r.loop_bounds == (None, 5)
    assert r.iterations is None
    assert [str(m) for m in r.maps] == ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)"]
    assert structure_of(next(op for op in module.walk() if op.name == "func.return")) is None


OPS_WITHOUT_GENERALISATION = """func.func @main(%x: tensor<2x3x4xi32>, %v: tensor<3xi32>) -> (tensor<3x4x2xi32>, tensor<2x3x5xi32>, tensor<3xi32>) {
  %et = tensor.empty() : tensor<3x4x2xi32>
  %t = linalg.transpose ins(%x : tensor<2x3x4xi32>) outs(%et : tensor<3x4x2xi32>) permutation = [1, 2, 0]
  %eb = tensor.empty() : tensor<2x3x5xi32>
  %b = linalg.broadcast ins(%v : tensor<3xi32>) outs(%eb : tensor<2x3x5xi32>) dimensions = [0, 2]
  %r = linalg.reduce ins(%x : tensor<2x3x4xi32>) outs(%v : tensor<3xi32>) dimensions = [0, 2]
    (%in: i32, %acc: i32) {
      %s = arith.muli %in, %acc : i32
      linalg.yield %s : i32
    }
  func.return %t, %b, %r : tensor<3x4x2xi32>, tensor<2x3x5xi32>, tensor<3xi32>
}"""


def test_generic_form_of_transpose_broadcast_and_reduce_computes_what_they_do() -> None:
    # The oracle evaluates these three ops with NumPy; the generic ops built from
    # structure_of (xDSL's transpose maps, the maps built here for the others) must agree.
    module = devplan.parse(OPS_WITHOUT_GENERALISATION)
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4) % 5 + 1
    v = np.array([1, 2, 3], np.int32)
    expected = evaluate(module, [x, v])
    for op in [o for o in module.walk() if isinstance(o, TransposeOp | BroadcastOp | ReduceOp)]:
        s = structure_of(op)
        assert s is not None
        generic = GenericOp(
            op.operands[: s.num_inputs],
            op.operands[s.num_inputs :],
            cast(Region, s.body.parent).clone(),
            [AffineMapAttr(m) for m in s.maps],
            [IteratorTypeAttr(i) for i in s.iterators],
            op.result_types,
        )
        Rewriter.replace_op(op, generic)
    module.verify()
    for got, want in zip(evaluate(module, [x, v]), expected, strict=True):
        np.testing.assert_array_equal(got, want)
