# ruff: noqa: E501  (IR lines in test programs are long)
"""One case of every named linalg op devplan knows (xDSL's and those `upstream/linalg.py`
adds), with mixed element types where MLIR's definitions extend operands: each a
one-op `@main` and its random inputs. The oracle's tests check each against the op's
generic form (`tests/reference/test_linalg.py`); lower-to-device's run each through the
pipeline against the oracle (`tests/passes/lower_to_device/test_named_ops.py`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Case(NamedTuple):
    """`linalg.<op> <attrs> ins(<ins>) outs(<out>)`: shapes and element types as in a
    tensor type (`4x8xf32`), a scalar operand as its type alone (`i32`)."""

    op: str
    attrs: str
    ins: tuple[str, ...]
    out: str


def window(strides: list[int], dilations: list[int]) -> str:
    """A convolution's or pooling's `{dilations = ..., strides = ...}`."""
    n = len(strides)
    return (
        f"{{dilations = dense<{dilations}> : tensor<{n}xi64>, "
        f"strides = dense<{strides}> : tensor<{n}xi64>}}"
    )


CASES = [
    Case("matmul", "", ("4x8xf32", "8x3xf32"), "4x3xf32"),
    Case("matmul", "", ("4x8xf16", "8x3xf16"), "4x3xf32"),
    Case("matmul", "", ("4x8xi8", "8x3xi8"), "4x3xi32"),
    Case(
        "matmul",
        "{indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]}",
        ("8x4xf64", "3x8xf64"),
        "4x3xf64",
    ),
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
    Case("conv_1d_nwc_wcf", window([2], [1]), ("1x9x2xf64", "3x2x4xf64"), "1x4x4xf64"),
    Case(
        "conv_3d_ndhwc_dhwcf",
        window([1, 2, 1], [1, 1, 2]),
        ("1x3x5x5x2xf64", "2x2x2x2x3xf64"),
        "1x2x2x3x3xf64",
    ),
    Case(
        "depthwise_conv_2d_nhwc_hwc",
        window([2, 1], [1, 2]),
        ("2x5x6x3xf64", "2x2x3xf64"),
        "2x2x4x3xf64",
    ),
    Case(
        "conv_2d_nchw_fchw", window([2, 1], [1, 2]), ("1x3x7x7xf64", "4x3x3x2xf64"), "1x4x3x5xf64"
    ),
    Case("conv_2d_nchw_fchw", window([1, 1], [1, 1]), ("1x2x4x4xi8", "3x2x2x2xi8"), "1x3x3x3xi32"),
    Case(
        "conv_2d_ngchw_fgchw",
        window([1, 1], [1, 1]),
        ("1x2x3x4x4xf64", "2x2x3x2x2xf64"),
        "1x2x2x3x3xf64",
    ),
    Case(
        "conv_2d_ngchw_gfchw",
        window([1, 2], [1, 1]),
        ("1x2x3x4x5xf64", "2x4x3x2x2xf64"),
        "1x2x4x3x2xf64",
    ),
    Case(
        "conv_2d_nhwc_fhwc", window([1, 1], [2, 1]), ("1x6x5x3xf64", "2x2x2x3xf64"), "1x4x4x2xf64"
    ),
    Case(
        "conv_2d_nhwc_hwcf", window([2, 2], [1, 1]), ("1x5x5x3xf64", "2x2x3x4xf64"), "1x2x2x4xf64"
    ),
    Case(
        "conv_2d_nhwgc_gfhwc",
        window([1, 1], [1, 1]),
        ("1x4x4x2x3xf64", "2x3x2x2x3xf64"),
        "1x3x3x2x3xf64",
    ),
    Case("pooling_nchw_max", window([2, 2], [1, 1]), ("1x2x5x5xf32", "2x2xf32"), "1x2x2x2xf32"),
    Case("pooling_nchw_max", "", ("1x2x4x4xi32", "2x2xi32"), "1x2x3x3xi32"),
    Case("pooling_nhwc_max", window([1, 2], [2, 1]), ("1x5x6x2xf64", "2x2xf64"), "1x3x3x2xf64"),
    Case("pooling_nchw_sum", window([1, 1], [1, 1]), ("1x2x4x4xf64", "2x3xf64"), "1x2x3x2xf64"),
    Case("pooling_nhwc_sum", window([2, 1], [1, 1]), ("2x5x4x2xi8", "2x2xi8"), "2x2x3x2xi32"),
    Case("add", "", ("3x4xi8", "3x4xi8"), "3x4xi8"),
    Case("add", "", ("3x4xi8", "3x4xi8"), "3x4xi32"),
    Case("copy", "", ("3x4xf16",), "3x4xf32"),
    Case("conv_2d_nhwc_hwcf", "", ("1x4x4x2xf16", "2x2x2x3xf16"), "1x3x3x3xf32"),
    Case("conv_2d_nchw_fchw", "", ("1x2x4x4xi8", "3x2x2x2xi32"), "1x3x3x3xi32"),
    Case("quantized_matmul", "", ("3x4xi32", "4x2xi32", "i32", "i32"), "3x2xi32"),
    Case("conv_2d_nchw_fchw_q", "", ("1x2x4x4xi8", "3x2x2x2xi8", "i32", "i32"), "1x3x3x3xi32"),
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


def is_scalar(case: Case, spec: str) -> bool:
    """Whether the operand `spec` is a scalar (the zero points of quantized_matmul and conv_2d_nchw_fchw_q)."""
    return case.op in ("quantized_matmul", "conv_2d_nchw_fchw_q") and "x" not in spec


def program(case: Case) -> str:
    """`@main(%a0, ..., %o)` returning `%r = linalg.<op> ins(%a0, ...) outs(%o)`, on four
    lines: the signature, the op, the return, the closing brace."""
    ins = [s if is_scalar(case, s) else f"tensor<{s}>" for s in case.ins]
    out = f"tensor<{case.out}>"
    args = [f"%a{i}: {t}" for i, t in enumerate(ins)] + [f"%o: {out}"]
    names = ", ".join(f"%a{i}" for i in range(len(ins)))
    return (
        f"func.func @main({', '.join(args)}) -> {out} {{\n"
        f"  %r = linalg.{case.op} {case.attrs} ins({names} : {', '.join(ins)}) outs(%o : {out}) -> {out}\n"
        f"  func.return %r : {out}\n}}"
    )


def value(case: Case, spec: str, rng: np.random.Generator) -> object:
    """A random value of operand `spec` (divisors nonzero, logs and roots of positives)."""
    *dims, element = spec.split("x")
    shape = tuple(int(d) for d in dims)
    if is_scalar(case, spec):
        return int(rng.integers(-3, 3))
    if element == "i1":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if element.startswith("i"):
        values = rng.integers(-100, 101, shape)  # i8 sums and products overflow 8 bits
        if case.op == "div":
            values = np.where(values == 0, 3, values)
        return values.astype(np.dtype(f"int{element[1:]}"))
    low = 0.5 if case.op in ("log", "sqrt") else -2.0
    return rng.uniform(low, 2.0, shape).astype(np.dtype(f"float{element[1:]}"))
