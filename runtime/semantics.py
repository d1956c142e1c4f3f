"""The semantics of devplan's `arith` and `math` ops, defined once for host code and both
CPU kernel backends: the float ops below, and the binary integer ops with the test for
their undefined behaviour (see "integer arithmetic").

Why one definition: an op that is not exactly specified by IEEE-754 (a transcendental such
as `math.exp`) gives different bits in different libraries — NumPy's SIMD `exp` and the
C library's `expf` differ by an ulp or two. So every float op whose result a library could
choose is written here once, as a scalar Python function Numba compiles, and every path
calls that compiled code:

* the Numba kernel backend calls the compiled scalar function (`scalar(name)`);
* the NumPy kernel backend and host code call a Numba-compiled ufunc of the *same*
  function (`ufunc(name)`), which runs the same machine code per element.

The transcendentals are the C library's (glibc's `exp`, `logf`, ... through LLVM), whose
error is within about one ulp of the correctly rounded result, except `math.exp` of f32,
which is devplan's own (`_exp_f32`): arithmetic only, so that LLVM vectorises it in a
kernel's loop (a C call an element cannot be), computed in f64 within a relative 2^-44
of e^x and rounded once: the correctly rounded result, unless e^x lies that close to a
midpoint between two f32 values (`bench/transcendental_ulp.py` measures it).

Ops that IEEE-754 defines exactly (`+ - * /`, `sqrt`, comparisons, `floor`, ...) are
correctly rounded by any implementation, so the backends use NumPy's or LLVM's directly.

Rules kept here (the MLIR LangRef's):

* `math.fma` is fused: one rounding (LLVM's `llvm.fma`, exact in hardware or in libm).
* `maximumf`/`minimumf` propagate NaN and order -0 below +0; `maxnumf`/`minnumf` return
  the other operand when one is NaN (quiet or signalling) and order -0 below +0 too.
* `powf` is C's `pow` (`pow(-inf, 0.5)` is +inf, `pow(-0, 0.5)` is +0: no sqrt shortcut).
* `math.round` rounds half away from zero, `math.roundeven` half to even.
* f16 and bf16 are computed in f64 and rounded once to the format (`round_to_format`).
  For + - * / and sqrt that is exact: a format of p bits computed in one of at least
  2p + 2 bits and rounded once gives the correctly rounded result (53 >= 2 * 11 + 2).
  `fma` of f16 is exact too (the f64 fma of f16 operands can only be inexact when one
  term is below half an f16 ulp of the other, where rounding to f16 ignores it). For the
  transcendentals the f64 result is within an ulp of f64, far below half an f16 ulp:
  rounded once, they are correctly rounded except within 2^-40 of a midpoint.

The file holds one concept, the definition of each op's result that every path must agree
on, and reads best whole: its sections (float definitions, narrow formats, integer
undefined behaviour and its messages, integer definitions, integers to floats) call one
another inside Numba-compiled code (the bf16 `fma` rounds with the narrow-format rounding,
the integer definitions share the signed-form helpers), the Numba backend's generated
kernels name them as `semantics.<name>`, and its kernel cache key hashes this one file, so
a change to any definition invalidates every compiled kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
from llvmlite import ir  # pyright: ignore[reportMissingTypeStubs]
from numba.core import types  # pyright: ignore[reportMissingTypeStubs]
from numba.extending import intrinsic, overload  # pyright: ignore[reportMissingTypeStubs]

from . import numba_cache
from .scalar_ops import (
    BINARY_DEFINED,
    DEFINED_OPS,
    DIVIDES_BY_ZERO,
    DIVISIONS,
    EXACT_BINARY,
    EXACT_UNARY,
    EXP_F32_INV_LN2,
    EXP_F32_LIMITS,
    EXP_F32_LN2,
    EXP_F32_TAYLOR,
    FAULTING_OPS,
    FLOAT_OPS,
    FORMATS,
    INT_BINARY_OPS,
    INT_OPS_WITH_DEFINITIONS,
    IPOWI_ZERO_MESSAGE,
    NO_FAULT,
    NSW_OVERFLOW,
    NUW_OVERFLOW,
    QUOTIENT_OVERFLOWS,
    SHIFT_TOO_WIDE,
    SHIFTS,
    SIGNED_OVERFLOW_DIVISIONS,
    UNARY_DEFINED,
    arity,
    bf16_bits_of_value,
    bf16_value_of_bits,
    division_overflow_message,
    exact_overflows,
    fault_code,
    fault_message,
    flag_bits,
    fptoi_message,
    int_to_float,
    overflow_flags,
    overflow_message,
    shift_message,
)

_jit = numba_cache.njit(by_type=True, error_model="numpy")


def _llvm_fma_typing(typingctx: Any, a: Any, b: Any, c: Any) -> Any:
    """LLVM's `llvm.fma`: a * b + c with one rounding."""
    float_type: Any = types.Float  # pyright: ignore[reportUnknownMemberType]
    if not (a == b == c and isinstance(a, float_type)):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        ty = context.get_value_type(signature.return_type)
        fn = builder.module.declare_intrinsic("llvm.fma", [ty], ir.FunctionType(ty, [ty, ty, ty]))
        return builder.call(fn, args)

    return a(a, b, c), codegen


