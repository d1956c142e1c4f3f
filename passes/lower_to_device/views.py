"""Views: the data-movement ops of level 1 that lower-to-device makes a `device.view` of
their source's buffer, with no allocation, no kernel and no copy.

The rule (`types.becomes_view`, which `ownership.py` reads too, so it sits with the types):
  * a `tensor.extract_slice` of a ranked tensor is a view: its offset is the sum of its
    offsets times the strides of its source, its strides its own times those; a slice of
    a slice (or of any view) views the first one's buffer, so kernels read one row-major
    buffer at `offset + sum(i * stride)`;
  * a ranked `tensor.cast` is a view of the same elements with other static sizes, its
    source's strides kept;
  * `collapse_shape`, `expand_shape` and `reshape` of a buffer whose elements are
    consecutive in row-major order (a row-major buffer or a slice that `contiguous_slice`
    says is contiguous: unit sizes, one dimension of stride 1, then whole dimensions) are
    views of the buffer those elements are in, at their offset there, with row-major
    strides of the new shape.
What still copies, and why (`movement.py`): a reshape of a strided slice (its elements
are not evenly spaced in row-major order, so in general no strides of the new shape
describe where they are: the reshape kernel copies them); `insert_slice`,
`concat`, `pad`, `insert` (tensors are values: writing into the source would change it
for its other users, so each writes a fresh buffer); `tensor.extract` of a device value
(the host reads one element copied to it); a cast to an unranked tensor (a host copy,
what MLIR's runner printers take). Views own nothing: the buffer viewed is freed after
the last use of any view of it, and a view is cloned where it would be handed on
(`ownership.py`). `Lowering.strided` maps each view (but a reshape or cast of a row-major
buffer itself) to its base buffer, offset and strides, where the next view of it starts.

The sizes a view's op names are checked as the copying ops' are (`sizes.py`): now when
static, by a `cf.assert` at run time otherwise. The 1 x ... x 1 slice plan-devices makes
to read one element of a device value for a `tensor.extract` (`_element_read`) has its
bounds checked as that extract's indices, so an index out of range is reported in the
words of the op the user wrote, as on the host.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue

from ...dialects import device as dev
from ...dialects.vdev import DeviceCopyOp
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
    product,
    require,
    slice_parameters,
    sum_sizes,
)
from .types import is_strided, memref_type, tensor_type, type_text


def extract_slice(low: Lowering, op: tensor.ExtractSliceOp) -> None:
    device = low.op_device(op)
    source = low.operand(op, 0, device)
    offsets, sizes, strides = slice_parameters(low, op)
    kept = kept_by(op, sizes, op.result.type)
    read = _element_read(op)
    if read is None:
        check_window(low, source, offsets, sizes, strides)
    else:  # the bounds are the extract's: say so in its words
        dynamic = iter(op.offsets)
        static = op.static_offsets.get_values()
        at = [index_of(low, next(dynamic)) if o == DYNAMIC_INDEX else o for o in static]
        for d, i in enumerate(at):
            check_index(low, read, d, i, extent(low, source, d))
    shape = tensor_type(op.result.type).get_shape()
    for j, d in enumerate(kept):
        if shape[j] != DYNAMIC_INDEX:
            what = f"'{op.name}' size {d} differs from its result type {type_text(op.result.type)}"
            require(low, equal(low, sizes[d], shape[j]), what)
    base, at, steps = layout(low, source)
    offset = sum_sizes(low, [at, *(_times(low, o, t) for o, t in zip(offsets, steps, strict=True))])
    view_strides = [_times(low, strides[d], steps[d]) for d in kept]
    out = _device_view(low, op, base, offset, [sizes[d] for d in kept], view_strides)
    low.strided[out] = (base, offset, view_strides)
    low.map_results(op, [out])


def _element_read(op: tensor.ExtractSliceOp) -> tensor.ExtractOp | None:
    """The `tensor.extract` whose element this slice reads, or None. plan-devices reads an
    element of a value on a device (`read_on_host`) as a slice of 1 x ... x 1 at the
    extract's indices, with the extract's location, copied to the host, where the extract
    reads it at index 0: a slice whose only use leads through copies to such an extract."""
    unit = (op.static_sizes.get_values(), op.static_strides.get_values())
    if any(n != 1 for values in unit for n in values):
        return None
    value: SSAValue = op.result
    while len(uses := list(value.uses)) == 1:
        user = uses[0].operation
        if isinstance(user, DeviceCopyOp):
            value = user.result
            continue
        zeros = all(isinstance(i.owner, arith.ConstantOp) for i in user.operands[1:])
        if isinstance(user, tensor.ExtractOp) and user.location == op.location and zeros:
            return user
        return None
    return None


def layout(low: Lowering, buffer: SSAValue) -> tuple[SSAValue, Size, list[Size]]:
    """The row-major buffer `buffer`'s elements are in, their offset and strides there."""
    found = low.strided.get(buffer)
    if found is not None:
        return found
    rank = memref_type(buffer.type).get_num_dims()
    return buffer, 0, row_major_strides(low, [extent(low, buffer, d) for d in range(rank)])


