"""The phases of a per-block kernel in the numba backend, and what crosses them.

A kernel with barriers or shared memory runs phase by phase: the thread-level ops between
two barriers are one phase, a loop over the threads of the block (`numba_source.py`). This
module decides, before any code is written:

1. **Phases** (`phase_of`): each thread-level op's phase number; an `scf.for`/`scf.if`
   holding a barrier is block-level control flow, around phases of its own.
2. **Interchanges** (`interchanged`): the thread-level `scf.for`s that the fast path runs
   with the thread x loop inside them (see `find_interchanges`).
3. **Values kept per thread** (`kept`): values that another phase uses and cannot compute
   again (`index_values.py`), results of block-level ops with their regions' arguments,
   and results of interchanged loops, in the order the emitter numbers their rows.
"""

from __future__ import annotations

from xdsl.ir import Block, Operation, SSAValue

from .. import scalar_ops
from .common import FLOAT_ARITH_OPS, Kernel, contains_barrier, positive_constant
from .index_values import RECOMPUTABLE_OPS, IndexValues
from .ranges import constant_dim


class Phases:
    """The phases of one per-block kernel (computed when made)."""

    def __init__(self, kernel: Kernel, values: IndexValues) -> None:
        self.kernel = kernel
        self.values = values
        self.phase_of: dict[Operation, int] = {}
        """The phase of each thread-level op."""
        self.interchanged: set[Operation] = set()
        """Thread-level `scf.for`s that the fast path runs with the thread loop inside
        (see `find_interchanges`)."""
        self.kept: list[SSAValue] = []
        """Values kept per thread between phases, each once, in the order found."""
        self._kept: set[SSAValue] = set()
        body = kernel.func.body.block
        self.assign_phases(list(body.ops), [0])
        self.find_interchanges()
        self.find_kept(body)

    def assign_phases(self, ops: list[Operation], counter: list[int]) -> None:
        """Number the phases: thread-level ops between two barriers share one."""
        for op in ops:
            if op.name == "kernel.barrier":
                counter[0] += 1
            elif contains_barrier(op):
                counter[0] += 1
                for region in op.regions:
                    for block in region.blocks:
                        self.assign_phases(list(block.ops), counter)
                        counter[0] += 1
            else:
                self.phase_of[op] = counter[0]

    def find_interchanges(self) -> None:
        """The thread-level `scf.for`s the fast path interchanges with the thread x loop
        (`for iv: for tix:` instead of `for tix: for iv:`), so that LLVM vectorises the
        loop body across the threads of a block row. Each is the whole work of its phase
        (an `scf.yield` of the enclosing region may follow), has a constant positive step
        and bounds that are the same in every thread, and a body that neither writes
        memory nor can fault on the fast path (`_LOOP_BODY_OPS`, no nested regions).
        With no store in the phase, every thread reads the same memory in either order
        and computes the same values in the same order: results are bitwise those of the
        thread-by-thread loop, and no fault can move. Index values computed before the
        loop in its phase (`IndexValues.leading_index_ops`) do not count: they neither
        touch memory nor fault, so they run in a thread loop of their own before the
        interchanged loop, as in a kernel that computes a thread's rows and column before
        its loop over k and stores after a barrier."""
        phases: dict[int, list[Operation]] = {}
        for op, number in self.phase_of.items():
            if op.name not in ("arith.constant", "kernel.return", "kernel.alloc_shared"):
                phases.setdefault(number, []).append(op)
        for work in phases.values():
            rest = work[len(self.values.leading_index_ops(work)) :]
            if not rest:
                continue
            loop = rest[0]
            if loop.name != "scf.for" or any(op.name != "scf.yield" for op in rest[1:]):
                continue
            lb, ub, step = loop.operands[:3]
            if not positive_constant(step):
                continue
            if not all(self.values.block_uniform(bound) for bound in (lb, ub)):
                continue
            body = [op for op in loop.walk() if op is not loop]
            if all(cannot_fault_on_the_fast_path(op) for op in body):
                self.interchanged.add(loop)

    def phase_of_use(self, user: Operation) -> int:
        """The phase of the thread-level op containing `user`, -1 for block-level uses."""
        current: Operation | None = user
        while current is not None:
            if current in self.phase_of:
                return self.phase_of[current]
            current = current.parent_op()
        return -1

    def find_kept(self, body: Block) -> None:
        """The values that cross phases and that no phase can compute again, the results
        of block-level ops and their regions' arguments, and the results of interchanged
        loops: each is kept per thread (`kept`)."""
        for op in body.walk():
            if op.name in ("arith.constant", "kernel.alloc_shared"):
                continue  # hoisted or allocated per block: visible to every phase
            top = op
            while top not in self.phase_of and top.parent_op() is not None:
                parent = top.parent_op()
                assert parent is not None
                if parent is self.kernel.func:
                    break
                top = parent
            block_level = op not in self.phase_of and contains_barrier(op)
            for result in op.results:
                uses = {self.phase_of_use(u.operation) for u in result.uses}
                here = -1 if block_level else self.phase_of.get(top, -1)
                crossing = uses - {here}
                if self.values.recomputable(result):
                    crossing &= {-1}  # other phases compute it again (see `bring_in`)
                if block_level or crossing or op in self.interchanged:
                    self.keep(result)
            if block_level:
                for region in op.regions:
                    for block in region.blocks:
                        for arg in block.args[1 if op.name == "scf.for" else 0 :]:
                            self.keep(arg)

    def keep(self, value: SSAValue) -> None:
        if value not in self._kept:
            self._kept.add(value)
            self.kept.append(value)


_LOOP_BODY_OPS = frozenset({
    "memref.load", "scf.yield", "arith.constant", "arith.cmpf", "arith.select",
    "arith.sitofp", "arith.uitofp", "arith.extf", "arith.truncf",
    *FLOAT_ARITH_OPS, *RECOMPUTABLE_OPS,
})  # fmt: skip
"""Ops an interchanged loop body may hold: on the fast path none of them faults or
writes memory (loads are proven in bounds there)."""


def cannot_fault_on_the_fast_path(op: Operation) -> bool:
    """Whether `op` may sit in an interchanged loop's body (no memory written, no fault on
    the fast path, where loads are proven in bounds; no nested region)."""
    if op.name not in _LOOP_BODY_OPS or op.regions or scalar_ops.overflow_flags(op):
        return False
    return op.name != "memref.dim" or constant_dim(op) is not None
