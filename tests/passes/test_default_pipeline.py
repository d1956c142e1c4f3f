"""default-pipeline (passes/default_pipeline.py): a valid program is verified once, at the
end; IR that fails verification is blamed on the pass that produced it (the steps replayed
one by one, each verified, when the check at the end fails or a step raises)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.passes import ModulePass

import devplan
from devplan.diagnostics import LocatedError, collect_remarks, emit_remark
from devplan.passes import default_pipeline

PROGRAM = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""


@dataclass(frozen=True)
class BreakResults(ModulePass):
    """Says so in a remark, then declares that @main returns nothing (its func.return
    still returns a value: the IR no longer verifies)."""

    name = "break-results"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        emit_remark("remark: breaking @main")
        for f in op.ops:
            if isinstance(f, func.FuncOp):
                f.function_type = FunctionType.from_lists(f.function_type.inputs.data, [])


@pytest.mark.parametrize("at", range(len(default_pipeline.STEPS)))
def test_the_pass_that_breaks_the_ir_is_named_and_remarks_once(
    monkeypatch: pytest.MonkeyPatch, at: int
) -> None:
    steps = list(default_pipeline.STEPS)
    steps.insert(at + 1, BreakResults)
    monkeypatch.setattr(default_pipeline, "STEPS", tuple(steps))
    module = devplan.parse(PROGRAM)
    with collect_remarks() as remarks, pytest.raises(LocatedError) as raised:
        default_pipeline.DefaultPipelinePass().apply(Context(), module)
    assert "(IR produced by pass 'break-results')" in str(raised.value)
    assert remarks == ["remark: breaking @main"]


def test_a_valid_program_is_verified_once(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[int] = []
    verify = default_pipeline.verify_located

    def counting(op: ModuleOp, verifiers: object) -> None:
        checked.append(len(list(op.walk())))
        verify(op, verifiers)  # pyright: ignore[reportArgumentType]

    monkeypatch.setattr(default_pipeline, "verify_located", counting)
    default_pipeline.DefaultPipelinePass().apply(Context(), devplan.parse(PROGRAM))
    assert len(checked) == 1
