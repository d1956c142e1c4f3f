"""Host-code compilers of structured control flow: `scf.for`, `scf.if`, `scf.while`,
`scf.index_switch`, and `cf.assert`.

A region-holding op is one step whose closure runs the steps of its blocks; the values a
region yields move into the op's results (or a loop's carried values) as one parallel
assignment (`frame.move`).
"""

from __future__ import annotations

from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

from ...diagnostics import error_at
from ...dispatch import OpTable
from .frame import Compiler, Frame, OpCompiler, Step, move, terminator_slots

SCF_OPS = OpTable[OpCompiler]("host code")
"""Compilers of the control-flow ops host code runs."""


@SCF_OPS.impl(scf.ForOp)
def _for(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, scf.ForOp)
    lb, ub, st = c.slot(op.lb), c.slot(op.ub), c.slot(op.step)
    block = op.body.block
    iv = c.slot(block.args[0])
    carried = tuple(c.slot(a) for a in block.args[1:])
    inits = tuple(c.slot(v) for v in op.iter_args)
    results = tuple(c.slot(v) for v in op.res)
    yields = terminator_slots(c, op.body)
    body = c.compile_block(block)

    if not carried:

        def run_plain(f: Frame) -> None:
            step = f[st]
            if step <= 0:
                raise error_at(op, f"'scf.for' step must be positive, got {step}")
            for i in range(f[lb], f[ub], step):
                f[iv] = i
                body(f)

        return run_plain

    def run(f: Frame) -> None:
        step = f[st]
        if step <= 0:
            raise error_at(op, f"'scf.for' step must be positive, got {step}")
        move(f, inits, carried)
        for i in range(f[lb], f[ub], step):
            f[iv] = i
            body(f)
            move(f, yields, carried)
        move(f, carried, results)

    return run


@SCF_OPS.impl(cf.AssertOp)
def _assert(c: Compiler, op: Operation) -> Step:
    """MLIR's `cf.assert`: a false condition ends the run with the op's message, at the op
    (lower-to-device checks with it that dynamic shapes agree)."""
    cond = c.slot(op.operands[0])
    message = op.properties["msg"]
    assert isinstance(message, StringAttr)
    text = message.data

    def run(f: Frame) -> None:
        if not f[cond]:
            raise error_at(op, f"assertion failed: {text}")

    return run


@SCF_OPS.impl(scf.IfOp)
def _if(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, scf.IfOp)
    cond = c.slot(op.cond)
    results = tuple(c.slot(v) for v in op.output)
    then = c.compile_block(op.true_region.block)
    then_yields = terminator_slots(c, op.true_region)
    has_else = bool(op.false_region.blocks)
    orelse = c.compile_block(op.false_region.block) if has_else else None
    else_yields = terminator_slots(c, op.false_region) if has_else else ()

    def run(f: Frame) -> None:
        if f[cond]:
            then(f)
            yields = then_yields
        elif orelse is not None:
            orelse(f)
            yields = else_yields
        else:
            return
        move(f, yields, results)

    return run


@SCF_OPS.impl(scf.WhileOp)
def _while(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, scf.WhileOp)
    before, after = op.before_region.block, op.after_region.block
    before_args = tuple(c.slot(a) for a in before.args)
    after_args = tuple(c.slot(a) for a in after.args)
    inits = tuple(c.slot(v) for v in op.arguments)
    results = tuple(c.slot(v) for v in op.res)
    condition = before.last_op
    assert isinstance(condition, scf.ConditionOp)
    cond = c.slot(condition.condition)
    forwarded = tuple(c.slot(v) for v in condition.args)
    yields = terminator_slots(c, op.after_region)
    run_before, run_after = c.compile_block(before), c.compile_block(after)

    def run(f: Frame) -> None:
        move(f, inits, before_args)
        while True:
            run_before(f)
            if not f[cond]:
                break
            move(f, forwarded, after_args)
            run_after(f)
            move(f, yields, before_args)
        move(f, forwarded, results)

    return run


@SCF_OPS.impl(scf.IndexSwitchOp)
def _index_switch(c: Compiler, op: Operation) -> Step:
    """The region of the case equal to the index (the default region for none)."""
    assert isinstance(op, scf.IndexSwitchOp)
    results = tuple(c.slot(v) for v in op.output)
    arg = c.slot(op.arg)
    default = (c.compile_block(op.default_region.block), terminator_slots(c, op.default_region))
    cases = {
        int(value): (c.compile_block(region.block), terminator_slots(c, region))
        for value, region in zip(op.cases.get_values(), op.case_regions, strict=True)
    }

    def run(f: Frame) -> None:
        body, yields = cases.get(f[arg], default)
        body(f)
        move(f, yields, results)

    return run


__all__ = ["SCF_OPS"]
