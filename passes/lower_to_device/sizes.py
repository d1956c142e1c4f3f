"""Sizes, offsets and strides of the data-movement ops (`movement.py`, `views.py`): an int
when static, else a lowered index value; their sums and products, folded where static; and
the checks that a window lies inside its buffer or two sizes agree: an error now when
they are static, a `cf.assert` at run time otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr
from xdsl.ir import Attribute, Operation, SSAValue

from ...diagnostics import error_at
from .lowering import Lowering
from .types import memref_type, tensor_type, type_text

Size = SSAValue | int
"""A size, offset or stride: an int when static, else its (lowered) index value."""


def index_value(low: Lowering, size: Size) -> SSAValue:
    return low.index(size) if isinstance(size, int) else size


def extent(low: Lowering, buffer: SSAValue, d: int) -> Size:
    n = memref_type(buffer.type).get_shape()[d]
    return n if n != DYNAMIC_INDEX else low.dim(buffer, d)


def require(low: Lowering, holds: bool | SSAValue, what: str) -> None:
    """`what` is an error now when `holds` is False, a run-time assertion when it is a value."""
    if holds is False:
        raise error_at(low.source, what)
    if not isinstance(holds, bool):
        low.assert_at_run_time(holds, what)


def equal(low: Lowering, a: Size, b: Size) -> bool | SSAValue:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return low.emit(arith.CmpiOp(index_value(low, a), index_value(low, b), "eq")).results[0]


def mixed_sizes(low: Lowering, static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[Size]:
    values = iter(low.values[v] for v in dynamic)
    return [next(values) if s == DYNAMIC_INDEX else s for s in static]


def kept_dims(sizes: Sequence[Size], shape: Sequence[int]) -> list[int] | None:
    """The dimensions of a slice of `sizes` that its (possibly rank-reduced) `shape`
    keeps, or None when it is no rank reduction: MLIR drops static unit sizes, matching
    `shape` from the left."""
    kept: list[int] = []
    j = 0
    for i, size in enumerate(sizes):
        left, wanted = len(sizes) - i, len(shape) - j
        fits = j < len(shape) and (not isinstance(size, int) or shape[j] in (DYNAMIC_INDEX, size))
        if fits and (size != 1 or left == wanted):
            kept.append(i)
            j += 1
            continue
        if size != 1:
            return None
    return kept if j == len(shape) else None


def check_window(
    low: Lowering, full: SSAValue, offsets: list[Size], sizes: list[Size], strides: list[Size]
) -> None:
    """Each dimension of the window lies inside `full`: offset + (size - 1) * stride < the
    dimension (or the size is 0), the stride at least 1."""
    for d, (o, s, t) in enumerate(zip(offsets, sizes, strides, strict=True)):
        n = extent(low, full, d)
        what = f"'{low.source.name}' reaches outside dimension {d} of its tensor"
        if all(isinstance(x, int) for x in (n, o, s, t)):
            o, s, t, n = cast(int, o), cast(int, s), cast(int, t), cast(int, n)
            inside = t >= 1 and o >= 0 and (s == 0 or o + (s - 1) * t < n)
            require(low, inside, f"{what} (size {n}: offset {o}, size {s}, stride {t})")
            continue
        o, s, t, n = (index_value(low, x) for x in (o, s, t, n))
        one = low.index(1)
        steps = low.emit(arith.MuliOp(low.emit(arith.SubiOp(s, one)).results[0], t)).results[0]
        last = low.emit(arith.AddiOp(o, steps)).results[0]
        fits = low.emit(arith.CmpiOp(last, n, "slt")).results[0]
        empty = low.emit(arith.CmpiOp(s, low.index(0), "eq")).results[0]
        nonneg = low.emit(arith.CmpiOp(o, low.index(0), "sge")).results[0]
        stride = low.emit(arith.CmpiOp(t, one, "sge")).results[0]
        ok = low.emit(arith.OrIOp(empty, fits)).results[0]
        ok = low.emit(arith.AndIOp(ok, low.emit(arith.AndIOp(nonneg, stride)).results[0]))
        require(low, ok.results[0], what)


def slice_parameters(low: Lowering, op: Any) -> tuple[list[Size], list[Size], list[Size]]:
    return (
        mixed_sizes(low, op.static_offsets.get_values(), op.offsets),
        mixed_sizes(low, op.static_sizes.get_values(), op.sizes),
        mixed_sizes(low, op.static_strides.get_values(), op.strides),
    )


def kept_by(op: Operation, sizes: list[Size], sliced: Attribute) -> list[int]:
    shape = tensor_type(sliced).get_shape()
    kept = kept_dims(sizes, shape)
    if kept is None or len(sizes) != len(kept) + sum(1 for d in range(len(sizes)) if d not in kept):
        raise error_at(
            op,
            f"'{op.name}': the slice type {type_text(sliced)} is not its sizes with unit "
            "dimensions dropped",
        )
    return kept


def product(low: Lowering, sizes: Sequence[Size]) -> Size:
    total: Size = 1
    for n in sizes:
        if isinstance(total, int) and isinstance(n, int):
            total *= n
        elif total == 1 or n == 1:
            total = n if total == 1 else total
        else:
            total = low.emit(arith.MuliOp(index_value(low, total), index_value(low, n))).results[0]
    return total


def sum_sizes(low: Lowering, sizes: Sequence[Size]) -> Size:
    total: Size = 0
    for n in sizes:
        if isinstance(total, int) and isinstance(n, int):
            total += n
        elif total == 0 or n == 0:
            total = n if total == 0 else total
        else:
            total = low.emit(arith.AddiOp(index_value(low, total), index_value(low, n))).results[0]
    return total


def index_of(low: Lowering, index: SSAValue) -> Size:
    """The level-1 index `index`: its int when an `arith.constant` defines it, else its
    lowered value."""
    op = index.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return cast(IntegerAttr[Any], op.value).value.data
    return low.values[index]


def check_index(low: Lowering, op: Operation, d: int, at: Size, n: Size) -> None:
    """Index `d` of `op` (a `tensor.extract` or `tensor.insert`), `at`, lies inside the
    dimension of size `n` it indexes: an error at `op` now when both are static, a
    `cf.assert` at run time otherwise (an unsigned compare, so a negative index fails)."""
    what = f"'{op.name}' index {d} is outside its tensor"
    if isinstance(at, int) and isinstance(n, int):
        if not 0 <= at < n:
            raise error_at(op, f"{what}: {at} in dimension {d} of size {n}")
        return
    if isinstance(n, int):
        what += f": dimension {d} has size {n}"
    elif isinstance(at, int):
        what += f": {at} in dimension {d}"
    inside = low.emit(arith.CmpiOp(index_value(low, at), index_value(low, n), "ult"))
    low.assert_at_run_time(inside.results[0], what)
