"""`op_work`: what each level-1 op's launch computes and moves, from its iteration space,
its body and the footprints of its maps."""

# ruff: noqa: E501  (IR lines in test programs are long)

from __future__ import annotations

from xdsl.ir import Operation

import devplan
from devplan.analysis.op_work import TRANSCENDENTAL_FLOPS, op_work
from devplan.system.cost import Work

GENERICS = """
func.func @f(%x: tensor<16x8xf32>, %b: tensor<8xf32>, %s: tensor<40xf32>, %k: tensor<3xf32>, %o: tensor<16x8xf32>, %r: tensor<16xf32>) -> (tensor<16x8xf32>, tensor<16xf32>) {
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<16x8xf32>, tensor<8xf32>) outs(%o : tensor<16x8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %t = arith.addf %a, %c : f32
    %e = math.exp %t : f32
    linalg.yield %e : f32
  } -> tensor<16x8xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 * 2 + d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s, %k : tensor<40xf32>, tensor<3xf32>) outs(%r : tensor<16xf32>) {
  ^bb0(%a: f32, %kk: f32, %acc: f32):
    %p = arith.mulf %a, %kk : f32
    %t = arith.addf %p, %acc : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  func.return %g, %w : tensor<16x8xf32>, tensor<16xf32>
}
"""


def _ops(text: str) -> dict[str, Operation]:
    """The ops of the program by name, outside the bodies of linalg ops."""
    found: dict[str, Operation] = {}
    for op in devplan.parse(text).walk():
        parent = op.parent_op()
        if parent is None or not parent.name.startswith("linalg."):
            found.setdefault(op.name, op)
    return found


def test_work_of_matmul_elementwise_fill_and_empty() -> None:
    ops = _ops(
        """
func.func @f(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %e: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %c = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %d = arith.addf %c, %c : tensor<8x16xf32>
  %x = math.exp %d : tensor<8x16xf32>
  %z = arith.constant 0.0 : f32
  %t = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%t : tensor<8x16xf32>) -> tensor<8x16xf32>
  func.return %x : tensor<8x16xf32>
}
"""
    )
    # The accumulator is read and written; the scalar of a fill moves nothing.
    assert op_work(ops["linalg.matmul"]) == Work(2 * 8 * 16 * 4, (32 + 64 + 2 * 128) * 4)
    assert op_work(ops["arith.addf"]) == Work(128, 3 * 128 * 4)
    assert op_work(ops["math.exp"]) == Work(128 * TRANSCENDENTAL_FLOPS, 2 * 128 * 4)
    assert op_work(ops["linalg.fill"]) == Work(0, 128 * 4)
    assert op_work(ops["tensor.empty"]) == Work(0, 0)


def test_a_convolution_is_charged_its_iteration_space() -> None:
    ops = _ops(
        """
func.func @f(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>, %o: tensor<1x64x54x54xf32>) -> tensor<1x64x54x54xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) outs(%o : tensor<1x64x54x54xf32>) -> tensor<1x64x54x54xf32>
  func.return %c : tensor<1x64x54x54xf32>
}
"""
    )
    work = op_work(ops["linalg.conv_2d_nchw_fchw"])
    # One multiply and one add per point of n, f, oh, ow, c, kh, kw: 0.215 GFLOP.
    assert work == Work(
        2 * 64 * 54 * 54 * 64 * 9, (64 * 56 * 56 + 64 * 64 * 9 + 2 * 64 * 54 * 54) * 4
    )


def test_generic_footprints_follow_the_maps_and_transcendentals_weigh_more() -> None:
    generics = [op for op in devplan.parse(GENERICS).walk() if op.name == "linalg.generic"]
    # The broadcast bias is read once (8 elements), the unread output only written.
    assert op_work(generics[0]) == Work(128 * (1 + TRANSCENDENTAL_FLOPS), (128 + 8 + 128) * 4)
    # A window of 3 at stride 2 over 16 rows reaches 2 * 15 + 3 = 33 of the 40 elements;
    # the accumulator is read and written.
    assert op_work(generics[-1]) == Work(16 * 3 * 2, (33 + 3 + 2 * 16) * 4)


def test_dynamic_dimensions_need_an_assumed_size() -> None:
    ops = _ops(
        """
func.func @f(%a: tensor<?xf32>, %m: tensor<?x4xf32>, %n: tensor<4x8xf32>, %e: tensor<?x8xf32>) -> (tensor<?xf32>, tensor<?x8xf32>) {
  %d = arith.mulf %a, %a : tensor<?xf32>
  %c = linalg.matmul ins(%m, %n : tensor<?x4xf32>, tensor<4x8xf32>) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return %d, %c : tensor<?xf32>, tensor<?x8xf32>
}
"""
    )
    assert op_work(ops["arith.mulf"]) is None
    assert op_work(ops["arith.mulf"], dynamic_size=100) == Work(100, 1200)
    assert op_work(ops["linalg.matmul"]) is None
    assert op_work(ops["linalg.matmul"], dynamic_size=10) == Work(
        2 * 10 * 8 * 4, (40 + 32 + 2 * 80) * 4
    )
