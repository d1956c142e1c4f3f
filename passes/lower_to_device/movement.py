"""Lowering the data-movement ops of level 1 (`tensor.extract_slice` and ranked casts are
views, `views.py`): `insert_slice`, `concat`, `collapse_shape`, `expand_shape`, `reshape`,
a cast to an unranked tensor, `extract`, `insert`, `pad`, `splat`, `from_elements`, and
`bufferization.alloc_tensor`, `to_tensor`, `to_buffer`.

A slice, a ranked cast, and a reshape of a row-major buffer or a contiguous slice are
views of their source (`views.py`, which says what is a view and what copies, and why).
Every other op writes a fresh buffer on the device it runs on, through one of two kernels:
  * the *window* kernel: one thread per element of a window of a larger buffer, at
    `offset + i * stride` along each dimension of the larger one, reading it into a
    dense buffer (`tensor.extract` on a device) or writing a dense buffer into it (`insert_slice`,
    each operand of `concat`, the source of `pad` after the fill kernel wrote the
    padding value); a rank-reducing slice keeps the dimensions its shape names, the
    dropped unit ones read at their offset;
  * the *reshape* kernel: one thread per element, the same row-major position in a
    buffer of another shape (`collapse_shape`, `expand_shape`, `reshape` of a strided
    slice, which no row-major view can be; `reshape`'s shape operand plan-devices puts
    on the host, where its elements are loaded).
`tensor.extract` of a value on the host is a `memref.load`, of a value elsewhere the
window kernel's copy of that one element to a one-element buffer on its device, and a
`device.copy` of it to the host (the report counts its bytes); `tensor.insert` the
reverse, into a copy of its destination.
`splat` is the fill kernel; `from_elements` stores the host scalars to a host buffer and
copies it to its device; the bufferization ops are copies (`to_buffer` a host memref
that nothing frees, as MLIR leaves it to its user).

Offsets, sizes and strides reach the kernels as scalar arguments, so one kernel serves
static and dynamic ones. Where a window reaches outside its buffer or two sizes that must
agree differ, the lowering says so now when the sizes are static, and a `cf.assert` does
at run time otherwise (`sizes.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import arith, memref, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    MemRefType,
    NoneAttr,
    TensorType,
    UnrankedMemRefType,
    UnrankedTensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from ...diagnostics import error_at
from ...dialects import device as dev
from ...dialects import kernel as kn
from ...dialects.placement import value_device
from ...dialects.virtual_device import DeviceAttr
from ...upstream.tensor import ExpandShapeOp
from .generic import fill
from .kernel_builder import (
    KernelBuilder,
    delinearise,
    dynamic_memref,
    guarded,
    name_params,
    rank_suffix,
)
from .lowering import Lowering
from .sizes import (
    Size,
    check_index,
    check_window,
    equal,
    extent,
    index_of,
    index_value,
    kept_by,
    mixed_sizes,
    product,
    require,
    slice_parameters,
    sum_sizes,
)
from .types import (
    ELEMENTS,
    becomes_view,
    kernel_element,
    memory_of,
    memref_type,
    tensor_type,
    type_text,
)
from .views import cast_view, reshape_view

if TYPE_CHECKING:
    from xdsl.dialects import bufferization

# -- kernels ----------------------------------------------------------------------------


def window_kernel(
    name: str, element: Attribute, rank: int, kept: Sequence[int], insert: bool
) -> kn.KernelFuncOp:
    """part[p] = full[offsets + p * strides] (or the reverse when `insert`), one thread per
    element of `part`, whose dimension j is dimension `kept[j]` of `full`."""
    index = IndexType()
    params = [dynamic_memref(element, rank), dynamic_memref(element, len(kept))]
    kernel = kn.KernelFuncOp(name, [*params, *[index] * (2 * rank)])
    full, part, *rest = kernel.body.block.args
    offsets, strides = rest[:rank], rest[rank:]
    names = [f"offset{d}" for d in range(rank)] + [f"stride{d}" for d in range(rank)]
    name_params(kernel.body.block, ["full", "part", *names])
    k = KernelBuilder(kernel.body.block)
    i = k.thread_index()
    dims = k.dims(part, len(kept))
    inside = k.nested()
    at = delinearise(inside, i, dims)
    where: list[SSAValue] = list(offsets)
    for j, d in enumerate(kept):
        where[d] = inside.add(arith.AddiOp(offsets[d], inside.add(arith.MuliOp(at[j], strides[d]))))
    if insert:
        value = inside.add(memref.LoadOp.get(part, at))
        inside.add(memref.StoreOp.get(value, full, where))
    else:
        value = inside.add(memref.LoadOp.get(full, where))
        inside.add(memref.StoreOp.get(value, part, at))
    guarded(k, i, dims, inside)
    return kernel


def reshape_kernel(name: str, element: Attribute, in_rank: int, out_rank: int) -> kn.KernelFuncOp:
    """out at row-major position i = source at row-major position i, one thread per i."""
    kernel = kn.KernelFuncOp(
        name, [dynamic_memref(element, in_rank), dynamic_memref(element, out_rank)]
    )
    source, out = kernel.body.block.args
    name_params(kernel.body.block, ["source", "out"])
    k = KernelBuilder(kernel.body.block)
    i = k.thread_index()
    out_dims = k.dims(out, out_rank)
    in_dims = k.dims(source, in_rank)
    inside = k.nested()
    value = inside.add(memref.LoadOp.get(source, delinearise(inside, i, in_dims)))
    inside.add(memref.StoreOp.get(value, out, delinearise(inside, i, out_dims)))
    guarded(k, i, out_dims, inside)
    return kernel


# -- host side --------------------------------------------------------------------------


def _element(low: Lowering, op: Operation, buffer: SSAValue) -> Attribute:
    element = memref_type(buffer.type).element_type
    if not kernel_element(element):
        raise error_at(op, f"'{op.name}' on {type_text(buffer.type)}: {ELEMENTS}")
    return element


def _window_copy(
    low: Lowering,
    op: Operation,
    device: DeviceAttr,
    full: SSAValue,
    part: SSAValue,
    kept: Sequence[int],
    offsets: Sequence[Size],
    strides: Sequence[Size],
    insert: bool,
) -> None:
    element = _element(low, op, full)
    rank = memref_type(full.type).get_num_dims()
    dropped = [d for d in range(rank) if d not in kept]
    stem = f"{'insert' if insert else 'extract'}_slice_{type_text(element)}{rank_suffix(rank)}"
    if dropped:
        stem += "_drop" + "_".join(map(str, dropped))
    key = f"window {'insert' if insert else 'extract'} {type_text(element)} {rank} {list(kept)}"
    kernel = low.kernels.kernel(
        low.target(device, op), stem, key,
        lambda name: window_kernel(name, element, rank, kept, insert), op,
    )  # fmt: skip
    scalars = [index_value(low, x) for x in (*offsets, *strides)]
    low.launch_over(device, kernel, part, [full, part, *scalars], op)


def insert_slice(low: Lowering, op: tensor.InsertSliceOp) -> None:
    device = low.op_device(op)
    source = low.operand(op, 0, device)
    dest = low.operand(op, 1, device)
    offsets, sizes, strides = slice_parameters(low, op)
    kept = kept_by(op, sizes, op.source.type)
    check_window(low, dest, offsets, sizes, strides)
    for j, d in enumerate(kept):
        what = (
            f"'{op.name}': dimension {j} of the inserted tensor differs from size {d} of the slice"
        )
        require(low, equal(low, sizes[d], extent(low, source, j)), what)
    out = low.clone(dest)
    _window_copy(low, op, device, out, source, kept, offsets, strides, insert=True)
    low.map_results(op, [out])


def concat(low: Lowering, op: tensor.ConcatOp) -> None:
    device = low.op_device(op)
    inputs = [low.operand(op, i, device) for i in range(len(op.inputs))]
    axis = op.dim.value.data
    rank = memref_type(inputs[0].type).get_num_dims()
    out_type = low.buffer_type(op.result.type, device, op)
    shape = memref_type(out_type).get_shape()
    offsets: list[Size] = [0]
    for buffer in inputs:
        n = extent(low, buffer, axis)
        last = offsets[-1]
        if isinstance(last, int) and isinstance(n, int):
            offsets.append(last + n)
        else:
            offsets.append(
                low.emit(arith.AddiOp(index_value(low, last), index_value(low, n))).results[0]
            )
    extents = [offsets[-1] if d == axis else extent(low, inputs[0], d) for d in range(rank)]
    for d in range(rank):
        for i, buffer in enumerate(inputs):
            if d != axis and i > 0:
                what = f"'{op.name}': dimension {d} of operand {i} differs from operand 0's"
                require(low, equal(low, extent(low, buffer, d), extents[d]), what)
        if shape[d] != DYNAMIC_INDEX:
            what = f"'{op.name}': dimension {d} differs from the result type's"
            require(low, equal(low, extents[d], shape[d]), what)
    dynamic = [index_value(low, extents[d]) for d in range(rank) if shape[d] == DYNAMIC_INDEX]
    out = low.alloc(out_type, dynamic)
    kept = list(range(rank))
    for i, buffer in enumerate(inputs):
        at: list[Size] = [offsets[i] if d == axis else 0 for d in range(rank)]
        _window_copy(low, op, device, out, buffer, kept, at, [1] * rank, insert=True)
    low.map_results(op, [out])


def _reshape(low: Lowering, op: Operation, source: SSAValue, out_sizes: list[Size]) -> None:
    device = low.op_device(op)
    out_type = low.buffer_type(op.results[0].type, device, op)
    shape = memref_type(out_type).get_shape()
    if becomes_view(op):
        reshape_view(low, op, source, out_sizes, shape)
        return
    dynamic = [
        index_value(low, n) for n, s in zip(out_sizes, shape, strict=True) if s == DYNAMIC_INDEX
    ]
    out = low.alloc(out_type, dynamic)
    count_in, count_out = low.element_count(source), low.element_count(out)
    what = f"'{op.name}' changes the number of elements"
    require(low, equal(low, count_in, count_out), what)
    element = _element(low, op, source)
    in_rank, out_rank = memref_type(source.type).get_num_dims(), len(shape)
    stem = f"reshape_{type_text(element)}_{in_rank}d_to_{out_rank}d"
    kernel = low.kernels.kernel(
        low.target(device, op), stem, f"reshape {type_text(element)} {in_rank} {out_rank}",
        lambda name: reshape_kernel(name, element, in_rank, out_rank), op,
    )  # fmt: skip
    low.launch_over(device, kernel, out, [source, out], op)
    low.map_results(op, [out])


def collapse_shape(low: Lowering, op: tensor.CollapseShapeOp) -> None:
    source = low.operand(op, 0, low.op_device(op))
    groups = [[int(i.value.data) for i in g.data] for g in op.reassociation.data]
    sizes = [product(low, [extent(low, source, d) for d in group]) for group in groups]
    _reshape(low, op, source, sizes)


def expand_shape(low: Lowering, op: tensor.ExpandShapeOp) -> None:
    source = low.operand(op, 0, low.op_device(op))
    static = op.static_output_shape.get_values()
    if isinstance(op, ExpandShapeOp) and op.is_inferred():
        sizes: list[Size] = list(static)
        for i, group in enumerate(op.reassociation.data):
            members = [int(d.value.data) for d in group.data]
            known = product(low, [static[d] for d in members if static[d] != DYNAMIC_INDEX])
            for d in members:  # the one dynamic size of the group (its verifier)
                if static[d] == DYNAMIC_INDEX:
                    quotient = arith.DivUIOp(
                        index_value(low, extent(low, source, i)), index_value(low, known)
                    )
                    sizes[d] = low.emit(quotient).results[0]
    else:
        sizes = mixed_sizes(low, static, op.dynamic_output_shape)
    _reshape(low, op, source, sizes)


def tensor_cast(low: Lowering, op: tensor.CastOp) -> None:
    if isinstance(op.dest.type, UnrankedTensorType) and isinstance(op.source.type, TensorType):
        _cast_to_unranked(low, op)
        return
    if not isinstance(op.dest.type, TensorType) or not isinstance(op.source.type, TensorType):
        raise error_at(
            op, "'tensor.cast' from an unranked tensor is not lowered (a ranked tensor cast "
            "to an unranked one is: what MLIR's runner printers take)",
        )  # fmt: skip
    cast_view(low, op)


def _cast_to_unranked(low: Lowering, op: tensor.CastOp) -> None:
    """A host copy of the source (plan-devices puts the operand on the host), seen as an
    unranked memref: the buffer of the unranked value, freed after its last use."""
    source = low.operand(op, 0, low.host)
    copy = low.clone(source)
    unranked = UnrankedMemRefType.from_type(tensor_type(op.source.type).element_type)
    low.map_results(op, [low.emit(memref.CastOp.get(copy, unranked)).results[0]])


def extract(low: Lowering, op: tensor.ExtractOp) -> None:
    """One element to the host: a load there, or a copy of that element from its device."""
    source = low.values[op.tensor]
    type_ = memref_type(source.type)
    rank = type_.get_num_dims()
    indices = [low.values[v] for v in op.indices]
    for d, v in enumerate(op.indices):
        check_index(low, op, d, index_of(low, v), extent(low, source, d))
    if not isinstance(type_.memory_space, DeviceAttr):
        low.map_results(op, [low.emit(memref.LoadOp.get(source, indices)).results[0]])
        return
    if rank == 0:
        raise error_at(op, "'tensor.extract' of a rank-0 tensor on a device is not lowered")
    device = value_device(op.tensor)
    assert device is not None  # its memory space says it is placed
    element = _element(low, op, source)
    on_device = low.alloc(MemRefType(element, [1], memory_space=type_.memory_space), [])
    _window_copy(low, op, device, source, on_device, [rank - 1], indices, [1] * rank, False)
    on_host = low.alloc(MemRefType(element, [1]), [])
    low.emit(dev.CopyOp(on_device, on_host))
    low.free(on_device)
    value = low.emit(memref.LoadOp.get(on_host, [low.index(0)])).results[0]
    low.free(on_host)
    low.map_results(op, [value])


def reshape(low: Lowering, op: tensor.ReshapeOp) -> None:
    """The shape operand lives on the host (plan-devices puts it there): its elements are
    loaded there and size the result."""
    shape = low.values[op.shape]
    if memory_of(shape.type) is not None:
        raise error_at(
            op, "'tensor.reshape' reads its shape operand on the host, but it lives on "
            f"{type_text(shape.type)}; plan-devices places it on the host",
        )  # fmt: skip
    source = low.operand(op, 0, low.op_device(op))
    static = tensor_type(op.result.type).get_shape()
    require(low, equal(low, extent(low, shape, 0), len(static)), "'tensor.reshape' shape length")
    sizes: list[Size] = []
    for d, n in enumerate(static):
        size = low.emit(memref.LoadOp.get(shape, [low.index(d)])).results[0]
        if not isinstance(size.type, IndexType):
            size = low.emit(arith.IndexCastOp(size, IndexType())).results[0]
        if n != DYNAMIC_INDEX:
            what = f"'tensor.reshape' shape element {d} differs from its result type's {n}"
            require(low, equal(low, size, n), what)
            sizes.append(n)
        else:
            sizes.append(size)
    _reshape(low, op, source, sizes)


def splat(low: Lowering, op: tensor.SplatOp) -> None:
    device = low.op_device(op)
    out = low.alloc(
        low.buffer_type(op.result.type, device, op), [low.values[v] for v in op.dynamicSizes]
    )
    _element(low, op, out)
    fill(low, device, out, low.values[op.input], op)
    low.map_results(op, [out])


def from_elements(low: Lowering, op: tensor.FromElementsOp) -> None:
    """The elements are host scalars: stored to a host buffer, copied to the op's device."""
    device = low.op_device(op)
    out_type = memref_type(low.buffer_type(op.result.type, device, op))
    shape = out_type.get_shape()
    on_host = low.alloc(MemRefType(out_type.element_type, shape), [])
    for i, value in enumerate(op.elements):
        at = [low.index(x) for x in _unravel(i, shape)]
        low.emit(memref.StoreOp.get(low.values[value], on_host, at))
    if memory_of(out_type) is None:
        low.map_results(op, [on_host])
        return
    out = low.alloc(out_type, [])
    low.emit(dev.CopyOp(on_host, out))
    low.free(on_host)
    low.map_results(op, [out])


