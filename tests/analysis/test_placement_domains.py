"""Placement domains: merging, and the explanation each node gets from the log."""

from __future__ import annotations

from xdsl.dialects.test import TestOp as AnyOp  # not `Test...`: pytest would collect it

from devplan.analysis.placement_domains import Domains, Origin, Tie
from devplan.dialects.virtual_device import DeviceAttr

CPU = DeviceAttr.make("cpu", 0)


def test_reasons_give_each_node_its_nearest_constraint_not_the_roots() -> None:
    """Two constrained halves that agree merge into one class with one root, but each
    half is explained by its own constraint."""
    domains = Domains()
    a, b, c, d = (domains.fresh() for _ in range(4))
    first, second = Origin(AnyOp(), "the first hint"), Origin(AnyOp(), "the second hint")
    assert domains.constrain(a, CPU, first) is None
    assert domains.constrain(d, CPU, second) is None
    ab, bc, cd = Tie(AnyOp(), "a-b"), Tie(AnyOp(), "b-c"), Tie(AnyOp(), "c-d")
    assert domains.union(a, b, ab)
    assert domains.union(c, d, cd)
    assert domains.union(b, c, bc)
    assert domains.origin[domains.find(d)] is first  # the class keeps one origin
    reasons = domains.reasons()
    assert [(r.origin, r.first, r.ties) for r in reasons if r is not None] == [
        (first, None, 0),
        (first, ab, 1),
        (second, cd, 1),
        (second, None, 0),
    ]


def test_a_node_no_constraint_reaches_has_no_reason() -> None:
    domains = Domains()
    a, b = domains.fresh(), domains.fresh()
    assert domains.union(a, b, Tie(AnyOp(), "a-b"))
    assert domains.reasons() == [None, None]


def test_restore_forgets_the_log_after_the_snapshot() -> None:
    domains = Domains()
    a, b = domains.fresh(), domains.fresh()
    saved = domains.snapshot()
    domains.constrain(a, CPU, Origin(AnyOp(), "a hint"))
    domains.union(a, b, Tie(AnyOp(), "a-b"))
    domains.restore(saved)
    assert domains.reasons() == [None, None]
    assert domains.find(b) == b
