"""Placement domains: a union-find over values whose classes must share one device.

Each class's root holds a partial `#vdev.device` (the join of every constraint on the
class) and the *origin* of its first constraint (the op and the words that name it, for
diagnostics and remarks). Merging two classes joins their devices; classes whose devices
do not join stay apart. The union-find is iterative (path halving), so long chains of
values need no recursion.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation

from ..dialects.virtual_device import UNCONSTRAINED, DeviceAttr, join


@dataclass(frozen=True)
class Origin:
    """Where a constraint comes from: the op to point at and the words that name it."""

    op: Operation
    what: str


class Domains:
    """Union-find over placement domains; a root holds its class's device and origin."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.device: list[DeviceAttr] = []
        self.origin: list[Origin | None] = []

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
        return None

    def joinable(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        da, db = self.device[ra], self.device[rb]
        return ra == rb or da is UNCONSTRAINED or db is UNCONSTRAINED or join(da, db) is not None

    def union(self, a: int, b: int) -> bool:
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
        return True

    def placed(self, node: int) -> bool:
        return not self.device[self.find(node)].is_fully_unconstrained
