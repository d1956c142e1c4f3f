"""Lowering a `linalg.generic` (every named op and elementwise op arrives as one).

The host side of the generic kernel (`generic_kernel.py`): allocate each output (sizes
from its init, or from the `tensor.empty` it writes over when nothing reads the init:
then nothing is allocated for the empty), check at run time (`cf.assert`, or now when
both are static) that every operand dimension giving one loop dimension agrees with the
first that does (in operand order), and launch one thread per element of the first
output (`min(256, max_num_threads)` a block): as rows (`_rows`: a static output with
two or more parallel dimensions and rows of at least `MIN_ROW`; a row of blocks along x
per row of the output, the rows along y) or else as a 1-D grid.

Two fast paths are chosen from the op's shape, never its name:
  * a *fill* (all parallel; one scalar input; a body yielding it; outputs at the
    identity): the fill kernel, shared with splat constants;
  * a *contraction* (a multiply-add reduction whose maps make it a matrix product:
    matmul, batch_matmul, attention's `q k^T`, a convolution as an implicit GEMM): the
    register-tiled matmul kernel, its operands viewed or packed into its layout by copy
    kernels (`contraction.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IntegerAttr,
    MemRefType,
    SymbolRefAttr,
)
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from ...diagnostics import error_at
from ...dialects.shaped_types import is_ranked_tensor
from ...dialects.virtual_device import DeviceAttr
from .block_reduction import block_reduction_kernel, combiner
from .contraction import contraction, lower_contraction
from .generic_kernel import GenericLoops, UnsupportedGeneric, generic_kernel, kernel_stem
from .kernel_builder import ELEMENTWISE_BLOCK, max_threads, rank_suffix
from .kernels import fill_kernel
from .lowering import Lowering
from .types import ELEMENTS, kernel_element, memref_type, type_text
from .views import flat_view

BLOCK_REDUCTION_MIN = 1024
"""The shortest (static) reduction that gets a block of threads per output element."""
BLOCK_REDUCTION_RATIO = 64
"""... and only when it is at least this many times longer than the output is large."""


def generic_loops(op: GenericOp, name: str) -> GenericLoops:
    """The loop structure of `op`, or a located error saying why it has no kernel."""
    try:
        loops = GenericLoops.of(op)
    except UnsupportedGeneric as e:
        raise error_at(op, f"'{name}' is not lowered by lower-to-device: {e}") from None
    for value in (*op.operands, *op.results):
        t = value.type
        element = t.element_type if is_ranked_tensor(t) else t
        if not kernel_element(element):
            raise error_at(op, f"'{name}' on {type_text(t)}: {ELEMENTS}")
    return loops


def init_is_read(op: Operation, index: int) -> bool:
    """Whether operand `index` of `op` is an output of a generic whose kernel reads it
    (false: only its shape matters)."""
    if not isinstance(op, GenericOp) or index < len(op.inputs):
        return True
    try:
        return GenericLoops.of(op).reads_init[index - len(op.inputs)]
    except UnsupportedGeneric:
        return True


def lower_generic(low: Lowering, op: GenericOp) -> None:
    name = low.origins.get(op, op.name)
    loops = generic_loops(op, name)
    device = low.op_device(op)
    ins = [low.operand(op, i, device) for i in range(len(op.inputs))]
    inits: list[SSAValue | None] = []
    for j in range(len(op.outputs)):
        index = len(op.inputs) + j
        if op.operands[index] in low.shape_only:
            low.check_place(op, index, device)
            inits.append(None)
        else:
            inits.append(low.operand(op, index, device))
    first = _check_extents(low, name, loops, [*ins, *inits], {})
    outs: list[SSAValue] = []
    for j, (result, init) in enumerate(zip(op.results, inits, strict=True)):
        out_type = low.buffer_type(result.type, device, op)
        if init is None:
            sizes = low.shape_only[op.operands[len(op.inputs) + j]]
        else:
            sizes = low.dynamic_sizes(out_type, init)
        outs.append(low.alloc(out_type, sizes))
    sized = [None] * len(ins) + [o if i is None else None for o, i in zip(outs, inits, strict=True)]
    _check_extents(low, name, loops, [*ins, *inits], first, sized)
    if _is_fill(op, loops):
        fill(low, device, outs[0], ins[0], op)
    elif (combine := combiner(op, loops)) is not None and _long_reduction(low, loops, ins, outs):
        _block_reduction(low, device, op, loops, combine, [*ins, inits[0], outs[0]])
    elif (form := contraction(op, loops)) is not None:
        acc = inits[0]
        assert acc is not None  # a reduction reads its init
        buffers = [ins[0], ins[1], acc, outs[0]]
        lower_contraction(low, device, op, loops, form, buffers, _launch_copy)
    else:
        read = [init for init, r in zip(inits, loops.reads_init, strict=True) if r]
        args = [*ins, *(init for init in read if init is not None), *outs]
        _launch_generic(low, device, op, loops, args, op)
    low.map_results(op, outs)


def _launch_generic(
    low: Lowering,
    device: DeviceAttr,
    generic: GenericOp,
    loops: GenericLoops,
    args: Sequence[SSAValue],
    op: Operation,
) -> None:
    """Launch the generic kernel of `generic` over its first output (`args[-1]` when it
    has one: the kernel's parameters), for `op` (`generic` itself, or the op a copy
    generic is made for: the launch records `generic`'s work)."""
    out = args[len(args) - len(generic.outputs)]
    rows = _rows(loops, out)
    kernel = low.kernels.kernel_by_text(
        low.target(device, op), kernel_stem(generic, loops),
        generic_kernel("kernel", generic, loops, rows is not None), op,
    )  # fmt: skip
    if rows is None:
        low.launch_over(device, kernel, out, args, op, generic)
    else:
        _launch_rows(low, device, kernel, out, rows, args, op, generic)


def _launch_copy(
    low: Lowering, device: DeviceAttr, copy: GenericOp, args: Sequence[SSAValue], op: Operation
) -> None:
    _launch_generic(low, device, copy, GenericLoops.of(copy), args, op)


MAX_GRID_Y = 65535
"""The most blocks a launch may have along y (CUDA's limit, checked at every launch)."""


MIN_ROW = 32
"""The shortest (static) last dimension of an output launched as rows: shorter rows
would make blocks of a few threads."""


def _rows(loops: GenericLoops, out: SSAValue) -> int | None:
    """The number of rows of a 2-D launch of the generic kernel (`generic_kernel`'s
    `rows`): the product of the first output's dimensions but its last, when there are
    two or more parallel dimensions, the shape is static, the last dimension at least
    `MIN_ROW` and the product fits the grid along y (`MAX_GRID_Y`); else None (a 1-D
    launch, its linear index split by division)."""
    shape = memref_type(out.type).get_shape()
    if len(loops.parallel) < 2 or any(n == DYNAMIC_INDEX for n in shape):
        return None
    if shape[-1] < MIN_ROW:
        return None
    count = 1
    for n in shape[:-1]:
        count *= n
    return max(1, count) if count <= MAX_GRID_Y else None


def _launch_rows(
    low: Lowering,
    device: DeviceAttr,
    kernel: SymbolRefAttr,
    out: SSAValue,
    rows: int,
    args: Sequence[SSAValue],
    op: Operation,
    charged: Operation,
) -> None:
    """Launch the 2-D generic kernel: a row of blocks along x per row of `out`, `rows`
    rows along y (recording the work of `charged`)."""
    columns = memref_type(out.type).get_shape()[-1]
    per_block = min(ELEMENTWISE_BLOCK, max_threads(low.target(device, op)), columns)
    one = low.index(1)
    grid = [low.blocks_for(columns, per_block), low.index(rows), one]
    low.launch(device, kernel, grid, [low.index(per_block), one, one], args, op, charged)


def _check_extents(
    low: Lowering,
    name: str,
    loops: GenericLoops,
    buffers: Sequence[SSAValue | None],
    first: dict[int, tuple[int, int]],
    sized: Sequence[SSAValue | None] = (),
) -> dict[int, tuple[int, int]]:
    """Every operand dimension that is one loop dimension agrees with the first that is
    (`first`: loop dimension -> (operand, dimension), extended and returned). Operands
    without a buffer are skipped; with `sized`, only the operands it gives a buffer for
    (outputs allocated from a `tensor.empty`'s sizes) are checked, against `buffers`."""
    first = dict(first)
    for o, m in enumerate(loops.maps):
        checked = sized[o] if sized else buffers[o]
        if checked is None or not isinstance(checked.type, MemRefType):
            continue
        for p, e in enumerate(m.results):
            if not isinstance(e, AffineDimExpr):
                continue
            if e.position not in first:
                first[e.position] = (o, p)
                continue
            o0, p0 = first[e.position]
            reference = buffers[o0]
            assert reference is not None
            if o0 == o or _same_size(reference, p0, checked, p):
                continue
            low.require_same_extent(
                reference, p0, checked, p,
                f"'{name}' on tensors of different shapes: dimension {p} of "
                f"{_operand_name(name, loops, o)} differs from dimension {p0} of "
                f"{_operand_name(name, loops, o0)}",
            )  # fmt: skip
    return first


def _operand_name(name: str, loops: GenericLoops, o: int) -> str:
    """`operand 1` for an elementwise op, `ins[1]`/`outs[0]` for a linalg op."""
    if name.startswith(("arith.", "math.")):
        return f"operand {o}"
    return f"ins[{o}]" if o < loops.inputs else f"outs[{o - loops.inputs}]"


def _same_size(a: SSAValue, pa: int, b: SSAValue, pb: int) -> bool:
    """Whether dimension `pb` of `b` was allocated as `memref.dim` of `a`'s `pa` (an
    output sized from its input: nothing to check)."""
    if memref_type(b.type).get_shape()[pb] != DYNAMIC_INDEX:
        return False
    alloc = b.owner
    if not isinstance(alloc, Operation):
        return False
    dynamic = [d for d, n in enumerate(memref_type(b.type).get_shape()) if n == DYNAMIC_INDEX]
    sizes = list(alloc.operands)
    if len(sizes) != len(dynamic):
        return False
    size = sizes[dynamic.index(pb)].owner
    if not isinstance(size, memref.DimOp) or size.source is not a:
        return False
    index = size.index.owner
    return (
        isinstance(index, arith.ConstantOp)
        and isinstance(index.value, IntegerAttr)
        and index.value.value.data == pa
    )


def _is_fill(op: GenericOp, loops: GenericLoops) -> bool:
    block = op.body.block
    only = block.first_op
    identity = AffineMap.identity(loops.loops)
    return (
        not loops.reduction
        and len(op.inputs) == 1
        and len(op.outputs) == 1
        and not is_ranked_tensor(op.inputs[0].type)
        and isinstance(only, YieldOp)
        and list(only.operands) == [block.args[0]]
        and loops.maps[1] == identity
        and op.inputs[0].type == memref_type(_out_element_type(op)).element_type
    )


def _out_element_type(op: GenericOp) -> MemRefType[Attribute]:
    t = op.outputs[0].type
    assert is_ranked_tensor(t)
    return MemRefType(t.element_type, t.get_shape())


def _long_reduction(
    low: Lowering, loops: GenericLoops, ins: Sequence[SSAValue], outs: Sequence[SSAValue]
) -> bool:
    """Few output elements against a long, static reduction: worth a block each."""
    del low
    buffers = [*ins, *outs]
    length = 1
    for d in loops.reduction:
        o, p = loops.extents[d]
        n = memref_type(buffers[o].type).get_shape()[p]
        if n == DYNAMIC_INDEX:
            return False
        length *= n
    elements = 1
    for n in memref_type(outs[0].type).get_shape():
        if n == DYNAMIC_INDEX:
            return False
        elements *= n
    return length >= BLOCK_REDUCTION_MIN and elements * BLOCK_REDUCTION_RATIO <= length


def _block_reduction(
    low: Lowering,
    device: DeviceAttr,
    op: GenericOp,
    loops: GenericLoops,
    combine: Operation,
    args: Sequence[SSAValue | None],
) -> None:
    """Launch one block of threads per output element (`block_reduction.py`)."""
    target = low.target(device, op)
    threads = 1
    while threads * 2 <= min(ELEMENTWISE_BLOCK, max_threads(target)):
        threads *= 2
    kernel = low.kernels.kernel_by_text(
        target, f"block_{kernel_stem(op, loops)}",
        block_reduction_kernel("kernel", op, loops, combine, threads), op,
    )  # fmt: skip
    buffers = [a for a in args if a is not None]
    grid = low.blocks_for(low.element_count(buffers[-1]), 1)
    one = low.index(1)
    low.launch(device, kernel, [grid, one, one], [low.index(threads), one, one], buffers, op)


def fill(low: Lowering, device: DeviceAttr, out: SSAValue, value: SSAValue, op: Operation) -> None:
    """Launch the fill kernel writing `value` to every element of `out` (of a row-major
    buffer through its flat view: a kernel of rank 1 stores each element without dividing
    its thread's index into one per dimension, some 20x faster on the CPU)."""
    element = value.type
    out = flat_view(low, out) or out
    rank = memref_type(out.type).get_num_dims()
    stem = f"fill_{type_text(element)}{rank_suffix(rank)}"
    kernel = low.kernels.kernel(
        low.target(device, op), stem, f"fill {type_text(element)} rank {rank}",
        lambda name: fill_kernel(name, element, rank), op,
    )  # fmt: skip
    low.launch_over(device, kernel, out, [out, value], op)