def _unravel(i: int, shape: Sequence[int]) -> list[int]:
    at: list[int] = []
    for n in reversed(shape):
        at.append(i % n)
        i //= n
    return at[::-1]


def insert(low: Lowering, op: tensor.InsertOp) -> None:
    """A copy of the destination with one element stored: on the host a `memref.store`,
    elsewhere the element goes from the host to the device and the window kernel writes it."""
    device = low.op_device(op)
    out = low.clone(low.operand(op, 1, device))
    type_ = memref_type(out.type)
    rank = type_.get_num_dims()
    indices = [low.values[v] for v in op.indices]
    for d, v in enumerate(op.indices):
        check_index(low, op, d, index_of(low, v), extent(low, out, d))
    scalar = low.values[op.scalar]
    if memory_of(type_) is None:
        low.emit(memref.StoreOp.get(scalar, out, indices))
        low.map_results(op, [out])
        return
    element = _element(low, op, out)
    one = [1] if rank else []
    on_host = low.alloc(MemRefType(element, one), [])
    low.emit(memref.StoreOp.get(scalar, on_host, [low.index(0)] * len(one)))
    if rank == 0:
        low.emit(dev.CopyOp(on_host, out))
    else:
        on_device = low.alloc(MemRefType(element, one, memory_space=type_.memory_space), [])
        low.emit(dev.CopyOp(on_host, on_device))
        _window_copy(low, op, device, out, on_device, [rank - 1], indices, [1] * rank, True)
        low.free(on_device)
    low.free(on_host)
    low.map_results(op, [out])


