"""Allocations whose every element a kernel writes before anything reads them.

Host code zeroes the memory of each `memref.alloc` (a reused block holds an earlier run's
data). An output that the next op overwrites whole does not need it: this module proves
that, so that the executor skips the zeroing (a 4 MiB fill costs about as much as the
elementwise kernel that then overwrites it).

The proof has two parts:

* `overwritten_arguments(kernel)`: the memref parameters a kernel writes at every element
  when its launch covers them. A parameter qualifies when its only uses are `memref.dim`
  and one `memref.store` whose index along each dimension is the global thread id
  `block_id * block_dim + thread_id` of an axis of its own, and which sits in the body
  of the kernel or in the `then` regions of `scf.if`s whose conditions are conjunctions
  of bounds `gid < memref.dim(param, d)` (`ult` or `slt`) of those dimensions: every
  thread inside the parameter's shape stores its element, and nothing reads the old ones.
* `overwritten_before_read(alloc)`: the first op of the allocation's block that uses its
  result is a `device.launch` (or its flat view, a rank-1 `device.view` of every element
  in order, and then a launch: the fill kernel's) taking it as exactly one argument that
  the kernel overwrites, with constant grid and block sizes whose products along each
  axis reach the static size of the dimension that axis indexes.

Not handled (the memory is zeroed as before): dynamic sizes, grids computed at run time,
stores in loops or under other guards, kernels that also read the parameter, a first use
in a nested region or in any op other than a launch. A launch that faults leaves its
buffers unspecified either way (`runtime/kernels/numba_backend.py`).
"""

from __future__ import annotations

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType, NoneAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

from ..dialects import device as dev
from ..dialects.kernel import (
    BlockDimOp,
    BlockIdOp,
    KernelFuncOp,
    ThreadIdOp,
    lookup_kernel,
)

_BOUNDS = ("ult", "slt")
"""Predicates of `arith.cmpi` that bound a non-negative id by a size."""


def overwritten_arguments(kernel: KernelFuncOp) -> dict[int, tuple[int, ...]]:
    """The kernel's memref parameters that a covering launch writes at every element (see
    the module docstring), by index: for each dimension, the axis (0: x, 1: y, 2: z) whose
    global thread id indexes it."""
    found: dict[int, tuple[int, ...]] = {}
    for i, param in enumerate(kernel.body.block.args):
        if not isinstance(param.type, MemRefType):
            continue
        stores: list[memref.StoreOp] = []
        for use in param.uses:
            user = use.operation
            if isinstance(user, memref.StoreOp) and user.memref is param:
                stores.append(user)
            elif not isinstance(user, memref.DimOp):
                break  # read, passed on, or stored as a value
        else:
            if len(stores) == 1:
                axes = _covering_axes(kernel, param, stores[0])
                if axes is not None:
                    found[i] = axes
    return found


def overwritten_before_read(alloc: memref.AllocOp) -> bool:
    """Whether a launch writes every element of `alloc`'s memory before anything else
    uses it (see the module docstring)."""
    if alloc.dynamic_sizes:
        return False
    memory = result = alloc.memref
    first = _first_user(alloc, memory)
    if isinstance(first, dev.ViewOp) and _views_whole(first):
        # Its flat view (the fill kernel's) is the same memory, element for element.
        result = first.result
        first = _first_user(first, memory, result)
    if not isinstance(first, dev.LaunchOp):
        return False
    # The memory reaches the kernel once (through the view when there is one): another
    # argument holding it could read what the zeroing would have written.
    positions = [i for i, arg in enumerate(first.args) if arg in (memory, result)]
    kernel = lookup_kernel(first, first.kernel)
    if len(positions) != 1 or first.args[positions[0]] is not result or kernel is None:
        return False
    axes = overwritten_arguments(kernel).get(positions[0])
    grid = [_constant(v) for v in first.grid]
    threads = [_constant(v) for v in first.block]
    if axes is None or None in grid or None in threads:
        return False
    shape = result.type.get_shape()
    return all(
        (grid[axis] or 0) * (threads[axis] or 0) >= size
        for size, axis in zip(shape, axes, strict=True)
    )