_llvm_fma: Any = intrinsic(_llvm_fma_typing)  # pyright: ignore[reportUnknownVariableType]


def _bitcast_typing(typingctx: Any, x: Any, like: Any) -> Any:
    """The bits of `x` read as the type of `like` (same width): `arith.bitcast`."""
    if getattr(x, "bitwidth", None) != getattr(like, "bitwidth", -1):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.bitcast(args[0], context.get_value_type(signature.return_type))

    return like(x, like), codegen


bitcast: Any = intrinsic(_bitcast_typing)  # pyright: ignore[reportUnknownVariableType]
"""`bitcast(x, like)`: the bits of `x` as the type of `like`, in Numba-compiled code."""


# ---------------------------------------------------------------- scalar definitions
# Plain Python over one float (f32 or f64), compiled by Numba for each path.


def _fma(a: Any, b: Any, c: Any) -> Any:
    return _llvm_fma(a, b, c)


@_jit
def _cbrt(x: Any) -> Any:
    """Numba's `np.cbrt` (a power of |x|, up to ~2.8 ulp off in f64) refined by one Newton
    step whose residual y^3 - x is computed with `fma`s, in x's own type: within about
    0.5 ulp of the real cube root (bench/transcendental_ulp.py)."""
    if x == 0 or math.isnan(x) or math.isinf(x):  # exact (tested on x: Numba's cbrt
        return np.cbrt(x)  # is compiled with flags that let LLVM assume a finite result)
    y = np.cbrt(x)
    t = y * y
    t_error = _llvm_fma(y, y, -t)
    residual = _llvm_fma(t, y, -x) + t_error * y
    return y - residual / (t + t + t)


# The min/max ops test the ordered cases first: an ordered compare is false for NaN, so
# one that holds settles the result. In a reduction the accumulator is mostly the larger
# (smaller) operand: one predictable branch an element instead of four, which makes the
# Numba backend's row max of 1024x1024 f32 1.3x to 2x faster.


@_jit
def _maximumf(x: Any, y: Any) -> Any:
    if x > y:
        return x
    if x < y:
        return y
    if x != x:
        return x
    if y != y:
        return y
    # equal, or zeros of either sign: +0 is the larger zero
    return y if math.copysign(1.0, x) < 0 else x


@_jit
def _minimumf(x: Any, y: Any) -> Any:
    if x < y:
        return x
    if x > y:
        return y
    if x != x:
        return x
    if y != y:
        return y
    return x if math.copysign(1.0, x) < 0 else y


def _maxnumf(x: Any, y: Any) -> Any:
    if x > y:
        return x
    if x < y:
        return y
    if x != x:
        return y
    if y != y:
        return x
    return _maximumf(x, y)


def _minnumf(x: Any, y: Any) -> Any:
    if x < y:
        return x
    if x > y:
        return y
    if x != x:
        return y
    if y != y:
        return x
    return _minimumf(x, y)


def _powf(x: Any, y: Any) -> Any:
    """C's `pow`, with its two NaN-free results made explicit (C99 F.9.4.4): `pow(1, y)`
    and `pow(x, ±0)` are 1 for every x and y, signalling NaNs too (libm may quiet those
    instead, and narrow formats reach here with their NaNs already quiet)."""
    if x == 1:
        return x
    if y == 0:
        return y**y  # 1, in x's type
    return x**y


def _atan2(x: Any, y: Any) -> Any:
    return math.atan2(x, y)


def _copysign(x: Any, y: Any) -> Any:
    return math.copysign(x, y)


def _round(x: Any) -> Any:
    """Half away from zero. `x - trunc(x)` is exact, so 0.49999997 stays below one half."""
    t = np.trunc(x)
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return t


def _rsqrt(x: Any) -> Any:
    return 1.0 / np.sqrt(x) if x != 0 else math.copysign(np.inf, x)


_INV_LN2 = EXP_F32_INV_LN2
_LN2 = EXP_F32_LN2
_EXP_LO, _EXP_HI = EXP_F32_LIMITS
_C = EXP_F32_TAYLOR


