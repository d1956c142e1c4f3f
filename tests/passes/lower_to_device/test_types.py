# ruff: noqa: E501  (IR lines in test programs are long)
"""Places of lowered values (`types.py`): a buffer is where an op needs it only when device
and memory scope both agree."""

from __future__ import annotations

import pytest

import devplan

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
