"""`outline-device-regions`: split mixed and multi-device functions into device programs.

The ops of each block are first regrouped so that each device's ops sit together as
far as dependences allow (ops are only reordered when no value and no memory they
may share orders them). Then each maximal run of ops that forms a device program
for one device is moved into a new `func.func` (named after the original function
and the device, e.g. `@main_cuda0`, made unique) and replaced by a `func.call` to
it; `classify-regions` then marks the new function "device". What is left — the
host glue — keeps the host work and the ops that span devices, and calls the
device programs in order.

Algorithm
=========

Phase 1 — tags (`RegionAnalysis` of `analysis/region_footprint.py`). Every op of a
mixed or multi-device function gets a tag from the footprint of the op and its
nested ops: *free* (touches nothing: scalar `arith`, `device.attr`, `device.wait`,
calls to scalar host functions), *device d* (a footprint of exactly device d and no
host memory: `device.alloc` of d's memory, a launch on d, a loop whose body only
launches on d, a call to a device program for d), or *host* (anything else: host
memory work, a copy between host and device, work on two devices, terminators).

Phase 2a — schedule, per block (`BlockSchedule`). The ops of a block are reordered
so that ops of one device sit together, as far as dependences allow. Op B (later)
depends on op A (earlier) when
  * B or an op nested in B uses a result of A (SSA def-use), or
  * their memory effects conflict: one may write memory the other reads or writes.
Memory is named per device. Device memory of device d is touched only by ops on d
(`device.alloc/free`, launches with d's memrefs) and by copies, which touch both
their source's and their destination's memory. Memory of d that is the result of a
`device.alloc` in this block's function is that allocation's own: it never aliases
another allocation nor an argument of the function (the allocation is fresh). Two
arguments of the function may alias each other, and any other memref of d (loop
block argument, call result, view) may alias all memory of d. Host memory (no
memory space, or a space of the module's host device) is one location: every host
access may alias every other.
Ops nested in an op count for it. Barriers — ordered with every other op — are
terminators, `device.wait` (it makes asynchronous writes visible), ops whose
effects xDSL cannot name, calls to functions that are not device programs (host,
scalar, mixed or bodiless callees), and region ops tagged host (their regions hold
host work). A call to a device program for d may touch any memory of d.
`device.attr` and scalar ops only have SSA dependences.
Anchored ops (everything but free ops that are not barriers) are list-scheduled,
greedily and stably: take the earliest (in the original order) op whose anchored
dependences — direct, or through chains of free ops — are all emitted; if it is on
device d, keep emitting the earliest ready op of d (or a ready free barrier) until
none is ready. Free ops are then put back where they were (before the anchored op
that followed them) unless that is before an op they use (then: just after it) or
after a user (then: just before the first one). The new order is kept only when it
has fewer device runs (phase 2b) than the old; otherwise the block is untouched
(so a block already optimal is never churned, and outlining stays idempotent).

Phase 2b — runs, per block. A run is a maximal contiguous sequence of ops of one
device d and free ops that begins and ends with a d op; any host op or op of
another device ends it. Free ops just before a run join it when their results are
used only inside it (scalar launch parameters go with their launches). Ops tagged
host whose regions hold runs (e.g. an `scf.for` that stores to host memory and
launches) are scheduled and searched recursively. A run whose device ops are all
calls is already outlined and is left alone, so the pass is idempotent.

Phase 3 — rewrite, run by run. Values defined outside a run and used inside
become the new function's arguments (in order of first use); results of the run
used after it become its results. The run's ops move into the new function in
their order and a `func.call` takes their place.

Invariants: behaviour is unchanged because the schedule keeps every pair of
dependent ops in their original order (so every value is defined before use and
every read sees the same last write), and each run is then outlined in place.
Each outlined function consists of ops allowed in a device program for one device,
so it classifies as "device". Not handled: ops never move across block boundaries
(into or out of loops and branches); region ops with host work are barriers even
when their host work touches unrelated memory; host memory is not split by
allocation (a store to one host buffer orders all host reads); views of a
`device.alloc` result count as possibly aliasing all of that device's memory; the
greedy schedule is a heuristic: it is not guaranteed to give the fewest runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator, MemoryEffectKind, get_effects

from ..analysis.buffer_ownership import DeviceKey
from ..analysis.region_footprint import NEUTRAL, NEUTRAL_MEMREF_OPS, Footprint, RegionAnalysis
from ..dialects import device as dev

FREE = "free"
HOST = "host"

Tag = DeviceKey | str
"""`FREE`, `HOST` or the device of an op."""


@dataclass
class Run:
    """Contiguous ops of one block that form a device program for `device`."""

    device: DeviceKey
    ops: list[Operation]


@dataclass(frozen=True)
class Location:
    """Memory an op may touch: host memory (`device` None; all of it may alias), or
    memory of `device` allocated by the `device.alloc` whose id is `root`, or passed
    in as an argument of the function (`argument`), or neither known (`root` None and
    not `argument`: a loop-carried value, a call result, a view)."""

    device: DeviceKey | None
    root: int | None = None
    argument: bool = False

    def may_alias(self, other: Location) -> bool:
        if self.device is None or other.device is None:
            return self.device is None and other.device is None
        (kind, ident), (other_kind, other_ident) = self.device, other.device
        if kind != other_kind or (
            ident is not None and other_ident is not None and ident != other_ident
        ):
            return False
        if self.root is not None and other.root is not None:
            return self.root == other.root  # distinct allocations never alias
        # Memory allocated in the function is fresh: no argument can point into it.
        # Two arguments, or anything unknown, may alias.
        return not (
            (self.root is not None and other.argument) or (self.argument and other.root is not None)
        )


@dataclass
class Effects:
    """What one op (with its nested ops) may do to memory: `accesses` as (location,
    writes) pairs, or anything at all (`barrier`)."""

    barrier: bool = False
    accesses: list[tuple[Location, bool]] = field(default_factory=list[tuple[Location, bool]])


class OutlinePlan:
    """Phases 1 and 2: the runs to outline in one function."""

    def __init__(self, analysis: RegionAnalysis, function: func.FuncOp):
        self.analysis = analysis
        self.runs: list[Run] = []
        self._taken: set[int] = set()
        """Ids of the top-level ops already in a run."""
        for block in function.body.blocks:
            self._plan_block(block)

    def footprint(self, op: Operation) -> Footprint:
        """The join of the footprints of `op` and every op nested in it."""
        total = NEUTRAL
        for inner in op.walk():
            step = self.analysis.op_step(inner)
            if step is not None:
                total = total.join(step.footprint)
        return total

    def tag(self, op: Operation) -> Tag:
        if op.has_trait(IsTerminator):
            return HOST
        fp = self.footprint(op)
        if fp == NEUTRAL:
            return FREE
        if fp.region_class == "device":
            assert fp.device is not None
            return fp.device
        return HOST

    def _plan_block(self, block: Block) -> None:
        BlockSchedule(self, block).apply()
        current: Run | None = None
        pending: list[Operation] = []
        for op in block.ops:
            tag = self.tag(op)
            if tag == FREE:
                if current is not None:
                    pending.append(op)
                continue
            if current is not None and tag == current.device:
                current.ops.extend(pending)
                current.ops.append(op)
                pending = []
                continue
            self._close(current)
            current, pending = None, []
            if tag == HOST:
                for region in op.regions:
                    for inner in region.blocks:
                        self._plan_block(inner)
            else:
                assert not isinstance(tag, str)
                current = Run(tag, [op])
        self._close(current)

    def _close(self, run: Run | None) -> None:
        if run is None or all(
            isinstance(op, func.CallOp) for op in run.ops if self.tag(op) != FREE
        ):
            # Only calls to device programs: already outlined (keeps the pass idempotent).
            return
        inside = _nested_ops(run.ops)
        previous = run.ops[0].prev_op
        while (
            previous is not None
            and id(previous) not in self._taken
            and previous.results
            and self.tag(previous) == FREE
            and all(id(use.operation) in inside for r in previous.results for use in r.uses)
        ):
            run.ops.insert(0, previous)
            inside.update(id(o) for o in previous.walk())
            previous = previous.prev_op
        self.runs.append(run)
        self._taken.update(id(op) for op in run.ops)


def _nested_ops(ops: Sequence[Operation]) -> set[int]:
    """Ids of `ops` and every op nested in them (membership in O(1))."""
    return {id(inner) for op in ops for inner in op.walk()}


def _defining_op(value: SSAValue) -> Operation | None:
    """The op that defines `value`, or that owns the block of a block argument."""
    owner = value.owner
    return owner if isinstance(owner, Operation) else owner.parent_op()


def _unique_name(module: ModuleOp, base: str) -> str:
    taken: set[str] = set()
    for op in module.body.block.ops:
        symbol = op.properties.get("sym_name") or op.attributes.get("sym_name")
        if isinstance(symbol, StringAttr):
            taken.add(symbol.data)
    if base not in taken:
        return base
    n = 1
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def outline_run(
    module: ModuleOp, function: func.FuncOp, run: Run, anchor: Operation
) -> func.FuncOp:
    """Phase 3: move `run` into a new function, placed after `anchor` in the module and
    called where the run was; return the new function."""
    ops = run.ops
    inside = _nested_ops(ops)
    inputs: list[SSAValue] = []
    seen: set[SSAValue] = set()
    for op in ops:
        for inner in op.walk():
            for operand in inner.operands:
                if id(_defining_op(operand)) not in inside and operand not in seen:
                    seen.add(operand)
                    inputs.append(operand)
    outputs = [
        result
        for op in ops
        for result in op.results
        if any(id(use.operation) not in inside for use in result.uses)
    ]
    kind, ident = run.device
    name = _unique_name(module, f"{function.sym_name.data}_{kind}{'' if ident is None else ident}")
    block = Block(arg_types=[v.type for v in inputs])
    for arg, value in zip(block.args, inputs, strict=True):
        arg.name_hint = value.name_hint
    parent = ops[0].parent_block()
    after = ops[-1].next_op
    assert parent is not None
    assert after is not None, "a run never holds its block's terminator"
    for op in ops:
        op.detach()
        block.add_op(op)
    block.add_op(func.ReturnOp(*outputs))
    outlined = func.FuncOp(
        name, ([v.type for v in inputs], [v.type for v in outputs]), Region(block)
    )
    for arg, value in zip(block.args, inputs, strict=True):
        value.replace_uses_with_if(arg, lambda use: outlined.is_ancestor(use.operation))
    outlined.location = function.location
    call = func.CallOp(name, inputs, [v.type for v in outputs])
    call.location = ops[0].location
    parent.insert_op_before(call, after)
    for result, value in zip(call.res, outputs, strict=True):
        result.name_hint = value.name_hint
        value.replace_uses_with_if(result, lambda use: not outlined.is_ancestor(use.operation))
    module.body.block.insert_op_after(outlined, anchor)
    return outlined


@dataclass(frozen=True)
class OutlineDeviceRegionsPass(ModulePass):
    """Groups each mixed or multi-device function's ops by device as far as their
    dependences allow, moves each single-device run into its own function (a device
    program) and calls it from the remaining host glue.

    `func.func @main(...)` with host stores, a copy to cuda:0 and two launches becomes
    `@main` (the stores, the copy, `func.call @main_cuda0(...)`) and `@main_cuda0`
    (the launches). Behaviour is unchanged; see the module docstring.
    """

    name = "outline-device-regions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        analysis = RegionAnalysis(op)
        plans = [
            (function, OutlinePlan(analysis, function))
            for function in analysis.functions.values()
            if analysis.region_class(function) in ("mixed", "multi-device")
        ]
        for function, plan in plans:
            anchor: Operation = function
            for run in plan.runs:
                anchor = outline_run(op, function, run, anchor)


class _AccessIndex:
    """The memory accesses of a block's earlier ops, bucketed so that an op is compared
    only with accesses that may alias its own. Two ops conflict when either is a
    barrier, or one writes a location the other may touch (`Location.may_alias`);
    different devices, host vs device, and two distinct allocations never alias, so
    they never share a bucket and are never compared."""

    def __init__(self) -> None:
        self.count = 0
        self.barriers: list[int] = []
        self.host: list[tuple[int, bool, Location]] = []
        self.rooted: dict[tuple[str, int], list[tuple[int, bool, Location]]] = {}
        self.by_kind: dict[str, list[tuple[int, bool, Location]]] = {}
        """Every device access of a kind, rooted or not."""
        self.unrooted: dict[str, list[tuple[int, bool, Location]]] = {}

    def _candidates(self, location: Location) -> list[tuple[int, bool, Location]]:
        if location.device is None:
            return self.host
        kind = location.device[0]
        if location.root is None:
            return self.by_kind.get(kind, [])
        return [*self.rooted.get((kind, location.root), []), *self.unrooted.get(kind, [])]

    def conflicts_of(self, i: int, effects: Effects) -> set[int]:
        """The earlier ops whose effects conflict with `effects` (op `i`); records them."""
        if effects.barrier:
            found = set(range(i))
            self.barriers.append(i)
        else:
            found = set(self.barriers)
            for location, writes in effects.accesses:
                found.update(
                    j
                    for j, other_writes, other in self._candidates(location)
                    if (writes or other_writes) and location.may_alias(other)
                )
            for location, writes in effects.accesses:
                entry = (i, writes, location)
                if location.device is None:
                    self.host.append(entry)
                    continue
                kind = location.device[0]
                self.by_kind.setdefault(kind, []).append(entry)
                if location.root is None:
                    self.unrooted.setdefault(kind, []).append(entry)
                else:
                    self.rooted.setdefault((kind, location.root), []).append(entry)
        return found


class BlockSchedule:
    """Phase 2a: reorder one block's ops so that ops of one device sit together, keeping
    every dependence (see the module docstring)."""

    def __init__(self, plan: OutlinePlan, block: Block):
        self.plan = plan
        self.ops = list(block.ops)
        self.block = block
        self.tags = [plan.tag(op) for op in self.ops]
        self.effects = [self._effects(op) for op in self.ops]
        index = {id(op): i for i, op in enumerate(self.ops)}
        memory = _AccessIndex()
        self.preds: list[set[int]] = []
        for i, op in enumerate(self.ops):
            preds: set[int] = set()
            for inner in op.walk():
                for operand in inner.operands:
                    j = index.get(id(operand.owner))
                    if j is not None and j != i:
                        preds.add(j)
            preds |= memory.conflicts_of(i, self.effects[i])
            self.preds.append(preds)
        self.anchored = [
            self.tags[i] != FREE or self.effects[i].barrier for i in range(len(self.ops))
        ]

    # ---- dependences --------------------------------------------------------------

    def _location(self, value: SSAValue) -> Location:
        owner = self.plan.analysis.ownership.owner(value.type)
        if owner is None:
            return Location(None)
        root = value.owner
        if isinstance(root, dev.AllocOp | dev.AllocWorkspaceOp):
            return Location(owner, id(root))
        if isinstance(root, Block) and isinstance(root.parent_op(), func.FuncOp):
            return Location(owner, argument=True)
        return Location(owner)

    def _effects(self, op: Operation) -> Effects:
        if op.has_trait(IsTerminator):
            return Effects(barrier=True)
        effects = Effects()
        for inner in op.walk():
            if not self._add_effects(inner, effects):
                return Effects(barrier=True)
        if op.regions and self.plan.tag(op) == HOST:
            return Effects(barrier=True)  # region ops with host work: never reordered
        return effects

    def _add_effects(self, op: Operation, effects: Effects) -> bool:
        """Add what `op` alone does; False when that is not known (a barrier)."""
        add = effects.accesses.append
        if isinstance(op, dev.AllocOp | dev.AllocWorkspaceOp):
            add((self._location(op.result), True))
        elif isinstance(op, dev.FreeOp | dev.FreeWorkspaceOp):
            add((self._location(op.buffer), True))
        elif isinstance(op, dev.CopyOp | dev.CopyAsyncOp):
            add((self._location(op.source), False))
            add((self._location(op.destination), True))
        elif isinstance(op, dev.LaunchOp):
            for arg in op.args:
                if isinstance(arg.type, MemRefType):
                    add((self._location(arg), False))
                    add((self._location(arg), True))
        elif isinstance(op, func.CallOp):
            step = self.plan.analysis.op_step(op)
            fp = NEUTRAL if step is None else step.footprint
            if fp.region_class != "device":
                return False  # host, scalar or unknown callee: anything may happen
            add((Location(fp.device), True))
        elif isinstance(op, dev.WaitOp):
            return False  # makes asynchronous writes visible: orders all memory
        elif op.name not in NEUTRAL_MEMREF_OPS and not op.has_trait(IsTerminator):
            return self._add_declared_effects(op, effects)
        return True

    def _add_declared_effects(self, op: Operation, effects: Effects) -> bool:
        """Effects of other ops, from their xDSL memory-effect traits; False if unknown."""
        known = get_effects(op)
        if known is None:
            return False
        memrefs = [v for v in (*op.operands, *op.results) if isinstance(v.type, MemRefType)]
        for effect in known:
            writes = effect.kind != MemoryEffectKind.READ
            if isinstance(effect.value, SSAValue):
                effects.accesses.append((self._location(effect.value), writes))
            elif memrefs:
                effects.accesses.extend((self._location(v), writes) for v in memrefs)
            else:
                return False  # an effect on memory we cannot name
        return True

    def _anchored_preds(self) -> list[set[int]]:
        """Dependences between anchored ops, through chains of free ops."""
        through: list[set[int]] = []
        for i in range(len(self.ops)):
            found: set[int] = set()
            for j in self.preds[i]:
                found |= {j} if self.anchored[j] else through[j]
            through.append(found)
        return through

    # ---- scheduling ---------------------------------------------------------------

    def order(self) -> list[int]:
        """The new order of the block's ops, as indices into the original order."""
        n = len(self.ops)
        apreds = self._anchored_preds()
        anchored = [i for i in range(n) if self.anchored[i]]
        done: set[int] = set()
        schedule: list[int] = []

        def ready(i: int) -> bool:
            return i not in done and apreds[i] <= done

        def emit(i: int) -> None:
            done.add(i)
            schedule.append(i)

        while len(schedule) < len(anchored):
            first = next(i for i in anchored if ready(i))
            emit(first)
            device = self.tags[first]
            if device in (FREE, HOST):
                continue
            # Grow the run: every op of the same device that is (or becomes) ready.
            while (
                nxt := next(
                    (i for i in anchored if ready(i) and self.tags[i] in (device, FREE)), None
                )
            ) is not None:
                emit(nxt)
        return self._place_free_ops(schedule, apreds)

    def _place_free_ops(self, schedule: list[int], apreds: list[set[int]]) -> list[int]:
        """Put each free op before the anchored op that followed it originally, unless
        that is too early (before what it uses) or too late (after a user)."""
        n = len(self.ops)
        position = {i: p for p, i in enumerate(schedule)}
        users: list[set[int]] = [set() for _ in range(n)]
        for i in range(n):
            for j in self.preds[i]:
                users[j].add(i)
        slot: dict[int, int] = {}
        next_anchored = len(schedule)
        for i in reversed(range(n)):
            if self.anchored[i]:
                next_anchored = position[i]
            else:
                slot[i] = next_anchored
        last_use: dict[int, int] = {}
        for i in reversed(range(n)):
            if not self.anchored[i]:
                last_use[i] = min(
                    (position[u] if self.anchored[u] else last_use[u] for u in users[i]),
                    default=len(schedule),
                )
        placed: dict[int, int] = {}
        for i in range(n):
            if self.anchored[i]:
                continue
            low = max((position[j] + 1 for j in apreds[i]), default=0)
            low = max([low, *(placed[j] for j in self.preds[i] if not self.anchored[j])])
            placed[i] = min(max(slot[i], low), last_use[i])
        buckets: list[list[int]] = [[] for _ in range(len(schedule) + 1)]
        for i in range(n):
            if not self.anchored[i]:
                buckets[placed[i]].append(i)
        order: list[int] = []
        for p, i in enumerate(schedule):
            order.extend(buckets[p])
            order.append(i)
        order.extend(buckets[len(schedule)])
        return order

    def _runs(self, order: list[int]) -> int:
        """How many device runs (maximal stretches of one device, free ops aside)."""
        count, previous = 0, HOST
        for i in order:
            tag = self.tags[i]
            if tag == FREE:
                continue
            if tag != HOST and tag != previous:
                count += 1
            previous = tag
        return count

    def apply(self) -> None:
        """Reorder the block when that makes fewer device runs; else leave it as is."""
        order = self.order()
        if self._runs(order) >= self._runs(list(range(len(self.ops)))):
            return
        for op in self.ops:
            op.detach()
        for i in order:
            self.block.add_op(self.ops[i])
