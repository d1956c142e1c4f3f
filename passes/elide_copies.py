"""`elide-copies`: remove the copies that change nothing, at both levels.

Copies are inserted for correctness (plan-devices puts a `vdev.device_copy` wherever a
value crosses devices, lower-to-device turns each into `device.copy`); this pass removes
those that provably change nothing, as IREE's copy elision does after its
copy-on-write pass. It never removes a copy it cannot prove redundant: it keeps it, and
with `{explain=true}` says why in a remark at the copy.

Algorithm
=========

Each round has an analysis and a rewrite, apart:

Phase 1 — facts. `MemoryAreas` answers from the system description (the module's
`vdev.system`, else `System.default()`) whether two placements are one memory area
(same device and scope, or scopes a `[[same_memory]]` entry joins) and what a copy
between two devices costs under the system's links (the runtime's own
`CostModel.route`: the direct link, else through the host).
For level 2, `BlockFacts` lists, per block, every top-level op's memory effects on
buffers (`Effects`: reads, writes, full overwrites, frees of *roots*: the allocation or
argument a memref value views), indexed by root, and the async work not yet waited
for at each copy.

Phase 2 — decisions. Every copy gets one decision: elide by a rule (with how to rewrite
it) or keep (with the reason). Rules, in the order they are tried:

Level 1, `vdev.device_copy` (tensors are values: nothing writes them, so only
dominance matters):
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
  * `constant`: the operand is an `arith.constant` tensor: clone it onto `to`.

Level 2, `device.copy` and `device.copy_async` (buffers: writes matter):
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

Memory effects: a launch reads every memref argument and writes those the kernel
stores to (`stored_arguments`, what the executor orders launches by); `memref.load`
reads, `memref.store` writes, frees free, views (`memref.cast`, `subview`, ...) are
their source's root; any other op with memref operands (calls, returns, yields,
unknown ops) reads and writes them, and an op with regions has the union of its
nested ops' effects. Roots that are not local allocations (function and block
arguments, results of calls and region ops) may alias each other, unless both are
typed as memory of different devices or scopes (a host-typed one may hold anything).

Invariants: results never change; a round changes IR only when it elides a copy or
reroutes one to a strictly cheaper route, so rounds terminate; a second run changes
nothing (idempotent); level-1 placements stay consistent (a replacement value lives
in the place of the value it replaces, so every operand stays in its op's place).

`necessary_bytes` is the lower bound the placement allows (issue 10, item 5): per value,
its size times the memory areas other than its own where it is read.

Not handled (kept, and explained): level-2 copies whose facts cross control flow (a
use inside `scf` regions, the end of a nested block, a token leaving its block),
async copies for `forward`, copies of dynamic size still count as removed but not in
the bytes saved. A caller's unawaited async work on a function's arguments is a race
the executor reports; the pass assumes there is none.
"""

from __future__ import annotations

import bisect
import heapq
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp, NoneAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass

from ..diagnostics import DevplanError, diagnostic_at
from ..dialects import device as dev
from ..dialects.kernel import KernelFuncOp, lookup_kernel
from ..dialects.kernel_arguments import stored_arguments
from ..dialects.memory_scopes import DEFAULT_SCOPE
from ..dialects.placement import value_device
from ..dialects.vdev import DEVICE_ATTR, DeviceCopyOp
from ..dialects.virtual_device import DeviceAttr, memory_space_of
from ..runtime.streams import CostModel, LinkCost, NoLinkError
from ..system.description import ScopeRef, System

MAX_ITERATIONS = 16
"""Rounds of analysis and rewrite before the pass stops with a remark."""

NOMINAL_BYTES = 1 << 30
"""Size used to compare routes for a copy of dynamic size (bandwidth dominates)."""


# --- facts: memory areas and routes --------------------------------------------------------


