"""`async-to-host`: MLIR's `async.execute` regions run on the host, in program order.

An `async.execute` body may start once the tokens it depends on are complete and the
async values it takes are available; `async.await` blocks until then. Every dependency
is an SSA value defined before its user, so running each body where its
`async.execute` stands, one after another, is one of the orders the program allows
(the one in which no two regions overlap). devplan's executor runs host code in program
order, so the pass makes that order explicit; what the bodies hold (gpu ops, with their
own `!gpu.async.token`s) is converted afterwards as any other host code.

Phases:

1. Checks: every `async.execute` has one block, and tokens and async values flow only
   into `async.execute` and `async.await` (anything else is a located error).
2. Inlining, outermost first in program order: the body's arguments become the
   values its async operands stand for, its ops move before the `async.execute`, and
   each `!async.value` result stands for what the body yields.
3. Awaits: `async.await` of a token is removed (the body has run); of a value, its
   result becomes the value.

Invariant: afterwards no `async` op and no `!async.token`/`!async.value` remains.

Not handled: a program that needs two regions to run at the same time (one waits in a
loop for memory the other writes) does not end this way; devplan has no way to tell
that from the IR, and says so in the README. Groups and async functions are not
defined (they stay unregistered ops, refused wherever devplan meets them).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ..diagnostics import error_at
from ..upstream.async_ import AwaitOp, ExecuteOp, TokenType, ValueType, YieldOp


def _check(module: ModuleOp) -> None:
    """Phase 1: every refusal, before anything changes."""
    for op in module.walk():
        if isinstance(op, ExecuteOp) and len(op.body.blocks) != 1:
            raise error_at(
                op,
                f"async.execute with {len(op.body.blocks)} blocks cannot be run; "
                "its body must be one block",
            )
        for result in op.results:
            if not isinstance(result.type, TokenType | ValueType):
                continue
            for use in result.uses:
                if not isinstance(use.operation, ExecuteOp | AwaitOp):
                    raise error_at(
                        use.operation,
                        f"'{use.operation.name}' uses the {result.type} of an "
                        "async.execute; devplan runs async regions on the host and "
                        "supports only async.execute and async.await as their users",
                    )
        if isinstance(op, ExecuteOp | AwaitOp):
            for operand in op.operands:
                if not isinstance(operand.owner, ExecuteOp):
                    raise error_at(
                        op,
                        f"this {operand.type} does not come from an async.execute in this "
                        "function; devplan runs only async.execute regions it can see",
                    )


def _inline(op: ExecuteOp, available: dict[SSAValue, SSAValue]) -> None:
    """Phase 2 for one region: its body runs where it stands."""
    block = op.body.blocks.first
    assert block is not None
    for argument, operand in zip(block.args, op.body_operands, strict=True):
        argument.replace_all_uses_with(available[operand])
    terminator = block.last_op
    yielded: list[SSAValue] = []
    if isinstance(terminator, YieldOp):
        yielded = list(terminator.values)
        Rewriter.erase_op(terminator)
    for result, value in zip(op.body_results, yielded, strict=True):
        available[result] = value
    parent = op.parent_block()
    assert parent is not None
    for inner in list(block.ops):
        inner.detach()
        parent.insert_op_before(inner, op)


def run_async_on_host(module: ModuleOp) -> None:
    """Inline every `async.execute` in program order and resolve every `async.await`."""
    _check(module)
    executes = [op for op in module.walk() if isinstance(op, ExecuteOp)]
    if not executes and not any(isinstance(op, AwaitOp) for op in module.walk()):
        return
    available: dict[SSAValue, SSAValue] = {}
    for op in executes:
        _inline(op, available)
    for op in [op for op in module.walk() if isinstance(op, AwaitOp)]:
        if op.result is not None:
            op.result.replace_all_uses_with(available[op.operand])
        Rewriter.erase_op(op)
    # Inner regions were inlined into outer ones before they ran: erase innermost first.
    for op in reversed(executes):
        _erase(op)


def _erase(op: Operation) -> None:
    op.detach()
    op.erase(safe_erase=False)


@dataclass(frozen=True)
class AsyncToHostPass(ModulePass):
    """Runs MLIR's `async.execute` regions on the host in program order (one of the
    orders their dependencies allow) and removes `async.await`; see the module
    docstring."""

    name = "async-to-host"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_async_on_host(op)
