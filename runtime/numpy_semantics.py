"""The binary integer ops of `arith` and `int_fault`, and the float min/max ops, written
with NumPy alone: the NumPy kernel backend and host code compute them here, so that a run
that needs no transcendental never imports Numba (building one Numba ufunc costs a
process 0.2-0.7 s of CPU, more than the rest of a small run). The transcendentals that
`semantics` defines as one call of the C library (`tanh`, `exp`, ...) are computed here
by calling that same C function on each element (`ctypes`), and `rsqrt` in NumPy, so
that a run of a small program using them does not import Numba either; `exp` of f32 is
arithmetic (`exp_f32`).

These are the definitions of `semantics` over whole arrays, bit for bit: operands and
results are integers of `width` bits in signed form (int64 values, or arrays of the
width's dtype; i1 true is -1), the same total results where the LangRef leaves the
behaviour undefined (every path reports those before it uses a result), and `int_fault`
numbers faults as `semantics` does. `tests/runtime/test_numpy_semantics.py` checks every
op against `semantics`' compiled definitions on all pairs of boundary values of each
width, and the overflow tests against exact Python integers too.

Computing over uint64 wraps as two's complement does; a signed result is the low `width`
bits sign-extended (shifted to the top of an int64 and back arithmetically).
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from . import scalar_ops

Array = np.ndarray[Any, Any]

_U64 = np.uint64
_I64 = np.int64


def _i64(x: Any) -> Array:
    return np.asarray(x).astype(np.int64)


def _u64(x: Any) -> Array:
    """The 64 bits of the signed-form `x` (sign-extended) as uint64."""
    return _i64(x).view(np.uint64)


def _to_signed(u: Array, width: int) -> Array:
    """The low `width` bits of the uint64 `u` in signed form (int64)."""
    if width < 64:
        shift = _U64(64 - width)
        return (u << shift).view(np.int64) >> _I64(64 - width)
    return u.view(np.int64)


def _unsigned_bits(x: Any, width: int) -> Array:
    u = _u64(x)
    if width < 64:
        u = u & ((_U64(1) << _U64(width)) - _U64(1))
    return u


def _safe(divisor: Array, bad: Array) -> Array:
    """`divisor` with 1 where `bad`: the lanes whose result is chosen otherwise."""
    return np.where(bad, np.ones_like(divisor), divisor)


def _addi(x: Any, y: Any, width: int) -> Array:
    return _to_signed(_u64(x) + _u64(y), width)


def _subi(x: Any, y: Any, width: int) -> Array:
    return _to_signed(_u64(x) - _u64(y), width)


def _muli(x: Any, y: Any, width: int) -> Array:
    return _to_signed(_u64(x) * _u64(y), width)


def _andi(x: Any, y: Any, width: int) -> Array:
    return _i64(x) & _i64(y)


def _ori(x: Any, y: Any, width: int) -> Array:
    return _i64(x) | _i64(y)


def _xori(x: Any, y: Any, width: int) -> Array:
    return _i64(x) ^ _i64(y)


def _maxsi(x: Any, y: Any, width: int) -> Array:
    return np.maximum(_i64(x), _i64(y))


def _minsi(x: Any, y: Any, width: int) -> Array:
    return np.minimum(_i64(x), _i64(y))


def _maxui(x: Any, y: Any, width: int) -> Array:
    keep = _unsigned_bits(x, width) >= _unsigned_bits(y, width)
    return np.where(keep, _i64(x), _i64(y))


def _minui(x: Any, y: Any, width: int) -> Array:
    keep = _unsigned_bits(x, width) <= _unsigned_bits(y, width)
    return np.where(keep, _i64(x), _i64(y))


def _signed_division(x: Any, y: Any, width: int, rounding: str) -> Array:
    """x / y rounded `rounding` ("trunc", "floor", "ceil"): 0 for y == 0, the wrapped
    negation for y == -1 (the minimum value stays itself)."""
    a, b = np.broadcast_arrays(_i64(x), _i64(y))
    zero, minus_one = b == 0, b == -1
    d = _safe(b, zero | minus_one)
    q = a // d  # floor
    if rounding != "floor":
        inexact = q * d != a
        q = q + ((q < 0) & inexact if rounding == "trunc" else inexact)
    negated = _to_signed(_U64(0) - a.view(np.uint64), width)
    return np.where(zero, _I64(0), np.where(minus_one, negated, q))


def _divsi(x: Any, y: Any, width: int) -> Array:
    return _signed_division(x, y, width, "trunc")


def _floordivsi(x: Any, y: Any, width: int) -> Array:
    return _signed_division(x, y, width, "floor")


def _ceildivsi(x: Any, y: Any, width: int) -> Array:
    return _signed_division(x, y, width, "ceil")


def _remsi(x: Any, y: Any, width: int) -> Array:
    a, b = np.broadcast_arrays(_i64(x), _i64(y))
    none = (b == 0) | (b == -1)
    d = _safe(b, none)
    r = a - _signed_division(a, d, width, "trunc") * d
    return np.where(none, _I64(0), r)


def _unsigned_division(x: Any, y: Any, width: int, op: str) -> Array:
    ux, uy = np.broadcast_arrays(_unsigned_bits(x, width), _unsigned_bits(y, width))
    zero = uy == 0
    d = _safe(uy, zero)
    if op == "rem":
        out = ux % d
    else:
        out = ux // d
        if op == "ceil":
            out = out + (out * d != ux).astype(np.uint64)
    return np.where(zero, _I64(0), _to_signed(out, width))


def _divui(x: Any, y: Any, width: int) -> Array:
    return _unsigned_division(x, y, width, "floor")


def _remui(x: Any, y: Any, width: int) -> Array:
    return _unsigned_division(x, y, width, "rem")


def _ceildivui(x: Any, y: Any, width: int) -> Array:
    return _unsigned_division(x, y, width, "ceil")


def _shift(x: Any, y: Any, width: int, op: str) -> Array:
    a, b = np.broadcast_arrays(_i64(x), _i64(y))
    wide = (b < 0) | (b >= width)
    amount = np.where(wide, _I64(0), b)
    if op == "shli":
        out = _to_signed(a.view(np.uint64) << amount.view(np.uint64), width)
    elif op == "shrsi":
        out = a >> amount
    else:
        out = _to_signed(_unsigned_bits(a, width) >> amount.view(np.uint64), width)
    return np.where(wide, _I64(0), out)


def _shli(x: Any, y: Any, width: int) -> Array:
    return _shift(x, y, width, "shli")


def _shrsi(x: Any, y: Any, width: int) -> Array:
    return _shift(x, y, width, "shrsi")


def _shrui(x: Any, y: Any, width: int) -> Array:
    return _shift(x, y, width, "shrui")


def _quiet(fn: Callable[..., Array]) -> Callable[..., Array]:
    """`fn` with NumPy's overflow warnings off: wrapping is the definition (and 0-d
    operands compute as NumPy scalars, which warn where arrays do not)."""

    def run(*args: Any) -> Array:
        with np.errstate(over="ignore"):
            return fn(*args)

    return run


_INT_BINARY: dict[str, Callable[[Any, Any, int], Array]] = {
    "arith.addi": _addi,
    "arith.subi": _subi,
    "arith.muli": _muli,
    "arith.andi": _andi,
    "arith.ori": _ori,
    "arith.xori": _xori,
    "arith.maxsi": _maxsi,
    "arith.minsi": _minsi,
    "arith.maxui": _maxui,
    "arith.minui": _minui,
    "arith.divsi": _divsi,
    "arith.remsi": _remsi,
    "arith.floordivsi": _floordivsi,
    "arith.ceildivsi": _ceildivsi,
    "arith.divui": _divui,
    "arith.remui": _remui,
    "arith.ceildivui": _ceildivui,
    "arith.shli": _shli,
    "arith.shrsi": _shrsi,
    "arith.shrui": _shrui,
}
INT_BINARY: dict[str, Callable[[Any, Any, int], Array]] = {
    name: _quiet(fn) for name, fn in _INT_BINARY.items()
}
"""`semantics.INT_BINARY_DEFS` over arrays: `(x, y, width) -> int64 result` in signed form."""

# ---------------------------------------------------------------- undefined behaviour
# The numbering of `semantics`: FAULTING_OPS = divisions (0-6), shifts (7-9), addi, subi,
# muli (10-12); fault kinds NO_FAULT 0, DIVIDES_BY_ZERO 1, QUOTIENT_OVERFLOWS 2,
# SHIFT_TOO_WIDE 3, NSW_OVERFLOW 4, NUW_OVERFLOW 5.

_I64_MIN, _I64_MAX = _I64(-(2**63)), _I64(2**63 - 1)


def _overflows64(op: int, unsigned: bool, x: Array, y: Array) -> Array:
    """Whether the 64-bit add (0), sub (1) or mul (2) of `x`, `y` overflows."""
    if unsigned:
        ux, uy = x.view(np.uint64), y.view(np.uint64)
        if op == 0:
            return ux > ~uy  # ux + uy > 2**64 - 1
        if op == 1:
            return ux < uy
        nonzero = ux != 0
        return nonzero & (uy > np.iinfo(np.uint64).max // _safe(ux, ~nonzero))
    if op == 0:
        return ((y > 0) & (x > _I64_MAX - y)) | ((y < 0) & (x < _I64_MIN - y))
    if op == 1:
        return ((y < 0) & (x > _I64_MAX + y)) | ((y > 0) & (x < _I64_MIN + y))
    # The wrapped product r is exact iff r / x is y with no remainder (x not 0 or -1,
    # decided apart: r // -1 itself overflows).
    special = (x == 0) | (x == -1)
    xs = _safe(x, special)
    r: Array = (x.view(np.uint64) * y.view(np.uint64)).view(np.int64)
    wrapped: Array = (r // xs != y) | (r % xs != 0)
    out: Array = np.where(special, (x == -1) & (y == _I64_MIN), wrapped)
    return out


def _overflows(op: int, unsigned: bool, x: Array, y: Array, width: int) -> Array:
    """Whether addi (0), subi (1), muli (2) or shli (3) of the signed-form `x`, `y` breaks
    nuw (`unsigned`) or nsw: its exact result does not fit in `width` bits."""
    if op == 3:
        wide = (y < 0) | (y >= width)
        amount = np.where(wide, _I64(0), y)
        r = _to_signed(x.view(np.uint64) << amount.view(np.uint64), width)
        if unsigned:
            back = _unsigned_bits(r, width) >> amount.view(np.uint64)
            lost = back != _unsigned_bits(x, width)
        else:
            lost = (r >> amount) != x
        return lost & ~wide
    if width == 64:
        return _overflows64(op, unsigned, x, y)
    if unsigned:  # below 2**32: the sum, difference and (in uint64) product are exact
        a, b = _unsigned_bits(x, width), _unsigned_bits(y, width)
        hi = _U64((1 << width) - 1)
        if op == 0:
            return a + b > hi
        if op == 1:
            return a < b
        return a * b > hi
    lo, hi = _I64(-(1 << (width - 1))), _I64((1 << (width - 1)) - 1)
    exact = x + y if op == 0 else x - y if op == 1 else x * y  # |x|, |y| <= 2**31: exact
    return (exact < lo) | (exact > hi)


def int_fault(code: int, flags: int, x: Any, y: Any, width: int) -> Array:
    """`semantics`' `int_fault` over arrays: the fault kind of op `code` (its number in
    `FAULTING_OPS`) per element, 0 for none; `flags` is 1 for nsw, 2 for nuw, 3 both."""
    with np.errstate(over="ignore"):
        return _int_fault(code, flags, x, y, width)


def _int_fault(code: int, flags: int, x: Any, y: Any, width: int) -> Array:
    a, b = np.broadcast_arrays(_i64(x), _i64(y))
    kinds = np.zeros(a.shape, dtype=np.int64)
    if code < 7:
        if code in (0, 2, 3):  # divsi, floordivsi, ceildivsi (not remsi)
            minimum = _I64(-(1 << (width - 1)))
            kinds[(b == -1) & (a == minimum)] = 2
        kinds[b == 0] = 1
        return kinds
    if code < 10:
        kinds[(b < 0) | (b >= width)] = 3
        if code != 7:
            return kinds
    op = 3 if code == 7 else code - 10
    checked = kinds == 0
    if flags & 2:
        kinds[checked & _overflows(op, True, a, b, width)] = 5
    if flags & 1:
        kinds[checked & _overflows(op, False, a, b, width)] = 4  # nsw is reported first
    return kinds


# ---------------------------------------------------------------- float min/max


def _arrays(x: Any, y: Any) -> tuple[Array, Array]:
    return np.asarray(x), np.asarray(y)


def _maximumf(x: Any, y: Any) -> Any:
    """NaN propagates (x's first), +0 above -0."""
    a, b = _arrays(x, y)
    larger: Array = np.where(a == b, np.where(np.signbit(a), b, a), np.where(a > b, a, b))
    out: Array = np.where(a != a, a, np.where(b != b, b, larger))
    return out[()]


def _minimumf(x: Any, y: Any) -> Any:
    a, b = _arrays(x, y)
    smaller: Array = np.where(a == b, np.where(np.signbit(a), a, b), np.where(a < b, a, b))
    out: Array = np.where(a != a, a, np.where(b != b, b, smaller))
    return out[()]


def _maxnumf(x: Any, y: Any) -> Any:
    a, b = _arrays(x, y)
    out: Array = np.where(a != a, b, np.where(b != b, a, _maximumf(a, b)))
    return out[()]


def _minnumf(x: Any, y: Any) -> Any:
    a, b = _arrays(x, y)
    out: Array = np.where(a != a, b, np.where(b != b, a, _minimumf(a, b)))
    return out[()]


FLOAT_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "arith.maximumf": _maximumf,
    "arith.minimumf": _minimumf,
    "arith.maxnumf": _maxnumf,
    "arith.minnumf": _minnumf,
}
"""Float ops of `semantics.DEFINED_OPS` NumPy computes exactly as their definitions do."""


