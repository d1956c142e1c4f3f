"""Level-2 facts of one block: the memory effects of its top-level ops, indexed by root,
and the async work not yet waited for at each copy and region op."""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable, Iterator

from xdsl.ir import Block, Operation, SSAValue

from ...analysis.dominance import ancestor_in
from ...analysis.memory_effects import (
    EffectIndex,
    Effects,
    dependencies_of,
    is_local,
    may_alias,
    token_of,
)
from ...dialects import device as dev

CopyOps = dev.CopyOp | dev.CopyAsyncOp
"""The level-2 copies the pass decides on."""


class BlockFacts:
    """Effects of a block's top-level ops, indexed by root, and the async work still
    pending at each copy."""

    def __init__(self, block: Block, effects: EffectIndex, pending_at_entry: Effects):
        self.block = block
        self.ops = list(block.ops)
        self.index = {op: i for i, op in enumerate(self.ops)}
        self.effects = [effects.of(op) for op in self.ops]
        self.by_root: dict[SSAValue, list[int]] = {}
        self.nonlocal_: list[int] = []
        self.nonlocal_cache: dict[SSAValue, list[int]] = {}
        for i, e in enumerate(self.effects):
            roots = e.roots()
            for r in roots:
                self.by_root.setdefault(r, []).append(i)
            if any(not is_local(r) for r in roots):
                self.nonlocal_.append(i)
        self.pending: dict[Operation, tuple[Effects, frozenset[SSAValue]]] = {}
        """At each top-level op: the union of effects of async work not yet waited for,
        and the tokens of that work."""
        self.pending_before_nested: dict[Operation, Effects] = {}
        self.track_pending(pending_at_entry)

    def track_pending(self, at_entry: Effects) -> None:
        work: dict[SSAValue | Operation, tuple[Effects, tuple[SSAValue, ...]]] = {}
        if at_entry.roots():
            work[self.block] = (at_entry, ())  # pyright: ignore[reportArgumentType]
        for op, e in zip(self.ops, self.effects, strict=True):
            if op.regions or isinstance(op, CopyOps):  # the ops whose pending work is asked
                union = Effects()
                for pending, _ in work.values():
                    union.update(pending)
                tokens = frozenset(k for k in work if isinstance(k, SSAValue))
                self.pending[op] = (union, tokens)
            if isinstance(op, dev.WaitOp):
                if not op.tokens:
                    work.clear()
                waiting = list(op.tokens)
                while waiting:
                    token = waiting.pop()
                    done = work.pop(token, None)
                    if done is not None:
                        waiting.extend(done[1])
                continue
            token = token_of(op)
            if token is not None:
                work[token] = (e, dependencies_of(op))
            elif op.regions and e.is_async:
                work[op] = (e, ())

    def touching(self, buffer: SSAValue) -> list[int]:
        """Indices of ops that may touch `buffer` (a root), ascending."""
        own = self.by_root.get(buffer, [])
        if is_local(buffer):
            return own
        cached = self.nonlocal_cache.get(buffer)
        if cached is not None:
            return cached
        mine = set(own)
        others = (
            i
            for i in self.nonlocal_
            if i not in mine and any(may_alias(buffer, r) for r in self.effects[i].roots())
        )
        found = self.nonlocal_cache[buffer] = list(heapq.merge(own, others))
        return found

    def next_touch(self, buffer: SSAValue, after: int) -> int | None:
        indices = self.touching(buffer)
        k = bisect.bisect_right(indices, after)
        return indices[k] if k < len(indices) else None

    def touches_between(self, buffers: Iterable[SSAValue], low: int, high: int) -> Iterator[int]:
        """Indices in (low, high) of ops that may touch any of `buffers`, descending."""
        found: set[int] = set()
        for buffer in buffers:
            indices = self.touching(buffer)
            lo = bisect.bisect_right(indices, low)
            hi = bisect.bisect_left(indices, high)
            found.update(indices[lo:hi])
        return iter(sorted(found, reverse=True))


def ancestor_index(facts: BlockFacts, op: Operation) -> int | None:
    ancestor = ancestor_in(facts.block, op)
    return None if ancestor is None else facts.index[ancestor]
