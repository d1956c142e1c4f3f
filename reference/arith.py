"""The MLIR LangRef semantics of scalar `arith` and `math` ops, computed exactly.

The oracle of `tests/runtime/test_arith_semantics.py`: it shares no code with host code or the
kernel backends, and computes each op's result the way the LangRef defines it:

* Integers are bit patterns of their width (`index` is 64 bits); an op reads them as
  signed (two's complement) or unsigned as the op says, computes with Python's
  unbounded ints and wraps to the width. `i1` is a 1-bit integer: true is 1 unsigned
  and -1 signed.
* Floats (`f16`, `bf16`, `f32`, `f64`) are IEEE-754 binary formats. A value is decoded
  from its bits into NaN, a signed infinity, or a signed exact `Fraction` (signed zeros
  kept); an op computes the exact real result and rounds it once to the nearest value
  of the format, ties to even (`scalars.round_to_format`, with subnormals, overflow
  to infinity and signed zeros). NaN payloads are not specified by the LangRef, so any
  NaN matches an expected NaN.
* Undefined behaviour (division by zero, signed division overflow, `nsw`/`nuw`
  overflow, shifts by the width or more, float-to-integer conversion of NaN or of a
  value outside the integer type) is `Fault` (`expectations`): devplan must report it as
  a located run-time error.
* Transcendental functions have no exact answer in a finite format: their expectation
  is `Near` (`transcendental`), the real result (mpmath at 256 bits, special values per
  C99 Annex F, which is what MLIR lowers them to through libm) that the computed value
  must lie within `ulps` units in the last place of.

`evaluate(op, operand_types, result_types, operands)` is the entry point; operands are
bit patterns, the expectation says what the results must be.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction

from .expectations import Exact, Expectation, Fault, Unsupported, exact_float
from .scalars import (
    NAN,
    FloatFormat,
    IntType,
    Real,
    ScalarType,
    decode,
    exponent_of,
    finite,
    infinity,
    is_signalling,
)
from .transcendental import TRANSCENDENTAL, transcendental

# ----------------------------------------------------------------------------------------
# The ops

IntOp = Callable[[IntType, Sequence[int]], Expectation]
FloatOp = Callable[[FloatFormat, Sequence[Real]], Expectation]


def _int(t: IntType, *values: int) -> Exact:
    return Exact(tuple(t.wrap(v) for v in values))


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _divide(kind: str) -> IntOp:
    def run(t: IntType, args: Sequence[int]) -> Expectation:
        signed = kind.endswith("si")
        a, b = (t.signed(x) for x in args) if signed else args
        if b == 0:
            return Fault("division by zero")
        if signed and kind != "remsi" and a == t.smin and b == -1:
            return Fault("signed division overflow (minimum value divided by -1)")
        if kind in ("divsi", "divui"):
            return _int(t, _trunc_div(a, b))
        if kind in ("remsi", "remui"):
            return _int(t, a - _trunc_div(a, b) * b)
        if kind == "floordivsi":
            return _int(t, a // b)
        return _int(t, -(-a // b))  # ceildivsi, ceildivui

    return run


def _shift(kind: str) -> IntOp:
    def run(t: IntType, args: Sequence[int]) -> Expectation:
        a, amount = args
        if amount >= t.width:  # the amount is read as unsigned
            return Fault("shift by the bit width or more")
        if kind == "shli":
            return _int(t, a << amount)
        if kind == "shrui":
            return _int(t, a >> amount)
        return _int(t, t.signed(a) >> amount)

    return run


def _overflow_checked(combine: Callable[[int, int], int], flags: str) -> IntOp:
    def run(t: IntType, args: Sequence[int]) -> Expectation:
        a, b = args
        if "nsw" in flags:
            exact = combine(t.signed(a), t.signed(b))
            if not t.smin <= exact <= t.smax:
                return Fault("signed overflow of an op marked nsw")
        if "nuw" in flags and not 0 <= combine(a, b) <= t.mask:
            return Fault("unsigned overflow of an op marked nuw")
        return _int(t, combine(a, b))

    return run


def _checked_shift(flags: str) -> IntOp:
    def run(t: IntType, args: Sequence[int]) -> Expectation:
        if args[1] >= t.width:
            return Fault("shift by the bit width or more")
        return _overflow_checked(lambda a, b: a << b, flags)(t, args)

    return run


def _ipowi(t: IntType, args: Sequence[int]) -> Expectation:
    """Signed `base ** exponent` wrapped to the width. The LangRef is silent on negative
    exponents; MLIR's own lowering (math-to-funcs) computes 1 / base**-exponent in
    integer division, so zero to a negative power divides by zero."""
    base, exponent = (t.signed(x) for x in args)
    if exponent >= 0:
        return _int(t, pow(base, exponent, 1 << t.width))
    # A negative power is 1 / base**-exponent in integer division.
    if base == 0:
        return Fault("division by zero (zero to a negative power)")
    if base == 1:
        return _int(t, 1)
    if base == -1:
        return _int(t, -1 if exponent % 2 else 1)
    return _int(t, 0)


def _extended(kind: str) -> IntOp:
    def run(t: IntType, args: Sequence[int]) -> Expectation:
        a, b = args
        if kind == "addui_extended":
            total = a + b
            return Exact((t.wrap(total), int(total > t.mask)))
        if kind == "mulsi_extended":
            a, b = t.signed(a), t.signed(b)
        product = a * b
        return Exact((t.wrap(product), t.wrap(product >> t.width)))

    return run


def _count(kind: str) -> IntOp:
    def run(t: IntType, args: Sequence[int]) -> Expectation:
        (a,) = args
        if kind == "ctpop":
            return _int(t, a.bit_count())
        if kind == "ctlz":
            return _int(t, t.width - a.bit_length())
        return _int(t, t.width if a == 0 else (a & -a).bit_length() - 1)

    return run


INT_OPS: dict[str, IntOp] = {
    "arith.addi": _overflow_checked(lambda a, b: a + b, ""),
    "arith.subi": _overflow_checked(lambda a, b: a - b, ""),
    "arith.muli": _overflow_checked(lambda a, b: a * b, ""),
    "arith.andi": lambda t, a: _int(t, a[0] & a[1]),
    "arith.ori": lambda t, a: _int(t, a[0] | a[1]),
    "arith.xori": lambda t, a: _int(t, a[0] ^ a[1]),
    "arith.maxsi": lambda t, a: _int(t, max(t.signed(a[0]), t.signed(a[1]))),
    "arith.minsi": lambda t, a: _int(t, min(t.signed(a[0]), t.signed(a[1]))),
    "arith.maxui": lambda t, a: _int(t, max(a)),
    "arith.minui": lambda t, a: _int(t, min(a)),
    "math.absi": lambda t, a: _int(t, abs(t.signed(a[0]))),
    "math.ipowi": _ipowi,
    "arith.addui_extended": _extended("addui_extended"),
    "arith.mulsi_extended": _extended("mulsi_extended"),
    "arith.mului_extended": _extended("mului_extended"),
}
for _kind in ("divsi", "divui", "remsi", "remui", "ceildivsi", "ceildivui", "floordivsi"):
    INT_OPS[f"arith.{_kind}"] = _divide(_kind)
for _kind in ("shli", "shrsi", "shrui"):
    INT_OPS[f"arith.{_kind}"] = _shift(_kind)
for _kind in ("ctlz", "cttz", "ctpop"):
    INT_OPS[f"math.{_kind}"] = _count(_kind)
for _flags in ("nsw", "nuw", "nsw,nuw"):
    INT_OPS[f"arith.addi<{_flags}>"] = _overflow_checked(lambda a, b: a + b, _flags)
    INT_OPS[f"arith.subi<{_flags}>"] = _overflow_checked(lambda a, b: a - b, _flags)
    INT_OPS[f"arith.muli<{_flags}>"] = _overflow_checked(lambda a, b: a * b, _flags)
    INT_OPS[f"arith.shli<{_flags}>"] = _checked_shift(_flags)

CMPI: dict[str, Callable[[IntType, int, int], bool]] = {
    "eq": lambda t, a, b: a == b,
    "ne": lambda t, a, b: a != b,
    "slt": lambda t, a, b: t.signed(a) < t.signed(b),
    "sle": lambda t, a, b: t.signed(a) <= t.signed(b),
    "sgt": lambda t, a, b: t.signed(a) > t.signed(b),
    "sge": lambda t, a, b: t.signed(a) >= t.signed(b),
    "ult": lambda t, a, b: a < b,
    "ule": lambda t, a, b: a <= b,
    "ugt": lambda t, a, b: a > b,
    "uge": lambda t, a, b: a >= b,
}


def _add(x: Real, y: Real) -> Real:
    if x.is_nan or y.is_nan:
        return NAN
    if x.is_inf or y.is_inf:
        if x.is_inf and y.is_inf and x.negative != y.negative:
            return NAN
        return x if x.is_inf else y
    total = x.value + y.value
    # An exact zero sum is -0 only when both addends are -0 (round to nearest).
    return finite(total, negative_zero=x.negative and y.negative)


def _negate(x: Real) -> Real:
    return x if x.is_nan else Real(x.kind, not x.negative, x.magnitude)


def _mul(x: Real, y: Real) -> Real:
    if x.is_nan or y.is_nan:
        return NAN
    negative = x.negative != y.negative
    if x.is_inf or y.is_inf:
        return NAN if x.is_zero or y.is_zero else infinity(negative)
    return Real("finite", negative, x.magnitude * y.magnitude)


def _div(x: Real, y: Real) -> Real:
    if x.is_nan or y.is_nan:
        return NAN
    negative = x.negative != y.negative
    if x.is_inf:
        return NAN if y.is_inf else infinity(negative)
    if y.is_inf:
        return Real("finite", negative)
    if y.is_zero:
        return NAN if x.is_zero else infinity(negative)
    return Real("finite", negative, x.magnitude / y.magnitude)


def _rem(x: Real, y: Real) -> Real:
    """fmod: x - trunc(x / y) * y, exact, with the sign of x."""
    if x.is_nan or y.is_nan or x.is_inf or y.is_zero:
        return NAN
    if y.is_inf:
        return x
    q = x.magnitude / y.magnitude
    return Real("finite", x.negative, x.magnitude - (q.numerator // q.denominator) * y.magnitude)


def _order_key(x: Real) -> tuple[Fraction | float, int]:
    """A total order on non-NaN values in which -0 < +0."""
    if x.is_inf:
        return (-math.inf if x.negative else math.inf, 0)
    return (x.value, 0 if x.negative else 1)


def _extremum(pick_max: bool, nan_wins: bool) -> Callable[[FloatFormat, Sequence[Real]], Exact]:
    def run(fmt: FloatFormat, args: Sequence[Real]) -> Exact:
        x, y = args
        if x.is_nan or y.is_nan:
            if nan_wins or (x.is_nan and y.is_nan):
                return exact_float(fmt, NAN)
            return exact_float(fmt, y if x.is_nan else x)
        if not nan_wins and x.is_zero and y.is_zero and x.negative != y.negative:
            # maxnumf/minnumf: either zero may be returned.
            return Exact((fmt.sign_bit,), ((0,),))
        lo, hi = sorted((x, y), key=_order_key)
        return exact_float(fmt, hi if pick_max else lo)

    return run


def _fma(x: Real, y: Real, z: Real) -> Real:
    return _add(_mul(x, y), z)


def _sqrt(fmt: FloatFormat, x: Real) -> Real:
    if x.is_nan or (x.negative and not x.is_zero):
        return NAN
    if x.is_zero or x.is_inf:
        return x
    # floor(sqrt(q) * 2**k) for a large k decides the rounding: the root of a format's
    # value is never exactly half-way between two values of the format.
    k = fmt.precision + 8 - exponent_of(x.magnitude) // 2
    scaled = x.magnitude * Fraction(4) ** k
    root = math.isqrt(scaled.numerator // scaled.denominator)
    sticky = Fraction(1, 2) if root * root != scaled else Fraction(0)
    return Real("finite", False, (root + sticky) / Fraction(2) ** k)


def _integral(mode: str) -> Callable[[Real], Real]:
    def run(x: Real) -> Real:
        if x.kind != "finite":
            return x
        v = x.value
        floor = v.numerator // v.denominator
        if mode == "floor":
            r = floor
        elif mode == "ceil":
            r = -((-v.numerator) // v.denominator)
        elif mode == "trunc":
            r = floor if v >= 0 else -((-v.numerator) // v.denominator)
        elif mode == "round":  # half away from zero
            r = math.floor(abs(v) + Fraction(1, 2)) * (-1 if v < 0 else 1)
        else:  # roundeven
            r = round(v)
        return finite(Fraction(r), negative_zero=x.negative)

    return run


def _copysign(x: Real, y: Real) -> Real:
    """x with the sign bit of y (a NaN's sign bit too)."""
    if x.is_nan:
        return NAN
    return Real(x.kind, y.negative, x.magnitude)


FLOAT_EXACT: dict[str, Callable[[FloatFormat, Sequence[Real]], Real]] = {
    "arith.addf": lambda f, a: _add(a[0], a[1]),
    "arith.subf": lambda f, a: _add(a[0], _negate(a[1])),
    "arith.mulf": lambda f, a: _mul(a[0], a[1]),
    "arith.divf": lambda f, a: _div(a[0], a[1]),
    "arith.remf": lambda f, a: _rem(a[0], a[1]),
    "arith.negf": lambda f, a: _negate(a[0]),
    "math.absf": lambda f, a: a[0] if a[0].is_nan else Real(a[0].kind, False, a[0].magnitude),
    "math.copysign": lambda f, a: _copysign(a[0], a[1]),
    "math.fma": lambda f, a: _fma(a[0], a[1], a[2]),
    "math.sqrt": lambda f, a: _sqrt(f, a[0]),
    "math.floor": lambda f, a: _integral("floor")(a[0]),
    "math.ceil": lambda f, a: _integral("ceil")(a[0]),
    "math.trunc": lambda f, a: _integral("trunc")(a[0]),
    "math.round": lambda f, a: _integral("round")(a[0]),
    "math.roundeven": lambda f, a: _integral("roundeven")(a[0]),
}
FLOAT_SELECT: dict[str, Callable[[FloatFormat, Sequence[Real]], Exact]] = {
    "arith.maximumf": _extremum(pick_max=True, nan_wins=True),
    "arith.minimumf": _extremum(pick_max=False, nan_wins=True),
    "arith.maxnumf": _extremum(pick_max=True, nan_wins=False),
    "arith.minnumf": _extremum(pick_max=False, nan_wins=False),
}


def _compare(x: Real, y: Real) -> str:
    """'unordered', 'lt', 'eq' or 'gt'."""
    if x.is_nan or y.is_nan:
        return "unordered"
    kx, ky = _order_key(x)[0], _order_key(y)[0]
    return "lt" if kx < ky else "gt" if kx > ky else "eq"


CMPF: dict[str, frozenset[str]] = {
    "false": frozenset(),
    "oeq": frozenset({"eq"}),
    "ogt": frozenset({"gt"}),
    "oge": frozenset({"gt", "eq"}),
    "olt": frozenset({"lt"}),
    "ole": frozenset({"lt", "eq"}),
    "one": frozenset({"lt", "gt"}),
    "ord": frozenset({"lt", "gt", "eq"}),
    "ueq": frozenset({"eq", "unordered"}),
    "ugt": frozenset({"gt", "unordered"}),
    "uge": frozenset({"gt", "eq", "unordered"}),
    "ult": frozenset({"lt", "unordered"}),
    "ule": frozenset({"lt", "eq", "unordered"}),
    "une": frozenset({"lt", "gt", "unordered"}),
    "uno": frozenset({"unordered"}),
    "true": frozenset({"lt", "gt", "eq", "unordered"}),
}


# ----------------------------------------------------------------------------------------
# Conversions


def _convert(op: str, source: ScalarType, target: ScalarType, bits: int) -> Expectation:
    if op == "arith.bitcast":
        return Exact((bits,))
    if isinstance(source, IntType) and isinstance(target, IntType):
        if op in ("arith.extsi", "arith.index_cast") or (
            op == "arith.trunci" and target.width < source.width
        ):
            return _int(target, source.signed(bits))
        return _int(target, bits)  # extui, index_castui, trunci
    if isinstance(source, IntType) and isinstance(target, FloatFormat):
        value = source.signed(bits) if op == "arith.sitofp" else bits
        return exact_float(target, finite(Fraction(value)))
    if isinstance(source, FloatFormat) and isinstance(target, IntType):
        x = decode(source, bits)
        if x.kind != "finite":
            return Fault(f"conversion of {x.kind} to an integer")
        v = x.value
        truncated = v.numerator // v.denominator if v >= 0 else -((-v.numerator) // v.denominator)
        lo, hi = (target.smin, target.smax) if op == "arith.fptosi" else (0, target.mask)
        if not lo <= truncated <= hi:
            return Fault(f"conversion of a value outside the range of {target.name}")
        return _int(target, truncated)
    assert isinstance(source, FloatFormat)
    assert isinstance(target, FloatFormat)
    return exact_float(target, decode(source, bits))


CONVERSIONS = (
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.index_cast",
    "arith.index_castui",
    "arith.sitofp",
    "arith.uitofp",
    "arith.fptosi",
    "arith.fptoui",
    "arith.extf",
    "arith.truncf",
    "arith.bitcast",
)


# ----------------------------------------------------------------------------------------
# Entry point


def evaluate(
    op: str,
    operand_types: Sequence[ScalarType],
    result_types: Sequence[ScalarType],
    operands: Sequence[int],
) -> Expectation:
    """What the LangRef says `op` gives for `operands` (bit patterns of `operand_types`).

    `op` is an op name, with a predicate for comparisons (`arith.cmpi slt`,
    `arith.cmpf ueq`) and overflow flags in angle brackets (`arith.addi<nsw>`).
    """
    first = operand_types[0]
    if op in CONVERSIONS:
        return _convert(op, first, result_types[0], operands[0])
    if op.startswith("arith.cmpi "):
        assert isinstance(first, IntType)
        return Exact((int(CMPI[op.split()[1]](first, operands[0], operands[1])),))
    if op.startswith("arith.cmpf "):
        assert isinstance(first, FloatFormat)
        relation = _compare(decode(first, operands[0]), decode(first, operands[1]))
        return Exact((int(relation in CMPF[op.split()[1]]),))
    if op == "arith.select":
        return Exact((operands[1] if operands[0] else operands[2],))
    if op == "math.fpowi":
        fmt, power_type = operand_types
        assert isinstance(fmt, FloatFormat)
        assert isinstance(power_type, IntType)
        power = power_type.signed(operands[1])
        x = decode(fmt, operands[0])
        return transcendental(op, fmt, [x], power, is_signalling(fmt, operands[0]))
    if isinstance(first, IntType):
        if op not in INT_OPS:
            raise Unsupported(f"{op} on {first.name}")
        return INT_OPS[op](first, operands)
    args = [decode(first, bits) for bits in operands]
    if op in FLOAT_EXACT:
        return exact_float(first, FLOAT_EXACT[op](first, args))
    if op in FLOAT_SELECT:
        return FLOAT_SELECT[op](first, args)
    if op in TRANSCENDENTAL:
        signalling = any(is_signalling(first, bits) for bits in operands)
        return transcendental(op, first, args, signalling=signalling)
    raise Unsupported(f"{op} on {first.name}")
