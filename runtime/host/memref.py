"""Host-code compilers of `memref` ops on host memory: allocation, loads and stores checked
against the memref's bounds, `memref.dim`, and casts that check static sizes.

Host memory is NumPy arrays. An allocation checks the run's host capacity first (the
executor bounds it by `machine_memory`): NumPy would map memory beyond the machine's lazily
and the process would be killed when it is touched.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, BFloat16Type, MemRefType, NoneAttr
from xdsl.ir import Operation

from ...analysis.dtypes import is_integer_like, numpy_dtype
from ...analysis.overwritten_memory import overwritten_before_read
from ...diagnostics import error_at
from ...dispatch import OpTable
from .. import scalar_ops
from ..storage import host_zeros
from .frame import Compiler, Frame, Getter, OpCompiler, Step
from .values import element_type, wrapper

MEMREF_OPS = OpTable[OpCompiler]("host code")
"""Compilers of the `memref` ops host code runs on host memory."""


def machine_memory() -> int | None:
    """Bytes of physical memory of this machine (None when the OS does not say).

    Host memory beyond it cannot be given: NumPy would map it lazily and the process
    would be killed when it is touched, so allocations check against it first."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def shape_with(
    op: Operation, type_: MemRefType, dynamic: Sequence[int]
) -> Callable[[Frame], tuple[int, ...]]:
    """The concrete shape of an allocation of `type_` whose `?` sizes are in `dynamic` slots."""
    static = [d.data for d in type_.shape]
    positions = [i for i, d in enumerate(static) if d < 0]
    if len(positions) != len(dynamic):
        raise error_at(op, f"'{op.name}' needs {len(positions)} dynamic sizes for {type_}")
    if not positions:
        fixed = tuple(static)
        return lambda f: fixed

    def shape(f: Frame) -> tuple[int, ...]:
        dims = list(static)
        for i, s in zip(positions, dynamic, strict=True):
            n = f[s]
            if n < 0:
                raise error_at(op, f"'{op.name}' of {type_} with negative size {n}")
            dims[i] = n
        return tuple(dims)

    return shape


@MEMREF_OPS.impl(memref.AllocOp, memref.AllocaOp)
def _alloc(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, memref.AllocOp | memref.AllocaOp)
    type_ = op.memref.type
    assert isinstance(type_, MemRefType)
    if not isinstance(type_.memory_space, NoneAttr):
        raise error_at(
            op,
            f"'{op.name}' allocates {type_} in device memory; "
            "use 'device.alloc' for memory of a device",
        )
    shape = shape_with(op, type_, [c.slot(v) for v in op.dynamic_sizes])
    dtype = numpy_dtype(type_.element_type)
    r = c.slot(op.memref)
    # Zeroed unless a launch writes every element before anything reads it: then a
    # reused block's old bytes are never seen.
    zeroed = not (isinstance(op, memref.AllocOp) and overwritten_before_read(op))

    def run(f: Frame) -> None:
        dims = shape(f)
        nbytes = math.prod(dims) * dtype.itemsize
        capacity: int | None = getattr(f[0], "host_capacity", None)
        if capacity is not None and nbytes > capacity:
            raise error_at(
                op,
                f"allocating {type_} needs {nbytes} bytes: out of host memory "
                f"(the host holds {capacity} bytes)",
            )
        try:
            f[r] = host_zeros(dims, dtype, zeroed)  # (reused memory: `storage.HostBlocks`)
        except MemoryError:
            raise error_at(
                op, f"allocating {type_} needs {nbytes} bytes: out of host memory"
            ) from None

    return run


def _memref_access(
    c: Compiler, op: memref.LoadOp | memref.StoreOp, write: bool
) -> tuple[Getter, Callable[[Frame, np.ndarray[Any, Any]], tuple[int, ...]]]:
    """For a host `memref.load`/`store`: the getter of the array it reaches and the check
    giving its index in bounds (the error names the memref type)."""
    memory = c.host_memory(op, op.memref, write=write)
    what = f"{op.memref.type}"
    indices = tuple(c.slot(v) for v in op.indices)

    def check(f: Frame, array: np.ndarray[Any, Any]) -> tuple[int, ...]:
        index = tuple(f[i] for i in indices)
        for i, n in zip(index, array.shape, strict=True):
            if not 0 <= i < n:
                raise error_at(
                    op,
                    f"'{op.name}' index [{', '.join(map(str, index))}] is out of bounds "
                    f"for {what} of shape {'x'.join(map(str, array.shape)) or 'scalar'}",
                )
        return index

    return memory, check


@MEMREF_OPS.impl(memref.LoadOp)
def _load(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, memref.LoadOp)
    memory, check = _memref_access(c, op, write=False)
    element = element_type(op.memref.type)
    convert: Callable[[Any], Any] = (
        (lambda x: wrapper(element)(int(x))) if is_integer_like(element) else (lambda x: x)
    )
    if isinstance(element, BFloat16Type):
        convert = scalar_ops.bf16_value_of_bits
    r = c.slot(op.res)

    def run(f: Frame) -> None:
        array = memory(f)
        f[r] = convert(array[check(f, array)])

    return run


