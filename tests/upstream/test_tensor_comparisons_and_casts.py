"""Comparisons, `select` on a tensor condition, casts and the ops xDSL lacks (`remf`,
`index_castui`) on tensors, end to end.

They parse, verify and print as in MLIR (elementwise, same shape; comparisons give
`i1` of the operands' shape), the oracle evaluates them, and after default-pipeline
both kernel backends compute what the oracle does.
"""

# ruff: noqa: E501  (IR lines in test programs are long)

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerType, TensorType

import devplan
from devplan.diagnostics import DevplanError
from devplan.reference.program import evaluate

# A program split between the CPU and both GPUs: comparisons and selects on a GPU, the
# casts on the CPU and on the other GPU.
MIXED = """
func.func @main(%a: tensor<3x5xf32>, %b: tensor<3x5xf32>, %i: tensor<3x5xi32>, %j: tensor<3x5xi32>)
    -> (tensor<3x5xf32>, tensor<3x5xi1>, tensor<3x5xi64>, tensor<3x5xf64>, tensor<3x5xi8>, tensor<3x5xi32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xi32>, tensor<3x5xindex>, tensor<3x5xf32>, tensor<3x5xindex>) {
  %a0 = vdev.on_device %a to #vdev.device<"cuda", 0> : tensor<3x5xf32>
  %less = arith.cmpf olt, %a0, %b : tensor<3x5xf32>
  %low = arith.select %less, %a0, %b : tensor<3x5xi1>, tensor<3x5xf32>
  %i1 = vdev.on_device %i to #vdev.device<"cuda", 1> : tensor<3x5xi32>
  %ult = arith.cmpi ult, %i1, %j : tensor<3x5xi32>
  %wide = arith.extsi %i1 : tensor<3x5xi32> to tensor<3x5xi64>
  %narrow = arith.trunci %j : tensor<3x5xi32> to tensor<3x5xi8>
  %bits = arith.extui %ult : tensor<3x5xi1> to tensor<3x5xi32>
  %fi = arith.sitofp %i : tensor<3x5xi32> to tensor<3x5xf32>
  %fu = arith.uitofp %j : tensor<3x5xi32> to tensor<3x5xf32>
  %sum = arith.addf %fi, %fu : tensor<3x5xf32>
  %ext = arith.extf %low : tensor<3x5xf32> to tensor<3x5xf64>
  %half = arith.truncf %ext : tensor<3x5xf64> to tensor<3x5xf32>
  %back = arith.fptosi %low : tensor<3x5xf32> to tensor<3x5xi32>
  %pick = arith.select %ult, %i, %back : tensor<3x5xi1>, tensor<3x5xi32>
  %idx = arith.index_cast %pick : tensor<3x5xi32> to tensor<3x5xindex>
  %rem = arith.remf %a0, %b : tensor<3x5xf32>
  %uidx = arith.index_castui %pick : tensor<3x5xi32> to tensor<3x5xindex>
  func.return %low, %ult, %wide, %ext, %narrow, %bits, %sum, %half, %pick, %idx, %rem, %uidx
    : tensor<3x5xf32>, tensor<3x5xi1>, tensor<3x5xi64>, tensor<3x5xf64>, tensor<3x5xi8>, tensor<3x5xi32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xi32>, tensor<3x5xindex>, tensor<3x5xf32>, tensor<3x5xindex>
}
"""


def mixed_inputs() -> list[Any]:
    rng = np.random.default_rng(9)
    a = rng.uniform(-50, 50, (3, 5)).astype(np.float32)
    b = rng.uniform(-50, 50, (3, 5)).astype(np.float32)
    b[0, :2] = a[0, :2]  # equal elements: olt is false there
    b[0, 2], b[0, 3], a[0, 4] = 0.0, np.inf, np.inf  # remf: NaN, the dividend, NaN
    a[1, 0] = np.nan  # unordered: olt is false
    a[2, 1] = np.nan
    i = rng.integers(-1000, 1000, (3, 5), dtype=np.int32)
    j = rng.integers(-1000, 1000, (3, 5), dtype=np.int32)
    return [a, b, i, j]


def test_comparisons_on_tensors_give_i1_tensors_of_the_operands_shape() -> None:
    module = devplan.parse(
        "func.func @f(%a: tensor<?x4xf32>, %i: tensor<2xi8>) {\n"
        "  %m = arith.cmpf oge, %a, %a : tensor<?x4xf32>\n"
        "  %n = arith.cmpi sge, %i, %i : tensor<2xi8>\n"
        "  func.return\n}"
    )
    cmpf, cmpi = (op for op in module.walk() if isinstance(op, arith.CmpfOp | arith.CmpiOp))
    assert cmpf.result.type == TensorType(IntegerType(1), [DYNAMIC_INDEX, 4])
    assert cmpi.result.type == TensorType(IntegerType(1), [2])


