"""Memory effects of level-2 ops on buffers, by *root*: the allocation or argument whose
memory a memref value views.

A launch reads every memref argument and writes those its kernel stores to
(`stored_arguments`, what the executor orders launches by); `memref.load` reads,
`memref.store` writes, frees free, views (`memref.cast`, `subview`, `device.view`, ...) are their
source's root; any other op with memref operands (calls, returns, yields, unknown ops)
reads and writes them, and an op with regions has the union of its nested ops' effects.
Roots that are not local allocations (function and block arguments, results of calls and
region ops) may alias each other, unless both are typed as memory of different devices
or scopes (a host-typed one may hold anything).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import cast

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, UnrankedMemRefType
from xdsl.ir import Attribute, Operation, OpResult, SSAValue

from ..dialects import device as dev
from ..dialects.kernel import KernelFuncOp, lookup_kernel
from ..dialects.kernel_arguments import stored_arguments
from ..dialects.memory_scopes import DEFAULT_SCOPE
from ..dialects.virtual_device import memory_space_of

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
    "device.view",
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
    return (v for v in op.operands if isinstance(v.type, MemRefType | UnrankedMemRefType))


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


def token_of(op: Operation) -> SSAValue | None:
    if isinstance(op, dev.CopyAsyncOp):
        return op.token
    if isinstance(op, dev.LaunchOp):
        return op.token
    return None


def dependencies_of(op: Operation) -> tuple[SSAValue, ...]:
    if isinstance(op, dev.CopyAsyncOp | dev.LaunchOp):
        return tuple(op.dependencies)
    return ()