def pad(low: Lowering, op: tensor.PadOp) -> None:
    """The result filled with the padding value, the source written into its window at
    the low pads. The body's ops run once on the host: a body that reads the index (a
    padding value per element) is not lowered."""
    block = op.region.block
    if any(arg.uses for arg in block.args):
        raise error_at(op, "'tensor.pad' with a body that reads the index is not lowered")
    device = low.op_device(op)
    source = low.operand(op, 0, device)
    for inner in block.ops:
        if isinstance(inner, tensor.YieldOp):
            break
        low.lower_scalar(inner)
    low.source = op
    yielded = block.last_op
    assert isinstance(yielded, tensor.YieldOp)  # the verifier requires it
    padded = low.values[yielded.operands[0]]
    lows = mixed_sizes(low, op.static_low.get_values(), op.low)
    highs = mixed_sizes(low, op.static_high.get_values(), op.high)
    rank = len(lows)
    sizes = [sum_sizes(low, [lows[d], extent(low, source, d), highs[d]]) for d in range(rank)]
    out_type = low.buffer_type(op.result.type, device, op)
    shape = memref_type(out_type).get_shape()
    for d, n in enumerate(shape):
        if n != DYNAMIC_INDEX:
            what = f"'tensor.pad' dimension {d} differs from its result type's {n}"
            require(low, equal(low, sizes[d], n), what)
    for d, p in enumerate([*lows, *highs]):
        if isinstance(p, int):
            require(low, p >= 0, f"'tensor.pad' pad {p} is negative")
        else:
            nonneg = low.emit(arith.CmpiOp(p, low.index(0), "sge")).results[0]
            require(low, nonneg, f"'tensor.pad' pad {d % rank} is negative")
    out = low.alloc(
        out_type, [index_value(low, sizes[d]) for d in range(rank) if shape[d] == DYNAMIC_INDEX]
    )
    _element(low, op, out)
    fill(low, device, out, padded, op)
    _window_copy(low, op, device, out, source, list(range(rank)), lows, [1] * rank, True)
    low.map_results(op, [out])


