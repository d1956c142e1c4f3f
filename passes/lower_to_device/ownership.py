"""Phase 1 of lower-to-device: which block owns each buffer, where it is freed, which
uses get a clone (the algorithm is in the package header, phase 1).

A view (`types.becomes_view`: a slice or reshape made a `device.view`) owns nothing: it
is never freed, its uses count as uses of the buffer it views (which is freed after the
last of them), and where it would be handed on (a terminator, an `scf.for` init) it is
cloned, as a borrowed value is."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from xdsl.dialects import func, scf
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue, Use

from .types import becomes_view, is_tensor, is_unranked_cast, view_source


@dataclass
class Ownership:
    """Where each buffer is freed and which uses get a clone (see the header, phase 1)."""

    frees_after: dict[Operation, list[SSAValue]] = field(
        default_factory=dict[Operation, list[SSAValue]]
    )
    """Owned values to free right after an op (their last use, or their definition)."""
    frees_at_start: dict[Block, list[SSAValue]] = field(default_factory=dict[Block, list[SSAValue]])
    """Block arguments to free as the block starts (they have no use)."""
    clones: set[tuple[Operation, int]] = field(default_factory=set[tuple[Operation, int]])
    """(op, operand index) whose operand is copied to a fresh buffer first."""
    frees_before: dict[Operation, list[SSAValue]] = field(
        default_factory=dict[Operation, list[SSAValue]]
    )
    """Owned values to free at a terminator, after the clones of its operands (a view of
    them is its operand) and before it."""

    @staticmethod
    def of(function: func.FuncOp) -> Ownership:
        facts = Ownership()
        for op in function.walk():
            for region in op.regions:
                for block in region.blocks:
                    facts._analyse_block(block, function)
        return facts

    def _analyse_block(self, block: Block, function: func.FuncOp) -> None:
        owned: list[SSAValue] = []
        if block.parent_op() is not function:
            owned += [a for a in block.args if is_tensor(a)]
        for op in block.ops:
            if not becomes_view(op):
                owned += [r for r in op.results if is_tensor(r) or is_unranked_cast(r)]
            if isinstance(op, func.ReturnOp | scf.YieldOp):
                self._terminator_clones(op, block)
            elif isinstance(op, scf.ForOp):
                self._init_clones(op)
        for value in owned:
            self._place_free(value, block)

    def _terminator_clones(self, op: Operation, block: Block) -> None:
        seen: set[SSAValue] = set()
        for i, value in enumerate(op.operands):
            if not is_tensor(value):
                continue
            defined_here = (
                owner_block(value) is block and not borrowed(value) and view_source(value) is None
            )
            if not defined_here or value in seen:
                self.clones.add((op, i))
            seen.add(value)

    def _init_clones(self, loop: scf.ForOp) -> None:
        seen: set[SSAValue] = set()
        offset = len(loop.operands) - len(loop.iter_args)
        for i, value in enumerate(loop.iter_args):
            if is_tensor(value) and not self._moves_into(value, loop, seen):
                self.clones.add((loop, offset + i))
            seen.add(value)

    @staticmethod
    def _moves_into(value: SSAValue, loop: scf.ForOp, seen: set[SSAValue]) -> bool:
        """Whether the loop may take `value`'s buffer as its first iteration argument."""
        block = loop.parent_block()
        if value in seen or borrowed(value) or owner_block(value) is not block:
            return False
        if view_source(value) is not None:
            return False
        assert block is not None
        for use in viewed_uses(value):
            user = use.operation
            if user is loop:
                continue
            if loop.is_ancestor(user):
                return False  # the body reads it while the loop may free its buffer
            ancestor = block.find_ancestor_op_in_block(user)
            if ancestor is not None and loop.is_before_in_block(ancestor):
                return False  # used after the loop
        return True

    def _place_free(self, value: SSAValue, block: Block) -> None:
        last: Operation | None = None
        direct = {use.operation for use in value.uses}
        for use in viewed_uses(value):
            ancestor = block.find_ancestor_op_in_block(use.operation)
            assert ancestor is not None  # SSA dominance: uses are in the defining block
            if last is None or last.is_before_in_block(ancestor):
                last = ancestor
        if last is None:
            if isinstance(value, BlockArgument):
                self.frees_at_start.setdefault(block, []).append(value)
            else:
                self.frees_after.setdefault(cast(OpResult, value).op, []).append(value)
            return
        if isinstance(last, func.ReturnOp | scf.YieldOp):
            if last not in direct:  # only views of it: they are cloned, then it is freed
                self.frees_before.setdefault(last, []).append(value)
            return  # the terminator hands the buffer on (a duplicate is cloned)
        moved = isinstance(last, scf.ForOp) and value in last.iter_args
        if moved and (last, operand_index(last, value)) not in self.clones:
            return  # moved into the loop
        self.frees_after.setdefault(last, []).append(value)


def viewed_uses(value: SSAValue) -> list[Use]:
    """The uses of `value` and of every view of it (`becomes_view`), transitively."""
    found: list[Use] = []
    pending = [value]
    while pending:
        current = pending.pop()
        for use in current.uses:
            found.append(use)
            user = use.operation
            if becomes_view(user) and use.index == 0:
                pending.extend(user.results)
    return found


def operand_index(op: Operation, value: SSAValue) -> int:
    for i, operand in enumerate(op.operands):
        if operand is value:
            return i
    return -1


def owner_block(value: SSAValue) -> Block | None:
    if isinstance(value, BlockArgument):
        return value.block
    return cast(OpResult, value).op.parent_block()


def borrowed(value: SSAValue) -> bool:
    """Function arguments: the caller owns their buffers."""
    return isinstance(value, BlockArgument) and isinstance(value.block.parent_op(), func.FuncOp)
