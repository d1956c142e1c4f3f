"""`elide-copies`: remove the copies that change nothing, at both levels.

Copies are inserted for correctness (plan-devices puts a `vdev.device_copy` wherever a
value crosses devices, lower-to-device turns each into `device.copy`); this pass removes
those that provably change nothing, as IREE's copy elision does after its
copy-on-write pass. It never removes a copy it cannot prove redundant: it keeps it, and
with `{explain=true}` says why in a remark at the copy.

Algorithm
=========

Each round has an analysis and a rewrite, apart:

Phase 1 — facts. `MemoryAreas` (`analysis/memory_areas.py`) answers from the system
description (the module's `vdev.system`, else `System.default()`) whether two
placements are one memory area (same device and scope, or scopes a `[[same_memory]]`
entry joins) and what a copy between two devices costs under the system's links (the
cost model's `CostModel.route`: the direct link, else through the host).
For level 2, `BlockFacts` (`block_facts.py`) lists, per block, every top-level op's
memory effects on buffers (`Effects` of `analysis/memory_effects.py`: reads, writes,
full overwrites, frees of *roots*: the allocation or argument a memref value views),
indexed by root, and the async work not yet waited for at each copy.

Phase 2 — decisions. Every copy gets one decision: elide by a rule (with how to rewrite
it) or keep (with the reason). Rules, in the order they are tried:

Level 1, `vdev.device_copy` (`value_copies.py`; tensors are values: nothing writes
them, so only dominance matters):
  * `unused`: the result has no use.
  * `same-memory`: `from` and `to` are one place (device type, id and scope); uses take
    the operand. Two places that the system declares one memory area keep their copy
    at level 1: lower-to-device gives each place its own buffer and kernels reach only
    their own device's, so the copy can only go at level 2 (`forward`), where one
    buffer can serve both.
  * `duplicate`: an earlier copy of the same value to the same device dominates this
    one; uses take its result.
  * `round-trip`: the operand is a copy from W and `to` is W's place; uses take that
    copy's operand. (When `to` is only one memory area with W, `chain` makes it one
    copy: the pair is judged as a whole, never hop by hop.)
  * `chain`: the operand is a copy W→X used only here: copy from W directly (one
    transfer instead of two) when the system can route W→`to`.
  * `reroute` (no bytes saved): the operand W→X has other uses, and the system's
    links make W→`to` strictly cheaper than X→`to`: copy from W instead.
  * `constant`: the operand is an `arith.constant` tensor, directly or through
    `vdev.on_device` ops (which pin where a value lives, not what it is): clone it onto
    `to`; the constant and those ops go when nothing else uses them.

Level 2, `device.copy` and `device.copy_async` (`buffer_copies.py`; buffers: writes
matter):
  * `same-buffer`: source and destination are one SSA value.
  * `dead`: the next top-level op after the copy in its block that touches the
    destination frees or fully overwrites it (a copy into it that does not read
    it), or nothing touches it and the block is a function body whose local
    allocation it is (its lifetime ends).
  * `copy-back`: B→A where the last op before it in its block that writes or frees A
    or B is the copy A→B (same values), that copy is complete (sync, or its token
    waited for), and no async work still pending touches A or B.
  * `forward`: source and destination are one memory area (one place, or scopes a
    `[[same_memory]]` entry joins, where the runtime lets one buffer serve: any
    reader within one device; host readers of another device's host-visible buffer),
    the destination is a local allocation of this block used only after the copy and
    only by reads (loads, copies from it, launch arguments the kernel does not store
    to) and frees, and nothing writes or frees the source until its last read:
    the reads take the source (through a `memref.memory_space_cast` when the spaces
    differ), the destination's allocation and frees go: one buffer instead of two.
  The token of an elided `device.copy_async` is replaced, in every `device.wait` and
  dependency list, by the copy's own dependencies (waiting for the copy meant waiting
  for them); a wait left with no token is erased (it must not become `wait all`). A
  token used any other way (yielded, passed to a call) keeps the copy.

Phase 3 — rewrite: decisions are applied in program order; a decision is skipped in
this round when an op it reads or changes was already changed by an earlier decision
of the round (the next round re-analyses). Rounds repeat until one changes nothing, at
most `MAX_ITERATIONS` times (a remark says when that cap stops it).

Memory effects and aliasing are `analysis/memory_effects.py`'s (its header says what
each op does to buffers and which roots may alias).

Invariants: results never change; a round changes IR only when it elides a copy or
reroutes one to a strictly cheaper route, so rounds terminate; a second run changes
nothing (idempotent); level-1 placements stay consistent (a replacement value lives
in the place of the value it replaces, so every operand stays in its op's place).

`necessary_bytes` (`statistics.py`) is the lower bound the placement allows: per value,
its size times the memory areas other than its own where it is read.

Not handled (kept, and explained): level-2 copies whose facts cross control flow (a
use inside `scf` regions, the end of a nested block, a token leaving its block),
async copies for `forward`, copies of dynamic size still count as removed but not in
the bytes saved. A caller's unawaited async work on a function's arguments is a race
the executor reports; the pass assumes there is none.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from ...analysis.memory_areas import MemoryAreas
from ...diagnostics import diagnostic_at, emit_remark
from ...system.description import System
from .buffer_copies import Level2
from .decisions import Decision, Elide, Keep
from .statistics import Statistics
from .value_copies import Level1

MAX_ITERATIONS = 16
"""Rounds of analysis and rewrite before the pass stops with a remark."""


def analyse(module: ModuleOp, areas: MemoryAreas) -> list[Decision]:
    """Phases 1 and 2: one decision per copy, in program order; the IR is unchanged."""
    ops = list(module.walk())
    decisions: list[Decision] = list(Level1(ops, areas).decisions())
    decisions += Level2(ops, areas).decisions()
    return decisions


def rewrite(decisions: list[Decision], stats: Statistics) -> bool:
    """Phase 3: apply the decisions that do not touch what an earlier one changed."""
    changed: set[Operation] = set()
    for decision in decisions:
        if not isinstance(decision, Elide) or decision.touches & changed:
            continue
        changed |= decision.touches
        stats.record(decision)
        decision.rewrite()
    return bool(changed)


@dataclass(frozen=True)
class ElideCopiesPass(ModulePass):
    """Removes copies that change nothing (see the module docstring for every rule).

    `stats=true` prints what was removed, by rule, and the bytes saved; `explain=true`
    prints a remark at each copy kept, saying why it could not be proven redundant.
    """

    name = "elide-copies"

    stats: bool = False
    explain: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        areas = MemoryAreas(System.from_module(op) or System.default())
        stats = Statistics()
        decisions: list[Decision] = []
        capped = True
        for _ in range(MAX_ITERATIONS):
            decisions = analyse(op, areas)
            stats.before = stats.before or len(decisions)
            stats.iterations += 1
            if not rewrite(decisions, stats):
                capped = False
                break
        if capped:
            decisions = analyse(op, areas)
            emit_remark(
                diagnostic_at(
                    op,
                    f"elide-copies stopped after {MAX_ITERATIONS} iterations; another run "
                    "may remove more copies",
                    kind="remark",
                )
            )
        stats.after = len(decisions)
        if self.explain:
            for decision in decisions:
                if isinstance(decision, Keep):
                    message = f"kept '{decision.copy.name}': {decision.reason}"
                    emit_remark(diagnostic_at(decision.copy, message, kind="remark"))
        if self.stats:
            emit_remark(stats.text())