def _exp_f32(x: Any) -> Any:
    """e^x of an f32 `x`: with z = x / ln 2 (in f64) and k the integer nearest z,
    e^x = 2^k * e^t for t = (z - k) * ln 2, |t| <= ln(2) / 2; e^t by its Taylor
    polynomial of degree 11 (`EXP_F32_TAYLOR`), 2^k from its exponent bits, their
    product (exact) rounded once to f32, which also gives subnormals, 0 and +inf at the
    ends. z is clamped to `EXP_F32_LIMITS` (for +-inf and NaN too), so every step is
    defined; a NaN `x` is the result. Every step is one IEEE-754 operation in f64
    (no fused multiply-add: Numba compiles without contraction), so NumPy computes the
    same bits (`numpy_semantics.exp_f32`). Branch-free after if-conversion: LLVM
    vectorises it."""
    z = np.float64(x) * _INV_LN2
    if not z > _EXP_LO:  # (NaN too: replaced by x below)
        z = _EXP_LO
    if z > _EXP_HI:
        z = _EXP_HI
    k = math.floor(z + 0.5)
    t = (z - k) * _LN2
    p = _C[0] * t + _C[1]
    p = p * t + _C[2]
    p = p * t + _C[3]
    p = p * t + _C[4]
    p = p * t + _C[5]
    p = p * t + _C[6]
    p = p * t + _C[7]
    p = p * t + _C[8]
    p = p * t + _C[9]
    p = p * t + _C[10]
    p = p * t + _C[11]
    power = bitcast(np.int64(k + 1023) << 52, np.float64(0.0))
    y = np.float32(p * power)
    return x if x != x else y


def _exp(x: Any) -> Any:
    """`math.exp`: `_exp_f32` for f32, the C library's `exp` for f64 (Numba-compiled code
    picks the implementation by type, `_exp_by_type`)."""
    return math.exp(x)


@overload(_exp)
def _exp_by_type(x: Any) -> Any:
    return _exp_f32 if x == types.float32 else _exp


def _fma_bf16(a: Any, b: Any, c: Any) -> Any:
    """`math.fma` of bf16 values (given and returned in f64): a * b is exact in f64; the
    sum is rounded to odd (TwoSum finds what f64 rounding dropped), which makes the one
    rounding to bf16 after it correct (53 >= 8 + 2 bits)."""
    p = a * b
    s = p + c
    if s - s != 0 or p - p != 0:  # an infinity or NaN: nothing was dropped
        return _round_to_format(s, 8, -126, 127)
    bp = s - c
    err = (p - bp) + (c - (s - bp))
    if err != 0 and (bitcast(s, np.int64(0)) & 1) == 0:
        s = np.nextafter(s, np.inf if err > 0 else -np.inf)
    return _round_to_format(s, 8, -126, 127)


_UNARY_DEFS: dict[str, Callable[[Any], Any]] = {
    "math.exp": lambda x: _exp(x),
    "math.exp2": lambda x: np.exp2(x),
    "math.expm1": lambda x: math.expm1(x),
    "math.log": lambda x: math.log(x),
    "math.log2": lambda x: math.log2(x),
    "math.log10": lambda x: math.log10(x),
    "math.log1p": lambda x: math.log1p(x),
    "math.sin": lambda x: math.sin(x),
    "math.cos": lambda x: math.cos(x),
    "math.tan": lambda x: math.tan(x),
    "math.asin": lambda x: math.asin(x),
    "math.acos": lambda x: math.acos(x),
    "math.atan": lambda x: math.atan(x),
    "math.sinh": lambda x: math.sinh(x),
    "math.cosh": lambda x: math.cosh(x),
    "math.tanh": lambda x: math.tanh(x),
    "math.asinh": lambda x: math.asinh(x),
    "math.acosh": lambda x: math.acosh(x),
    "math.atanh": lambda x: math.atanh(x),
    "math.cbrt": lambda x: _cbrt(x),
    "math.erf": lambda x: math.erf(x),
    "math.round": _round,
    "math.rsqrt": _rsqrt,
}
"""Unary float ops whose result a library could choose (or that NumPy gets wrong)."""


def _maximumf_def(x: Any, y: Any) -> Any:
    return _maximumf(x, y)


def _minimumf_def(x: Any, y: Any) -> Any:
    return _minimumf(x, y)


for _op, _fn in _UNARY_DEFS.items():
    if _fn.__name__ != "<lambda>":
        continue
    # Each definition its own name: Numba names compiled functions by qualified name and a
    # per-process counter, so lambdas (all `<lambda>`) could be bound to one another's code
    # when a kernel compiled in one process is loaded from Numba's cache in another.
    _fn.__name__ = _fn.__qualname__ = "def_" + _op.replace(".", "_")


_BINARY_DEFS: dict[str, Callable[[Any, Any], Any]] = {
    "arith.maximumf": _maximumf_def,
    "arith.minimumf": _minimumf_def,
    "arith.maxnumf": _maxnumf,
    "arith.minnumf": _minnumf,
    "math.powf": _powf,
    "math.atan2": _atan2,
    "math.copysign": _copysign,
}
_TERNARY_DEFS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "math.fma": _fma,
    "fma_bf16": _fma_bf16,
}

