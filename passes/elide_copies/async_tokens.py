"""The tokens of async copies the pass removes: who may use them, and how their waiters
and dependents take the copy's own dependencies instead."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from ...analysis.memory_effects import dependencies_of, token_of
from ...dialects import device as dev
from .decisions import erase, where


def why_token_keeps(copy: Operation) -> str | None:
    """Why the token of an async copy stops its removal, or None."""
    token = token_of(copy)
    if token is None:
        return None
    for use in token.uses:
        user = use.operation
        if isinstance(user, dev.WaitOp):
            continue
        deps = dependencies_of(user)
        if isinstance(user, dev.CopyAsyncOp | dev.LaunchOp) and user.operands[use.index] in deps:
            continue
        return f"its token is used by {where(user)}, which the pass does not follow"
    return None


def token_users(copy: Operation) -> frozenset[Operation]:
    token = token_of(copy)
    return frozenset(use.operation for use in token.uses) if token is not None else frozenset()


def _rebuild_with_dependencies(op: Operation, deps: list[SSAValue]) -> None:
    if isinstance(op, dev.CopyAsyncOp):
        new: Operation = dev.CopyAsyncOp(op.source, op.destination, deps)
    else:
        assert isinstance(op, dev.LaunchOp)
        new = dev.LaunchOp(
            op.kernel, op.device, op.grid, op.block, op.args, is_async=True, dependencies=deps
        )
    new.attributes.update(op.attributes)
    new.location = op.location
    assert op.parent is not None
    op.parent.insert_op_before(new, op)
    old_token, new_token = token_of(op), token_of(new)
    assert old_token is not None
    assert new_token is not None
    old_token.replace_all_uses_with(new_token)
    erase(op)


def remove_async(copy: Operation) -> None:
    """Erase a copy; its token's waiters and dependents take its dependencies."""
    token = token_of(copy)
    if token is not None:
        deps = list(dependencies_of(copy))
        for user in {use.operation for use in token.uses}:
            old = list(user.operands if isinstance(user, dev.WaitOp) else dependencies_of(user))
            new: list[SSAValue] = []
            for t in old:
                for u in deps if t is token else [t]:
                    if u not in new:
                        new.append(u)
            if isinstance(user, dev.WaitOp):
                if new:
                    user.operands = new
                else:
                    erase(user)
            else:
                _rebuild_with_dependencies(user, new)
    erase(copy)
