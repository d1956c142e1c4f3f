"""The placement problem of `plan-devices{strategy=cost}` and its solver (no IR here).

Problem. Classes (the planner's placement classes: values that must share a device)
each get one of `k` devices. A class is either *fixed* (a hard constraint, or a value
whose size is unknown, placed as the default strategy places it) or *free*. The
objective is the program's modelled time as a **sum**:

    sum over classes c of compute[c][device(c)]
  + sum over copy terms t of  sum over devices d in {device(c) : c in t.consumers},
                              d != device(t.source), of t.seconds[device(t.source)][d]

A copy term is one value: its defining class, the classes that use it, and what one
copy of it costs between each pair of devices. The inner sum over *distinct* consumer
devices is exactly what plan-devices materialises: one copy per (value, destination).

The sum, not the critical path: devplan's executor runs a level-1 program's launches
and copies blocking, in program order (lower-to-device makes no async launches), so
its modelled time is the sum of the parts; the sum is also what a min cut can
minimise exactly.

Solver.
  * Two devices: Stone's construction, exact. Every free class starts on device 0 and
    one min s-t cut decides which move to device 1; a copy term becomes auxiliary nodes
    ("some consumer on the other side" is a hyperedge: one node with infinite edges to
    the consumers and the copy's cost on the edge from the source), so the cut's value
    is the objective of the placement it encodes.
  * Three or more: alpha-expansion (Boykov, Veksler, Zabih). Start from the default
    placement; for each device alpha in turn, one min cut decides which free classes
    move to alpha; a move is kept only when the exact objective decreases; stop after a
    round of all devices without an improvement (at most `MAX_ROUNDS`). Copy terms whose
    move energy is not submodular (keeping the source costs more than moving it, for
    some consumer device) are over-approximated in the cut; the exact objective decides
    acceptance, so the result is never worse than the default placement.
  * Max flow is `scipy.sparse.csgraph.maximum_flow` on integer capacities: the costs
    are scaled so that their sum fits in 2^30 units and rounded; the source side of the
    cut is read from the residual graph (in 64-bit integers). The final placement is
    compared with the default one in exact floating point and the better kept.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


# scipy ships no type information; its two entry points are used through `Any`. They are
# imported at the first cut (0.3 s of CPU), not when the pass is loaded: a run that plans
# by hints only never pays for them.
def _scipy() -> tuple[Any, Any]:
    return importlib.import_module("scipy.sparse"), importlib.import_module("scipy.sparse.csgraph")


MAX_ROUNDS = 8
"""Rounds of alpha-expansion (each tries every device) before stopping."""

_UNITS = float(1 << 30)
_INFINITE = (1 << 31) - 1


@dataclass
class CopyTerm:
    """One value: where it is defined, where it is used, and what a copy costs."""

    source: int
    """Class defining the value."""
    consumers: list[int]
    """Classes using it (distinct, may include `source`)."""
    seconds: list[list[float]]
    """`seconds[a][b]`: one copy from device a to device b (0 on the diagonal)."""


@dataclass
class Problem:
    """Classes, devices, compute times, copy terms (see the module docstring)."""

    devices: int
    compute: list[list[float]]
    """`compute[c][d]`: class c's ops on device d (unary terms of any kind)."""
    fixed: list[int | None]
    """The device of each fixed class; None: free."""
    default: list[int]
    """The default strategy's placement (fixed classes included)."""
    terms: list[CopyTerm] = field(default_factory=list[CopyTerm])

    def objective(self, labels: Sequence[int]) -> float:
        """The modelled time of `labels` (one device per class)."""
        total = sum(row[labels[c]] for c, row in enumerate(self.compute))
        return total + self.copy_time(labels)

    def copy_time(self, labels: Sequence[int]) -> float:
        total = 0.0
        for term in self.terms:
            src = labels[term.source]
            row = term.seconds[src]
            for d in {labels[c] for c in term.consumers}:
                if d != src:
                    total += row[d]
        return total


def solve(problem: Problem) -> list[int]:
    """A placement minimising `problem.objective` (exact for two devices; never worse
    than `problem.default`)."""
    default = list(problem.default)
    if problem.devices < 2 or all(f is not None for f in problem.fixed):
        return default
    if problem.devices == 2:
        start = [f if f is not None else 0 for f in problem.fixed]
        best = _expand(problem, start, 1)
    else:
        best = default
        best_value = problem.objective(best)
        for _ in range(MAX_ROUNDS):
            improved = False
            for alpha in range(problem.devices):
                moved = _expand(problem, best, alpha)
                value = problem.objective(moved)
                if value < best_value * (1 - 1e-12):
                    best, best_value, improved = moved, value, True
            if not improved:
                break
    return best if problem.objective(best) <= problem.objective(default) else default


# --- one expansion move as a min cut ------------------------------------------------------