# ---------------------------------------------------------------- f32 fma


_F32_MIDPOINT_BITS = (1 << 29) - 1, 1 << 28
"""The low 29 bits of an f64 (what rounding to f32's 24 bits drops, in f32's normal
range) and their value at a midpoint between two f32 values."""

_F32_TINY = float(np.finfo(np.float32).tiny)


def fma_f32(a: Any, b: Any, c: Any) -> Any:
    """`math.fma` of f32 values, with one rounding: the f64 product of two f32 values is
    exact (24 + 24 <= 53 bits); their f64 sum with `c` is rounded to odd (TwoSum finds
    what f64 rounding dropped, and an inexact sum with an even last bit moves one ulp
    toward the dropped part), which makes the rounding to f32 after it correct
    (53 >= 24 + 2 bits; f32's subnormals are normal in f64).

    Most sums need no rounding to odd: the f64 sum rounded to f32 is the exact sum
    rounded to f32 unless the f64 sum is exactly halfway between two f32 values (every
    such midpoint is an f64 value, so the exact sum and its f64 rounding lie on the same
    side of any other). When no element is a midpoint, a NaN, or below f32's normal range
    (where rounding drops more bits), that rounding is the result."""
    with np.errstate(invalid="ignore", over="ignore"):  # a signalling NaN quiets in f64
        return fma_f32_quiet(a, b, c)


