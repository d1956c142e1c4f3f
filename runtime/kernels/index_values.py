"""Index values of a kernel: which values any phase can compute again, and which are the
same in every thread of a block.

The numba backend runs a kernel with barriers phase by phase, one loop over the block's
threads a phase (`numba_source.py`). A value one phase defines and another uses is kept
per thread between them, unless it is *recomputable*: an index value of pure integer ops
(`RECOMPUTABLE_OPS`: no fault, no memory) over thread and block ids, dims, constants,
scalar parameters and counters of block-level loops, which each phase computes again so
that accesses stay affine in the thread x index. A recomputable value that depends on no
thread id is *block-uniform*: the same in every thread of a block, so that a loop bound
made of such values may run outside the thread loop, and ops reading only such values
run once for a whole row of threads (`IndexValues.uniform_ops`).
"""

from __future__ import annotations

from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from .. import scalar_ops
from .common import Kernel, constant_value, contains_barrier
from .ranges import constant_dim


class IndexValues:
    """The index values of one kernel (answers are remembered: chains of index ops are
    asked about again by every phase that uses them)."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.pure: dict[SSAValue, bool] = {}
        """Memo of `recomputable`."""

    def recomputable(self, value: SSAValue) -> bool:
        """Whether `value` is an index value of pure ops (no fault, no memory) over thread
        and block ids, dims, constants, scalar parameters and block-level loop counters:
        any phase can compute it again instead of keeping it per thread."""
        # Operands before their users, with a stack of its own: chains of ops can be
        # thousands long.
        stack = [(value, False)]
        while stack:
            current, operands_done = stack.pop()
            if current in self.pure:
                continue
            owner = current.owner
            if not (
                isinstance(owner, Operation)
                and (owner.name in RECOMPUTABLE_OPS or divides_safely(owner))
                and not scalar_ops.overflow_flags(owner)
                and (owner.name != "memref.dim" or constant_dim(owner) is not None)
            ):
                self.pure[current] = False
            elif not operands_done:
                stack.append((current, True))
                stack.extend((o, False) for o in owner.operands if o not in self.pure)
            else:
                self.pure[current] = all(
                    self.pure[o] or self.block_invariant(o) for o in owner.operands
                )
        return self.pure[value]

    def block_invariant(self, value: SSAValue) -> bool:
        """Constants, parameters and counters of block-level loops: the same name holds
        them in every phase."""
        owner = value.owner
        if isinstance(owner, Operation):
            return owner.name in ("arith.constant", "kernel.alloc_shared")
        if value in self.kernel.params:
            return True
        parent = owner.parent_op()
        return (
            parent is not None
            and parent.name == "scf.for"
            and isinstance(value, BlockArgument)
            and value.index == 0
            and contains_barrier(parent)
        )

    def block_uniform(self, value: SSAValue) -> bool:
        """Whether `value` is the same in every thread of a block by construction."""
        seen = {value}
        stack = [value]  # a stack of its own: chains of ops can be thousands long
        while stack:
            current = stack.pop()
            if self.block_invariant(current):
                continue
            owner = current.owner
            if not isinstance(owner, Operation) or owner.name == "kernel.thread_id":
                return False
            if not self.recomputable(current):
                return False
            for operand in owner.operands:
                if operand not in seen:
                    seen.add(operand)
                    stack.append(operand)
        return True

    def leading_index_ops(self, work: list[Operation]) -> list[Operation]:
        """The ops at the start of a phase's `work` that only compute index values
        (`recomputable`: pure, no memory, no fault)."""
        count = 0
        for op in work:
            if not op.results or not all(self.recomputable(r) for r in op.results):
                break
            count += 1
        return work[:count]

    def uniform_ops(self, body: Block, ops: list[Operation]) -> list[Operation]:
        """The ops of an interchanged loop's body whose results are the same in every
        thread: their operands are the induction variable, block-uniform values from
        outside the loop, or results of such ops (loop-carried values never are)."""
        uniform: set[SSAValue] = {body.args[0]}
        found: list[Operation] = []
        for op in ops:
            if op.name == "kernel.thread_id" or not op.results:
                continue
            if all(o in uniform or self.outside_uniform(o, body) for o in op.operands):
                uniform.update(op.results)
                found.append(op)
        return found

    def outside_uniform(self, value: SSAValue, body: Block) -> bool:
        """Whether `value`, used in the loop `body`, is defined outside it and the same in
        every thread of the block."""
        if isinstance(value, BlockArgument) and value.block is body:
            return False
        owner = value.owner
        if isinstance(owner, Operation) and owner.parent_block() is body:
            return False
        return self.block_uniform(value)


RECOMPUTABLE_OPS = frozenset({
    "kernel.thread_id", "kernel.block_id", "kernel.block_dim", "kernel.grid_dim",
    "arith.addi", "arith.subi", "arith.muli", "arith.maxsi", "arith.minsi",
    "arith.andi", "arith.ori", "arith.xori", "arith.cmpi", "arith.select",
    "arith.index_cast", "arith.extsi", "arith.extui", "arith.trunci", "memref.dim",
})  # fmt: skip
"""Integer ops that never fault nor touch memory (`memref.dim` only with a constant
dimension; `addi`/`subi`/`muli` only without `nsw`/`nuw`, which can fault): their
results can be computed again in any phase (`recomputable`)."""


def divides_safely(op: Operation) -> bool:
    """Whether `op` is an integer division or remainder by a constant that it cannot
    fault on: not 0, and not -1 for a signed one (whose quotient may overflow)."""
    short = op.name.removeprefix("arith.")
    if short not in scalar_ops.DIVISIONS or op.name != f"arith.{short}":
        return False
    divisor = op.operands[1].owner
    if not (isinstance(divisor, Operation) and divisor.name == "arith.constant"):
        return False
    value = constant_value(divisor)
    signed = -1 if value is True else int(value)  # i1 in signed form: true is -1
    return signed != 0 and (signed != -1 or short.endswith("ui"))