class _Graph:
    """Edges of an s-t graph under construction; node 0 is s, node 1 is t."""

    def __init__(self, nodes: int) -> None:
        self.nodes = nodes
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.caps: list[float] = []
        self.infinite: list[bool] = []

    def aux(self) -> int:
        self.nodes += 1
        return self.nodes - 1

    def edge(self, a: int, b: int, cap: float, infinite: bool = False) -> None:
        if a == b or (cap <= 0 and not infinite):
            return
        self.rows.append(a)
        self.cols.append(b)
        self.caps.append(cap)
        self.infinite.append(infinite)

    def source_side(self) -> Any:
        """Whether each node is on the source side of a minimum cut."""
        finite = np.array(self.caps, dtype=np.float64)
        infinite = np.array(self.infinite, dtype=bool)
        total = float(finite[~infinite].sum()) if len(finite) else 0.0
        scale = _UNITS / total if total > 0 else 1.0
        caps = np.where(infinite, _INFINITE, np.rint(finite * scale)).astype(np.int32)
        shape = (self.nodes, self.nodes)
        sparse, csgraph = _scipy()
        graph = sparse.csr_matrix((caps, (self.rows, self.cols)), shape=shape, dtype=np.int32)
        flow = csgraph.maximum_flow(graph, 0, 1).flow
        # In 64 bits: an infinite edge whose reverse edge carries flow has a residual
        # capacity above int32's range, which wrapped to a negative one (no residual) and
        # hid nodes from the search below (a cut worth one copy more than the minimum).
        residual = (graph.astype(np.int64) - flow.astype(np.int64)).tocsr()
        residual.data = np.where(residual.data > 0, 1, 0).astype(np.int32)
        residual.eliminate_zeros()
        reached = csgraph.breadth_first_order(residual, 0, directed=True, return_predecessors=False)
        side = np.zeros(self.nodes, dtype=bool)
        side[reached] = True
        return side


S, T = 0, 1


def _expand(problem: Problem, labels: Sequence[int], alpha: int) -> list[int]:
    """The best placement that moves some free classes from `labels` to `alpha`
    (exactly, when the move energy is submodular)."""
    classes = len(labels)
    node: list[int] = [-1] * classes
    graph = _Graph(2)
    for c in range(classes):
        if problem.fixed[c] is None and labels[c] != alpha:
            node[c] = graph.aux()

    def side_node(c: int) -> int:
        """The class's graph node, or the terminal it is tied to (S: kept, T: at alpha)."""
        if node[c] >= 0:
            return node[c]
        return T if labels[c] == alpha else S

    for c in range(classes):
        if node[c] >= 0:
            graph.edge(S, node[c], problem.compute[c][alpha])  # paid when moved
            graph.edge(node[c], T, problem.compute[c][labels[c]])  # paid when kept
    for term in problem.terms:
        _copy_term(graph, term, labels, alpha, side_node)
    side = graph.source_side()
    return [labels[c] if node[c] < 0 or side[node[c]] else alpha for c in range(classes)]


def _copy_term(
    graph: _Graph, term: CopyTerm, labels: Sequence[int], alpha: int, at: Callable[[int], int]
) -> None:
    src = at(term.source)
    kept_label = labels[term.source] if src != T else alpha
    groups: dict[int, list[int]] = {}
    for c in term.consumers:
        if labels[c] != alpha:
            groups.setdefault(labels[c], []).append(at(c))
    movable = [at(c) for c in term.consumers]
    # Some consumer at alpha while the source stays: one copy to alpha.
    if src != T and kept_label != alpha:
        _if_kept_and_any_moved(graph, src, movable, term.seconds[kept_label][alpha])
    # Consumers that stay on d: one copy to d from wherever the source ends up.
    for d, members in groups.items():
        a = term.seconds[kept_label][d] if src != T else term.seconds[alpha][d]
        b = term.seconds[alpha][d]
        if src == T:
            _if_any_kept(graph, members, b)
        elif src == S:
            _if_any_kept(graph, members, a)
        elif b >= a:
            _if_any_kept(graph, members, a)
            _if_any_kept_and_moved(graph, members, src, b - a)
        else:
            _if_any_kept(graph, members, b)
            graph.edge(src, T, a - b)  # over-approximation: paid whenever the source stays


def _if_any_kept(graph: _Graph, members: list[int], w: float) -> None:
    """w when some member stays (is on the source side)."""
    if w <= 0 or S in members or all(m == T for m in members):
        return  # a constant (or nothing): it does not change the cut
    z = graph.aux()
    for m in members:
        if m != T:
            graph.edge(m, z, 0, infinite=True)
    graph.edge(z, T, w)


def _if_any_kept_and_moved(graph: _Graph, members: list[int], src: int, w: float) -> None:
    """w when some member stays and the source moves."""
    if w <= 0 or all(m == T for m in members):
        return
    if S in members:
        graph.edge(S, src, w)
        return
    z = graph.aux()
    for m in members:
        if m != T:
            graph.edge(m, z, 0, infinite=True)
    graph.edge(z, src, w)


def _if_kept_and_any_moved(graph: _Graph, src: int, members: list[int], w: float) -> None:
    """w when the source stays and some member moves."""
    if w <= 0 or all(m == S for m in members):
        return
    if T in members:
        graph.edge(src, T, w)
        return
    u = graph.aux()
    graph.edge(src, u, w)
    for m in members:
        if m != S:
            graph.edge(u, m, 0, infinite=True)


__all__ = ["MAX_ROUNDS", "CopyTerm", "Problem", "solve"]