class MemoryAreas:
    """Which placements are one memory area, and what copies cost, in one system."""

    def __init__(self, system: System):
        self.system = system
        self.cost = CostModel(
            [LinkCost(link.a, link.b, link.bandwidth, link.latency) for link in system.links],
            host=system.host.name,
        )

    def scope_ref(self, device: DeviceAttr | None) -> ScopeRef | None:
        """`("cuda:0", "global")` for a placement (None: host memory), or None when the
        placement names no device of the system."""
        if device is None:
            return (self.system.host.name, DEFAULT_SCOPE)
        if device.type_name is None or device.device_id is None:
            return None
        name = f"{device.type_name}:{device.device_id}"
        try:
            spec = self.system.device_named(name)
        except DevplanError:
            return None
        scope = device.scope or DEFAULT_SCOPE
        return (name, scope) if scope in spec.scopes else None

    def one_area(self, a: DeviceAttr | None, b: DeviceAttr | None) -> bool:
        """Whether memory placed at `a` and at `b` is the same memory."""
        ra, rb = self.scope_ref(a), self.scope_ref(b)
        if ra is not None and rb is not None:
            return self.system.same_memory(ra, rb)
        if a is None or b is None or a.device_id is None or a.type_name is None:
            return False
        same_device = (a.type_name, a.device_id) == (b.type_name, b.device_id)
        return same_device and (a.scope or DEFAULT_SCOPE) == (b.scope or DEFAULT_SCOPE)

    def route_seconds(self, a: DeviceAttr, b: DeviceAttr, nbytes: int | None) -> float | None:
        """Cost-model seconds of copying `nbytes` from `a` to `b`, None when the
        system cannot route such a copy."""
        ra, rb = self.scope_ref(a), self.scope_ref(b)
        if ra is None or rb is None:
            return None
        try:
            hops = self.cost.route(ra[0], rb[0])
        except NoLinkError:
            return None
        size = NOMINAL_BYTES if nbytes is None else nbytes
        return sum(hop.seconds(size) for hop in hops)


def byte_size(type_: Attribute) -> int | None:
    """Bytes of a statically shaped tensor or memref, else None."""
    if not isinstance(type_, TensorType | MemRefType):
        return None
    shaped = cast(TensorType[Attribute] | MemRefType[Attribute], type_)
    element = getattr(shaped.get_element_type(), "size", None)
    shape = shaped.get_shape()
    if not isinstance(element, int) or any(d < 0 for d in shape):
        return None
    count = 1
    for d in shape:
        count *= d
    return count * element


# --- decisions -----------------------------------------------------------------------------


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


def _where(op: Operation) -> str:
    """`'device.launch' at line 12` (or without the line when the op has none)."""
    loc = op.location
    line = getattr(loc, "line", None)
    return f"'{op.name}' at line {line.data}" if line is not None else f"'{op.name}'"


def _erase(op: Operation) -> None:
    op.detach()
    op.erase()


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


def _ancestor_in(block: Block | None, op: Operation) -> Operation | None:
    """`op` or its ancestor whose block is `block`, or None."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def _dominates(a: Operation, b: Operation, positions: Positions) -> bool:
    """Whether `a`'s results are visible at `b` (same block and earlier, or `b` nested in
    an op after `a`) — enough for the structured control flow of devplan programs."""
    ancestor = _ancestor_in(a.parent_block(), b)
    return ancestor is not None and ancestor is not a and positions[a] < positions[ancestor]


# --- level 1: vdev.device_copy -------------------------------------------------------------


def same_place(a: DeviceAttr, b: DeviceAttr) -> bool:
    """Same device type, id and scope (an unset scope is `global`): where lower-to-device
    puts one buffer, and what an op's operands must share with it."""
    return (
        a.type_name is not None
        and a.device_id is not None
        and (a.type_name, a.device_id, a.scope or DEFAULT_SCOPE)
        == (b.type_name, b.device_id, b.scope or DEFAULT_SCOPE)
    )


def _result_of(op: Operation) -> Callable[[], SSAValue]:
    return lambda: op.results[0]


def _replace_and_erase(copy: DeviceCopyOp, value: Callable[[], SSAValue]) -> Callable[[], None]:
    """Uses of the copy take `value()`, read when the rewrite runs: an earlier decision
    of the round may have replaced the value it names (a duplicate copy erased)."""

    def rewrite() -> None:
        copy.result.replace_all_uses_with(value())
        _erase(copy)

    return rewrite


