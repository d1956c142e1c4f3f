"""devplan's `linalg` dialect (`devplan.upstream.linalg`): MLIR's syntax for the named ops
xDSL 0.74 lacks, read and printed back unchanged, and their verifier errors located."""

# ruff: noqa: E501  (IR lines in test programs are long)

from __future__ import annotations

import re

import pytest
from xdsl.dialects.builtin import TensorType, f32
from xdsl.dialects.linalg import Linalg as XdslLinalg
from xdsl.dialects.linalg.ops import MatmulOp as XdslMatmulOp
from xdsl.ir import Block

import devplan
from devplan.diagnostics import DevplanError
from devplan.upstream.linalg import NAMED_OPS, MatmulOp, PoolingNhwcMaxOp

W2 = "{dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}"
OPS = {
    "linalg.matmul": ("", "tensor<4x8xf16>, tensor<8x2xf16>", "tensor<4x2xf32>"),
    "linalg.batch_matmul": ("", "tensor<2x4x8xf32>, tensor<2x8x3xf32>", "tensor<2x4x3xf32>"),
    "linalg.matvec": ("", "tensor<4x8xf32>, tensor<8xf32>", "tensor<4xf32>"),
    "linalg.vecmat": ("", "tensor<8xi8>, tensor<8x4xi8>", "tensor<4xi32>"),
    "linalg.dot": ("", "tensor<8xf32>, tensor<8xf32>", "tensor<f32>"),
    "linalg.mmt4d": ("", "tensor<2x3x4x5xf32>, tensor<6x3x7x5xf32>", "tensor<2x6x4x7xf32>"),
    "linalg.conv_1d": ("", "tensor<8xf32>, tensor<3xf32>", "tensor<6xf32>"),
    "linalg.conv_2d": ("", "tensor<6x6xf32>, tensor<3x3xf32>", "tensor<4x4xf32>"),
    "linalg.conv_3d": ("", "tensor<4x4x4xf32>, tensor<2x2x2xf32>", "tensor<3x3x3xf32>"),
    "linalg.conv_1d_nwc_wcf": (
        "{dilations = dense<1> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>}",
        "tensor<1x9x2xf32>, tensor<3x2x4xf32>",
        "tensor<1x4x4xf32>",
    ),
    "linalg.conv_3d_ndhwc_dhwcf": (
        "{dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}",
        "tensor<1x4x4x4x2xf32>, tensor<2x2x2x2x3xf32>",
        "tensor<1x3x3x3x3xf32>",
    ),
    "linalg.depthwise_conv_2d_nhwc_hwc": (
        W2,
        "tensor<1x5x5x3xf32>, tensor<2x2x3xf32>",
        "tensor<1x2x2x3xf32>",
    ),
    "linalg.pooling_nchw_max": (W2, "tensor<1x2x4x4xf32>, tensor<2x2xf32>", "tensor<1x2x2x2xf32>"),
    "linalg.pooling_nhwc_max": (W2, "tensor<1x4x4x2xf32>, tensor<2x2xf32>", "tensor<1x2x2x2xf32>"),
    "linalg.pooling_nchw_sum": ("", "tensor<1x2x4x4xf32>, tensor<2x2xf32>", "tensor<1x2x3x3xf32>"),
    "linalg.pooling_nhwc_sum": (W2, "tensor<1x4x4x2xf32>, tensor<2x2xf32>", "tensor<1x2x2x2xf32>"),
    "linalg.div": ("", "tensor<4xf32>, tensor<4xf32>", "tensor<4xf32>"),
    "linalg.conv_2d_nchw_fchw_q": (
        "",
        "tensor<1x2x3x3xi8>, tensor<2x2x2x2xi8>, i32, i32",
        "tensor<1x2x2x2xi32>",
    ),
}


def _program(name: str, attrs: str, ins: str, out: str) -> str:
    types = re.findall(r"tensor<[^>]*>|\w+", ins)
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    names = ", ".join(f"%a{i}" for i in range(len(types)))
    attrs = f" {attrs}" if attrs else ""
    return (
        f"func.func @main({args}, %o: {out}) -> {out} {{\n"
        f"  %r = {name}{attrs} ins({names} : {ins}) outs(%o : {out}) -> {out}\n"
        f"  func.return %r : {out}\n}}"
    )