def fma_f32_quiet(a: Any, b: Any, c: Any) -> Any:
    """`fma_f32` for a caller that already ignores floating-point errors
    (`np.errstate(all="ignore")`, as kernel launches do): a kernel calls it once per op
    on a few hundred lanes, where entering that state again costs a sixth of the call,
    and so does each NumPy call saved (`count_nonzero` rather than `any`, the product
    converting one operand to f64 rather than three)."""
    x = np.asarray(a, dtype=np.float64)
    p = x * b  # exact: f32 operands, an f64 product
    s = p + c
    low, midpoint = _F32_MIDPOINT_BITS
    awkward = ~(np.abs(s) >= _F32_TINY) | ((s.view(np.int64) & low) == midpoint)
    if not np.count_nonzero(awkward):
        return s.astype(np.float32)[()]
    y = np.asarray(b, dtype=np.float64)
    z = np.asarray(c, dtype=np.float64)
    # A NaN operand is the result, the first of a, b, c: 0 * inf is invalid only
    # when c is no NaN (f64's p + c would give p's default NaN instead of c)
    s = np.asarray(np.where(np.isnan(z) & ~np.isnan(x) & ~np.isnan(y), z, s))
    back = s - z
    dropped = (p - back) + (z - (s - back))  # NaN when s is not finite: nothing dropped
    even = (s.view(np.int64) & 1) == 0
    nudge = (dropped != 0) & even & np.isfinite(s)
    toward = np.where(dropped > 0, np.inf, -np.inf)
    odd: Array = np.where(nudge, np.nextafter(s, toward), s)
    out: Array = odd.astype(np.float32)
    return out[()]