@MEMREF_OPS.impl(memref.StoreOp)
def _store(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, memref.StoreOp)
    memory, check = _memref_access(c, op, write=True)
    value = c.slot(op.value)
    element = element_type(op.memref.type)
    dtype = numpy_dtype(element)
    unsigned_mask = (1 << (dtype.itemsize * 8)) - 1 if dtype.kind == "u" else None
    if isinstance(element, BFloat16Type):

        def run_bf16(f: Frame) -> None:
            array = memory(f)
            array[check(f, array)] = scalar_ops.bf16_bits_of_value(f[value])

        return run_bf16

    def run(f: Frame) -> None:
        array = memory(f)
        v = f[value]
        array[check(f, array)] = v if unsigned_mask is None else int(v) & unsigned_mask

    return run


@MEMREF_OPS.impl(memref.DimOp)
def _dim(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, memref.DimOp)
    source, index, r = c.slot(op.source), c.slot(op.index), c.slot(op.result)
    type_ = op.source.type
    rank = type_.get_num_dims() if isinstance(type_, MemRefType) else 0

    def run(f: Frame) -> None:
        i = f[index]
        if not 0 <= i < rank:
            raise error_at(op, f"'memref.dim' index {i} is out of range for rank {rank}")
        f[r] = int(f[source].shape[i])

    return run


@MEMREF_OPS.impl(memref.CastOp, memref.MemorySpaceCastOp)
def _cast(c: Compiler, op: Operation) -> Step:
    """The same memory seen through another type; static sizes are checked, not assumed."""
    source, r = c.slot(op.operands[0]), c.slot(op.results[0])
    target = op.results[0].type
    if not isinstance(target, MemRefType):  # unranked: any shape

        def view(f: Frame) -> None:
            f[r] = f[source]

        return view
    static = [d.data for d in target.shape]

    def run(f: Frame) -> None:
        value = f[source]
        shape = tuple(value.shape)
        if any(d >= 0 and d != n for d, n in zip(static, shape, strict=True)):
            raise error_at(
                op,
                f"'{op.name}' to {target} of memory of shape {'x'.join(map(str, shape))}",
            )
        f[r] = value

    return run


__all__ = ["MEMREF_OPS", "machine_memory", "shape_with"]


@MEMREF_OPS.impl(memref.SubviewOp)
def _subview(c: Compiler, op: Operation) -> Step:
    """A NumPy view of the window (offsets, sizes, strides), checked to lie inside the
    source; unit dimensions the result type drops are dropped (rank-reducing)."""
    assert isinstance(op, memref.SubviewOp)
    source, r = c.slot(op.source), c.slot(op.result)
    rank = len(op.static_sizes.get_values())

    def mixed(static: Sequence[int], dynamic: Sequence[int]) -> list[int | None]:
        slots = iter(dynamic)
        return [next(slots) if s == DYNAMIC_INDEX else None for s in static]

    offsets_s = op.static_offsets.get_values()
    sizes_s = op.static_sizes.get_values()
    strides_s = op.static_strides.get_values()
    offsets_d = mixed(offsets_s, [c.slot(v) for v in op.offsets])
    sizes_d = mixed(sizes_s, [c.slot(v) for v in op.sizes])
    strides_d = mixed(strides_s, [c.slot(v) for v in op.strides])
    kept = _kept_dimensions(op, list(sizes_s))

    def read(f: Frame, static: Sequence[int], dynamic: Sequence[int | None]) -> list[int]:
        return [f[d] if d is not None else s for s, d in zip(static, dynamic, strict=True)]

    def run(f: Frame) -> None:
        array: Any = f[source]
        offsets = read(f, offsets_s, offsets_d)
        sizes = read(f, sizes_s, sizes_d)
        strides = read(f, strides_s, strides_d)
        window: list[slice | int] = []
        for d in range(rank):
            o, n, s = offsets[d], sizes[d], strides[d]
            extent = int(array.shape[d])
            last = o + (n - 1) * s if n > 0 else o
            if o < 0 or n < 0 or s <= 0 or (n > 0 and last >= extent):
                raise error_at(
                    op, f"'memref.subview' dimension {d}: offset {o}, size {n}, stride {s} "
                    f"is outside the source's extent {extent}",
                )  # fmt: skip
            window.append(slice(o, o + n * s, s) if d in kept else o)
        f[r] = array[tuple(window)]

    return run


def _kept_dimensions(op: memref.SubviewOp, sizes: list[int]) -> set[int]:
    """The source dimensions the result keeps: all of them, or, for a rank-reducing
    subview, all but unit dimensions matched against the result's shape in order."""
    result = [d.data for d in op.result.type.shape]
    kept: set[int] = set()
    k = 0
    for d, n in enumerate(sizes):
        left_to_drop = len(sizes) - d - (len(result) - k)
        fits = k < len(result) and (result[k] == n or result[k] == DYNAMIC_INDEX or n < 0)
        if fits and not (n == 1 and left_to_drop > 0 and result[k] != 1):
            kept.add(d)
            k += 1
    if k != len(result):
        raise error_at(op, f"'memref.subview' result {op.result.type} does not fit its sizes")
    return kept
