"""Placement domains: a union-find over values whose classes must share one device.

Each class's root holds a partial `#vdev.device` (the join of every constraint on the
class) and the *origin* of its first constraint (the op and the words that name it, for
diagnostics and remarks). Merging two classes joins their devices; classes whose devices
do not join stay apart. The union-find is iterative (path halving), so long chains of
values need no recursion.

For explanations the domains also keep a log: every constraint with the node it was put
on, and every merge with the *tie* that caused it (the op and the words that name it).
`Domains.reasons` reads the log: for each node, the nearest constraint in the graph of
ties and the first tie on the way to it. The nearest constraint, not the class root's,
is what decided a node's device: a class made of two constrained halves that agree has
one root but two explanations.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from xdsl.ir import Operation

from ..dialects.virtual_device import UNCONSTRAINED, DeviceAttr, join


@dataclass(frozen=True)
class Origin:
    """Where a constraint comes from: the op to point at and the words that name it."""

    op: Operation
    what: str
    located: bool = True
    """Whether `op`'s place belongs in the words (not for the cost model, whose `op` is
    the module)."""


@dataclass(frozen=True)
class Tie:
    """Why two domains were merged: the op that ties them and the words that name it."""

    op: Operation
    what: str


@dataclass(frozen=True)
class Reason:
    """What decided a node's device: the nearest constraint and the way to it."""

    origin: Origin
    first: Tie | None
    """The first tie from the node towards the constraint; None when it is on the node."""
    ties: int
    """How many ties lie between the node and the constraint."""


class Domains:
    """Union-find over placement domains; a root holds its class's device and origin."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.device: list[DeviceAttr] = []
        self.origin: list[Origin | None] = []
        self.constraints: list[tuple[int, Origin]] = []
        """Every constraint that held, with the node it was put on, in order."""
        self.ties: list[tuple[int, int, Tie]] = []
        """Every merge that held and had a tie, with the two nodes it merged."""

    def fresh(self) -> int:
        self.parent.append(len(self.parent))
        self.device.append(UNCONSTRAINED)
        self.origin.append(None)
        return len(self.parent) - 1

    def find(self, node: int) -> int:
        parent = self.parent
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def constrain(self, node: int, device: DeviceAttr, origin: Origin) -> int | None:
        """Join `device` into `node`'s class; the root in conflict, or None."""
        root = self.find(node)
        current = self.device[root]
        unchanged = current is UNCONSTRAINED or current == device
        joined = device if unchanged else join(current, device)
        if joined is None:
            return root
        self.device[root] = joined
        if self.origin[root] is None:
            self.origin[root] = origin
        self.constraints.append((node, origin))
        return None

    def joinable(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        da, db = self.device[ra], self.device[rb]
        return ra == rb or da is UNCONSTRAINED or db is UNCONSTRAINED or join(da, db) is not None

    def union(self, a: int, b: int, tie: Tie | None = None) -> bool:
        """Merge the classes of `a` and `b` when their devices join; False otherwise."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        da, db = self.device[ra], self.device[rb]
        if da is UNCONSTRAINED or da is db:
            joined = db
        elif db is UNCONSTRAINED:
            joined = da
        else:
            joined = da if da == db else join(da, db)
        if joined is None:
            return False
        # The constrained side stays the root, so its origin stays the explanation.
        if self.origin[ra] is None and self.origin[rb] is not None:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.device[ra] = joined
        if tie is not None:
            self.ties.append((a, b, tie))
        return True

    def placed(self, node: int) -> bool:
        return not self.device[self.find(node)].is_fully_unconstrained

    def snapshot(self) -> tuple[list[int], list[DeviceAttr], list[Origin | None], int, int]:
        return (
            list(self.parent),
            list(self.device),
            list(self.origin),
            len(self.constraints),
            len(self.ties),
        )

    def restore(
        self, saved: tuple[list[int], list[DeviceAttr], list[Origin | None], int, int]
    ) -> None:
        """Back to a `snapshot` (merges and constraints since are forgotten)."""
        self.parent, self.device, self.origin = saved[0], saved[1], saved[2]
        del self.constraints[saved[3] :]
        del self.ties[saved[4] :]

    def reasons(self) -> list[Reason | None]:
        """Per node, the nearest constraint over the ties (breadth first from every
        constraint at once, in the order they were made); None for a node no constraint
        reaches. Linear in nodes, ties and constraints."""
        count = len(self.parent)
        neighbours: list[list[tuple[int, Tie]]] = [[] for _ in range(count)]
        for a, b, tie in self.ties:
            neighbours[a].append((b, tie))
            neighbours[b].append((a, tie))
        found: list[Reason | None] = [None] * count
        queue: deque[int] = deque()
        for node, origin in self.constraints:
            if found[node] is None:
                found[node] = Reason(origin, None, 0)
                queue.append(node)
        while queue:
            node = queue.popleft()
            reason = found[node]
            assert reason is not None
            for other, tie in neighbours[node]:
                if found[other] is None:
                    found[other] = Reason(reason.origin, tie, reason.ties + 1)
                    queue.append(other)
        return found
