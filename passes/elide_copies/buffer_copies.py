"""Level-2 rules: decisions for `device.copy` and `device.copy_async` of buffers.

Buffers are memory: writes matter. The rules, in the order they are tried, are listed in
the package's header (`elision.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue

from ...analysis.memory_areas import MemoryAreas
from ...analysis.memory_effects import (
    ALLOCATIONS,
    FREES,
    EffectIndex,
    Effects,
    is_local,
    root,
    token_of,
)
from ...dialects import device as dev
from ...dialects.virtual_device import DeviceAttr, memory_space_of
from .async_tokens import remove_async, token_users, why_token_keeps
from .block_facts import BlockFacts, CopyOps, ancestor_index
from .decisions import Decision, Elide, Keep, erase, where

_READ_ONLY_USERS = (memref.LoadOp, memref.DimOp)


def _is_read_only_use(op: Operation, value: SSAValue, index: EffectIndex) -> bool:
    if isinstance(op, _READ_ONLY_USERS):
        return True
    if isinstance(op, CopyOps):
        return op.source is value and op.destination is not value
    if isinstance(op, dev.LaunchOp):
        stored = index.stored(op)
        if stored is None:
            return False
        positions = [i for i, arg in enumerate(op.args) if arg is value]
        return bool(positions) and not any(i in stored for i in positions)
    return False


class Level2:
    """Decisions for every `device.copy` / `device.copy_async` of a module."""

    def __init__(self, ops: list[Operation], areas: MemoryAreas):
        self.areas = areas
        self.index = EffectIndex()
        self.facts: dict[Block, BlockFacts] = {}
        self.copies = [op for op in ops if isinstance(op, CopyOps)]
        self.needed: set[Block] = set()
        """Blocks holding a copy, and the blocks around them: facts are built only here."""
        for copy in self.copies:
            block = copy.parent_block()
            while block is not None and block not in self.needed:
                self.needed.add(block)
                parent = block.parent_op()
                block = parent.parent_block() if parent is not None else None
        for block in self.needed:
            parent = block.parent_op()
            if isinstance(parent, func.FuncOp) and block is parent.body.blocks.first:
                self.build(block, Effects())

    def build(self, block: Block, pending: Effects) -> None:
        facts = self.facts[block] = BlockFacts(block, self.index, pending)
        for op, e in zip(facts.ops, facts.effects, strict=True):
            if not op.regions or not any(b in self.needed for r in op.regions for b in r.blocks):
                continue
            inner = Effects()
            inner.update(facts.pending[op][0])
            if op.name in ("scf.for", "scf.while", "scf.parallel") and e.is_async:
                inner.update(e)  # earlier iterations' async work may still run
            for region in op.regions:
                for nested in region.blocks:
                    self.build(nested, inner)

    def decisions(self) -> Iterator[Decision]:
        for copy in self.copies:
            block = copy.parent_block()
            facts = self.facts.get(block) if block is not None else None
            if facts is None:
                yield Keep(copy, "it is not inside a function body the pass analyses")
                continue
            yield self.decide(copy, facts)

    def decide(self, copy: dev.CopyOp | dev.CopyAsyncOp, facts: BlockFacts) -> Decision:
        why_token = why_token_keeps(copy)
        if why_token is not None:
            return Keep(copy, why_token)
        touches = frozenset((copy,)) | token_users(copy)
        if copy.source is copy.destination:
            return Elide("same-buffer", copy, lambda: remove_async(copy), touches)
        reasons: list[str] = []
        for rule in (self.dead, self.copy_back, self.forward):
            outcome = rule(copy, facts, touches)
            if isinstance(outcome, Elide):
                return outcome
            if outcome:
                reasons.append(outcome)
        return Keep(copy, "; ".join(reasons) or "no rule applies")

    def dead(self, copy: CopyOps, facts: BlockFacts, touches: frozenset[Operation]) -> Elide | str:
        destination = root(copy.destination)
        pending = facts.pending[copy][0]
        if pending.reads_any(destination) or pending.changes_any(destination):
            return "async work not yet waited for touches its destination"
        i = facts.index[copy]
        j = facts.next_touch(destination, i)
        removal = Elide("dead", copy, lambda: remove_async(copy), touches)
        if j is None:
            function_body = isinstance(facts.block.parent_op(), func.FuncOp)
            if function_body and is_local(destination):
                return removal
            if not is_local(destination):
                return "its destination is not a local allocation: the caller may read it"
            return (
                "its destination is live at the end of the region "
                "(the pass does not follow control flow out of it)"
            )
        user, e = facts.ops[j], facts.effects[j]
        if e.reads_any(destination):
            if user.regions:
                return (
                    f"its destination is used inside {where(user)} "
                    "(the pass is conservative across control flow)"
                )
            if isinstance(user, dev.LaunchOp):
                return f"its destination is passed to {where(user)}, whose kernel may read it"
            return f"its destination is read by {where(user)}"
        if destination in e.frees or destination in e.overwrites:
            return removal
        return f"its destination is next changed, not wholly overwritten, by {where(user)}"

    def copy_back(
        self, copy: CopyOps, facts: BlockFacts, touches: frozenset[Operation]
    ) -> Elide | str:
        back_to, back_from = root(copy.destination), root(copy.source)
        changed_by: Operation | None = None
        for j in facts.touches_between((back_to, back_from), -1, facts.index[copy]):
            earlier, e = facts.ops[j], facts.effects[j]
            undone = (
                isinstance(earlier, CopyOps)
                and earlier.source is copy.destination
                and earlier.destination is copy.source
            )
            if undone and changed_by is not None:
                return (
                    f"it copies back what {where(earlier)} copied, but {where(changed_by)} "
                    "may have changed it since"
                )
            if undone:
                pending, tokens = facts.pending[copy]
                if token_of(earlier) in tokens:
                    return f"the copy it undoes ({where(earlier)}) is async and not yet waited for"
                if pending.changes_any(back_to) or pending.changes_any(back_from):
                    return "async work not yet waited for may write its source or destination"
                return Elide("copy-back", copy, lambda: remove_async(copy), touches | {earlier})
            if changed_by is None and (e.changes_any(back_to) or e.changes_any(back_from)):
                changed_by = earlier
        return ""

    def same_shape(self, copy: CopyOps) -> bool:
        a = cast(MemRefType[Attribute], copy.source.type)
        b = cast(MemRefType[Attribute], copy.destination.type)
        return a.get_shape() == b.get_shape() and a.get_element_type() == b.get_element_type()

    def forward(
        self, copy: CopyOps, facts: BlockFacts, touches: frozenset[Operation]
    ) -> Elide | str:
        source, destination = copy.source, copy.destination
        source_type = cast(MemRefType[Attribute], source.type)
        destination_type = cast(MemRefType[Attribute], destination.type)
        spaces = (memory_space_of(source_type), memory_space_of(destination_type))
        if not self.areas.one_area(*spaces):
            return ""
        where = "its source and destination are one memory area, but "
        if isinstance(copy, dev.CopyAsyncOp):
            return where + "the copy is async"
        if not self.same_shape(copy):
            return where + "their memref types differ in shape"
        uses = self.destination_uses(copy, facts)
        if isinstance(uses, str):
            return where + uses
        reads, frees, last = uses
        if (why := self.shared_at_run_time(spaces, reads)) is not None:
            return where + why
        if (why := self.source_changes(copy, facts, last)) is not None:
            return where + why
        allocation = destination.owner
        assert isinstance(allocation, Operation)

        def rewrite() -> None:
            value: SSAValue = source
            if source_type != destination_type:
                space_cast = memref.MemorySpaceCastOp(source, destination_type)
                assert copy.parent is not None
                copy.parent.insert_op_before(space_cast, copy)
                value = space_cast.results[0]
            for user, operand in reads:
                user.operands[operand] = value
            for free in frees:
                erase(free)
            erase(copy)
            erase(allocation)

        involved = frozenset(user for user, _ in reads) | frozenset(frees) | {allocation}
        return Elide("forward", copy, rewrite, touches | involved)

    def source_changes(self, copy: CopyOps, facts: BlockFacts, last: int) -> str | None:
        """What may write or free the copy's source before op `last` of its block."""
        buffer = root(copy.source)
        if facts.pending[copy][0].changes_any(buffer):
            return "async work not yet waited for may write its source"
        for j in sorted(facts.touches_between((buffer,), facts.index[copy], last + 1)):
            if facts.effects[j].changes_any(buffer):
                return (
                    f"its source is written or freed by {where(facts.ops[j])} "
                    "while the destination is in use"
                )
        return None

    def shared_at_run_time(
        self,
        spaces: tuple[DeviceAttr | None, DeviceAttr | None],
        reads: list[tuple[Operation, int]],
    ) -> str | None:
        """Why the runtime cannot let the readers of the destination read the source's
        buffer instead, or None. Within one device it always can; across devices only
        host code can (the host reads a device's host-visible buffer, and copies take
        any buffer), while kernels reach only buffers of their own device."""
        source, destination = (self.areas.scope_ref(s) for s in spaces)
        if source is None or destination is None or source[0] == destination[0]:
            return None
        launch = next((user for user, _ in reads if isinstance(user, dev.LaunchOp)), None)
        if destination[0] == self.areas.system.host.name and launch is None:
            return None
        reader = (
            f"{where(launch)} reads" if launch is not None else "kernels on the destination read"
        )
        return (
            f"{reader} it, and kernels reach only buffers of their own device at run time "
            f"({source[0]} and {destination[0]} are two devices)"
        )

    def destination_uses(
        self, copy: CopyOps, facts: BlockFacts
    ) -> tuple[list[tuple[Operation, int]], list[Operation], int] | str:
        """The reads (op, operand index) and frees of a copy's destination, all after the
        copy in its block, and the index of the last read; or why the destination is
        more than a read-only copy."""
        destination = copy.destination
        if not (isinstance(destination, OpResult) and destination.op.name in ALLOCATIONS):
            return "its destination is not a local allocation"
        i = facts.index[copy]
        if facts.index.get(destination.op, i) >= i:
            return "its destination is not allocated in the copy's block"
        frees: list[Operation] = []
        reads: list[tuple[Operation, int]] = []
        last = i
        for use in destination.uses:
            user = use.operation
            if user is copy:
                continue
            at = ancestor_index(facts, user)
            if at is None or at <= i:
                return f"its destination is also used by {where(user)}"
            if isinstance(user, FREES) and user.parent_block() is facts.block:
                frees.append(user)  # erased with the buffer: the source may go first
            elif _is_read_only_use(user, destination, self.index):
                reads.append((user, use.index))
                last = max(last, at)
            else:
                return f"its destination is written or escapes at {where(user)}"
        return reads, frees, last
