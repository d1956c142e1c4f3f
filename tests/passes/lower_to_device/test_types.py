# ruff: noqa: E501  (IR lines in test programs are long)
"""Places of lowered values (`types.py`): a buffer is where an op needs it only when device
and memory scope both agree."""

from __future__ import annotations

import pytest
from xdsl.dialects import tensor

import devplan
from devplan.passes.lower_to_device.types import contiguous_slice

G0 = '#vdev.device<"cuda", 0, #target.target<"cuda">, "global">'
G0_HOST = '#vdev.device<"cuda", 0, #target.target<"cuda">, "host">'
PROGRAM = f"""
func.func @main(%a: tensor<8xf32> {{vdev.device = ARG}}) -> (tensor<8xf32> {{vdev.device = {G0}}}) {{
  %b = math.exp %a {{vdev.device = {G0}}} : tensor<8xf32>
  func.return %b : tensor<8xf32>
}}
"""


def test_an_operand_in_another_memory_scope_of_the_same_device_is_not_in_place() -> None:
    devplan.apply(devplan.parse(PROGRAM.replace("ARG", G0)), "lower-to-device")
    with pytest.raises(
        devplan.DevplanError,
        match=r"<string>:3:3: error: 'math.exp' runs on .*\"global\"> but its operand 0 lives on "
        r".*\"host\">; .*run plan-devices first",
    ):
        devplan.apply(devplan.parse(PROGRAM.replace("ARG", G0_HOST)), "lower-to-device")


@pytest.mark.parametrize(
    ("source", "window", "contiguous"),
    [
        ("4x6", "[1, 0] [2, 6] [1, 1]", True),  # whole rows
        ("4x6", "[2, 1] [1, 4] [1, 1]", True),  # part of one row
        ("4x6", "[%i, 0] [%n, 6] [1, 1]", True),  # whole rows from a dynamic offset
        ("4x6", "[0, 1] [4, 1] [1, 1]", False),  # a column
        ("4x6", "[0, 0] [2, 6] [2, 1]", False),  # every other row
        ("4x6", "[0, 0] [2, 5] [1, 1]", False),  # rows cut short
        ("4x?", "[0, 0] [2, 6] [1, 1]", False),  # whole rows only if the rows are 6 long
    ],
)
def test_a_slice_is_contiguous_when_its_elements_are_consecutive_rows(
    source: str, window: str, contiguous: bool
) -> None:
    sizes = window.split("] [")[1]
    shape = "x".join("?" if s.strip().startswith("%") else s.strip() for s in sizes.split(","))
    text = f"""
    func.func @f(%t: tensor<{source}xf32>, %i: index, %n: index) -> tensor<{shape}xf32> {{
      %s = tensor.extract_slice %t{window} : tensor<{source}xf32> to tensor<{shape}xf32>
      func.return %s : tensor<{shape}xf32>
    }}
    """
    op = next(o for o in devplan.parse(text).walk() if isinstance(o, tensor.ExtractSliceOp))
    assert contiguous_slice(op) is contiguous
