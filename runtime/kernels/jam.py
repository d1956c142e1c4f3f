"""Which kernels the Numba backend's fast path runs *jammed*: `LANES` threads at once.

A kernel of one thread per output element whose thread loops over a reduction (a row sum,
a convolution's window) is a chain of dependent float ops per thread: each `addf` waits
for the one before, and the thread-by-thread loop runs at the latency of one add per
element. Jammed, the fast path runs `LANES` consecutive threads of a block row together:
each thread's ops before its loop, thread by thread; then one loop whose body holds every
lane's ops, op by op (`LANES` independent chains, and loads next to each other that LLVM
may vectorise); then each thread's ops after the loop. Every thread computes what it
computes alone, in the same order: the results are bitwise those of the thread loop.

What moves is the order of memory accesses between the threads of a group, and the place
of a fault. `plan` accepts a kernel only where neither can show:

* the body is index ops (pure, no memory) and one `scf.if` guard that the fast path's
  ranges prove uniform (`BlockRanges.guards`), with no results or else branch;
* in the guard: ops that may fault but write nothing (a thread's row and column, the
  load of its initial value), then an `scf.for` nest whose bounds are the same in every
  thread of the block, whose bodies neither write memory nor can fault on the fast path,
  then ops that cannot fault (the stores of the results);
* every parameter stored to is stored by one op and never loaded, and (checked at each
  launch, `NumbaSource.jam_check`) shares no memory with another array argument.

So no thread of a group reads what another writes, each location's stores stay in thread
order, and the only ops that may fault run before any of the group's stores and loops,
thread by thread in order: the first fault is the one a run in order meets.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation

from .common import Kernel, positive_constant
from .index_values import IndexValues
from .phases import cannot_fault_on_the_fast_path
from .ranges import stored_params

LANES = 8
"""Threads of a block row a jammed fast path runs at once."""

_CALLS_BACK = ("kernel.printf", "kernel.assert")


@dataclass
class JamPlan:
    """The parts of a jammed kernel's body (see the module docstring)."""

    prefix: list[Operation]
    """The index ops before the guard, run thread by thread."""
    guard: Operation
    before: list[Operation]
    """The guard's ops before its loop nest, run thread by thread."""
    loop: Operation
    after: list[Operation]
    """The guard's ops after the loop nest, run thread by thread."""


def plan(kernel: Kernel, values: IndexValues) -> JamPlan | None:  # noqa: C901
    """How the fast path of `kernel` runs jammed, or None where it cannot."""
    if kernel.per_block or kernel.has_while or kernel.has_atomics:
        return None
    ops = [op for op in kernel.func.body.block.ops if op.name not in ("arith.constant",)]
    if not ops or ops[-1].name != "kernel.return":
        return None
    ops = ops[:-1]
    if not ops or ops[-1].name != "scf.if":
        return None
    guard, prefix = ops[-1], ops[:-1]
    if guard.results or any(
        op.name != "scf.yield"
        for region in guard.regions[1:]
        for b in region.blocks
        for op in b.ops
    ):
        return None
    if not all(op.results and all(values.recomputable(r) for r in op.results) for op in prefix):
        return None
    inside = list(guard.regions[0].block.ops)
    if inside and inside[-1].name == "scf.yield":
        inside = inside[:-1]
    loops = [i for i, op in enumerate(inside) if op.name == "scf.for"]
    if len(loops) != 1:
        return None
    before, loop, after = inside[: loops[0]], inside[loops[0]], inside[loops[0] + 1 :]
    for op in before:
        if op.regions or op.name in ("memref.store", "kernel.thread_id", *_CALLS_BACK):
            return None
    if not _jammable_loop(loop, values):
        return None
    for op in after:
        if op.regions or op.name == "kernel.thread_id":
            return None
        if op.name != "memref.store" and not cannot_fault_on_the_fast_path(op):
            return None
    stored = stored_params(kernel)
    stores = [op for op in kernel.func.walk() if op.name == "memref.store"]
    if any(op.operands[1] not in stored for op in stores):
        return None  # (memory the kernel allocates)
    if len(stores) != len({op.operands[1] for op in stores}):
        return None  # a parameter stored by two ops: their order between threads would move
    for op in kernel.func.walk():
        if op.name == "memref.load" and op.operands[0] in stored:
            return None
    if not any(isinstance(p.type, MemRefType) for p in stored):
        return None
    return JamPlan(prefix, guard, before, loop, after)


def _jammable_loop(loop: Operation, values: IndexValues) -> bool:
    """Whether an `scf.for` nest may run jammed: bounds the same in every thread of the
    block, a constant positive step, bodies that write nothing and cannot fault."""
    lb, ub, step = loop.operands[:3]
    if not positive_constant(step) or not all(values.block_uniform(b) for b in (lb, ub)):
        return False
    for op in loop.regions[0].block.ops:
        if op.name == "scf.for":
            if not _jammable_loop(op, values):
                return False
        elif op.name == "kernel.thread_id" or not cannot_fault_on_the_fast_path(op):
            return False
    return True