def _first_user(after: Operation, *values: SSAValue) -> Operation | None:
    """The first op after `after` in its block that uses one of `values` (or holds a
    use in its regions)."""
    block = after.parent_block()
    if block is None:
        return None
    users = {block.find_ancestor_op_in_block(use.operation) for v in values for use in v.uses}
    first = after.next_op
    while first is not None and first not in users:
        first = first.next_op
    return first


def _views_whole(view: dev.ViewOp) -> bool:
    """Whether `view` is a rank-1 view of every element of its row-major source, in order
    (offset 0, stride 1, as many elements as the source's static shape)."""
    source, flat = view.source.type, view.result.type
    if not isinstance(source, MemRefType):
        return False
    if len(view.sizes) != 1 or not isinstance(source.layout, NoneAttr):
        return False
    count = 1
    for n in source.get_shape():
        count *= n
    return (
        _constant(view.offset) == 0
        and _constant(view.strides[0]) == 1
        and _constant(view.sizes[0]) == count
        and flat.get_shape() == (count,)
    )


def _covering_axes(
    kernel: KernelFuncOp, param: BlockArgument, store: memref.StoreOp
) -> tuple[int, ...] | None:
    """The axis of each index of `store` when it writes every element of `param` that a
    covering launch's threads reach, else None."""
    found = [_global_id_axis(index) for index in store.indices]
    axes = tuple(a for a in found if a is not None)
    if len(axes) != len(found) or len(set(axes)) != len(axes):
        return None
    bounds = {(axis, d) for d, axis in enumerate(axes)}
    op: Operation = store
    while True:
        parent = op.parent_op()
        if parent is kernel:
            return axes
        if not isinstance(parent, scf.IfOp) or op.parent_region() is not parent.true_region:
            return None
        if not _within_bounds(parent.cond, param, bounds):
            return None
        op = parent


def _within_bounds(cond: SSAValue, param: SSAValue, bounds: set[tuple[int, int]]) -> bool:
    """Whether `cond` is a conjunction of `gid(axis) < dim(param, d)` for (axis, d) in
    `bounds` only: true in every thread inside the parameter's shape."""
    owner = cond.owner
    if isinstance(owner, arith.AndIOp):
        return _within_bounds(owner.lhs, param, bounds) and _within_bounds(
            owner.rhs, param, bounds
        )
    if not isinstance(owner, arith.CmpiOp) or arith.CMPI_COMPARISON_OPERATIONS[
        owner.predicate.value.data
    ] not in _BOUNDS:
        return False
    axis = _global_id_axis(owner.lhs)
    dim = owner.rhs.owner
    if axis is None or not isinstance(dim, memref.DimOp) or dim.source is not param:
        return False
    d = _constant(dim.index)
    return d is not None and (axis, d) in bounds


def _global_id_axis(value: SSAValue) -> int | None:
    """The axis of `value` when it is `block_id * block_dim + thread_id` along one axis
    (operands in either order), else None."""
    add = value.owner
    if not isinstance(add, arith.AddiOp):
        return None
    for product, thread in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        mul = product.owner
        tid = thread.owner
        if not isinstance(mul, arith.MuliOp) or not isinstance(tid, ThreadIdOp):
            continue
        for bid, bdim in ((mul.lhs.owner, mul.rhs.owner), (mul.rhs.owner, mul.lhs.owner)):
            if (
                isinstance(bid, BlockIdOp)
                and isinstance(bdim, BlockDimOp)
                and bid.dim == bdim.dim == tid.dim
            ):
                return "xyz".index(tid.dim)
    return None


def _constant(value: SSAValue) -> int | None:
    """The value of an integer `arith.constant`, else None."""
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None
