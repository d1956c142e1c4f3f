"""Contractions on the register-tiled matmul kernel (`kernels.py`): chosen from the maps
and body of a `linalg.generic`, never its name.

A generic is a *contraction* when it has two inputs and one output of one element type
(not `i1`), one or more reductions, and a body `out + in0 * in1` (either order of each
op's operands). Its parallel loop dimensions are then split, along the output map's
order, into three runs: a leading *batch*, then *rows* (dimensions the other input does
not read), then *columns* (dimensions the row input does not read), with rows and
columns not empty; the first input is tried as the row input, then the second. The
reduction dimensions, in loop order, are the *depth*. So:

  * matmul, `(d0, d2) x (d2, d1) -> (d0, d1)`: rows d0, columns d1, depth d2;
  * `q k^T`, `(d0, d2) x (d1, d2)`: the same, k read transposed;
  * batch_matmul: batch d0, rows d1, columns d2, depth d3;
  * `conv_2d_nchw_fchw`, img `(d0, d4, d2 + d5, d3 + d6)` x filter `(d1, d4, d5, d6)`
    -> `(d0, d1, d2, d3)`: the filter is the row input (the image reads the output's
    last dimension): batch d0, rows d1, columns d2 d3, depth d4 d5 d6 (an implicit
    GEMM: output channels x output pixels, summed over channels x window);
  * `conv_2d_nhwc_hwcf`: the image is the row input: rows d0 d1 d2, columns d3.

The kernel multiplies `[batch, rows, depth] x [batch, depth, columns]` and adds the
accumulator `[batch, rows, columns]`, each group of dimensions one dimension of the
kernel (no batch dimension, the 2-D kernel, when the batch is empty or of static extent
1: those dimensions are dropped, read at index 0). Each operand is given to it

  * as it is, when its map is that order of dimensions already and no dimension is
    merged or dropped (matmul and batch_matmul: the kernel reads strided views in place);
  * else as a `device.view` of it, when its map is that order (with dropped dimensions
    anywhere) and its buffer is row-major: no copy (a conv's filter and output);
  * else *packed* into a scratch buffer of the kernel's order, freed after the matmul
    kernel's launch: where the kernel sees the scratch through a view (dimensions
    merged) and each result of the operand's map is a sum of dimensions times
    constants plus a constant, none negative, a `device.copy` of a strided view of the
    operand (a conv's image: one row of the window per output pixel, the view's strides
    overlapping); else a copy kernel (the generic kernel of a generic copying the
    operand at its map, `copy_<type>_<hash>`: `k` of `q k^T`, transposed). A scratch
    buffer the kernel reads as it is cannot be a `device.copy`: `elide-copies` forwards
    a copy whose destination only kernels read, and the kernel would read the strided
    view after all (q k^T 13-30 ms instead of 0.4 ms, under load). A copy kernel's
    launch records the work of its copy, the matmul launch the op's. An operand that
    does not read a batch dimension is packed with stride 0 along it (the filter of a
    conv of several images, once per image).

The depth is summed in loop order (its dimensions row-major), as the generic kernel
sums them: the same order on every backend, each step one `math.fma` for floats (see
`kernels.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    IntegerType,
    NoneAttr,
    TensorType,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

from ...dialects import device as dev
from ...dialects.shaped_types import is_ranked_tensor
from ...dialects.target import TargetAttr
from ...dialects.virtual_device import DeviceAttr
from .generic_kernel import GenericLoops
from .kernel_builder import ELEMENTWISE_BLOCK, max_threads
from .kernels import MATMUL_COLUMNS, MATMUL_ROWS, matmul_kernel
from .lowering import Lowering
from .sizes import Size, extent, product, sum_sizes
from .types import kernel_element, memref_type, type_text
from .views import layout, row_major_strides, strided_view


@dataclass(frozen=True)
class Contraction:
    """How a contraction's loop dimensions map onto the matmul kernel (see the header)."""

    lhs: int
    """The input read as the rows (0 or 1); the other gives the columns."""
    batch: tuple[int, ...]
    rows: tuple[int, ...]
    columns: tuple[int, ...]
    depth: tuple[int, ...]