def flat_view(low: Lowering, buffer: SSAValue) -> SSAValue | None:
    """A rank-1 `device.view` of every element of `buffer`, when it is a row-major buffer
    of rank 2 or more (not itself a strided view): a kernel over it needs no division to
    find an element's place (the fill kernel). None for any other buffer."""
    type_ = memref_type(buffer.type)
    if type_.get_num_dims() < 2 or buffer in low.strided or not isinstance(type_.layout, NoneAttr):
        return None
    count = low.element_count(buffer)
    shape = [count if isinstance(count, int) else DYNAMIC_INDEX]
    flat = MemRefType(type_.element_type, shape, NoneAttr(), type_.memory_space)
    one, zero = index_value(low, 1), index_value(low, 0)
    view = dev.ViewOp(buffer, zero, [index_value(low, count)], [one], flat)
    return low.emit(view).results[0]


def row_major_strides(low: Lowering, sizes: Sequence[Size]) -> list[Size]:
    """The strides of a row-major buffer of `sizes`."""
    return [product(low, sizes[d + 1 :]) for d in range(len(sizes))]


def _times(low: Lowering, a: Size, b: Size) -> Size:
    return product(low, [a, b])


def strided_view(
    low: Lowering,
    base: SSAValue,
    offset: Size,
    sizes: Sequence[Size],
    strides: Sequence[Size],
    shape: Sequence[int] | None = None,
    identity: bool = False,
) -> SSAValue:
    """A `device.view` of the row-major buffer `base`: no allocation, no copy; `strides`
    may overlap or be 0. Its type has `shape` (default: `sizes`, static where they are)
    and a strided layout, static where its strides and offset are; with `identity` and
    offset 0 (the elements of `base` in row-major order), the identity layout."""
    base_type = memref_type(base.type)
    if shape is None:
        shape = [n if isinstance(n, int) else DYNAMIC_INDEX for n in sizes]
    layout: Attribute = NoneAttr()
    if not (identity and offset == 0):
        static = [t if isinstance(t, int) else None for t in strides]
        layout = StridedLayoutAttr(static, offset if isinstance(offset, int) else None)
    type_ = MemRefType(base_type.element_type, shape, layout, base_type.memory_space)
    view = dev.ViewOp(
        base, index_value(low, offset), [index_value(low, n) for n in sizes],
        [index_value(low, t) for t in strides], type_,
    )  # fmt: skip
    return low.emit(view).results[0]


def _device_view(
    low: Lowering,
    op: Operation,
    base: SSAValue,
    offset: Size,
    sizes: Sequence[Size],
    strides: Sequence[Size],
    reshape: bool = False,
) -> SSAValue:
    """`strided_view` of `base` as `op`'s result (of its result type's shape): a slice's
    has a strided layout, as has a reshape's of a slice; a reshape's of `base` itself is
    the identity layout."""
    shape = tensor_type(op.results[0].type).get_shape()
    return strided_view(low, base, offset, sizes, strides, shape, identity=reshape)


def _row_major_view(low: Lowering, op: Operation, source: SSAValue, sizes: list[Size]) -> None:
    """`op`'s result: `source`'s elements, consecutive in row-major order (`becomes_view`),
    seen in `sizes`: a view of the buffer they are in, at their offset there."""
    base, offset, _ = layout(low, source)
    steps = row_major_strides(low, sizes)
    view = _device_view(low, op, base, offset, sizes, steps, reshape=True)
    if base is not source:
        low.strided[view] = (base, offset, steps)
    low.map_results(op, [view])


def reshape_view(
    low: Lowering, op: Operation, source: SSAValue, out_sizes: list[Size], shape: Sequence[int]
) -> None:
    """A reshape that `becomes_view`: the element count and each static size it names
    checked, its result `source`'s elements seen in `out_sizes`."""
    what = f"'{op.name}' changes the number of elements"
    require(low, equal(low, low.element_count(source), product(low, out_sizes)), what)
    for d, (n, s) in enumerate(zip(out_sizes, shape, strict=True)):
        if s != DYNAMIC_INDEX and not isinstance(n, int):
            require(low, equal(low, n, s), f"'{op.name}' size {d} differs from {s}")
    sizes = [s if s != DYNAMIC_INDEX else n for n, s in zip(out_sizes, shape, strict=True)]
    _row_major_view(low, op, source, sizes)


def cast_view(low: Lowering, op: tensor.CastOp) -> None:
    """A ranked `tensor.cast`: each size it makes static checked, then a view of the same
    elements, row-major or with its source's strides."""
    device = low.op_device(op)
    source = low.operand(op, 0, device)
    out_type = low.buffer_type(op.dest.type, device, op)
    shape = memref_type(out_type).get_shape()
    for d, n in enumerate(shape):
        if n != DYNAMIC_INDEX:
            what = f"'tensor.cast' to {type_text(op.dest.type)}: dimension {d} differs"
            require(low, equal(low, extent(low, source, d), n), what)
    sizes = [n if n != DYNAMIC_INDEX else extent(low, source, d) for d, n in enumerate(shape)]
    if not is_strided(op.source):
        _row_major_view(low, op, source, sizes)
        return
    base, offset, strides = layout(low, source)  # the same elements, other static sizes
    view = _device_view(low, op, base, offset, sizes, strides)
    low.strided[view] = (base, offset, strides)
    low.map_results(op, [view])