def test_every_op_xdsl_lacks_has_a_case() -> None:
    xdsl_ops = {op.name for op in XdslLinalg.operations}
    assert {op.name for op in NAMED_OPS} - xdsl_ops <= set(OPS)


@pytest.mark.parametrize("name", sorted(OPS))
def test_named_op_round_trips_in_mlir_syntax(name: str) -> None:
    text = _program(name, *OPS[name])
    printed = str(devplan.parse(text))
    assert f"%r = {name}{' ' + OPS[name][0] if OPS[name][0] else ''} ins(" in printed
    assert str(devplan.parse(printed)) == printed


def test_devplan_matmul_is_xdsls_matmul_class_too() -> None:
    module = devplan.parse(_program("linalg.matmul", *OPS["linalg.matmul"]))
    matmul = next(op for op in module.walk() if op.name == "linalg.matmul")
    assert isinstance(matmul, MatmulOp)
    assert isinstance(matmul, XdslMatmulOp)


def test_generic_with_several_results_round_trips() -> None:
    text = """func.func @main(%x: tensor<4x8xf32>, %a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%a, %a : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%v: f32, %s: f32, %m: f32):
    %s1 = arith.addf %s, %v : f32
    %m1 = arith.maximumf %m, %v : f32
    linalg.yield %s1, %m1 : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}"""
    printed = str(devplan.parse(text))
    assert "-> (tensor<4xf32>, tensor<4xf32>)" in printed
    assert str(devplan.parse(printed)) == printed


@pytest.mark.parametrize(
    ("name", "attrs", "ins", "out", "message"),
    [
        ("linalg.conv_2d", W2, "tensor<6x6xf32>, tensor<3x3xf32>", "tensor<4x4xf32>",
         "takes no 'strides' attribute"),
        ("linalg.pooling_nhwc_max", "{strides = dense<2> : tensor<3xi64>}",
         "tensor<1x4x4x2xf32>, tensor<2x2xf32>", "tensor<1x2x2x2xf32>",
         r"needs 'strides' of 2 positive i64"),
        ("linalg.batch_matmul", "", "tensor<2x4x8xf32>, tensor<2x7x3xf32>", "tensor<2x4x3xf32>",
         "operand #1 has shape's dimension #1 to be 8, but found 7"),
        ("linalg.conv_1d", "", "tensor<5xf32>, tensor<3xf32>", "tensor<4xf32>",
         "greater than or equal to 6, but found 5"),
    ],
)  # fmt: skip
def test_named_op_errors_are_located(
    name: str, attrs: str, ins: str, out: str, message: str
) -> None:
    with pytest.raises(DevplanError, match=rf"<string>:2:3: error: '{name}' .*{message}"):
        devplan.parse(_program(name, attrs, ins, out))


def test_window_op_built_in_python_takes_strides_and_dilations() -> None:
    block = Block(
        arg_types=[
            TensorType(f32, [1, 5, 5, 2]),
            TensorType(f32, [2, 2]),
            TensorType(f32, [1, 2, 2, 2]),
        ]
    )
    op = PoolingNhwcMaxOp(block.args[:2], block.args[2:], strides=[2, 2], dilations=[1, 2])
    op.verify()
    assert (op.window_strides(), op.window_dilations()) == ((2, 2), (1, 2))
    assert str(op.get_indexing_maps().data[0].data) == (
        "(d0, d1, d2, d3, d4, d5) -> (d0, ((d1 * 2) + d4), ((d2 * 2) + (d5 * 2)), d3)"
    )


def test_generic_keeps_attributes_of_its_leading_dictionary() -> None:
    text = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"], vdev.device = #vdev.device<"cpu", 0>} outs(%x : tensor<4xf32>) {
  ^bb0(%v: f32):
    linalg.yield %v : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}"""
    printed = str(devplan.parse(text))
    assert 'attrs =  {vdev.device = #vdev.device<"cpu", 0>}' in printed
    assert str(devplan.parse(printed)) == printed
