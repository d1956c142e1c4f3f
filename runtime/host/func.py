"""The host-code compiler of `func.call`: a call runs the callee's compiled function in a
fresh frame; a callee declared without a body is one of MLIR's runner utilities
(`runner_utils`), else an error at the call.

Calls nest at most `MAX_CALL_DEPTH` deep on a thread, so unbounded recursion in a program
is a located error rather than an exhausted Python stack.
"""

from __future__ import annotations

import threading

from xdsl.dialects import func
from xdsl.ir import Operation

from ...diagnostics import error_at
from ...dispatch import OpTable
from .frame import Compiler, Frame, OpCompiler, Step, assign
from .runner_utils import compile_runner_call

FUNC_OPS = OpTable[OpCompiler]("host code")
"""Compilers of the `func` ops host code runs (`func.return` ends a block: no step)."""

MAX_CALL_DEPTH = 5000
"""How deeply host code may nest `func.call`s (recursion included) before a run fails
with a located error rather than exhausting Python's stack."""
_calls = threading.local()
"""`depth`: the calls active right now on this thread."""


@FUNC_OPS.impl(func.CallOp)
def _call(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, func.CallOp)
    callee = c.call_target(op, op.callee.string_value())
    if not callee.op.body.blocks:
        return compile_runner_call(c, op)
    args = tuple(c.slot(v) for v in op.arguments)
    results = tuple(c.slot(v) for v in op.res)

    def run(f: Frame) -> None:
        depth = getattr(_calls, "depth", 0) + 1
        if depth > MAX_CALL_DEPTH:
            raise error_at(
                op,
                f"'func.call' of @{callee.name} nests calls deeper than {MAX_CALL_DEPTH} "
                "(unbounded recursion?)",
            )
        _calls.depth = depth
        try:
            assign(f, results, callee(f[0], [f[a] for a in args]))
        finally:
            _calls.depth = depth - 1

    return run


__all__ = ["FUNC_OPS", "MAX_CALL_DEPTH"]