def alloc_tensor(low: Lowering, op: bufferization.AllocTensorOp) -> None:
    """`tensor.empty`, or a copy of its `copy` operand."""
    device = low.op_device(op)
    if op.copy is not None:
        low.map_results(op, [low.clone(low.operand(op, len(op.dynamic_sizes), device))])
        return
    out_type = low.buffer_type(op.tensor.type, device, op)
    low.map_results(op, [low.alloc(out_type, [low.values[v] for v in op.dynamic_sizes])])


def to_tensor(low: Lowering, op: bufferization.ToTensorOp) -> None:
    """A tensor of the memref's values now: a copy of the host memref to the op's device."""
    device = low.op_device(op)
    memory = low.values[op.memref]
    out_type = low.buffer_type(op.tensor.type, device, op)
    out = low.alloc(out_type, low.dynamic_sizes(out_type, memory))
    low.emit(dev.CopyOp(memory, out))
    low.map_results(op, [out])


def to_buffer(low: Lowering, op: bufferization.ToBufferOp) -> None:
    """A host memref holding the tensor's values: a copy from wherever the tensor lives
    (the tensor's own buffer is freed after its last tensor use, which may come first)."""
    source = low.values[op.tensor]
    type_ = memref_type(op.memref.type)
    if not isinstance(type_.memory_space, NoneAttr):
        raise error_at(op, f"'{op.name}' to {type_text(type_)}: only host memrefs are lowered")
    out = low.emit(memref.AllocOp(low.dynamic_sizes(type_, source), [], type_)).results[0]
    low.emit(dev.CopyOp(source, out))
    low.map_results(op, [out])