def bf16_value(x: Any) -> np.float32:
    """`x` rounded once to bf16, held (exactly) as an f32: how host code holds bf16
    (`semantics.bf16_value`, compiled on first use: only bf16 programs load Numba)."""
    from . import semantics  # here, not at the top: it loads Numba

    return semantics.bf16_value(x)


# ---------------------------------------------------------------- the C library's functions

LIBM_UNARY: dict[str, tuple[str | None, str | None]] = {
    "math.exp": (None, "exp"), "math.expm1": ("expm1f", "expm1"),
    "math.log": ("logf", None), "math.log2": ("log2f", "log2"),
    "math.log10": ("log10f", "log10"), "math.log1p": ("log1pf", "log1p"),
    "math.sin": ("sinf", "sin"), "math.cos": ("cosf", "cos"), "math.tan": ("tanf", "tan"),
    "math.asin": ("asinf", "asin"), "math.acos": ("acosf", "acos"),
    "math.atan": ("atanf", "atan"), "math.sinh": ("sinhf", "sinh"),
    "math.cosh": ("coshf", "cosh"), "math.tanh": ("tanhf", "tanh"),
    "math.asinh": ("asinhf", "asinh"), "math.acosh": ("acoshf", "acosh"),
    "math.atanh": ("atanhf", "atanh"), "math.erf": ("erff", "erf"),
}  # fmt: skip
"""The transcendentals `semantics` defines as one call of the C library (its `math.<op>`,
which Numba compiles to a call of the f32 or f64 function named here), by op. Not f64
`log`: Numba's gives +NaN for a negative operand where the C library's gives -NaN. Not
f32 `exp`: its definition is arithmetic, computed here by `exp_f32`."""