def contraction(op: GenericOp, loops: GenericLoops) -> Contraction | None:
    """The contraction `op` is (see the header), or None."""
    if not loops.reduction or len(op.inputs) != 2 or len(op.outputs) != 1:
        return None
    types = {v.type.element_type for v in op.operands if is_ranked_tensor(v.type)}
    if len(types) != 1 or len(op.operands) != 3:
        return None
    element = types.pop()
    if element == IntegerType(1) or not kernel_element(element) or not _multiply_add(op, element):
        return None
    order = [e.position for e in loops.maps[2].results if isinstance(e, AffineDimExpr)]
    for lhs in (0, 1):
        row_reads, column_reads = _dims_of(loops.maps[lhs]), _dims_of(loops.maps[1 - lhs])
        cut = len(order)
        while cut > 0 and order[cut - 1] not in row_reads:
            cut -= 1
        start = cut
        while start > 0 and order[start - 1] not in column_reads:
            start -= 1
        if start < cut < len(order):
            return Contraction(
                lhs,
                tuple(order[:start]),
                tuple(order[start:cut]),
                tuple(order[cut:]),
                tuple(loops.reduction),
            )
    return None


def _multiply_add(op: GenericOp, element: Attribute) -> bool:
    """Whether the body is `out + in0 * in1` (either order of each op's operands)."""
    a, b, acc = op.body.block.args
    ops = list(op.body.block.ops)
    if len(ops) != 3 or not isinstance(ops[2], YieldOp):
        return False
    mul, add, done = ops
    is_int = isinstance(element, IntegerType)
    mul_name, add_name = ("arith.muli", "arith.addi") if is_int else ("arith.mulf", "arith.addf")
    return (
        mul.name == mul_name
        and add.name == add_name
        and set(mul.operands) == {a, b}
        and len(set(mul.operands)) == 2
        and set(add.operands) == {mul.results[0], acc}
        and list(done.operands) == [add.results[0]]
        and not mul.attributes
        and not add.attributes
    )


def _dims_of(m: AffineMap) -> set[int]:
    found: set[int] = set()

    def walk(e: AffineExpr) -> None:
        if isinstance(e, AffineDimExpr):
            found.add(e.position)
        elif isinstance(e, AffineBinaryOpExpr):
            walk(e.lhs)
            walk(e.rhs)

    for e in m.results:
        walk(e)
    return found


LaunchCopy = Callable[[Lowering, DeviceAttr, GenericOp, Sequence[SSAValue], Operation], None]
"""Launches the generic kernel of a copy generic: (lowering, device, the copy, its
buffers `[source, destination]`, the op it is made for)."""


def lower_contraction(
    low: Lowering,
    device: DeviceAttr,
    op: GenericOp,
    loops: GenericLoops,
    form: Contraction,
    buffers: Sequence[SSAValue],
    launch_copy: LaunchCopy,
) -> None:
    """Launch the matmul kernel computing `op` into `buffers[3]`, from its inputs and
    accumulator `buffers[:3]` (see the header)."""
    extents = [extent(low, buffers[o], p) for o, p in loops.extents]
    dropped: tuple[int, ...] = ()
    batch = form.batch
    if all(extents[d] == 1 for d in batch):
        batch, dropped = (), form.batch
    layouts = {
        form.lhs: [batch, form.rows, form.depth],
        1 - form.lhs: [batch, form.depth, form.columns],
        2: [batch, form.rows, form.columns],
        3: [batch, form.rows, form.columns],
    }
    scratch: list[SSAValue] = []
    args: list[SSAValue] = []
    for o in (form.lhs, 1 - form.lhs, 2, 3):
        groups = [g for g in layouts[o] if g]
        order = [d for g in groups for d in g]
        m = loops.maps[min(o, 2)]
        buffer = buffers[o]
        kept = [e for e in m.results if _dim(e) not in dropped]
        in_order = kept == [AffineDimExpr(d) for d in order]
        if in_order and len(m.results) == len(groups) == len(order):
            args.append(buffer)
            continue
        if not in_order or not _row_major(low, buffer):
            assert o < 3, "the output is allocated in the kernel's order"
            tensor = op.operands[o].type
            viewed = len(groups) != len(order)
            buffer = _pack(low, device, op, buffer, tensor, m, order, extents, viewed, launch_copy)
            scratch.append(buffer)
            if not viewed:  # packed in the kernel's shape
                args.append(buffer)
                continue
        sizes = [product(low, [extents[d] for d in g]) for g in groups]
        args.append(_view(low, buffer, sizes))
    matmul(low, device, op, bool(batch), args)
    for buffer in scratch:
        low.free(buffer)