def _reroute(
    copy: DeviceCopyOp, previous: DeviceCopyOp, erase_previous: bool
) -> Callable[[], None]:
    def rewrite() -> None:
        copy.operands[0] = previous.input
        copy.properties["src_device"] = previous.src_device
        if erase_previous:
            _erase(previous)

    return rewrite


def _materialise(
    copy: DeviceCopyOp, constant: arith.ConstantOp, existing: Operation | None = None
) -> Callable[[], None]:
    """Uses of the copy take `existing` (the constant already on the destination) or a
    clone of `constant` placed there; `constant` goes when nothing else uses it."""

    def rewrite() -> None:
        if existing is None:
            clone = constant.clone()
            clone.attributes[DEVICE_ATTR] = copy.dst_device
            assert copy.parent is not None
            copy.parent.insert_op_before(clone, copy)
            value = clone.result
        else:
            value = existing.results[0]
        copy.result.replace_all_uses_with(value)
        _erase(copy)
        if not constant.result.uses:
            _erase(constant)

    return rewrite


def _constant_key(op: arith.ConstantOp, device: Attribute) -> tuple[Attribute, ...]:
    value: Attribute = op.value
    return (value, op.result.type, device)


class Level1:
    """Decisions for every `vdev.device_copy` of a module."""

    def __init__(self, ops: list[Operation], areas: MemoryAreas):
        self.areas = areas
        self.positions = Positions()
        self.copies: list[DeviceCopyOp] = []
        self.constants: dict[tuple[Attribute, ...], list[Operation]] = {}
        """Tensor constants by (value, type, device): where a copied constant may already
        be materialised."""
        for op in ops:
            if isinstance(op, DeviceCopyOp):
                self.copies.append(op)
            elif isinstance(op, arith.ConstantOp) and isinstance(op.result.type, TensorType):
                key = _constant_key(op, op.attributes.get(DEVICE_ATTR, NoneAttr()))
                self.constants.setdefault(key, []).append(op)
        self.earlier: dict[tuple[SSAValue, DeviceAttr], list[DeviceCopyOp]] = {}

    def decisions(self) -> Iterator[Decision]:
        for copy in self.copies:
            yield self.decide(copy)
            self.earlier.setdefault((copy.input, copy.dst_device), []).append(copy)

    def decide(self, copy: DeviceCopyOp) -> Decision:
        here = frozenset((copy,))
        if not copy.result.uses:
            return Elide("unused", copy, lambda: _erase(copy), here)
        if same_place(copy.src_device, copy.dst_device):
            return Elide("same-memory", copy, _replace_and_erase(copy, lambda: copy.input), here)
        for first in self.earlier.get((copy.input, copy.dst_device), ()):
            if _dominates(first, copy, self.positions):
                rewrite = _replace_and_erase(copy, _result_of(first))
                return Elide("duplicate", copy, rewrite, here | {first})
        source = copy.input.owner
        if isinstance(source, DeviceCopyOp):
            return self.decide_after_copy(copy, source)
        if isinstance(source, arith.ConstantOp) and isinstance(source.result.type, TensorType):
            key = _constant_key(source, copy.dst_device)
            for existing in self.constants.get(key, ()):
                if _dominates(existing, copy, self.positions):
                    rewrite = _materialise(copy, source, existing)
                    return Elide("constant", copy, rewrite, here | {existing, source})
            return Elide("constant", copy, _materialise(copy, source), here | {source})
        return Keep(copy, self.transfer_text(copy))

    def decide_after_copy(self, copy: DeviceCopyOp, previous: DeviceCopyOp) -> Decision:
        touches = frozenset((copy, previous))
        if not self.areas.one_area(previous.dst_device, copy.src_device):
            return Keep(
                copy,
                f"its operand is copied to {previous.dst_device}, but the copy says it "
                f"is on {copy.src_device}",
            )
        if same_place(previous.src_device, copy.dst_device):
            return Elide(
                "round-trip", copy, _replace_and_erase(copy, lambda: previous.input), touches
            )
        nbytes = byte_size(copy.result.type)
        direct = self.areas.route_seconds(previous.src_device, copy.dst_device, nbytes)
        if previous.result.has_one_use():
            if direct is None:
                return Keep(
                    copy,
                    f"the middle of a chain, but the system has no route from "
                    f"{self.place(previous.src_device)} to {self.place(copy.dst_device)}",
                )
            return Elide("chain", copy, _reroute(copy, previous, True), touches)
        hop = self.areas.route_seconds(copy.src_device, copy.dst_device, nbytes)
        if direct is not None and (hop is None or direct < hop):
            return Elide("reroute", copy, _reroute(copy, previous, False), touches, False)
        return Keep(
            copy,
            f"{self.transfer_text(copy)}; its operand has other uses and copying from "
            f"{self.place(previous.src_device)} instead is not cheaper",
        )

    def transfer_text(self, copy: DeviceCopyOp) -> str:
        """Why a copy is a real one."""
        if not self.areas.one_area(copy.src_device, copy.dst_device):
            return f"a transfer between distinct memories ({self.route_text(copy)})"
        return (
            f"{self.route_text(copy)} are one memory area, but two places: lower-to-device "
            "gives each place its own buffer, and kernels reach only their own device's "
            "(at level 2 the copy goes where one buffer can serve both)"
        )

    def route_text(self, copy: DeviceCopyOp) -> str:
        return f"{self.place(copy.src_device)} to {self.place(copy.dst_device)}"

    def place(self, device: DeviceAttr) -> str:
        """`cuda:0/global` for a device of the system, else the attribute."""
        ref = self.areas.scope_ref(device)
        return str(device) if ref is None else f"{ref[0]}/{ref[1]}"


