"""The oracle's linalg (`devplan.reference.linalg`): `linalg.generic` over its iteration
space, and each named op from its MLIR definition, checked against the op's generic form
(xDSL's `linalg-generalize-named-ops`), which checks the definitions and the oracle both."""

# ruff: noqa: E501  (IR lines in test programs are long)

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.transforms.linalg_generalize_named_ops import LinalgGeneralizeNamedOpsPass

import devplan
from devplan.diagnostics import DevplanError
from devplan.reference.program import evaluate

Array = np.ndarray[Any, Any]


class Case(NamedTuple):
    op: str
    attrs: str
    ins: tuple[str, ...]
    out: str


def _window(strides: list[int], dilations: list[int]) -> str:
    n = len(strides)
    return (
        f"{{dilations = dense<{dilations}> : tensor<{n}xi64>, "
        f"strides = dense<{strides}> : tensor<{n}xi64>}}"
    )


CASES = [
    Case("matmul", "", ("4x8xf32", "8x3xf32"), "4x3xf32"),
    Case("matmul", "", ("4x8xf16", "8x3xf16"), "4x3xf32"),
    Case("matmul", "", ("4x8xi8", "8x3xi8"), "4x3xi32"),
    Case("batch_matmul", "", ("2x3x4xf64", "2x4x5xf64"), "2x3x5xf64"),
    Case("batch_matmul", "", ("2x3x4xi8", "2x4x5xi8"), "2x3x5xi32"),
    Case("matvec", "", ("3x4xf32", "4xf32"), "3xf32"),
    Case("vecmat", "", ("4xf64", "4x3xf64"), "3xf64"),
    Case("dot", "", ("5xi32", "5xi32"), "i32"),
    Case("mmt4d", "", ("2x3x2x4xf32", "2x3x3x4xf32"), "2x2x2x3xf32"),
    Case("quantized_matmul", "", ("3x4xi8", "4x2xi8", "i32", "i32"), "3x2xi32"),
    Case("conv_1d", "", ("7xf64", "3xf64"), "5xf64"),
    Case("conv_2d", "", ("5x6xi32", "2x3xi32"), "4x4xi32"),
    Case("conv_3d", "", ("4x4x4xf32", "2x2x2xf32"), "3x3x3xf32"),
    Case("conv_1d_nwc_wcf", _window([2], [1]), ("1x9x2xf64", "3x2x4xf64"), "1x4x4xf64"),
    Case("conv_3d_ndhwc_dhwcf", _window([1, 2, 1], [1, 1, 2]), ("1x3x5x5x2xf64", "2x2x2x2x3xf64"), "1x2x2x3x3xf64"),
    Case("depthwise_conv_2d_nhwc_hwc", _window([2, 1], [1, 2]), ("2x5x6x3xf64", "2x2x3xf64"), "2x2x4x3xf64"),
    Case("conv_2d_nchw_fchw", _window([2, 1], [1, 2]), ("1x3x7x7xf64", "4x3x3x2xf64"), "1x4x3x5xf64"),
    Case("conv_2d_nchw_fchw", _window([1, 1], [1, 1]), ("1x2x4x4xi8", "3x2x2x2xi8"), "1x3x3x3xi32"),
    Case("conv_2d_ngchw_fgchw", _window([1, 1], [1, 1]), ("1x2x3x4x4xf64", "2x2x3x2x2xf64"), "1x2x2x3x3xf64"),
    Case("conv_2d_ngchw_gfchw", _window([1, 2], [1, 1]), ("1x2x3x4x5xf64", "2x4x3x2x2xf64"), "1x2x4x3x2xf64"),
    Case("conv_2d_nhwc_fhwc", _window([1, 1], [2, 1]), ("1x6x5x3xf64", "2x2x2x3xf64"), "1x4x4x2xf64"),
    Case("conv_2d_nhwc_hwcf", _window([2, 2], [1, 1]), ("1x5x5x3xf64", "2x2x3x4xf64"), "1x2x2x4xf64"),
    Case("conv_2d_nhwgc_gfhwc", _window([1, 1], [1, 1]), ("1x4x4x2x3xf64", "2x3x2x2x3xf64"), "1x3x3x2x3xf64"),
    Case("pooling_nchw_max", _window([2, 2], [1, 1]), ("1x2x5x5xf32", "2x2xf32"), "1x2x2x2xf32"),
    Case("pooling_nchw_max", "", ("1x2x4x4xi32", "2x2xi32"), "1x2x3x3xi32"),
    Case("pooling_nhwc_max", _window([1, 2], [2, 1]), ("1x5x6x2xf64", "2x2xf64"), "1x3x3x2xf64"),
    Case("pooling_nchw_sum", _window([1, 1], [1, 1]), ("1x2x4x4xf64", "2x3xf64"), "1x2x3x2xf64"),
    Case("pooling_nhwc_sum", _window([2, 1], [1, 1]), ("2x5x4x2xi8", "2x2xi8"), "2x2x3x2xi32"),
    Case("add", "", ("3x4xi8", "3x4xi8"), "3x4xi8"),
    Case("sub", "", ("3x4xf64", "3x4xf64"), "3x4xf64"),
    Case("mul", "", ("3x4xf32", "3x4xf32"), "3x4xf32"),
    Case("div", "", ("3x4xf64", "3x4xf64"), "3x4xf64"),
    Case("div", "", ("3x4xi32", "3x4xi32"), "3x4xi32"),
    Case("max", "", ("3x4xf64", "3x4xf64"), "3x4xf64"),
    Case("min", "", ("3x4xi32", "3x4xi32"), "3x4xi32"),
    Case("exp", "", ("3x4xf64",), "3x4xf64"),
    Case("log", "", ("3x4xf64",), "3x4xf64"),
    Case("sqrt", "", ("3x4xf32",), "3x4xf32"),
    Case("select", "", ("3x4xi1", "3x4xf64", "3x4xf64"), "3x4xf64"),
    Case("copy", "", ("3x4xf64",), "3x4xf64"),
]