if (
    frozenset(_UNARY_DEFS) != UNARY_DEFINED or frozenset(_BINARY_DEFS) != BINARY_DEFINED
):  # pragma: no cover
    raise AssertionError("scalar_ops' lists of defined float ops differ from the definitions")


def _definition(name: str) -> Callable[..., Any]:
    found: Any = _UNARY_DEFS.get(name) or _BINARY_DEFS.get(name) or _TERNARY_DEFS.get(name)
    if found is None:
        raise KeyError(name)
    return found


@cache
def scalar(name: str) -> Any:
    """The Numba-compiled scalar function of a float op in `DEFINED_OPS` (for kernels)."""
    return _jit(_definition(name))


@cache
def ufunc(name: str) -> Any:
    """A ufunc of the same compiled definition, for NumPy arrays and host scalars: built
    for f32 and f64 (narrow formats are computed in f64, see `narrow`)."""
    definition = _definition(name)
    n = arity(name)
    signatures = [f"float64({', '.join(['float64'] * n)})"]
    if name != "fma_bf16":  # that one is over f64 values only
        signatures.insert(0, f"float32({', '.join(['float32'] * n)})")
    return numba_cache.vectorize(signatures)(definition)


def numpy_ufunc(name: str) -> Any:
    """The ufunc computing a float op on arrays: NumPy's for exactly defined ops, else
    the compiled definition's."""
    exact = EXACT_UNARY.get(name) or EXACT_BINARY.get(name)
    if exact is not None:
        return getattr(np, exact)
    return ufunc(name)


# ---------------------------------------------------------------- narrow formats


@_jit
def _round_to_format(x: Any, p: int, emin: int, emax: int) -> Any:
    """`x` (f64) rounded to nearest, ties to even, to a binary format of precision `p`
    and exponents `emin..emax` (subnormals and overflow to infinity included)."""
    if x != x or x == 0 or abs(x) == np.inf:
        return x
    _, e = math.frexp(x)  # 2**(e - 1) <= |x| < 2**e
    q = max(e - 1, emin) - (p - 1)  # exponent of the format's ulp at x
    y = math.ldexp(np.rint(math.ldexp(x, -q)), q)
    if abs(y) > math.ldexp(2.0 - math.ldexp(1.0, 1 - p), emax):
        return math.copysign(np.inf, x)
    return y


def _round_f16(x: Any) -> Any:
    return _round_to_format(x, 11, -14, 15)


def _round_bf16(x: Any) -> Any:
    return _round_to_format(x, 8, -126, 127)


@_jit
def _bits_to_float(h: Any, mant: int, exp: int) -> Any:
    """The value (f64) of a 16-bit float's bit pattern `h` with `mant` fraction bits."""
    h = np.int64(h)
    sign = -1.0 if (h >> 15) & 1 else 1.0
    e = (h >> mant) & ((1 << exp) - 1)
    m = h & ((1 << mant) - 1)
    bias = (1 << (exp - 1)) - 1
    if e == (1 << exp) - 1:
        if m == 0:
            return sign * np.inf
        # a NaN keeps its sign and payload (bitcasts and copies move bits, not values)
        wide = ((h >> 15) << 63) | (np.int64(0x7FF) << 52) | (m << (52 - mant))
        return bitcast(np.int64(wide), np.float64(0))
    if e == 0:
        return sign * math.ldexp(float(m), 1 - bias - mant)
    return sign * math.ldexp(float(m + (1 << mant)), int(e) - bias - mant)


@_jit
def _float_to_bits(x: Any, mant: int, exp: int) -> Any:
    """The bit pattern of `x` (f64, already representable in the format) as a uint16."""
    top = (1 << exp) - 1
    if x != x:  # keep the sign and the top of the payload; quiet if nothing would be left
        wide = bitcast(np.float64(x), np.int64(0))
        payload = (wide >> (52 - mant)) & ((1 << mant) - 1)
        if payload == 0:
            payload = 1 << (mant - 1)
        return np.uint16((((wide >> 63) & 1) << 15) | (top << mant) | payload)
    sign = 0x8000 if math.copysign(1.0, x) < 0 else 0
    a = abs(x)
    bias = (1 << (exp - 1)) - 1
    if a == np.inf:
        return np.uint16(sign | (top << mant))
    if a == 0:
        return np.uint16(sign)
    _, e = math.frexp(a)
    if e - 1 >= 1 - bias:
        frac = np.int64(math.ldexp(a, mant - (e - 1))) - (1 << mant)
        return np.uint16(sign | ((e - 1 + bias) << mant) | frac)
    return np.uint16(sign | np.int64(math.ldexp(a, bias - 1 + mant)))


def _f16_from_bits(h: Any) -> Any:
    return _bits_to_float(h, 10, 5)