LIBM_BUDGET_ELEMENTS = 1 << 21
"""How many elements a process computes through the C library, one call each (some
0.3 us), before it computes the transcendentals with `semantics`' compiled ufuncs
instead: about what importing Numba and loading a cached ufunc costs (about 1 s of CPU),
so a process never pays much more than that for having avoided it."""

_by_element = [0]
"""The elements this process computed through the C library so far."""


@cache
def _libm_function(symbol: str, f32: bool) -> Callable[[float], float] | None:
    """The process's own `symbol` (the libm function Numba's compiled code calls), or None
    where the process has none."""
    try:
        found: Any = getattr(ctypes.CDLL(None), symbol)
    except (OSError, AttributeError, TypeError):  # no process-wide symbols (Windows)
        return None
    c_type = ctypes.c_float if f32 else ctypes.c_double
    found.restype, found.argtypes = c_type, [c_type]
    return found


def libm_unary(name: str, f32: bool) -> Callable[[Any], Any] | None:
    """`name` (of `LIBM_UNARY`) over f32 (`f32`) or f64 arrays and scalars, calling the C
    library's function of that type on each element, as `semantics`' definition does; None
    where that is not its definition or the process has no such function."""
    dtype = np.dtype(np.float32 if f32 else np.float64)
    symbol = LIBM_UNARY[name][0 if f32 else 1]
    c_function = _libm_function(symbol, f32) if symbol is not None else None
    if c_function is None:
        return None

    def compute(x: Any) -> Any:
        a = np.asarray(x, dtype)
        out = np.fromiter(map(c_function, a.ravel().tolist()), dtype, a.size).reshape(a.shape)
        return out[()] if a.ndim == 0 else out

    return compute


