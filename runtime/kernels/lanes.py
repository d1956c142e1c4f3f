"""Run-time values of the NumPy backend: lane spaces, affine thread indices, and the
vectorised operations generated kernels call.

One vectorised step runs an op for every *lane* (thread) at once. The lanes form a
`Lanes` space of six axes `(block z, block y, block x, thread z, thread y, thread x)` over
a box of blocks: the whole grid when the kernel has no barrier and no shared memory, else
boxes of a bounded number of lanes (`boxes`), each with its own copy of shared memory per
block. Running a box's blocks in lockstep is one valid schedule of independent blocks,
and a barrier holds because every op finishes on all lanes before the next one starts. A
per-lane value is a NumPy array *broadcastable* to the lane shape, so values that depend
on the thread x index only stay as small as one block row; a value the same for every
lane is a plain Python int, bool or NumPy scalar.

Index values that are affine in the thread and block indices (`block_id * block_dim +
thread_id`, plus constants and loop counters) stay symbolic (`Affine`) until something
needs their lanes: comparisons with a uniform bound are decided from their range, and a
load or store whose indices are all affine becomes a strided *view* of the buffer with no
index array at all. That is what keeps an elementwise kernel within a small factor of
`numpy.add`.

Integer semantics: the binary integer ops are `semantics`' definitions, computed with
NumPy alone (`numpy_semantics`, bit for bit the same) on arrays held in their width's
dtype and on uniform values, except index
arithmetic affine in the lanes, kept exact and symbolic (`Affine`, 64 bits). Division by
zero, shifts by the width or more, and float-to-int conversions of NaN or out-of-range
values are errors, not garbage. Lanes a mask turns off never touch memory and never fault.

One concept, kept whole: this module is the run-time library of the NumPy backend's
generated code, which reaches every name in it as `lanes.<name>` (`numpy_backend.py`). Its
parts — the lane space and `Affine` values, integer and float ops, `Faults`, control flow
(`branch`, `merge`, `ForLoop`, `WhileLoop`, `Switch`, `barrier`) and memory access (`dim`,
`load`, `store`) — each work on the lane values the others make and read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import SSAValue

from .. import numpy_semantics, scalar_ops
from .common import (
    BARRIER_MESSAGE,
    STEP_MESSAGE,
    Kernel,
    dim_message,
    fptoi_message,
    wrap_int,
)

Array = np.ndarray[Any, Any]
Value = Any
"""A lane value: int | bool | NumPy scalar (uniform), `Affine`, or an array."""


class Lanes:
    """The threads one vectorised step covers: a box of blocks of the grid, as six axes
    `(block z, block y, block x, thread z, thread y, thread x)` (see the module docstring).
    """

    __slots__ = ("_aranges", "block", "grid", "ndim", "origin", "shape")

    def __init__(
        self,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        origin: tuple[int, int, int] = (0, 0, 0),
        extent: tuple[int, int, int] | None = None,
    ) -> None:
        self.grid = grid
        self.block = block
        self.origin = origin
        """Index (x, y, z) of the box's first block."""
        ex, ey, ez = extent or grid
        self.shape = (ez, ey, ex, block[2], block[1], block[0])
        self.ndim = 6
        self._aranges: dict[int, Array] = {}

    def basis(self, axis: int) -> int | Affine:
        """The lane coordinate along `axis` (0 when that axis has one lane)."""
        if self.shape[axis] == 1:
            return 0
        coeffs = [0] * self.ndim
        coeffs[axis] = 1
        return Affine(self, tuple(coeffs), 0)

    def thread_id(self, dim: int) -> int | Affine:
        return self.basis(5 - dim)

    def block_id_of(self, dim: int) -> int | Affine:
        return addi(self.basis(2 - dim), self.origin[dim], 64)

    def local_block_ids(self) -> tuple[int | Affine, ...]:
        """The block's (z, y, x) position inside the box: indexes its shared memory."""
        return self.basis(0), self.basis(1), self.basis(2)

    def arange(self, axis: int) -> Array:
        found = self._aranges.get(axis)
        if found is None:
            shape = [1] * self.ndim
            shape[axis] = self.shape[axis]
            found = np.arange(self.shape[axis], dtype=np.int64).reshape(shape)
            self._aranges[axis] = found
        return found

    def locate(self, pos: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(block index, thread index), each as (x, y, z), of the lane at `pos`."""
        p = [int(i) for i in pos]
        x0, y0, z0 = self.origin
        return (x0 + p[2], y0 + p[1], z0 + p[0]), (p[5], p[4], p[3])

    def first_lane(self, mask: Array | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The first active lane of `mask` (every lane when None)."""
        if mask is None:
            return self.locate([0] * self.ndim)
        return self.locate(_first_true(mask))


BOX_LANES = 1 << 20
"""Lanes per step (bounds the memory a launch uses, however large its grid)."""
BOX_SHARED_BYTES = 1 << 27
"""Shared memory per step for kernels with shared memory."""


def boxes(
    grid: tuple[int, int, int], block: tuple[int, int, int], shared_bytes: int
) -> Iterator[Lanes]:
    """The grid cut into boxes of blocks, each small enough to run as one step.

    Blocks are independent, so running several in lockstep is a valid schedule; a barrier
    holds because every op finishes on all lanes before the next starts.
    """
    threads = block[0] * block[1] * block[2]
    limit = max(1, min(BOX_LANES // threads, BOX_SHARED_BYTES // max(1, shared_bytes)))
    cx = min(grid[0], limit)
    cy = min(grid[1], max(1, limit // cx)) if cx == grid[0] else 1
    cz = min(grid[2], max(1, limit // (cx * cy))) if cy == grid[1] else 1
    for z in range(0, grid[2], cz):
        for y in range(0, grid[1], cy):
            for x in range(0, grid[0], cx):
                extent = (min(cx, grid[0] - x), min(cy, grid[1] - y), min(cz, grid[2] - z))
                yield Lanes(grid, block, (x, y, z), extent)


class Affine:
    """An index value `offset + sum(coeffs[k] * lane coordinate k)` over a `Lanes` space."""

    __slots__ = ("coeffs", "lanes", "offset")

    def __init__(self, lanes: Lanes, coeffs: tuple[int, ...], offset: int) -> None:
        self.lanes = lanes
        self.coeffs = coeffs
        self.offset = offset

    def materialize(self) -> Array:
        out: Array | None = None
        for axis, c in enumerate(self.coeffs):
            if c:
                term = self.lanes.arange(axis) * c if c != 1 else self.lanes.arange(axis)
                out = term if out is None else out + term
        assert out is not None  # an Affine has a non-zero coefficient by construction
        return out + self.offset if self.offset else out

    def bounds(self) -> tuple[int, int]:
        lo = hi = self.offset
        for c, ext in zip(self.coeffs, self.lanes.shape, strict=True):
            span = c * (ext - 1)
            lo += min(0, span)
            hi += max(0, span)
        return lo, hi


def _affine(lanes: Lanes, coeffs: Sequence[int], offset: int) -> int | Affine:
    if any(coeffs):
        return Affine(lanes, tuple(coeffs), wrap_int(offset, 64))
    return wrap_int(offset, 64)


def arr(x: Value) -> Value:
    """`x` with an `Affine` turned into its lane array."""
    return x.materialize() if isinstance(x, Affine) else x


def is_uniform(x: Value) -> bool:
    return not isinstance(x, np.ndarray | Affine)


def _first_true(mask: Array) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), mask.shape))


def _where(cond: Value, x: Value, y: Value, dtype: np.dtype[Any] | None) -> Value:
    """`np.where` whose result has `dtype` (uniform Python ints would make it int64)."""
    out = cast(Any, np.where(cond, x, y))
    return out if dtype is None else out.astype(dtype, copy=False)


def _pad(shape: tuple[int, ...], ndim: int) -> tuple[int, ...]:
    return (1,) * (ndim - len(shape)) + shape


# ---------------------------------------------------------------- integer arithmetic


def _affine_parts(x: Value) -> tuple[tuple[int, ...] | None, int] | None:
    if isinstance(x, Affine):
        return x.coeffs, x.offset
    if isinstance(x, int):
        return None, x
    return None


def addi(x: Value, y: Value, width: int, sign: int = 1) -> Value:
    """`arith.addi` (sign=1) and `arith.subi` (sign=-1): exact affine arithmetic on
    index values affine in the lanes (`Affine`, wrapped at 64 bits like the definition),
    else `semantics`' definition."""
    if width == 64 and (isinstance(x, Affine) or isinstance(y, Affine)):
        px, py = _affine_parts(x), _affine_parts(y)
        if px is not None and py is not None:
            lanes = x.lanes if isinstance(x, Affine) else y.lanes
            zero = (0,) * lanes.ndim
            cx, cy = px[0] or zero, py[0] or zero
            coeffs = [a + sign * b for a, b in zip(cx, cy, strict=True)]
            return _affine(lanes, coeffs, px[1] + sign * py[1])
    return integer("arith.addi" if sign == 1 else "arith.subi", x, y, width)


def muli(x: Value, y: Value, width: int) -> Value:
    """`arith.muli`: exact affine arithmetic on `Affine` index values (as `addi`), else
    `semantics`' definition."""
    if width == 64:
        if isinstance(x, Affine) and type(y) is int:
            return _affine(x.lanes, [c * y for c in x.coeffs], x.offset * y)
        if isinstance(y, Affine) and type(x) is int:
            return _affine(y.lanes, [c * x for c in y.coeffs], y.offset * x)
    return integer("arith.muli", x, y, width)


def _unsigned(x: Value, width: int) -> Value:
    if is_uniform(x):
        return int(x) & ((1 << width) - 1)
    out: Value = x.astype(f"u{width // 8}") if width > 1 else x
    return out


_SIGNED_FORM = {1: np.dtype(np.int8), 8: np.dtype(np.int8), 16: np.dtype(np.int16),
                32: np.dtype(np.int32), 64: np.dtype(np.int64)}  # fmt: skip
"""The dtype holding `width`-bit lanes in signed form (i1 true as -1) for `semantics`."""


def _signed_form(x: Value, width: int) -> Value:
    """Lane values as `semantics`' integer definitions take them: uniform ones as Python
    ints, arrays in their width's dtype; i1 true is -1."""
    x = arr(x)
    if is_uniform(x):
        return -int(bool(x)) if width == 1 else int(x)
    if width == 1:
        return np.negative(np.asarray(x, dtype=np.int8))
    return np.asarray(x, dtype=_SIGNED_FORM[width])


def _from_signed_form(out: Value, width: int, uniform: bool) -> Value:
    if uniform:
        return int(out) != 0 if width == 1 else int(out)
    return out != 0 if width == 1 else out


def integer(name: str, x: Value, y: Value, width: int) -> Value:
    """The binary integer op `name` of `semantics` (its one definition) on lanes."""
    a, b = _signed_form(x, width), _signed_form(y, width)
    uniform = is_uniform(a) and is_uniform(b)
    out = numpy_semantics.INT_BINARY[name](a, b, width)
    if not uniform:
        out = out.astype(_SIGNED_FORM[width], copy=False)
    return _from_signed_form(out, width, uniform)


def bitwise(op: str, x: Value, y: Value, width: int) -> Value:
    """`arith.andi/ori/xori` (also on i1)."""
    return integer(f"arith.{op}i", x, y, width)


def minmax(op: str, x: Value, y: Value, width: int) -> Value:
    """`arith.maxsi/minsi/maxui/minui`; an affine operand whose range lies wholly on one
    side of the other's is decided by range, and stays affine when it is the result (a
    clamp `min(row, rows - 1)` that never bites keeps a load a view)."""
    if isinstance(x, Affine) or isinstance(y, Affine):
        x_first = _cmp_ranges("sle" if op[-2] == "s" else "ule", _range(x), _range(y))
        if x_first is not None:
            return x if x_first == op.startswith("min") else y
    return integer(f"arith.{op}", x, y, width)


def _widen_i1(x: Value, signed: bool) -> Value:
    """An i1 value as a wider integer: -1 for true when read as signed, else 1."""
    if is_uniform(x):
        return -int(bool(x)) if signed else int(bool(x))
    wide = x.astype(np.int8)
    return -wide if signed else wide


class Faults:
    """Reports the first faulting active lane of a vectorised op."""

    __slots__ = ("kernel", "lanes", "mask")

    def __init__(self, kernel: Kernel, lanes: Lanes, mask: Array | None) -> None:
        self.kernel = kernel
        self.lanes = lanes
        self.mask = mask

    def check_kinds(self, site: int, kinds: Array, op: str, width: int) -> None:
        """Raise the message of the fault kind (`semantics.int_fault`'s) of integer op
        `op` for the first active lane whose kind is not 0."""
        bad = kinds != 0
        if self.mask is not None:
            bad = bad & self.mask
        if bad.any():
            first = _first_true(bad)
            kind = int(np.broadcast_to(kinds, bad.shape)[first])
            block, thread = self.lanes.locate(_pad(first, self.lanes.ndim))
            message = scalar_ops.fault_message(kind, op, width)
            raise self.kernel.error(site, message, block, thread)

    def check(self, site: int, bad: Value, message: str) -> None:
        """Raise when `bad` (per lane or uniform) holds for an active lane."""
        if is_uniform(bad):
            if bad:
                block, thread = self.lanes.first_lane(self.mask)
                raise self.kernel.error(site, message, block, thread)
            return
        if self.mask is not None:
            bad = bad & self.mask
        if bad.any():
            pos = _pad(_first_true(bad), self.lanes.ndim)
            block, thread = self.lanes.locate(pos)
            raise self.kernel.error(site, message, block, thread)


def checked(f: Faults, site: int, op: str, x: Value, y: Value, width: int, flags: int = 0) -> Value:
    """A binary integer op with undefined behaviour (a division, a shift, an op with
    `nsw`/`nuw` flags, `flags` as `scalar_ops.flag_bits`): the first active lane for which
    `semantics`' `int_fault` finds some is a located error, else the op's result."""
    a, b = _signed_form(x, width), _signed_form(y, width)
    code = scalar_ops.fault_code(op)
    kinds = numpy_semantics.int_fault(code, flags, a, b, width)
    if is_uniform(a) and is_uniform(b):
        kind = int(kinds)
        if kind:
            f.check(site, True, scalar_ops.fault_message(kind, op, width))
    else:
        f.check_kinds(site, kinds, op, width)
    return integer(f"arith.{op}", x, y, width)


_CMP = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def cmpi(pred: str, x: Value, y: Value, width: int) -> Value:
    """`arith.cmpi`; affine operands compared with a uniform one are decided by range."""
    if isinstance(x, Affine) or isinstance(y, Affine):
        decided = _cmp_ranges(pred, _range(x), _range(y))
        if decided is not None:
            return decided
    x, y = arr(x), arr(y)
    key = pred if pred in ("eq", "ne") else pred[1:]
    if pred[0] == "u":
        x, y = _unsigned(x, width), _unsigned(y, width)
    if is_uniform(x) and is_uniform(y):
        return bool(_CMP[key](x, y))
    return _CMP[key](x, y)


def _range(x: Value) -> tuple[int, int] | None:
    if isinstance(x, Affine):
        return x.bounds()
    if type(x) is int:
        return x, x
    return None


def _cmp_ranges(pred: str, rx: tuple[int, int] | None, ry: tuple[int, int] | None) -> bool | None:
    if rx is None or ry is None:
        return None
    (xl, xh), (yl, yh) = rx, ry
    if pred[0] == "u" and min(xl, yl) < 0:
        return None
    key = pred if pred in ("eq", "ne") else pred[1:]
    if key in ("eq", "ne"):
        if xh < yl or yh < xl:
            return key == "ne"
        return None
    if key in ("gt", "ge"):
        (xl, xh), (yl, yh) = (yl, yh), (xl, xh)
        key = "lt" if key == "gt" else "le"
    strict = key == "lt"
    if (xh < yl) if strict else (xh <= yl):
        return True
    if (xl >= yh) if strict else (xl > yh):
        return False
    return None


def select(c: Value, x: Value, y: Value, dtype: np.dtype[Any]) -> Value:
    if is_uniform(c):
        return x if c else y
    return _where(c, arr(x), arr(y), dtype)


def int_cast(x: Value, src: int, dst: int, zero_extend: bool) -> Value:
    """`index_cast`, `extsi`, `extui`, `trunci`."""
    if isinstance(x, Affine) and dst == 64 and not zero_extend:
        return x
    x = arr(x)
    if is_uniform(x):
        v = int(x)
        if zero_extend or src == 1:
            v &= (1 << src) - 1
            if src == 1 and not zero_extend:
                v = -v
        return wrap_int(v, dst)
    if src == 1 and not zero_extend:
        x = -(x.astype(np.int8))
    elif zero_extend and dst > src:
        x = _unsigned(x, src)
    return x.astype(f"i{dst // 8}") if dst > 1 else (x & 1).astype(np.bool_)


def to_float(x: Value, src: int, dtype: np.dtype[Any], unsigned: bool) -> Value:
    """`arith.sitofp` / `arith.uitofp`, rounded once (`scalar_ops.int_to_float`)."""
    x = arr(x)
    if is_uniform(x):
        v = int(x) & ((1 << src) - 1)
        if not unsigned and v >> (src - 1):
            v -= 1 << src
        return scalar_ops.int_to_float(v, dtype)
    if src == 1:
        x = _widen_i1(x, not unsigned)
    elif unsigned:
        x = _unsigned(x, src)
    # NumPy converts 64-bit integers to f32 with one rounding (a C cast).
    return x.astype(dtype)


def to_int(f: Faults, site: int, x: Value, width: int, unsigned: bool = False) -> Value:
    """`arith.fptosi` / `arith.fptoui`: truncates toward zero; NaN and values whose
    truncation is outside the result's range are errors."""
    if unsigned:
        lo, hi = 0.0, 2.0**width
    else:
        lo, hi = -(2.0 ** (width - 1)), 2.0 ** (width - 1)
    uniform = is_uniform(x)
    t = np.trunc(np.asarray(x, dtype=np.float64))  # every float widens to f64 exactly
    bad = ~((t >= lo) & (t < hi))
    f.check(
        site,
        bool(bad) if uniform else bad,
        fptoi_message("fptoui" if unsigned else "fptosi", width),
    )
    if uniform:
        return wrap_int(int(t), width)
    t = np.where(bad, 0, t)
    if width == 1:
        return t != 0
    if unsigned and width == 64:
        return t.astype(np.uint64).view(np.int64)
    return t.astype(np.int64).astype(f"i{width // 8}")


def int_op(fn: Any, width: int, xs: Sequence[Value], *extra: Any) -> Value:
    """An integer op of `semantics` (a ufunc over int64 values and the width) on lanes."""
    wide = [np.asarray(arr(x)).astype(np.int64) for x in xs]
    out = fn(*wide, width, *extra)
    if all(is_uniform(arr(x)) for x in xs):
        return wrap_int(int(out), width)
    if width == 1:
        return (out & 1) != 0
    return out.astype(f"i{width // 8}")


def mul_extended(high: Any, x: Value, y: Value, width: int, signed: bool) -> tuple[Value, Value]:
    """`arith.mulsi_extended` / `mului_extended`: the low and high halves of the product."""
    low = muli(x, y, width)
    return low, int_op(high, width, (x, y), signed)


def add_extended(carry: Any, x: Value, y: Value, width: int) -> tuple[Value, Value]:
    """`arith.addui_extended`: the wrapped sum and whether the unsigned sum overflowed."""
    total = addi(x, y, width)
    if width == 1:
        return total, bitwise("and", x, y, 1)
    c = int_op(carry, width, (x, y))
    return total, (c != 0) if not is_uniform(c) else bool(c)


def bitcast(x: Value, src: np.dtype[Any], dst: np.dtype[Any]) -> Value:
    """`arith.bitcast`: the same bits read as `dst`."""
    x = arr(x)
    if is_uniform(x):
        out = np.array(x, dtype=src).view(dst)[()]
        return int(out) if dst.kind in "iu" else out
    return np.asarray(x, dtype=src).view(dst)


def float_op(fn: Any, narrow: str | None, *xs: Value) -> Value:
    """A float op of `semantics` on lanes; for a narrow format (`narrow`: "f16", "bf16")
    computed in f64 and rounded once to it (bf16 values are held in f32)."""
    if narrow is None:
        return fn(*xs)
    return round_to(narrow, fn(*(np.asarray(x, dtype=np.float64) for x in xs)), xs)


def round_to(narrow: str, out: Any, xs: Sequence[Value] = ()) -> Value:
    """f64 values `out` rounded once to `narrow` ("f16": NumPy's rounding; "bf16":
    `semantics`', held in f32); uniform when every `xs` is."""
    uniform = all(is_uniform(x) for x in xs) and np.ndim(out) == 0
    if narrow == "f16":
        return np.float16(out) if uniform else np.asarray(out).astype(np.float16)
    from .. import semantics  # here, not at the top: it loads Numba

    rounded = semantics.narrow_ufuncs("bf16")[0](np.asarray(out, dtype=np.float64))
    return np.float32(rounded) if uniform else np.asarray(rounded).astype(np.float32)


def bf16_values(bits: Value) -> Value:
    """bf16 values (f32) of bit patterns loaded from memory."""
    if is_uniform(bits):
        return scalar_ops.bf16_value_of_bits(bits)
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def bf16_bits(x: Value) -> Value:
    """The bit patterns of bf16 values (f32) to store (NaN as the quiet NaN)."""
    x = arr(x)
    if is_uniform(x):
        return scalar_ops.bf16_bits_of_value(x)
    u = np.asarray(x, dtype=np.float32).view(np.uint32)
    top = u >> np.uint32(16)
    lost = np.isnan(x) & ((top & np.uint32(0x7F)) == 0)  # a payload only in the low half
    return np.where(lost, top | np.uint32(0x40), top).astype(np.uint16)


def int_to_bf16(x: Value, src: int, unsigned: bool) -> Value:
    """`sitofp`/`uitofp` to bf16, rounded once (an f64 first would round twice)."""
    x = arr(x)
    if is_uniform(x):
        v = int(x) & ((1 << src) - 1)
        if not unsigned and v >> (src - 1):
            v -= 1 << src
        return np.float32(scalar_ops.int_to_float(v, np.dtype(np.float32), precision=8))
    wide = _widen_i1(x, not unsigned) if src == 1 else _unsigned(x, src) if unsigned else x
    values = np.asarray(wide)
    values = values.astype(np.uint64).view(np.int64) if unsigned else values.astype(np.int64)
    from .. import semantics  # here, not at the top: it loads Numba

    return semantics.int_round_ufunc()(values, 8, unsigned and src == 64).astype(np.float32)


def float_cast(x: Value, dtype: np.dtype[Any]) -> Value:
    """`arith.extf` / `arith.truncf`."""
    return dtype.type(x) if is_uniform(x) else x.astype(dtype)


def absi(x: Value, width: int) -> Value:
    x = arr(x)
    return wrap_int(abs(int(x)), width) if is_uniform(x) else np.abs(x)


# ---------------------------------------------------------------- control flow


def branch(lanes: Lanes, mask: Array | None, cond: Value) -> tuple[Any, Any, bool, bool]:
    """Masks and run flags of the two regions of an `scf.if`.

    Returns (then mask, else mask, run then, run else); a mask covering every lane is None
    so that the region runs without masking.
    """
    if is_uniform(cond):
        return mask, mask, bool(cond), not cond
    then_mask = _restrict(lanes, mask, cond)
    else_mask = _restrict(lanes, mask, ~cond)
    return then_mask, else_mask, then_mask is not False, else_mask is not False


def _restrict(lanes: Lanes, mask: Array | None, cond: Array) -> Array | bool | None:
    """`mask & cond`: None when every lane, False when no lane is active."""
    new = cond if mask is None else (mask & cond)
    if new.all():
        return None if new.shape == lanes.shape or mask is None else new
    if not new.any():
        return False
    return new


def merge(cond: Value, ran_then: bool, ran_else: bool, x: Value, y: Value, dtype: Any) -> Value:
    """An `scf.if` result: the then value where `cond` holds, else the else value."""
    if not ran_else:
        return x
    if not ran_then:
        return y
    return _where(cond, arr(x), arr(y), dtype)


class ForLoop:
    """Iteration of an `scf.for` whose bounds may differ between lanes.

    With uniform bounds it is a plain counted loop under the enclosing mask. Otherwise
    every lane runs to its own bound: the loop continues while any active lane is in
    range, and each iteration runs under the mask of lanes still in range (iteration
    arguments of finished lanes keep their values).
    """

    __slots__ = ("active", "lanes", "mask", "step", "ub", "uniform")

    def __init__(
        self, f: Faults, site: int, lanes: Lanes, mask: Array | None, lb: Value, ub: Value,
        step: Value,
    ) -> None:  # fmt: skip
        step = arr(step)
        f.check(site, step <= 0, STEP_MESSAGE)
        self.lanes = lanes
        self.mask = mask
        self.ub = arr(ub)
        self.step = step
        self.uniform = is_uniform(lb) and is_uniform(ub) and is_uniform(step)
        self.active: Any = mask

    def more(self, iv: Value) -> bool:
        if self.uniform:
            return iv < self.ub
        active = _restrict(self.lanes, self.mask, np.less(arr(iv), self.ub))
        self.active = active
        return active is not False

    def merge(self, new: Value, old: Value, dtype: Any) -> Value:
        if self.uniform or self.active is None:
            return new
        return _where(self.active, arr(new), arr(old), dtype)

    def next(self, iv: Value) -> Value:
        if self.uniform:
            return iv + self.step
        return addi(iv, self.step, 64)


class WhileLoop:
    """Iteration of an `scf.while` whose condition may differ between lanes.

    Every active lane runs the `before` region; the lanes whose condition is false leave
    the loop there, each with the values its `scf.condition` forwards as the loop's
    results, and the others run the `after` region and come round again. The loop ends
    when no lane is left. `active` is the mask of the lanes still looping (None: every
    lane, False: none); a condition the same in every lane keeps values uniform.
    """

    __slots__ = ("active", "lanes")

    def __init__(self, lanes: Lanes, mask: Array | None) -> None:
        self.lanes = lanes
        self.active: Any = mask

    def leave(
        self, cond: Value, forwarded: Sequence[Value], results: Sequence[Value],
        dtypes: Sequence[Any],
    ) -> tuple[Value, ...]:  # fmt: skip
        """The loop's results once the lanes whose `cond` is false have left with
        `forwarded` (`results` holds those of the lanes that left before, None for none);
        `active` becomes the lanes that stay."""
        cond = arr(cond)
        active = self.active
        if is_uniform(cond):
            if cond:
                return tuple(results)
            leaving: Any = active
            self.active = False
        else:
            leaving = _restrict(self.lanes, active, ~cond)
            self.active = _restrict(self.lanes, active, cond)
            if leaving is False:
                return tuple(results)
        return tuple(
            new if old is None or leaving is None else _where(leaving, arr(new), arr(old), dt)
            for new, old, dt in zip(forwarded, results, dtypes, strict=True)
        )


class Switch:
    """The lanes taking each region of an `scf.index_switch`: `masks[k]` and `runs[k]` for
    case k, the default region last (a region no lane takes does not run)."""

    __slots__ = ("masks", "picks", "runs")

    def __init__(self, lanes: Lanes, mask: Array | None, x: Value, cases: Sequence[int]) -> None:
        x = arr(x)
        if is_uniform(x):
            k = cases.index(x) if x in cases else len(cases)
            self.masks: list[Any] = [mask] * (len(cases) + 1)
            self.runs = [i == k for i in range(len(cases) + 1)]
            self.picks: list[Any] = [i == k for i in range(len(cases) + 1)]
            return
        picks: list[Any] = [x == c for c in cases]
        rest: Any = np.ones(np.shape(x), dtype=np.bool_)
        for p in picks:
            rest = rest & ~p
        picks.append(rest)
        self.picks = picks
        self.masks = [_restrict(lanes, mask, p) for p in picks]
        self.runs = [m is not False for m in self.masks]

    def merge(self, values: Sequence[Value], dtype: Any) -> Value:
        """A result: each lane's value from the region it took."""
        out: Value = None
        for value, pick, ran in zip(values, self.picks, self.runs, strict=True):
            if not ran:
                continue
            if out is None or (is_uniform(pick) and pick):
                out = value
            else:
                out = _where(pick, arr(value), arr(out), dtype)
        return out


def barrier(f: Faults, site: int, mask: Array | None) -> None:
    """`kernel.barrier`: every lane of the block runs each op together, so a barrier is
    a no-op — unless some threads of the block do not reach it."""
    if mask is None:
        return
    active = np.broadcast_to(mask, f.lanes.shape)
    # Blocks no lane of which is here are fine (they took another path as a whole).
    missing = active.any(axis=(3, 4, 5), keepdims=True) & ~active
    if missing.any():
        block, thread = f.lanes.locate(_first_true(missing))
        raise f.kernel.error(site, BARRIER_MESSAGE, block, thread)


def dim(f: Faults, site: int, mem: Array, d: Value, skip: int = 0) -> Value:
    """`memref.dim` (`skip` leading axes are per-block copies of shared memory)."""
    d = arr(d)
    rank = mem.ndim - skip
    if is_uniform(d):
        f.check(site, d < 0 or d >= rank, dim_message(int(d), rank))
        return mem.shape[int(d) + skip]
    bad = (d < 0) | (d >= rank)
    if f.mask is not None:
        bad = bad & f.mask
    if bad.any():
        pos = _pad(_first_true(bad), f.lanes.ndim)
        block, thread = f.lanes.locate(pos)
        value = int(np.broadcast_to(d, bad.shape)[_first_true(bad)])
        raise f.kernel.error(site, dim_message(value, rank), block, thread)
    sizes = np.asarray(mem.shape[skip:], dtype=np.int64)
    return sizes[np.where((d < 0) | (d >= rank), 0, d)]


def _affine_view(f: Faults, site: int, buffer: SSAValue, mem: Array, idx: Sequence[Value]) -> Array:
    sliced = _sliced_view(f.lanes, mem, idx)
    if sliced is not None:
        return sliced
    lanes = f.lanes
    strides = [0] * lanes.ndim
    used = [False] * lanes.ndim
    start: list[int] = []
    for d, i in enumerate(idx):
        lo, hi = i.bounds() if isinstance(i, Affine) else (i, i)
        if lo < 0 or hi >= mem.shape[d]:
            _report_oob(f, site, buffer, mem, idx)
        if isinstance(i, Affine):
            for k, c in enumerate(i.coeffs):
                if c:
                    strides[k] += c * mem.strides[d]
                    used[k] = True
            start.append(i.offset)
        else:
            start.append(int(i))
    base = mem[tuple(slice(s, s + 1) for s in start)]
    shape = tuple(e if u else 1 for e, u in zip(lanes.shape, used, strict=True))
    return as_strided(base, shape=shape, strides=strides)


def _sliced_view(lanes: Lanes, mem: Array, idx: Sequence[Value]) -> Array | None:
    """The view `_affine_view` makes, by basic slicing, when each affine index steps
    forward along one lane axis of its own, the axes in the order of the memory's
    dimensions, and every index stays in bounds (a kernel's row or column: as_strided
    costs some ten times more, in a loop that loads once per iteration); else None."""
    keys: list[int | slice] = []
    shape = [1] * lanes.ndim
    last = -1
    for i, n in zip(idx, mem.shape, strict=True):
        if not isinstance(i, Affine):
            if not 0 <= i < n:
                return None
            keys.append(int(i))
            continue
        axis = -1
        for k, (c, extent) in enumerate(zip(i.coeffs, lanes.shape, strict=True)):
            if c and extent > 1:
                if axis >= 0:
                    return None
                axis = k
        if axis <= last:  # (also an index that steps along no axis of more than one lane)
            return None
        step, extent = i.coeffs[axis], lanes.shape[axis]
        end = i.offset + step * (extent - 1)
        if step < 0 or i.offset < 0 or end >= n:
            return None
        keys.append(slice(i.offset, end + 1, step))
        shape[axis] = extent
        last = axis
    return mem[tuple(keys)].reshape(shape)


def _report_oob(f: Faults, site: int, buffer: SSAValue, mem: Array, idx: Sequence[Value]) -> None:
    """Raise the out-of-bounds error for the first active lane whose index is outside
    (return when only masked-off lanes are)."""
    lanes = f.lanes
    full = [np.broadcast_to(arr(i), lanes.shape) for i in idx]
    bad = np.zeros(lanes.shape, dtype=np.bool_)
    for d, i in enumerate(full):
        bad |= (i < 0) | (i >= mem.shape[d])
    if f.mask is not None:
        bad &= f.mask
    if not bad.any():
        return
    pos = _first_true(bad)
    block, thread = lanes.locate(pos)
    skip = len(idx) - _rank(buffer)  # shared memory: the block's own copy is not shown
    index = [int(i[pos]) for i in full][skip:]
    raise f.kernel.oob_error(site, buffer, index, mem.shape[skip:], block, thread)


def _rank(buffer: SSAValue) -> int:
    type_ = buffer.type
    assert isinstance(type_, MemRefType)
    return len(type_.get_shape())


def _check_gather(f: Faults, site: int, buffer: SSAValue, mem: Array, idx: Sequence[Value]) -> None:
    for d, i in enumerate(idx):
        n = mem.shape[d]
        if (i < 0 or i >= n) if is_uniform(i) else (i.min() < 0 or i.max() >= n):
            _report_oob(f, site, buffer, mem, idx)
            return


def load(
    f: Faults,
    site: int,
    buffer: SSAValue,
    mem: Array,
    idx: Sequence[Value],
    view_ok: bool,
    shared: bool = False,
) -> Value:
    """`memref.load` for every active lane: a scalar, a strided view, or a gather.

    Shared memory has one copy per block of the box: its first three indices are the
    block's place in the box.
    """
    if shared:
        idx = (*f.lanes.local_block_ids(), *idx)
    if all(type(i) is int for i in idx):
        if any(i < 0 or i >= n for i, n in zip(idx, mem.shape, strict=True)):
            _report_oob(f, site, buffer, mem, idx)
        value = mem[tuple(idx)]
        return value.item() if mem.dtype.kind in "ib" else value
    if f.mask is None and not any(isinstance(i, np.ndarray) for i in idx):
        view = _affine_view(f, site, buffer, mem, idx)
        return view if view_ok else view.copy()
    arrays = [arr(i) for i in idx]
    if f.mask is None:
        _check_gather(f, site, buffer, mem, arrays)
        return mem[tuple(arrays)]
    shape = np.broadcast_shapes(f.mask.shape, *(np.shape(a) for a in arrays))
    active = np.broadcast_to(f.mask, shape)
    picked = [np.broadcast_to(a, shape)[active] for a in arrays]
    _check_gather(f, site, buffer, mem, arrays)
    out = np.zeros(shape, dtype=mem.dtype)
    out[active] = mem[tuple(picked)]
    return out


def store(
    f: Faults,
    site: int,
    buffer: SSAValue,
    mem: Array,
    idx: Sequence[Value],
    value: Value,
    shared: bool = False,
) -> None:
    """`memref.store` for every active lane (when lanes collide, the last lane wins)."""
    if shared:
        idx = (*f.lanes.local_block_ids(), *idx)
    value = arr(value)
    if f.mask is None and not any(isinstance(i, np.ndarray) for i in idx):
        if all(type(i) is int for i in idx):
            if any(i < 0 or i >= n for i, n in zip(idx, mem.shape, strict=True)):
                _report_oob(f, site, buffer, mem, idx)
            mem[tuple(idx)] = value if is_uniform(value) else value.reshape(-1)[-1]
            return
        view = _affine_view(f, site, buffer, mem, idx)
        if not is_uniform(value) and value.shape != view.shape:
            keep = tuple(
                slice(-1, None) if w == 1 and v > 1 else slice(None)
                for w, v in zip(view.shape, _pad(value.shape, view.ndim), strict=True)
            )
            value = value.reshape(_pad(value.shape, view.ndim))[keep]
        view[...] = value
        return
    arrays = [arr(i) for i in idx]
    _check_gather(f, site, buffer, mem, arrays)
    if not arrays:  # a rank-0 memref under a mask: the last active lane's value wins
        assert f.mask is not None  # unmasked, the all-int path above took it
        shape = np.broadcast_shapes(np.shape(f.mask), np.shape(value))
        stored = np.broadcast_to(value, shape)[np.broadcast_to(f.mask, shape)]
        if stored.size:
            mem[()] = stored[-1]
        return
    shapes = [np.shape(a) for a in arrays] + [np.shape(value)]
    if f.mask is None:
        shape = np.broadcast_shapes(*shapes)
        mem[tuple(np.broadcast_to(a, shape) for a in arrays)] = np.broadcast_to(value, shape)
        return
    shape = np.broadcast_shapes(f.mask.shape, *shapes)
    active = np.broadcast_to(f.mask, shape)
    picked = tuple(np.broadcast_to(a, shape)[active] for a in arrays)
    mem[picked] = np.broadcast_to(value, shape)[active]


def store_computed(
    f: Faults,
    site: int,
    buffer: SSAValue,
    mem: Array,
    idx: Sequence[Value],
    shared: bool,
    ufunc: Any,
    *operands: Value,
) -> None:
    """`memref.store` of `ufunc(*operands)`: computed straight into the buffer when the
    indices make a strided view covering the value (the common elementwise case)."""
    lanes_idx = (*f.lanes.local_block_ids(), *idx) if shared else idx
    if (
        f.mask is None
        and not all(type(i) is int for i in lanes_idx)
        and not any(isinstance(i, np.ndarray) for i in lanes_idx)
        and not all(is_uniform(o) for o in operands)
    ):
        view = _affine_view(f, site, buffer, mem, lanes_idx)
        shape = np.broadcast_shapes(*(np.shape(o) for o in operands))
        if all(s in (1, v) for s, v in zip(_pad(shape, view.ndim), view.shape, strict=True)):
            ufunc(*operands, out=view)
            return
    store(f, site, buffer, mem, idx, ufunc(*operands), shared)