def _f16_to_bits(x: Any) -> Any:
    return _float_to_bits(_round_to_format(x, 11, -14, 15), 10, 5)


def _bf16_from_bits(h: Any) -> Any:
    return _bits_to_float(h, 7, 8)


def _bf16_to_bits(x: Any) -> Any:
    return _float_to_bits(_round_to_format(x, 8, -126, 127), 7, 8)


round_f16 = _jit(_round_f16)
round_bf16 = _jit(_round_bf16)
f16_from_bits = _jit(_f16_from_bits)
f16_to_bits = _jit(_f16_to_bits)
bf16_from_bits = _jit(_bf16_from_bits)
bf16_to_bits = _jit(_bf16_to_bits)


@cache
def narrow_ufuncs(fmt: str) -> tuple[Any, Any, Any]:
    """(round f64 to the format, bits to f64, f64 to bits) as ufuncs, for `fmt` in FORMATS."""
    rnd, frm, to = {
        "f16": (_round_f16, _f16_from_bits, _f16_to_bits),
        "bf16": (_round_bf16, _bf16_from_bits, _bf16_to_bits),
    }[fmt]
    return (
        numba_cache.vectorize(["float64(float64)"])(rnd),
        numba_cache.vectorize(["float64(uint16)"])(frm),
        numba_cache.vectorize(["uint16(float64)"])(to),
    )


# ---------------------------------------------------------------- integer undefined behaviour
# What the LangRef leaves undefined is an error on every path, worded once here.

# ---------------------------------------------------------------- integer ops of the kernels
# Over int64 values holding a `width`-bit integer in signed form (how both kernel backends
# hold integers); the result is in the same form. Compiled by Numba for both backends:
# `int_scalar(name)` for the Numba backend, `int_ufunc(name)` for the NumPy backend.


def _unsigned_bits(x: Any, width: Any) -> Any:
    u = np.uint64(x)
    if width < 64:
        u &= (np.uint64(1) << np.uint64(width)) - np.uint64(1)
    return u


def _to_signed(u: Any, width: Any) -> Any:
    """The low `width` bits of `u` (uint64) in signed form (int64): shifted to the top and
    back arithmetically, which LLVM reads as a sign extension (so a loop of i32 adds
    stays i32 when vectorised)."""
    if width < 64:
        shift = np.uint64(64 - width)
        return np.int64(u << shift) >> np.int64(shift)
    return np.int64(u)


def _ctlz(x: Any, width: Any) -> Any:
    u = _unsigned_bits_jit(x, width)
    n = 0
    for i in range(width - 1, -1, -1):
        if (u >> np.uint64(i)) & np.uint64(1):
            break
        n += 1
    return _to_signed_jit(np.uint64(n), width)


def _cttz(x: Any, width: Any) -> Any:
    u = _unsigned_bits_jit(x, width)
    n = 0
    for i in range(width):
        if (u >> np.uint64(i)) & np.uint64(1):
            break
        n += 1
    return _to_signed_jit(np.uint64(n), width)


def _ctpop(x: Any, width: Any) -> Any:
    u = _unsigned_bits_jit(x, width)
    n = 0
    while u:
        u &= u - np.uint64(1)
        n += 1
    return _to_signed_jit(np.uint64(n), width)


def _mul_high(x: Any, y: Any, width: Any, signed: Any) -> Any:
    """The high `width` bits of the double-width product (`mulsi/mului_extended`)."""
    if width <= 32:
        if signed:
            p = np.int64(x) * np.int64(y)  # |p| <= 2**62
            return _to_signed_jit(np.uint64(p >> np.int64(width)), width)
        up = _unsigned_bits_jit(x, width) * _unsigned_bits_jit(y, width)  # < 2**64
        return _to_signed_jit(up >> np.uint64(width), width)
    # 64 bits: the unsigned 128-bit product from 32-bit halves, then the signed correction
    ux, uy = np.uint64(x), np.uint64(y)
    low32 = np.uint64(0xFFFFFFFF)
    x0, x1 = ux & low32, ux >> np.uint64(32)
    y0, y1 = uy & low32, uy >> np.uint64(32)
    p00, p01, p10, p11 = x0 * y0, x0 * y1, x1 * y0, x1 * y1
    middle = (p00 >> np.uint64(32)) + (p01 & low32) + (p10 & low32)
    high = p11 + (p01 >> np.uint64(32)) + (p10 >> np.uint64(32)) + (middle >> np.uint64(32))
    if signed:
        if np.int64(x) < 0:
            high -= uy
        if np.int64(y) < 0:
            high -= ux
    return np.int64(high)


def _add_carry(x: Any, y: Any, width: Any) -> Any:
    """Whether the unsigned sum overflows `width` bits (`addui_extended`), as 0 or 1."""
    ux, uy = _unsigned_bits_jit(x, width), _unsigned_bits_jit(y, width)
    if width < 64:
        return np.int64((ux + uy) >> np.uint64(width))
    return np.int64(ux + uy < ux)