# --- level 2: memory effects ---------------------------------------------------------------

ALLOCATIONS = ("device.alloc", "device.alloc_workspace", "memref.alloc", "memref.alloca")
"""Ops whose memref result is fresh memory, aliasing nothing else."""

FULL_VIEWS = ("memref.cast", "memref.memory_space_cast")
"""Views that are the whole of their source."""

VIEWS = (
    *FULL_VIEWS,
    "memref.subview",
    "memref.reinterpret_cast",
    "memref.view",
    "memref.collapse_shape",
    "memref.expand_shape",
    "memref.transpose",
)
"""Ops whose memref result is (part of) their first operand's memory."""

FREES = (dev.FreeOp, dev.FreeWorkspaceOp, memref.DeallocOp)


def root(value: SSAValue) -> SSAValue:
    """The allocation or argument whose memory `value` views."""
    while isinstance(value, OpResult) and value.op.name in VIEWS:
        value = value.op.operands[0]
    return value


def is_full_view(value: SSAValue) -> bool:
    """Whether `value` is its whole root (the root itself or a cast of it)."""
    while isinstance(value, OpResult) and value.op.name in FULL_VIEWS:
        value = value.op.operands[0]
    return not (isinstance(value, OpResult) and value.op.name in VIEWS)


def is_local(buffer: SSAValue) -> bool:
    """Whether a root is a local allocation (it aliases no other root)."""
    return isinstance(buffer, OpResult) and buffer.op.name in ALLOCATIONS


def _device_memory(buffer: SSAValue) -> tuple[str | None, int | None, str] | None:
    """(type, id, scope) of a root typed as device memory; None for host-typed memory,
    which may hold any buffer (a caller may pass a device buffer cast to host type)."""
    type_ = buffer.type
    space = (
        memory_space_of(cast(MemRefType[Attribute], type_))
        if isinstance(type_, MemRefType)
        else None
    )
    if space is None or space.type_name is None or space.device_id is None:
        return None
    return (space.type_name, space.device_id, space.scope or DEFAULT_SCOPE)


def may_alias(a: SSAValue, b: SSAValue) -> bool:
    """Whether two roots may be one buffer: the same root, or two that are not local
    allocations, unless both are typed as memory of different devices or scopes."""
    if a is b:
        return True
    if is_local(a) or is_local(b):
        return False
    memory_a, memory_b = _device_memory(a), _device_memory(b)
    return memory_a is None or memory_b is None or memory_a == memory_b