def test_tensor_forms_and_scalar_forms_print_as_they_parse() -> None:
    text = (
        "builtin.module {\n"
        "  func.func @f(%a : tensor<4xf32>, %c : i1, %x : f32, %i : tensor<4xi32>) {\n"
        "    %m = arith.cmpf olt, %a, %a {tag = 1 : i64} : tensor<4xf32>\n"
        "    %s = arith.select %m, %a, %a : tensor<4xi1>, tensor<4xf32>\n"
        "    %t = arith.select %c, %a, %a : tensor<4xf32>\n"
        "    %y = arith.cmpf une, %x, %x fastmath<fast> : f32\n"
        "    %z = arith.select %y, %x, %x : f32\n"
        "    %k = arith.cmpi ne, %i, %i : tensor<4xi32>\n"
        "    %f = arith.uitofp %k : tensor<4xi1> to tensor<4xf64>\n"
        "    %n = arith.index_cast %i : tensor<4xi32> to tensor<4xindex>\n"
        "    %u = arith.index_castui %n : tensor<4xindex> to tensor<4xi32>\n"
        "    %r = arith.remf %a, %a fastmath<fast> : tensor<4xf32>\n"
        "    func.return\n"
        "  }\n"
        "}"
    )
    printed = str(devplan.parse(text))
    assert str(devplan.parse(printed)) == printed
    for line in (
        "{tag = 1 : i64} : tensor<4xf32>",
        ": tensor<4xi1>, tensor<4xf32>",
        "fastmath<fast> : f32",
        "arith.index_castui %n : tensor<4xindex> to tensor<4xi32>",
        "arith.remf %a, %a fastmath<fast> : tensor<4xf32>",
    ):
        assert line in printed


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '%r = "arith.cmpf"(%a, %a) {predicate = 4 : i64} : (tensor<4xf32>, tensor<4xf32>) -> i1',
            "on tensor<4xf32> gives tensor<4xi1>, not i1",
        ),
        ("%r = arith.sitofp %i : tensor<3xi32> to tensor<4xf32>", "a cast keeps the shape"),
        ("%r = arith.sitofp %i : tensor<3xi32> to f32", "a cast keeps the shape"),
        (
            "%r = arith.select %c3, %a, %a : tensor<3xi1>, tensor<4xf32>",
            "condition tensor<3xi1> does not have the shape of its values",
        ),
        ("%r = arith.extsi %i : tensor<3xi32> to tensor<3xi16>", "must be larger"),
        ("%r = arith.index_cast %i : tensor<3xi32> to tensor<3xi64>", "cast incompatible"),
        ("%r = arith.index_castui %i : tensor<3xi32> to tensor<3xi64>", "cast incompatible"),
        ("%r = arith.remf %i, %i : tensor<3xi32>", "Unexpected attribute i32"),
    ],
)
def test_ill_shaped_tensor_forms_are_refused_at_the_op(
    line: str, message: str, tmp_path: Path
) -> None:
    text = f"func.func @f(%a: tensor<4xf32>, %i: tensor<3xi32>, %c3: tensor<3xi1>) {{\n  {line}\n  func.return\n}}"
    (tmp_path / "bad.mlir").write_text(text)
    with pytest.raises(DevplanError) as caught:
        devplan.parse(tmp_path / "bad.mlir")
    assert "bad.mlir:2:3" in str(caught.value)
    assert message in str(caught.value)


def test_the_oracle_computes_comparisons_selects_and_casts_with_mlir_semantics() -> None:
    a, b, i, j = mixed_inputs()
    low, ult, wide, ext, narrow, bits, total, half, pick, idx, rem, uidx = evaluate(
        devplan.parse(MIXED), [a, b, i, j]
    )
    less = np.less(a, b)  # NaN compares false, as olt does
    np.testing.assert_array_equal(low, np.where(less, a, b))
    assert ult.dtype == np.bool_
    np.testing.assert_array_equal(ult, i.view(np.uint32) < j.view(np.uint32))
    np.testing.assert_array_equal(wide, i.astype(np.int64))
    np.testing.assert_array_equal(ext, np.where(less, a, b).astype(np.float64))
    np.testing.assert_array_equal(narrow, (j & 0xFF).astype(np.uint8).view(np.int8))
    np.testing.assert_array_equal(bits, ult.astype(np.int32))
    unsigned = j.view(np.uint32).astype(np.float32)
    np.testing.assert_array_equal(total, i.astype(np.float32) + unsigned)
    np.testing.assert_array_equal(half, np.where(less, a, b))
    np.testing.assert_array_equal(pick, np.where(ult, i, np.trunc(low).astype(np.int32)))
    assert idx.dtype == np.int64
    with np.errstate(invalid="ignore"):
        fmod = np.fmod(a, b)
    np.testing.assert_array_equal(rem, fmod)
    assert np.signbit(rem).tolist() == np.signbit(fmod).tolist()  # the dividend's sign
    assert (np.isnan(rem[0, 2]), rem[0, 3] == a[0, 3], np.isnan(rem[0, 4])) == (True, True, True)
    np.testing.assert_array_equal(uidx, pick.view(np.uint32).astype(np.int64))


# The numpy backend: the numba backend is held to it kernel by kernel in
# tests/runtime/kernels/test_backend_agreement.py, and compiling these kernels with Numba
# costs ~26 CPU-s of a cold `make test`.
@pytest.mark.parametrize("backend", ["numpy"])
def test_default_pipeline_runs_them_as_the_oracle_computes(backend: str) -> None:
    inputs = mixed_inputs()
    expected = evaluate(devplan.parse(MIXED), inputs)
    result = devplan.execute(devplan.parse(MIXED), inputs, kernel_backend=backend, strict=True)
    for got, want in zip(result.outputs, expected, strict=True):
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-6)
        else:
            np.testing.assert_array_equal(got, want)