def _ipowi(x: Any, n: Any, width: Any) -> Any:
    """`math.ipowi`, wrapped at `width` bits; for n < 0: 1 / x**-n truncated (x == 0 is
    checked before: it divides by zero)."""
    if n < 0:
        if x == 1:
            return np.int64(1)
        if x == -1:
            return np.int64(-1) if n % 2 else np.int64(1)
        return np.int64(0)
    result = np.uint64(1)
    base = np.uint64(x)
    e = n
    while e > 0:
        if e & 1:
            result *= base
        base *= base
        e >>= 1
    return _to_signed_jit(result, width)


_unsigned_bits_jit = _jit(_unsigned_bits)
_to_signed_jit = _jit(_to_signed)


# ---------------------------------------------------------------- integer arithmetic
# One definition of each binary integer op of `arith`, used by every path: host code and
# the Numba backend call the compiled scalar function (`int_scalar`), the NumPy backend its
# ufunc (`int_ufunc`). Operands and result are int64 values holding a `width`-bit integer
# in signed form (two's complement; i1 true is -1, false 0). The definitions are total:
# for operands whose behaviour the LangRef leaves undefined (division by zero, the minimum
# value divided by -1, a shift by the width or more) they return some value, because every
# path reports those as errors before it uses the result (`int_fault`), and lanes a mask
# turns off compute on whatever they hold.


def _addi(x: Any, y: Any, width: Any) -> Any:
    return _to_signed_jit(np.uint64(x) + np.uint64(y), width)


def _subi(x: Any, y: Any, width: Any) -> Any:
    return _to_signed_jit(np.uint64(x) - np.uint64(y), width)


def _muli(x: Any, y: Any, width: Any) -> Any:
    return _to_signed_jit(np.uint64(x) * np.uint64(y), width)


def _andi(x: Any, y: Any, width: Any) -> Any:
    return np.int64(x) & np.int64(y)  # of sign-extended values: sign-extended


def _ori(x: Any, y: Any, width: Any) -> Any:
    return np.int64(x) | np.int64(y)


def _xori(x: Any, y: Any, width: Any) -> Any:
    return np.int64(x) ^ np.int64(y)


def _maxsi(x: Any, y: Any, width: Any) -> Any:
    return np.int64(x) if x >= y else np.int64(y)


def _minsi(x: Any, y: Any, width: Any) -> Any:
    return np.int64(x) if x <= y else np.int64(y)


def _maxui(x: Any, y: Any, width: Any) -> Any:
    keep = _unsigned_bits_jit(x, width) >= _unsigned_bits_jit(y, width)
    return np.int64(x) if keep else np.int64(y)


def _minui(x: Any, y: Any, width: Any) -> Any:
    keep = _unsigned_bits_jit(x, width) <= _unsigned_bits_jit(y, width)
    return np.int64(x) if keep else np.int64(y)


@_jit
def _negate(x: Any, width: Any) -> Any:
    """-x wrapped (the quotient of x by -1: the minimum value stays itself)."""
    return _to_signed_jit(np.uint64(0) - np.uint64(x), width)


def _divsi(x: Any, y: Any, width: Any) -> Any:
    """Truncating division."""
    if y == 0:
        return np.int64(0)
    if y == -1:
        return _negate(x, width)
    q = np.int64(x) // np.int64(y)  # floor; one more where inexact with signs differing
    if q < 0 and q * y != x:
        q += 1
    return q


def _remsi(x: Any, y: Any, width: Any) -> Any:
    """The remainder of truncating division (the dividend's sign)."""
    if y == 0 or y == -1:
        return np.int64(0)
    return np.int64(x) - _divsi_jit(x, y, width) * np.int64(y)


def _floordivsi(x: Any, y: Any, width: Any) -> Any:
    if y == 0:
        return np.int64(0)
    if y == -1:
        return _negate(x, width)
    return np.int64(x) // np.int64(y)


def _ceildivsi(x: Any, y: Any, width: Any) -> Any:
    if y == 0:
        return np.int64(0)
    if y == -1:
        return _negate(x, width)
    q = np.int64(x) // np.int64(y)
    if q * y != x:
        q += 1
    return q


