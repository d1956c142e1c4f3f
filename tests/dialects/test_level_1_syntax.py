# ruff: noqa: E501  (IR lines in test programs are long)
"""Level-1 ops keep a `vdev.device` attribute through print and parse.

plan-devices writes one on every op that yields tensors, and lower-to-device reads it
back, also from text (`devplan-opt -p plan-devices | devplan-opt -p lower-to-device`).
xDSL 0.74 drops the attributes of `tensor.empty` when printing;
`devplan.upstream.tensor` restores MLIR's syntax for it.
"""

from __future__ import annotations

import pytest
from xdsl.dialects import func

import devplan
from devplan.dialects.vdev import DEVICE_ATTR
from devplan.dialects.virtual_device import DeviceAttr

LEVEL_1_OPS = """
func.func @f(%x: tensor<4xf32>, %i: tensor<4xi32>, %c: tensor<4xi1>, %s: f32, %n: index, %b: i1) {
  %0 = arith.addf %x, %x : tensor<4xf32>
  %1 = arith.negf %x : tensor<4xf32>
  %2 = math.exp %x : tensor<4xf32>
  %7 = arith.constant dense<1.0> : tensor<4xf32>
  %8 = tensor.empty() : tensor<4xf32>
  %9 = tensor.empty(%n) : tensor<?xf32>
  %10 = linalg.fill ins(%s : f32) outs(%8 : tensor<4xf32>) -> tensor<4xf32>
  %11 = math.fma %x, %x, %x : tensor<4xf32>
  %12 = arith.extf %x : tensor<4xf32> to tensor<4xf64>
  %14 = arith.select %b, %x, %x : tensor<4xf32>
  %16 = arith.divsi %i, %i : tensor<4xi32>
  %18 = linalg.matmul ins(%8, %8 : tensor<4xf32>, tensor<4xf32>) outs(%8 : tensor<4xf32>) -> tensor<4xf32>
  func.return
}
"""


def test_placement_attribute_survives_print_and_parse_on_every_level_1_op() -> None:
    module = devplan.parse(LEVEL_1_OPS, verify=False)
    device = DeviceAttr.make("cuda", 0, "cuda", "global")
    body = next(op for op in module.ops if isinstance(op, func.FuncOp)).body.block
    placed = [op for op in body.ops if op.results]
    for op in placed:
        op.attributes[DEVICE_ATTR] = device
    reparsed = devplan.parse(str(module), verify=False)
    body = next(op for op in reparsed.ops if isinstance(op, func.FuncOp)).body.block
    again = [op for op in body.ops if op.results]
    assert [op.name for op in again] == [op.name for op in placed]
    lost = [op.name for op in again if op.attributes.get(DEVICE_ATTR) != device]
    assert lost == []


@pytest.mark.parametrize(
    "line",
    ["%e = tensor.empty(%n) {tag} : tensor<?xf32>", "%e = tensor.empty() : tensor<2xf32>"],
)
def test_tensor_empty_prints_as_mlir_writes_it(line: str) -> None:
    text = f"func.func @f(%n: index) {{\n  {line}\n  func.return\n}}"
    assert line in str(devplan.parse(text))