@dataclass
class Effects:
    """What an op does to buffers (roots)."""

    reads: set[SSAValue] = field(default_factory=set[SSAValue])
    writes: set[SSAValue] = field(default_factory=set[SSAValue])
    overwrites: set[SSAValue] = field(default_factory=set[SSAValue])
    """Roots written whole, without being read (a subset of `writes`)."""
    frees: set[SSAValue] = field(default_factory=set[SSAValue])
    is_async: bool = False
    """The op or a nested op starts async work."""

    def roots(self) -> set[SSAValue]:
        return self.reads | self.writes | self.frees

    def update(self, other: Effects) -> None:
        self.reads |= other.reads
        self.writes |= other.writes
        self.frees |= other.frees
        self.is_async |= other.is_async

    def reads_any(self, buffer: SSAValue) -> bool:
        return any(may_alias(buffer, r) for r in self.reads)

    def changes_any(self, buffer: SSAValue) -> bool:
        return any(may_alias(buffer, r) for r in self.writes | self.frees)


def _memref_operands(op: Operation) -> Iterator[SSAValue]:
    return (v for v in op.operands if isinstance(v.type, MemRefType))


class EffectIndex:
    """Memory effects of ops, computed once each (kernels looked up once each)."""

    def __init__(self) -> None:
        self.cache: dict[Operation, Effects] = {}
        self.kernels: dict[str, tuple[int, ...] | None] = {}

    def of(self, op: Operation) -> Effects:
        found = self.cache.get(op)
        if found is None:
            found = self.cache[op] = self.compute(op)
        return found

    def stored(self, op: dev.LaunchOp) -> tuple[int, ...] | None:
        key = str(op.kernel)
        if key not in self.kernels:
            kernel = lookup_kernel(op, op.kernel)
            self.kernels[key] = (
                stored_arguments(kernel) if isinstance(kernel, KernelFuncOp) else None
            )
        return self.kernels[key]

    def nested(self, op: Operation) -> Effects:
        """The union of the effects of the ops inside `op`'s regions."""
        effects = Effects()
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    effects.update(self.of(child))
        return effects

    def compute(self, op: Operation) -> Effects:
        effects = self.nested(op) if op.regions else Effects()
        if isinstance(op, dev.CopyOp | dev.CopyAsyncOp):
            effects.reads.add(root(op.source))
            effects.writes.add(root(op.destination))
            if is_full_view(op.destination) and not may_alias(
                root(op.source), root(op.destination)
            ):
                effects.overwrites.add(root(op.destination))
            effects.is_async = isinstance(op, dev.CopyAsyncOp)
        elif isinstance(op, dev.LaunchOp):
            stored = self.stored(op)
            for i, arg in enumerate(op.args):
                if isinstance(arg.type, MemRefType):
                    effects.reads.add(root(arg))
                    if stored is None or i in stored:
                        effects.writes.add(root(arg))
            effects.is_async = op.is_async
        elif isinstance(op, FREES):
            effects.frees.update(root(v) for v in _memref_operands(op))
        elif isinstance(op, memref.LoadOp):
            effects.reads.add(root(op.memref))
        elif isinstance(op, memref.StoreOp):
            effects.writes.add(root(op.memref))
        elif op.name in VIEWS or op.name in ALLOCATIONS or isinstance(op, memref.DimOp):
            pass
        else:
            for value in _memref_operands(op):
                effects.reads.add(root(value))
                effects.writes.add(root(value))
        return effects


def _token_of(op: Operation) -> SSAValue | None:
    if isinstance(op, dev.CopyAsyncOp):
        return op.token
    if isinstance(op, dev.LaunchOp):
        return op.token
    return None


def _dependencies(op: Operation) -> tuple[SSAValue, ...]:
    if isinstance(op, dev.CopyAsyncOp | dev.LaunchOp):
        return tuple(op.dependencies)
    return ()


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
            token = _token_of(op)
            if token is not None:
                work[token] = (e, _dependencies(op))
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