def _divui(x: Any, y: Any, width: Any) -> Any:
    ux, uy = _unsigned_bits_jit(x, width), _unsigned_bits_jit(y, width)
    if uy == 0:
        return np.int64(0)
    return _to_signed_jit(ux // uy, width)


def _remui(x: Any, y: Any, width: Any) -> Any:
    ux, uy = _unsigned_bits_jit(x, width), _unsigned_bits_jit(y, width)
    if uy == 0:
        return np.int64(0)
    return _to_signed_jit(ux % uy, width)


def _ceildivui(x: Any, y: Any, width: Any) -> Any:
    ux, uy = _unsigned_bits_jit(x, width), _unsigned_bits_jit(y, width)
    if uy == 0:
        return np.int64(0)
    q = ux // uy
    if q * uy != ux:
        q += np.uint64(1)
    return _to_signed_jit(q, width)


def _shli(x: Any, y: Any, width: Any) -> Any:
    if y < 0 or y >= width:
        return np.int64(0)
    return _to_signed_jit(np.uint64(x) << np.uint64(y), width)


def _shrsi(x: Any, y: Any, width: Any) -> Any:
    if y < 0 or y >= width:
        return np.int64(0)
    return np.int64(x) >> np.int64(y)  # of a sign-extended value: arithmetic


def _shrui(x: Any, y: Any, width: Any) -> Any:
    if y < 0 or y >= width:
        return np.int64(0)
    return _to_signed_jit(_unsigned_bits_jit(x, width) >> np.uint64(y), width)


_divsi_jit = _jit(_divsi)

INT_BINARY_DEFS: dict[str, Callable[[Any, Any, Any], Any]] = {
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
"""The binary integer ops of `arith`, each `(x, y, width) -> result` in signed form."""

if tuple(INT_BINARY_DEFS) != INT_BINARY_OPS:  # pragma: no cover
    raise AssertionError("scalar_ops.INT_BINARY_OPS differs from the integer definitions")


def _overflows64(op: Any, unsigned: Any, x: Any, y: Any) -> Any:
    """Whether a 64-bit add (0), sub (1) or mul (2) overflows, decided without
    overflowing (Numba's signed arithmetic lets LLVM assume no overflow)."""
    if unsigned:
        ux, uy = np.uint64(x), np.uint64(y)
        top = np.uint64(0xFFFFFFFFFFFFFFFF)
        if op == 0:
            return ux > top - uy
        if op == 1:
            return ux < uy
        return ux != 0 and uy > top // ux
    i64_max, i64_min = np.int64(0x7FFFFFFFFFFFFFFF), np.int64(-0x8000000000000000)
    if op == 0:
        return (y > 0 and x > i64_max - y) or (y < 0 and x < i64_min - y)
    if op == 1:
        return (y < 0 and x > i64_max + y) or (y > 0 and x < i64_min + y)
    # The wrapped product r is exact iff r / x is y with no remainder (x not 0 or -1:
    # r // -1 itself overflows). Comparing x with a bound divided by y instead rounds
    # the bound the wrong way for some signs (-3 * (i64_min // 3) was missed).
    if x == 0:
        return False
    if x == -1:
        return y == i64_min
    r = np.int64(np.uint64(x) * np.uint64(y))
    return r // x != y or r % x != 0


def _overflows(op: Any, unsigned: Any, x: Any, y: Any, width: Any) -> Any:
    """Whether `addi` (0), `subi` (1), `muli` (2) or `shli` (3) of the signed-form `x`
    and `y` breaks `nuw` (`unsigned`) or `nsw`: its exact result does not fit."""
    if op == 3:
        if y < 0 or y >= width:
            return False  # an over-wide shift is reported as such
        r = _to_signed_jit(np.uint64(x) << np.uint64(y), width)
        if unsigned:
            ur = _unsigned_bits_jit(r, width)
            return (ur >> np.uint64(y)) != _unsigned_bits_jit(x, width)
        return (r >> np.int64(y)) != x
    if width == 64:
        return _overflows64_jit(op, unsigned, x, y)
    if unsigned:
        a, b = np.int64(_unsigned_bits_jit(x, width)), np.int64(_unsigned_bits_jit(y, width))
        lo, hi = np.int64(0), (np.int64(1) << np.int64(width)) - 1
    else:
        a, b = np.int64(x), np.int64(y)
        lo = -(np.int64(1) << np.int64(width - 1))
        hi = -lo - 1
    if op == 0:
        exact = a + b  # |a|, |b| < 2**32: exact in int64
    elif op == 1:
        exact = a - b
    else:
        exact = a * b
    return exact < lo or exact > hi


def _int_fault(op: Any, flags: Any, x: Any, y: Any, width: Any) -> Any:
    """The undefined behaviour of integer op `op` (an index into `FAULTING_OPS`) on the
    signed-form `x`, `y`: a fault kind above, NO_FAULT for none. `flags` is 1 for nsw,
    2 for nuw, 3 for both."""
    if op < 7:  # the divisions, in DIVISIONS' order
        if y == 0:
            return DIVIDES_BY_ZERO
        if op < 4 and op != 1 and y == -1 and x == -(np.int64(1) << np.int64(width - 1)):
            return QUOTIENT_OVERFLOWS  # divsi, floordivsi, ceildivsi (not remsi)
        return NO_FAULT
    if op < 10 and (y < 0 or y >= width):  # the shifts
        return SHIFT_TOO_WIDE
    code = 3 if op == 7 else op - 10  # shli, else addi, subi, muli
    if op >= 10 or op == 7:
        if flags & 1 and _overflows_jit(code, False, x, y, width):
            return NSW_OVERFLOW
        if flags & 2 and _overflows_jit(code, True, x, y, width):
            return NUW_OVERFLOW
    return NO_FAULT


_overflows64_jit = _jit(_overflows64)
_overflows_jit = _jit(_overflows)

_INT_DEFS: dict[str, tuple[Callable[..., Any], str]] = {
    **{name: (fn, "int64(int64, int64, int64)") for name, fn in INT_BINARY_DEFS.items()},
    "int_fault": (_int_fault, "int64(int64, int64, int64, int64, int64)"),
    "math.ctlz": (_ctlz, "int64(int64, int64)"),
    "math.cttz": (_cttz, "int64(int64, int64)"),
    "math.ctpop": (_ctpop, "int64(int64, int64)"),
    "mul_high": (_mul_high, "int64(int64, int64, int64, boolean)"),
    "add_carry": (_add_carry, "int64(int64, int64, int64)"),
    "math.ipowi": (_ipowi, "int64(int64, int64, int64)"),
}
"""Integer ops of the kernels with their ufunc signature (the bit width is an operand)."""


@cache
def int_scalar(name: str) -> Any:
    """The Numba-compiled scalar function of an integer definition (Numba backend)."""
    return _jit(_INT_DEFS[name][0])


@cache
def int_ufunc(name: str, storage: str = "int64") -> Any:
    """A ufunc of the same compiled definition (NumPy backend). A binary arithmetic op's
    ufunc has one loop, over `storage` (int8 to int64), so arrays keep their dtype: each
    loop costs a wrapper compile in every process, so only the types used are built."""
    definition, signature = _INT_DEFS[name]
    if name in INT_BINARY_DEFS:
        return numba_cache.vectorize([f"{storage}({storage}, {storage}, int64)"])(definition)
    return numba_cache.vectorize([signature])(definition)


def _int_round(x: Any, p: Any, unsigned: Any) -> Any:
    """The integer `x` (int64; read as unsigned when `unsigned`) rounded once, to nearest
    and ties to even, to `p` bits, as an f64 (exact): `sitofp`/`uitofp` to bf16."""
    if unsigned:
        u = np.uint64(x)
        negative = False
    else:
        negative = x < 0
        u = np.uint64(-(x + 1)) + np.uint64(1) if negative else np.uint64(x)
    n = 0
    v = u
    while v:
        v >>= np.uint64(1)
        n += 1
    if n > p:
        shift = np.uint64(n - p)
        q = u >> shift
        r = u & ((np.uint64(1) << shift) - np.uint64(1))
        half = np.uint64(1) << (shift - np.uint64(1))
        if r > half or (r == half and q & np.uint64(1)):
            q += np.uint64(1)
        value = math.ldexp(float(q), int(shift))
    else:
        value = float(u)
    return -value if negative else value


int_round = _jit(_int_round)


@cache
def int_round_ufunc() -> Any:
    return numba_cache.vectorize(["float64(int64, int64, boolean)"])(_int_round)


def bf16_value(x: Any) -> np.float32:
    """`x` rounded once to bf16, held (exactly) as an f32: how host code holds bf16."""
    return np.float32(round_bf16(float(x)))


__all__ = [
    "BINARY_DEFINED",
    "DEFINED_OPS",
    "DIVIDES_BY_ZERO",
    "DIVISIONS",
    "EXACT_BINARY",
    "EXACT_UNARY",
    "FAULTING_OPS",
    "FLOAT_OPS",
    "FORMATS",
    "INT_BINARY_DEFS",
    "INT_BINARY_OPS",
    "INT_OPS_WITH_DEFINITIONS",
    "IPOWI_ZERO_MESSAGE",
    "NO_FAULT",
    "NSW_OVERFLOW",
    "NUW_OVERFLOW",
    "QUOTIENT_OVERFLOWS",
    "SHIFTS",
    "SHIFT_TOO_WIDE",
    "SIGNED_OVERFLOW_DIVISIONS",
    "UNARY_DEFINED",
    "arity",
    "bf16_bits_of_value",
    "bf16_from_bits",
    "bf16_to_bits",
    "bf16_value",
    "bf16_value_of_bits",
    "bitcast",
    "division_overflow_message",
    "exact_overflows",
    "f16_from_bits",
    "f16_to_bits",
    "fault_code",
    "fault_message",
    "flag_bits",
    "fptoi_message",
    "int_scalar",
    "int_to_float",
    "int_ufunc",
    "narrow_ufuncs",
    "numpy_ufunc",
    "overflow_flags",
    "overflow_message",
    "round_bf16",
    "round_f16",
    "scalar",
    "shift_message",
    "ufunc",
]
