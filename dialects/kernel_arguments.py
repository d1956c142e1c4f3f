"""What a kernel does with its memref parameters: which it writes and which it touches
only atomically.

These are facts about a `kernel.func` body that the runtime and passes read: the executor
orders launches by what they may write and runs launches that meet only in atomically
updated memory at once; `elide-copies` reads `stored_arguments` as a launch's write
effects. Kernel bodies reach memory only through their parameters, so a parameter that
is not written is only read.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import SSAValue

from .kernel import KernelFuncOp


def stored_arguments(kernel: KernelFuncOp) -> tuple[int, ...]:
    """Indices of the kernel's memref parameters that some `memref.store` or
    `memref.atomic_rmw` writes.

    What a launch of `kernel` may write: the executor orders launches by it and
    `elide-copies` reads it as the launch's write effects (kernel bodies reach memory
    only through their parameters, so every other argument is only read).
    """
    params: dict[SSAValue, int] = {arg: i for i, arg in enumerate(kernel.body.block.args)}
    stored: set[int] = set()
    for op in kernel.walk():
        if isinstance(op, memref.StoreOp | memref.AtomicRMWOp) and op.memref in params:
            stored.add(params[op.memref])
    return tuple(sorted(stored))


def atomic_arguments(kernel: KernelFuncOp) -> tuple[int, ...]:
    """Indices of the memref parameters the kernel touches only through
    `memref.atomic_rmw` (and `memref.dim`): two unordered launches that meet only in
    such memory do not race, and the executor may run them at once."""
    params: dict[SSAValue, int] = {arg: i for i, arg in enumerate(kernel.body.block.args)}
    atomic: set[int] = set()
    other: set[int] = set()
    for op in kernel.walk():
        if isinstance(op, memref.AtomicRMWOp):
            if op.memref in params:
                atomic.add(params[op.memref])
            used = [o for o in op.operands if o is not op.memref]
        elif isinstance(op, memref.DimOp):
            used = [o for o in op.operands if o is not op.source]
        else:
            used = list(op.operands)
        other.update(params[o] for o in used if o in params)
    return tuple(sorted(atomic - other))
