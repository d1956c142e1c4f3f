# ruff: noqa: E501  (IR lines in test programs are long)
"""Clones a call site's context needs (`specialisation.py`, `planner.py`): named after the
original past any name the module already holds, and not made when the conflicting
placement comes from inside the callee's own call tree, where a clone would not help."""

from __future__ import annotations

import pytest
from xdsl.dialects.func import CallOp, FuncOp

import devplan

CPU = '#vdev.device<"cpu", 0>'
GPU = '#vdev.device<"cuda", 0>'
TAKEN = f"""
func.func @sq(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %y = arith.mulf %x, %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}}
func.func @sq_cuda0(%x: tensor<4xf32>) -> tensor<4xf32> {{
  func.return %x : tensor<4xf32>
}}
func.func @sq_cuda0_1(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %y = arith.negf %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}}
func.func @main(%p: tensor<4xf32> {{vdev.device = {CPU}}}, %q: tensor<4xf32> {{vdev.device = {GPU}}}) -> (tensor<4xf32>, tensor<4xf32>) {{
  %r = func.call @sq(%p) : (tensor<4xf32>) -> tensor<4xf32>
  %s = func.call @sq(%q) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r, %s : tensor<4xf32>, tensor<4xf32>
}}
"""


def test_a_clone_is_named_past_the_names_the_module_already_has() -> None:
    module = devplan.apply(devplan.parse(TAKEN), "plan-devices")
    functions = [f.sym_name.data for f in module.body.block.ops if isinstance(f, FuncOp)]
    assert sorted(functions) == ["main", "sq", "sq_cuda0", "sq_cuda0_1", "sq_cuda0_2"]
    calls = [c.callee.string_value() for c in module.walk() if isinstance(c, CallOp)]
    assert calls == ["sq", "sq_cuda0_2"]


PINNED_BELOW = f"""
func.func @g(%x: tensor<4xf32> {{vdev.device = {GPU}}}) -> tensor<4xf32> {{
  %y = arith.negf %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %y = func.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}}
func.func @main(%p: tensor<4xf32> {{vdev.device = {CPU}}}) -> tensor<4xf32> {{
  %r = func.call @f(%p) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}}
"""


def test_a_placement_pinned_by_a_function_the_callee_calls_is_a_conflict_not_a_clone() -> None:
    # cloning @f would not help: its clone calls @g, which pins the argument itself
    with pytest.raises(devplan.DevplanError) as caught:
        devplan.apply(devplan.parse(PINNED_BELOW), "plan-devices")
    message = str(caught.value)
    assert message.startswith(
        "<string>:11:3: error: conflicting placement: this call to @f places its argument 0 "
        f"on {CPU} (by the vdev.device attribute of argument 0 of @main at line 10), but "
        f"@f's argument 0 is placed on {GPU}\n"
    )
    assert (
        f"<string>:2:1: note: the vdev.device attribute of argument 0 of @g places it on {GPU}"
        in message
    )
