"""The oracle's data-movement ops of the `tensor` dialect, as MLIR defines them, one NumPy
operation each: `extract_slice`/`insert_slice` (static and dynamic offsets, sizes and
strides, rank-reducing), `concat`, `collapse_shape`, `expand_shape`, `reshape`, `dim`,
`extract`, `insert`, `splat`, `from_elements`, `pad` (given its padding value, which the
evaluator computes from the op's body), `linalg.pack`/`unpack` (from their definition,
element by element, not through the ops lower-to-device decomposes them into), and the
bufferization ops MLIR's tests use at tensor level (`to_tensor`, `to_buffer`: a copy
each way).

Each rule takes the op and its operands' values (tensors as arrays, `index` operands as
integers, in operand order) and returns its one result. Reading outside a tensor, which
MLIR leaves undefined, is an error placed at the op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects import bufferization, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Attribute, Operation

from ..diagnostics import error_at
from ..upstream.linalg_pack import PackOp, UnPackOp
from ..upstream.tensor import ExpandShapeOp

Value = Any
Rule = Callable[[Operation, list[Value]], Value]


def _mixed(static: Sequence[int], dynamic: Sequence[Value]) -> list[int]:
    """Static entries with each dynamic one (`DYNAMIC_INDEX`) taken, in order, from `dynamic`."""
    values = iter(int(v) for v in dynamic)
    return [next(values) if s == DYNAMIC_INDEX else s for s in static]


def _shape(type_: Attribute) -> tuple[int, ...]:
    return tuple(cast(TensorType[Attribute], type_).get_shape())


def _kept_dims(sizes: Sequence[int], reduced: Sequence[int]) -> list[int]:
    """The dims of `sizes` that the (possibly rank-reduced) shape `reduced` keeps: MLIR
    drops unit sizes, matching `reduced` from the left."""
    kept: list[int] = []
    j = 0
    for i, size in enumerate(sizes):
        fits = j < len(reduced) and reduced[j] in (DYNAMIC_INDEX, size)
        if fits and (size != 1 or len(sizes) - i == len(reduced) - j):
            kept.append(i)
            j += 1
            continue
        if size != 1:
            return []
    return kept if j == len(reduced) else []


def _window(
    op: Operation, full: tuple[int, ...], offsets: list[int], sizes: list[int], strides: list[int]
) -> tuple[slice, ...]:
    """The slices of a tensor of shape `full` the offsets, sizes and strides select."""
    if len(offsets) != len(full) or len(sizes) != len(full) or len(strides) != len(full):
        raise error_at(op, f"'{op.name}' needs one offset, size and stride per dimension")
    window: list[slice] = []
    for d, (n, o, s, t) in enumerate(zip(full, offsets, sizes, strides, strict=True)):
        last = o + (s - 1) * t
        if s < 0 or t < 1 or o < 0 or (s > 0 and last >= n):
            raise error_at(
                op,
                f"'{op.name}' reaches outside dimension {d} (size {n}): offset {o}, "
                f"size {s}, stride {t}",
            )
        window.append(slice(o, o + s * t, t) if s > 0 else slice(o, o))
    return tuple(window)


def _slice_parameters(op: Any, args: list[Value], first: int) -> tuple[list[int], ...]:
    n_off, n_size = len(op.offsets), len(op.sizes)
    offsets = _mixed(op.static_offsets.get_values(), args[first : first + n_off])
    sizes = _mixed(op.static_sizes.get_values(), args[first + n_off : first + n_off + n_size])
    strides = _mixed(op.static_strides.get_values(), args[first + n_off + n_size :])
    return offsets, sizes, strides


def _extract_slice(op: Operation, args: list[Value]) -> Value:
    source = np.asarray(args[0])
    offsets, sizes, strides = _slice_parameters(op, args, 1)
    part = source[_window(op, source.shape, offsets, sizes, strides)]
    kept = _kept_dims(sizes, _shape(op.results[0].type))
    return np.ascontiguousarray(part.reshape([sizes[d] for d in kept]))


def _insert_slice(op: Operation, args: list[Value]) -> Value:
    source, dest = np.asarray(args[0]), np.array(args[1])
    offsets, sizes, strides = _slice_parameters(op, args, 2)
    window = _window(op, dest.shape, offsets, sizes, strides)
    kept = _kept_dims(sizes, _shape(op.operands[0].type))
    if [sizes[d] for d in kept] != list(source.shape):
        wanted = "x".join(str(sizes[d]) for d in kept)
        got = "x".join(map(str, source.shape))
        raise error_at(op, f"'tensor.insert_slice' of a {got} tensor into a {wanted} slice")
    dest[window] = source.reshape(sizes)
    return dest


def _concat(op: Operation, args: list[Value]) -> Value:
    axis = cast(tensor.ConcatOp, op).dim.value.data
    shapes = [np.shape(a) for a in args]
    for i, shape in enumerate(shapes[1:], 1):
        others = [n for d, n in enumerate(shape) if d != axis]
        if others != [n for d, n in enumerate(shapes[0]) if d != axis]:
            raise error_at(
                op,
                f"'tensor.concat' operand {i} is {'x'.join(map(str, shape))}, operand 0 "
                f"{'x'.join(map(str, shapes[0]))}: only dimension {axis} may differ",
            )
    return np.concatenate([np.asarray(a) for a in args], axis=axis)


def _collapse_shape(op: Operation, args: list[Value]) -> Value:
    source = np.asarray(args[0])
    groups = [[int(i.value.data) for i in g.data] for g in cast(Any, op).reassociation.data]
    shape = [int(np.prod([source.shape[d] for d in group])) for group in groups]
    return source.reshape(shape)


def _expand_shape(op: Operation, args: list[Value]) -> Value:
    source = np.asarray(args[0])
    static = cast(Any, op).static_output_shape.get_values()
    if isinstance(op, ExpandShapeOp) and op.is_inferred():
        shape = list(static)
        for i, group in enumerate(op.reassociation.data):
            members = [int(d.value.data) for d in group.data]
            known = int(np.prod([static[d] for d in members if static[d] != DYNAMIC_INDEX]))
            for d in members:
                if static[d] == DYNAMIC_INDEX:
                    shape[d] = source.shape[i] // known if known else 0
    else:
        shape = _mixed(static, args[1:])
    if int(np.prod(shape)) != source.size:
        raise error_at(
            op,
            f"'tensor.expand_shape' of {source.size} elements to output_shape "
            f"{shape} ({int(np.prod(shape))} elements)",
        )
    return source.reshape(shape)


def _dim(op: Operation, args: list[Value]) -> Value:
    shape, index = np.shape(args[0]), int(args[1])
    if not 0 <= index < len(shape):
        raise error_at(op, f"'tensor.dim' index {index} is out of range for rank {len(shape)}")
    return np.int64(shape[index])


def _extract(op: Operation, args: list[Value]) -> Value:
    source = np.asarray(args[0])
    indices = tuple(int(i) for i in args[1:])
    if any(not 0 <= i < n for i, n in zip(indices, source.shape, strict=True)):
        raise error_at(
            op,
            f"'tensor.extract' at {list(indices)} is outside a "
            f"{'x'.join(map(str, source.shape))} tensor",
        )
    return source[indices]


def _reshape(op: Operation, args: list[Value]) -> Value:
    source, shape = np.asarray(args[0]), [int(n) for n in np.asarray(args[1])]
    static = _shape(op.results[0].type)
    if (
        any(n < 0 for n in shape)
        or int(np.prod(shape)) != source.size
        or any(s != DYNAMIC_INDEX and s != n for s, n in zip(static, shape, strict=True))
    ):
        raise error_at(
            op,
            f"'tensor.reshape' of {source.size} elements to shape {shape} "
            f"(result type {op.results[0].type})",
        )
    return source.reshape(shape)


def _insert(op: Operation, args: list[Value]) -> Value:
    dest = np.array(args[1])
    indices = tuple(int(i) for i in args[2:])
    if any(not 0 <= i < n for i, n in zip(indices, dest.shape, strict=True)):
        raise error_at(
            op,
            f"'tensor.insert' at {list(indices)} is outside a "
            f"{'x'.join(map(str, dest.shape))} tensor",
        )
    dest[indices] = args[0]
    return dest


def _splat(op: Operation, args: list[Value]) -> Value:
    shape = _mixed(_shape(op.results[0].type), args[1:])
    return np.full(shape, args[0], dtype=np.asarray(args[0]).dtype)


def _from_elements(op: Operation, args: list[Value]) -> Value:
    shape = _shape(op.results[0].type)
    return np.array(args, dtype=np.asarray(args[0]).dtype).reshape(shape)


def pad(op: tensor.PadOp, args: list[Value], padding: Callable[[tuple[int, ...]], Value]) -> Value:
    """`tensor.pad` of `args` (source, then the dynamic low and high pads), each padded
    element `padding(index in the result)`."""
    source = np.asarray(args[0])
    n_low = len(op.low)
    low = _mixed(op.static_low.get_values(), args[1 : 1 + n_low])
    high = _mixed(op.static_high.get_values(), args[1 + n_low :])
    shape = [lo + n + hi for lo, n, hi in zip(low, source.shape, high, strict=True)]
    static = _shape(op.result.type)
    if any(p < 0 for p in low + high) or any(
        s != DYNAMIC_INDEX and s != n for s, n in zip(static, shape, strict=True)
    ):
        raise error_at(
            op,
            f"'tensor.pad' of a {'x'.join(map(str, source.shape))} tensor by low {low}, "
            f"high {high} to {op.result.type}",
        )
    out = np.empty(shape, source.dtype)
    inside = tuple(slice(lo, lo + n) for lo, n in zip(low, source.shape, strict=True))
    for index in np.ndindex(*shape):
        if not all(s.start <= i < s.stop for s, i in zip(inside, index, strict=True)):
            out[index] = padding(index)
    out[inside] = source
    return out


def _copy(op: Operation, args: list[Value]) -> Value:
    return np.array(args[0])


def _pack(op: Operation, args: list[Value]) -> Value:
    """`linalg.pack`, element by element from its definition: result[o..., t...] is
    source[o * tile + t] in tiled dimensions, source[o] in the others, the padding value
    past the source's end."""
    pack = cast(PackOp, op)
    source = np.asarray(args[0])
    rank = source.ndim
    padding = args[2] if pack.padding_value is not None else None
    tiles = _mixed(pack.static_inner_tiles.get_values(), args[3 if padding is not None else 2 :])
    positions, perm = pack.positions(), pack.permutation(rank)
    tile_of = dict(zip(positions, tiles, strict=True))
    outer = [-(-n // tile_of[d]) if d in tile_of else n for d, n in enumerate(source.shape)]
    shape = [outer[d] for d in perm] + tiles
    if tuple(shape) != np.shape(args[1]):
        raise error_at(
            op, f"'linalg.pack' into a dest of shape {list(np.shape(args[1]))}, needs {shape}"
        )
    at: Any = np.indices(shape, dtype=np.int64)
    index: list[Any] = []
    for d in range(rank):
        o = at[perm.index(d)]
        index.append(o * tile_of[d] + at[rank + positions.index(d)] if d in tile_of else o)
    inside: Any = np.ones(shape, dtype=bool)
    for d, i in enumerate(index):
        inside &= i < source.shape[d]
    if source.size == 0:
        result = np.zeros(shape, dtype=source.dtype)
    else:
        result = source[
            tuple(np.minimum(i, n - 1) for i, n in zip(index, source.shape, strict=True))
        ]
    if not inside.all():
        if padding is None:
            raise error_at(op, "'linalg.pack' has tiles past its source's end but no padding_value")
        result = np.where(inside, result, np.asarray(padding, dtype=source.dtype))
    return result.astype(source.dtype)


def _unpack(op: Operation, args: list[Value]) -> Value:
    """`linalg.unpack`: each element of the dest read from the packed source (its
    padding never read)."""
    unpack = cast(UnPackOp, op)
    packed, dest = np.asarray(args[0]), np.asarray(args[1])
    rank = dest.ndim
    tiles = _mixed(unpack.static_inner_tiles.get_values(), args[2:])
    positions, perm = unpack.positions(), unpack.permutation(rank)
    tile_of = dict(zip(positions, tiles, strict=True))
    outer = [-(-n // tile_of[d]) if d in tile_of else n for d, n in enumerate(dest.shape)]
    shape = [outer[d] for d in perm] + tiles
    if tuple(shape) != packed.shape:
        raise error_at(
            op, f"'linalg.unpack' of a source of shape {list(packed.shape)}, needs {shape}"
        )
    at: Any = np.indices(dest.shape, dtype=np.int64)
    index: list[Any] = [None] * packed.ndim
    for j, d in enumerate(perm):
        index[j] = at[d] // tile_of[d] if d in tile_of else at[d]
    for k, d in enumerate(positions):
        index[rank + k] = at[d] % tile_of[d]
    return packed[tuple(index)] if dest.size else np.array(dest)


TENSOR_RULES: dict[type[Operation], Rule] = {
    tensor.ExtractSliceOp: _extract_slice,
    tensor.InsertSliceOp: _insert_slice,
    tensor.ConcatOp: _concat,
    tensor.CollapseShapeOp: _collapse_shape,
    tensor.ExpandShapeOp: _expand_shape,
    tensor.DimOp: _dim,
    tensor.ExtractOp: _extract,
    tensor.ReshapeOp: _reshape,
    tensor.InsertOp: _insert,
    tensor.SplatOp: _splat,
    tensor.FromElementsOp: _from_elements,
    bufferization.ToTensorOp: _copy,
    bufferization.ToBufferOp: _copy,
    PackOp: _pack,
    UnPackOp: _unpack,
}
"""Op class -> the rule computing its one result."""