def _transcendental(name: str, f32: bool) -> Callable[[Any], Any]:
    """`name` through the C library (`libm_unary`) for operands of the op's own type while
    Numba is not loaded and the process has computed fewer than `LIBM_BUDGET_ELEMENTS`
    elements so, else through `semantics`' compiled ufunc: the same function either way,
    so the bits do not depend on the choice."""
    dtype = np.dtype(np.float32 if f32 else np.float64)
    by_element = libm_unary(name, f32)

    def compute(x: Any) -> Any:
        size = int(np.size(x))
        if (
            by_element is None
            or np.result_type(x) != dtype
            or _by_element[0] + size > LIBM_BUDGET_ELEMENTS
            or "numba" in sys.modules
        ):
            from . import semantics  # here, not at the top: it loads Numba

            return semantics.ufunc(name)(x)
        _by_element[0] += size
        return by_element(x)

    return compute


def exp_f32(x: Any) -> Any:
    """`semantics`' `math.exp` of f32 (`_exp_f32`, whose docstring gives the method), over
    f32 arrays and scalars: the same IEEE-754 f64 operations in the same order, so the
    same bits; operands of another type go to the compiled ufunc."""
    if np.result_type(x) != np.float32:
        from . import semantics  # here, not at the top: it loads Numba

        return semantics.ufunc("math.exp")(x)
    a = np.asarray(x)
    lo, hi = scalar_ops.EXP_F32_LIMITS
    c = scalar_ops.EXP_F32_TAYLOR
    with np.errstate(all="ignore"):
        z = a.astype(np.float64) * scalar_ops.EXP_F32_INV_LN2
        z = np.where(z > lo, z, lo)  # (NaN too: replaced by x below)
        z = np.where(z > hi, hi, z)
        k = np.floor(z + 0.5)
        t = (z - k) * scalar_ops.EXP_F32_LN2
        p = c[0] * t + c[1]
        for coefficient in c[2:]:
            p = p * t + coefficient
        power = ((k.astype(np.int64) + 1023) << 52).view(np.float64)
        out = np.where(np.isnan(a), a, (p * power).astype(np.float32))
    return out[()] if a.ndim == 0 else out


def _rsqrt(x: Any) -> Any:
    """`semantics`' `math.rsqrt`: 1 / sqrt(x) divided in f64 (for f32 too: its `1.0` is
    an f64) and rounded to x's type; +-inf at +-0."""
    a = np.asarray(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        quotient = np.float64(1.0) / np.sqrt(a).astype(np.float64)
    out = np.where(a == 0, np.copysign(np.inf, a), quotient).astype(a.dtype)
    return out[()] if a.ndim == 0 else out


def float_function(name: str, f32: bool, quiet: bool = False) -> Callable[..., Any]:
    """The function computing float op `name` (of `scalar_ops.FLOAT_OPS`) over arrays and
    scalars: NumPy's ufunc for an op IEEE-754 defines exactly, this module's NumPy code
    where it has it (min/max, `rsqrt`; `fma` and `exp` of f32 when `f32`), the C library's
    function for the transcendentals that are one call of it, else `semantics`' compiled ufunc of
    the definition, which loads Numba on first use. `quiet`: for a caller that ignores
    floating-point errors already (kernels: see `fma_f32_quiet`)."""
    exact = scalar_ops.EXACT_UNARY.get(name) or scalar_ops.EXACT_BINARY.get(name)
    if exact is not None:
        return getattr(np, exact)
    if name in FLOAT_BINARY:
        return FLOAT_BINARY[name]
    if name == "math.fma" and f32:
        return fma_f32_quiet if quiet else fma_f32
    if name == "math.rsqrt":
        return _rsqrt
    if name == "math.exp" and f32:
        return exp_f32
    if name in LIBM_UNARY:
        return _transcendental(name, f32)
    from . import semantics  # here, not at the top: it loads Numba

    return semantics.ufunc(name)