def _dim(e: AffineExpr) -> int | None:
    return e.position if isinstance(e, AffineDimExpr) else None


def _row_major(low: Lowering, buffer: SSAValue) -> bool:
    return isinstance(memref_type(buffer.type).layout, NoneAttr) and buffer not in low.strided


def _view(low: Lowering, buffer: SSAValue, sizes: Sequence[Size]) -> SSAValue:
    """The row-major buffer `buffer`'s elements seen in `sizes`, row-major."""
    return strided_view(low, buffer, 0, sizes, row_major_strides(low, sizes), identity=True)


def _pack(
    low: Lowering,
    device: DeviceAttr,
    op: GenericOp,
    source: SSAValue,
    source_type: Attribute,
    m: AffineMap,
    order: Sequence[int],
    extents: Sequence[Size],
    viewed: bool,
    launch_copy: LaunchCopy,
) -> SSAValue:
    """A fresh row-major buffer of the loop dimensions `order` holding `source` (of
    level-1 type `source_type`) read at its map `m` (other dimensions at 0): when it is
    `viewed` after (its dimensions merged) and each result of `m` is a sum of dimensions
    times constants plus a constant, none negative, a `device.copy` of a strided view of
    `source`; else written by a copy kernel. (A copy whose destination only a kernel
    reads is one `elide-copies` forwards: the kernel would read the strided view.)"""
    element = memref_type(source.type).element_type
    sizes = [extents[d] for d in order]
    shape = [n if isinstance(n, int) else DYNAMIC_INDEX for n in sizes]
    packed_type = TensorType(element, shape)
    buffer_type = low.buffer_type(packed_type, device, op)
    window = _window(low, source, m, order) if viewed else None
    if window is not None:
        base, offset, strides = window
        view = strided_view(low, base, offset, sizes, strides)
        packed = low.alloc(buffer_type, [n for n in sizes if not isinstance(n, int)])
        low.emit(dev.CopyOp(view, packed))
        return packed
    position = {d: i for i, d in enumerate(order)}
    reads = AffineMap(len(order), 0, tuple(_renumber(e, position) for e in m.results))
    # The copy generic only describes the kernel and the work of its launch: its
    # operands are arguments of a block of its own, outside the module.
    holder = Block(arg_types=[source_type, packed_type])
    body = Region(Block(arg_types=[element, element]))
    body.block.add_op(YieldOp(body.block.args[0]))
    copy = GenericOp(
        [holder.args[0]], [holder.args[1]], body,
        [AffineMapAttr(reads), AffineMapAttr(AffineMap.identity(len(order)))],
        [IteratorTypeAttr.parallel()] * len(order), [packed_type],
    )  # fmt: skip
    packed = low.alloc(buffer_type, [n for n in sizes if not isinstance(n, int)])
    launch_copy(low, device, copy, [source, packed], op)
    return packed


def _window(
    low: Lowering, source: SSAValue, m: AffineMap, order: Sequence[int]
) -> tuple[SSAValue, Size, list[Size]] | None:
    """(base buffer, offset, strides) of the elements of `source` at `m`, one stride per
    dimension of `order` (dimensions not in it at 0), or None where `m` is not linear
    with coefficients and constants of at least 0."""
    terms = [_linear(e) for e in m.results]
    if any(t is None or t[1] < 0 or min(t[0].values(), default=0) < 0 for t in terms):
        return None
    base, offset, steps = layout(low, source)
    at: list[Size] = [offset]
    strides: list[list[Size]] = [[] for _ in order]
    position = {d: i for i, d in enumerate(order)}
    for t, step in zip(terms, steps, strict=True):
        assert t is not None
        coefficients, constant = t
        if constant:
            at.append(product(low, [constant, step]))
        for d, c in coefficients.items():
            if d in position and c:
                strides[position[d]].append(product(low, [c, step]))
    return base, sum_sizes(low, at), [sum_sizes(low, s) for s in strides]