def _ancestor_index(facts: BlockFacts, op: Operation) -> int | None:
    ancestor = _ancestor_in(facts.block, op)
    return None if ancestor is None else facts.index[ancestor]


# --- level 2: token bookkeeping ------------------------------------------------------------


def _token_users_ok(copy: Operation) -> str | None:
    """Why the token of an async copy stops its removal, or None."""
    token = _token_of(copy)
    if token is None:
        return None
    for use in token.uses:
        user = use.operation
        if isinstance(user, dev.WaitOp):
            continue
        deps = _dependencies(user)
        if isinstance(user, dev.CopyAsyncOp | dev.LaunchOp) and user.operands[use.index] in deps:
            continue
        return f"its token is used by {_where(user)}, which the pass does not follow"
    return None


def _token_users(copy: Operation) -> frozenset[Operation]:
    token = _token_of(copy)
    return frozenset(use.operation for use in token.uses) if token is not None else frozenset()


def _rebuild_with_dependencies(op: Operation, deps: list[SSAValue]) -> None:
    if isinstance(op, dev.CopyAsyncOp):
        new: Operation = dev.CopyAsyncOp(op.source, op.destination, deps)
    else:
        assert isinstance(op, dev.LaunchOp)
        new = dev.LaunchOp(
            op.kernel, op.device, op.grid, op.block, op.args, is_async=True, dependencies=deps
        )
    new.attributes.update(op.attributes)
    new.location = op.location
    assert op.parent is not None
    op.parent.insert_op_before(new, op)
    old_token, new_token = _token_of(op), _token_of(new)
    assert old_token is not None
    assert new_token is not None
    old_token.replace_all_uses_with(new_token)
    _erase(op)


def _remove_async(copy: Operation) -> None:
    """Erase a copy; its token's waiters and dependents take its dependencies."""
    token = _token_of(copy)
    if token is not None:
        deps = list(_dependencies(copy))
        for user in {use.operation for use in token.uses}:
            old = list(user.operands if isinstance(user, dev.WaitOp) else _dependencies(user))
            new: list[SSAValue] = []
            for t in old:
                for u in deps if t is token else [t]:
                    if u not in new:
                        new.append(u)
            if isinstance(user, dev.WaitOp):
                if new:
                    user.operands = new
                else:
                    _erase(user)
            else:
                _rebuild_with_dependencies(user, new)
    _erase(copy)


# --- level 2: rules ------------------------------------------------------------------------

CopyOps = dev.CopyOp | dev.CopyAsyncOp

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
        why_token = _token_users_ok(copy)
        if why_token is not None:
            return Keep(copy, why_token)
        touches = frozenset((copy,)) | _token_users(copy)
        if copy.source is copy.destination:
            return Elide("same-buffer", copy, lambda: _remove_async(copy), touches)
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
        removal = Elide("dead", copy, lambda: _remove_async(copy), touches)
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
                    f"its destination is used inside {_where(user)} "
                    "(the pass is conservative across control flow)"
                )
            if isinstance(user, dev.LaunchOp):
                return f"its destination is passed to {_where(user)}, whose kernel may read it"
            return f"its destination is read by {_where(user)}"
        if destination in e.frees or destination in e.overwrites:
            return removal
        return f"its destination is next changed, not wholly overwritten, by {_where(user)}"

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
                    f"it copies back what {_where(earlier)} copied, but {_where(changed_by)} "
                    "may have changed it since"
                )
            if undone:
                pending, tokens = facts.pending[copy]
                if _token_of(earlier) in tokens:
                    return f"the copy it undoes ({_where(earlier)}) is async and not yet waited for"
                if pending.changes_any(back_to) or pending.changes_any(back_from):
                    return "async work not yet waited for may write its source or destination"
                return Elide("copy-back", copy, lambda: _remove_async(copy), touches | {earlier})
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
                _erase(free)
            _erase(copy)
            _erase(allocation)

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
                    f"its source is written or freed by {_where(facts.ops[j])} "
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
            f"{_where(launch)} reads" if launch is not None else "kernels on the destination read"
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
            at = _ancestor_index(facts, user)
            if at is None or at <= i:
                return f"its destination is also used by {_where(user)}"
            if isinstance(user, FREES) and user.parent_block() is facts.block:
                frees.append(user)  # erased with the buffer: the source may go first
            elif _is_read_only_use(user, destination, self.index):
                reads.append((user, use.index))
                last = max(last, at)
            else:
                return f"its destination is written or escapes at {_where(user)}"
        return reads, frees, last


