"""Whether one op's results are visible at another, for the structured control flow of
devplan programs (an op dominates what follows it in its block and what is nested in
those ops)."""

from __future__ import annotations

from xdsl.ir import Block, Operation


class Positions:
    """Each op's index in its block, counted for a block when first asked."""

    def __init__(self) -> None:
        self.index: dict[Operation, int] = {}
        self.counted: set[Block] = set()

    def __getitem__(self, op: Operation) -> int:
        block = op.parent_block()
        if block is not None and block not in self.counted:
            self.counted.add(block)
            self.index.update((child, i) for i, child in enumerate(block.ops))
        return self.index[op]


def ancestor_in(block: Block | None, op: Operation) -> Operation | None:
    """`op` or its ancestor whose block is `block`, or None."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def dominates(a: Operation, b: Operation, positions: Positions) -> bool:
    """Whether `a`'s results are visible at `b` (same block and earlier, or `b` nested in
    an op after `a`) — enough for the structured control flow of devplan programs."""
    ancestor = ancestor_in(a.parent_block(), b)
    return ancestor is not None and ancestor is not a and positions[a] < positions[ancestor]