def _linear(e: AffineExpr) -> tuple[dict[int, int], int] | None:
    """`e` as (coefficient of each dimension, constant), or None (a division or mod)."""
    if isinstance(e, AffineDimExpr):
        return {e.position: 1}, 0
    if isinstance(e, AffineConstantExpr):
        return {}, e.value
    if not isinstance(e, AffineBinaryOpExpr):
        return None
    lhs, rhs = _linear(e.lhs), _linear(e.rhs)
    if lhs is None or rhs is None:
        return None
    if e.kind == AffineBinaryOpKind.Add:
        total = dict(lhs[0])
        for d, c in rhs[0].items():
            total[d] = total.get(d, 0) + c
        return total, lhs[1] + rhs[1]
    if e.kind == AffineBinaryOpKind.Mul and not rhs[0]:
        return {d: c * rhs[1] for d, c in lhs[0].items()}, lhs[1] * rhs[1]
    return None


def _renumber(e: AffineExpr, position: dict[int, int]) -> AffineExpr:
    """`e` over the dimensions `position` numbers anew; any other dimension is 0."""
    if isinstance(e, AffineDimExpr):
        at = position.get(e.position)
        return AffineConstantExpr(0) if at is None else AffineDimExpr(at)
    if isinstance(e, AffineBinaryOpExpr):
        return AffineBinaryOpExpr(e.kind, _renumber(e.lhs, position), _renumber(e.rhs, position))
    return e


def matmul(
    low: Lowering, device: DeviceAttr, op: Operation, batched: bool, buffers: list[SSAValue]
) -> None:
    """Launch the register-tiled matmul kernel: `out = c + a x b` of `buffers` `[a, b, c,
    out]`, batched (a leading dimension, one batch a block along z) as `batched` says."""
    out = buffers[-1]
    element = memref_type(out.type).element_type
    target = low.target(device, op)
    what = f"{'batch_' if batched else ''}matmul"
    stem = f"{what}_{type_text(element)}_rows{MATMUL_ROWS}"
    kernel = low.kernels.kernel(
        target, stem, f"{what} {type_text(element)} rows {MATMUL_ROWS}",
        lambda name: matmul_kernel(name, element, batched), op,
    )  # fmt: skip
    first = 1 if batched else 0
    columns = extent(low, out, first + 1)
    threads = matmul_threads(columns, min(matmul_columns(target), max_threads(target)))
    tiles = low.blocks_for(extent(low, out, first), MATMUL_ROWS)
    strips = low.blocks_for(columns, threads)
    one = low.index(1)
    batches = low.blocks_for(extent(low, out, 0), 1) if batched else one
    low.launch(
        device, kernel, [tiles, strips, batches], [low.index(threads), one, one], buffers, op
    )


def matmul_columns(target: TargetAttr) -> int:
    """The most columns one block of the matmul kernel takes on `target`: `MATMUL_COLUMNS`
    on a CPU; on a GPU `ELEMENTWISE_BLOCK`, as before the CPU's blocks widened: a block
    of 1024 threads each holding `MATMUL_ROWS` sums may ask for more registers than a
    multiprocessor has (64 Ki on NVIDIA's), which fails its launch, and no GPU was at
    hand to measure what width pays there."""
    if target.device_type == "cpu":
        return MATMUL_COLUMNS
    return ELEMENTWISE_BLOCK


def matmul_threads(columns: Size, widest: int) -> int:
    """Threads of a block of the matmul kernel over `columns` columns, at most `widest`:
    all of them when they fit; else the widest block of at least `ELEMENTWISE_BLOCK`
    threads that divides them (2916 = 3 x 972), so that no block holds the last column
    and threads past it: such a block clamps its column to the last, which the numba
    backend's fast path cannot prove affine, and runs checked, thread by thread (a
    conv's 54 x 54 columns: 5.5 ms in blocks of 256, 2.9 ms in blocks of 972). Else,
    and for a dynamic count, `ELEMENTWISE_BLOCK`: the last block then holds a small
    part of the work."""
    narrow = min(ELEMENTWISE_BLOCK, widest)
    if not isinstance(columns, int):
        return narrow
    if columns <= widest:
        return max(1, columns)  # a narrow result: no idle threads
    blocks = -(-columns // widest)
    while columns // blocks >= narrow:
        if columns % blocks == 0:
            return columns // blocks
        blocks += 1
    return narrow
