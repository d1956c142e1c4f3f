"""What elide-copies decides for each copy: elide it by a rule (with the rewrite that
does it) or keep it (with the reason a remark gives)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation


@dataclass
class Elide:
    """A copy to elide (or reroute) by `rule`; `rewrite` changes the IR."""

    rule: str
    copy: Operation
    rewrite: Callable[[], None]
    touches: frozenset[Operation]
    """Ops the decision reads or changes: a decision whose ops an earlier decision of
    the round changed waits for the next round."""
    removes: bool = True
    """False for `reroute`, which changes a copy's source but removes nothing."""


@dataclass
class Keep:
    """A copy the pass cannot prove redundant, and why."""

    copy: Operation
    reason: str


Decision = Elide | Keep


def where(op: Operation) -> str:
    """`'device.launch' at line 12` (or without the line when the op has none)."""
    loc = op.location
    line = getattr(loc, "line", None)
    return f"'{op.name}' at line {line.data}" if line is not None else f"'{op.name}'"


def erase(op: Operation) -> None:
    op.detach()
    op.erase()