def _is_scalar(case: Case, spec: str) -> bool:
    return case.op == "quantized_matmul" and "x" not in spec


def _program(case: Case) -> str:
    ins = [s if _is_scalar(case, s) else f"tensor<{s}>" for s in case.ins]
    out = f"tensor<{case.out}>"
    args = [f"%a{i}: {t}" for i, t in enumerate(ins)] + [f"%o: {out}"]
    names = ", ".join(f"%a{i}" for i in range(len(ins)))
    return (
        f"func.func @main({', '.join(args)}) -> {out} {{\n"
        f"  %r = linalg.{case.op} {case.attrs} ins({names} : {', '.join(ins)}) outs(%o : {out}) -> {out}\n"
        f"  func.return %r : {out}\n}}"
    )


def _value(case: Case, spec: str, rng: np.random.Generator) -> object:
    *dims, element = spec.split("x")
    shape = tuple(int(d) for d in dims)
    if _is_scalar(case, spec):
        return int(rng.integers(-3, 3))
    if element == "i1":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if element.startswith("i"):
        values = rng.integers(-4, 5, shape)
        if case.op == "div":
            values = np.where(values == 0, 3, values)
        return values.astype(np.dtype(f"int{element[1:]}"))
    low = 0.5 if case.op in ("log", "sqrt") else -2.0
    return rng.uniform(low, 2.0, shape).astype(np.dtype(f"float{element[1:]}"))


def _compare(named: Array, generic: Array) -> None:
    assert named.dtype == generic.dtype and named.shape == generic.shape
    if named.dtype.kind != "f":
        np.testing.assert_array_equal(named, generic)
    else:
        rtol = 1e-12 if named.dtype == np.float64 else 1e-5
        np.testing.assert_allclose(named, generic, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}-{'-'.join(c.ins)}" for c in CASES])
def test_named_op_agrees_with_its_generic_form(case: Case) -> None:
    rng = np.random.default_rng(len(case.op) + len(case.ins))
    inputs = [_value(case, s, rng) for s in (*case.ins, case.out)]
    module = devplan.parse(_program(case))
    (named,) = evaluate(module, inputs)
    LinalgGeneralizeNamedOpsPass().apply(devplan.context(), module)
    module.verify()
    assert any(isinstance(op, GenericOp) for op in module.walk())
    (generic,) = evaluate(module, inputs)
    _compare(np.asarray(named), np.asarray(generic))
