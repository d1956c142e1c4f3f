"""The oracle prints what MLIR's runner prints: `printMemref*` of a tensor cast to an
unranked tensor, and the scalar printers, the same text host code prints for the same
program on memrefs."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import devplan
from devplan.diagnostics import DevplanError
from devplan.reference.program import evaluate

LEVEL_1 = """
func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefF64(tensor<*xf64>)
func.func private @printMemrefI32(tensor<*xi32>)
func.func private @printMemrefI64(tensor<*xi64>)
func.func private @printF64(f64)
func.func private @printI64(i64)
func.func private @printU64(i64)
func.func private @printOpen()
func.func private @printClose()
func.func private @printComma()
func.func private @printNewline()
func.func @main(%a: tensor<2x3xf32>, %b: tensor<f64>, %c: tensor<2x1x2xi32>, %d: tensor<3xi64>,
                %x: f64, %n: i64) {
  %ua = tensor.cast %a : tensor<2x3xf32> to tensor<*xf32>
  func.call @printMemrefF32(%ua) : (tensor<*xf32>) -> ()
  %ub = tensor.cast %b : tensor<f64> to tensor<*xf64>
  func.call @printMemrefF64(%ub) : (tensor<*xf64>) -> ()
  %uc = tensor.cast %c : tensor<2x1x2xi32> to tensor<*xi32>
  func.call @printMemrefI32(%uc) : (tensor<*xi32>) -> ()
  %ud = tensor.cast %d : tensor<3xi64> to tensor<*xi64>
  func.call @printMemrefI64(%ud) : (tensor<*xi64>) -> ()
  func.call @printOpen() : () -> ()
  func.call @printF64(%x) : (f64) -> ()
  func.call @printComma() : () -> ()
  func.call @printI64(%n) : (i64) -> ()
  func.call @printComma() : () -> ()
  func.call @printU64(%n) : (i64) -> ()
  func.call @printClose() : () -> ()
  func.call @printNewline() : () -> ()
  func.return
}
"""

# What MLIR prints; its header lines and the rows of a level above the innermost end in a
# space.
EXPECTED = """\
Unranked Memref base@ = 0x? rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data = 
[[-nan,   inf,   -0], 
 [1e+20,   0.333333,   -2.5]]
Unranked Memref base@ = 0x? rank = 0 offset = 0 sizes = [] strides = [] data = 
[0.1]
Unranked Memref base@ = 0x? rank = 3 offset = 0 sizes = [2, 1, 2] strides = [2, 2, 1] data = 
[[[-7,    2147483647]], 
 [[0,    -2147483648]]]
Unranked Memref base@ = 0x? rank = 1 offset = 0 sizes = [3] strides = [1] data = 
[1,  -1,  9223372036854775807]
( -1e-07, -5, 18446744073709551611 )
"""


def inputs() -> list[object]:
    a = np.array([[-np.nan, np.inf, -0.0], [1e20, 1 / 3, -2.5]], np.float32)
    c = np.array([7, 2**31 - 1, 0, -(2**31)], np.int32).reshape(2, 1, 2)
    c[0, 0, 0] = -7
    d = np.array([1, -1, 2**63 - 1], np.int64)
    return [a, np.array(0.1), c, d, -1e-7, -5]


def without_addresses(text: str) -> str:
    return re.sub(r"base@ = 0x[0-9a-f]+", "base@ = 0x?", text)


def test_the_oracle_prints_tensors_cast_to_unranked_and_scalars_as_mlirs_runner_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert evaluate(devplan.parse(LEVEL_1), inputs()) == []
    oracle = without_addresses(capsys.readouterr().out)
    assert oracle == EXPECTED
    # Host code prints the same for the program on memrefs (what lowering makes of it).
    level_2 = LEVEL_1.replace("tensor", "memref")
    devplan.execute(devplan.parse(level_2), inputs())
    assert without_addresses(capsys.readouterr().out) == oracle


@pytest.mark.parametrize(
    ("declared", "line", "message"),
    [
        (
            "",
            "%s = tensor.cast %a : tensor<?x3xf32> to tensor<3x3xf32>",
            "'tensor.cast' of a 2x3 tensor to tensor<3x3xf32>",
        ),
        (
            "func.func private @printMemrefF64(tensor<*xf32>)",
            "func.call @printMemrefF64(%u) : (tensor<*xf32>) -> ()",
            "@printMemrefF64 prints f64 elements, not f32",
        ),
        (
            "func.func private @printI64(f64)",
            "func.call @printI64(%x) : (f64) -> ()",
            "@printI64 takes (i64) and returns nothing",
        ),
    ],
)
def test_a_cast_or_a_print_of_the_wrong_type_is_an_error_at_the_op(
    declared: str, line: str, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(
        f"{declared}\nfunc.func @main(%a: tensor<?x3xf32>, %x: f64) {{\n"
        "  %u = tensor.cast %a : tensor<?x3xf32> to tensor<*xf32>\n"
        f"  {line}\n  func.return\n}}\n"
    )
    with pytest.raises(DevplanError) as caught:
        evaluate(devplan.parse(path), [np.zeros((2, 3), np.float32), 1.0])
    assert str(caught.value).startswith(f"{path}:4:3: error: ")
    assert message in str(caught.value)