# --- the pass ------------------------------------------------------------------------------


@dataclass
class Statistics:
    """What one run removed."""

    before: int = 0
    after: int = 0
    iterations: int = 0
    removed: Counter[str] = field(default_factory=Counter[str])
    bytes: Counter[str] = field(default_factory=Counter[str])
    dynamic: Counter[str] = field(default_factory=Counter[str])
    rerouted: int = 0

    def record(self, decision: Elide) -> None:
        if not decision.removes:
            self.rerouted += 1
            return
        self.removed[decision.rule] += 1
        copied = (
            decision.copy.operands[-1]
            if isinstance(decision.copy, CopyOps)
            else decision.copy.results[0]
        )
        size = byte_size(copied.type)
        if size is None:
            self.dynamic[decision.rule] += 1
        else:
            self.bytes[decision.rule] += size

    def text(self) -> str:
        total = sum(self.removed.values())
        lines = [
            f"elide-copies: removed {total} of {self.before} copies "
            f"({sum(self.bytes.values())} bytes per execution) in {self.iterations} "
            f"iteration(s); {self.after} left"
        ]
        for rule, count in sorted(self.removed.items()):
            dynamic = f", {self.dynamic[rule]} of dynamic size" if self.dynamic[rule] else ""
            lines.append(f"  {rule}: {count} ({self.bytes[rule]} bytes{dynamic})")
        if self.rerouted:
            lines.append(f"  rerouted to a cheaper route: {self.rerouted}")
        return "\n".join(lines)


def _consumers(value: SSAValue) -> Iterator[DeviceAttr]:
    """Where `value`'s data is read by an op that is not a copy (through copies): the
    place of the value that op reads."""
    for use in value.uses:
        user = use.operation
        if isinstance(user, DeviceCopyOp):
            yield from _consumers(user.result)
        elif (device := value_device(value)) is not None:
            yield device


def necessary_bytes(module: ModuleOp, areas: MemoryAreas, runs: dict[str, int]) -> int:
    """The lower bound of bytes a planned level-1 module must move (issue 10, item 5):
    for each value (not a copy's, not a constant's: constants are cloned per device),
    its size times the number of memory areas other than its own where it is read,
    times `runs[f]`, how often its function `f` runs."""
    total = 0
    for function in module.ops:
        if not isinstance(function, func.FuncOp) or not function.body.blocks:
            continue
        values: list[SSAValue] = list(function.body.blocks[0].args)
        for op in function.walk():
            if not isinstance(op, DeviceCopyOp | arith.ConstantOp | func.FuncOp):
                values += op.results
        for value in values:
            own = value_device(value)
            size = byte_size(value.type)
            if own is None or size is None:
                continue
            elsewhere: list[DeviceAttr] = []
            for device in _consumers(value):
                if not any(areas.one_area(device, d) for d in (own, *elsewhere)):
                    elsewhere.append(device)
            total += size * len(elsewhere) * runs.get(function.sym_name.data, 0)
    return total


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
            print(
                diagnostic_at(
                    op,
                    f"elide-copies stopped after {MAX_ITERATIONS} iterations; another run "
                    "may remove more copies",
                    kind="remark",
                ),
                file=sys.stderr,
            )
        stats.after = len(decisions)
        if self.explain:
            for decision in decisions:
                if isinstance(decision, Keep):
                    message = f"kept '{decision.copy.name}': {decision.reason}"
                    print(diagnostic_at(decision.copy, message, kind="remark"), file=sys.stderr)
        if self.stats:
            print(stats.text(), file=sys.stderr)
