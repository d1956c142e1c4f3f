"""Host-code compilers of the `arith` ops, and of the float ops `semantics` defines.

Binary integer ops and float ops compute with the definitions the kernel backends call too
(`numpy_semantics` on the NumPy backend, `semantics` otherwise), so host code and kernels
agree bit for bit. What the LangRef leaves undefined (a division by zero, an over-wide
shift, an `nsw`/`nuw` overflow, a float-to-int conversion out of range) is a located error.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, FloatAttr, IntegerAttr
from xdsl.ir import Attribute, Operation

from ...analysis.dtypes import int_width, is_integer_like, numpy_dtype
from ...diagnostics import error_at
from ...dispatch import OpTable
from ...upstream import arith as upstream_arith
from .. import numpy_semantics, scalar_ops
from ..compile_clock import numba_compile_for
from .frame import Compiler, Frame, OpCompiler, Step, binary, unary
from .values import float_cast, is_narrow, signed, wrapper

ARITH_OPS = OpTable[OpCompiler]("host code")
"""Compilers of the `arith` ops host code runs."""

_OPS_BY_NAME: dict[str, type[Operation]] = {
    op.name: op for op in (*upstream_arith.Arith.operations, *math_dialect.Math.operations)
}


def op_classes(names: Iterable[str], dialect: str) -> list[type[Operation]]:
    """The op classes of the ops of `dialect` named in `names` (`semantics` names its ops;
    the ones neither xDSL nor devplan's `upstream` defines cannot occur in a program)."""
    return [
        _OPS_BY_NAME[name]
        for name in names
        if name.startswith(f"{dialect}.") and name in _OPS_BY_NAME
    ]


@ARITH_OPS.impl(arith.ConstantOp)
def _constant(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, arith.ConstantOp)
    value = op.value
    r = c.slot(op.result)
    if isinstance(value, IntegerAttr):
        v: Any = wrapper(value.type)(value.value.data)
    elif isinstance(value, FloatAttr):
        v = float_cast(value.type)(value.value.data)
    else:
        raise error_at(op, f"'arith.constant' of {value} is not supported in host code")

    def run(f: Frame) -> None:
        f[r] = v

    return run


def _integer(c: Compiler, op: Operation) -> Step:
    """A binary integer op: its shared definition, after its `int_fault` check when the op
    has undefined behaviour. Host integers are Python ints in signed form already; i1 (a
    bool) enters as 0 or -1. The definitions come from `numpy_semantics` when the program's
    kernels run on the NumPy backend (such a run never imports Numba) and from `semantics`'
    compiled ones otherwise (Numba is loaded anyway, and a compiled call costs under 1 us
    where NumPy's costs 20-80 us on a scalar); the two agree bit for bit."""
    short = op.name.split(".")[1]
    code = scalar_ops.fault_code(short) if short in scalar_ops.FAULTING_OPS else -1
    definitions = _numpy_definitions if c.kernel_backend == "numpy" else _numba_definitions
    fn, fault = definitions(op.name)
    type_ = op.results[0].type
    width = int_width(type_)
    a, b, r = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.results[0])
    flags = scalar_ops.flag_bits(scalar_ops.overflow_flags(op))
    faults = short in scalar_ops.FAULTING_OPS and (flags or short not in ("addi", "subi", "muli"))
    if width == 1:

        def run_i1(f: Frame) -> None:
            x, y = -int(f[a]), -int(f[b])
            if faults:
                _raise_fault(op, short, type_, fault(code, flags, x, y, 1), x, y)
            f[r] = fn(x, y, 1) != 0

        return run_i1
    if not faults:

        def run(f: Frame) -> None:
            f[r] = fn(f[a], f[b], width)

        return run

    def run_checked(f: Frame) -> None:
        x, y = f[a], f[b]
        kind = fault(code, flags, x, y, width)
        if kind:
            _raise_fault(op, short, type_, kind, x, y)
        f[r] = fn(x, y, width)

    return run_checked


def _numpy_definitions(name: str) -> tuple[Callable[..., int], Callable[..., int]]:
    """Op `name`'s definition and `int_fault` from `numpy_semantics`, on Python ints."""
    definition, int_fault = numpy_semantics.INT_BINARY[name], numpy_semantics.int_fault

    def fn(x: int, y: int, width: int) -> int:
        return int(definition(x, y, width))

    def fault(code: int, flags: int, x: int, y: int, width: int) -> int:
        return int(int_fault(code, flags, x, y, width))

    return fn, fault


def _numba_definitions(name: str) -> tuple[Callable[..., int], Callable[..., int]]:
    """Op `name`'s definition and `int_fault` compiled by `semantics`: each compiles (or
    loads from the cache) at its first call, on the compile clock, then is called
    directly."""
    from .. import semantics  # here, not at the top: it loads Numba

    compiled_fn, compiled_fault = semantics.int_scalar(name), semantics.int_scalar("int_fault")

    def first_fn(*args: Any) -> Any:
        nonlocal fn
        numba_compile_for(compiled_fn, args, f"{name} for host code (numba)")
        fn = compiled_fn
        return fn(*args)

    def first_fault(*args: Any) -> int:
        nonlocal fault
        numba_compile_for(compiled_fault, args, "int_fault for host code (numba)")
        fault = compiled_fault
        return fault(*args)

    fn: Callable[..., Any] = first_fn
    fault: Callable[..., int] = first_fault
    return (lambda *args: fn(*args)), (lambda *args: fault(*args))


def _raise_fault(op: Operation, short: str, type_: Attribute, kind: int, x: int, y: int) -> None:
    """Raise the located error of fault `kind` (from `int_fault`; 0: none), with the
    operands that caused it."""
    if not kind:
        return
    width = int_width(type_)
    if kind == scalar_ops.DIVIDES_BY_ZERO:
        raise error_at(op, f"'{op.name}' divides {x} by zero")
    if kind == scalar_ops.SHIFT_TOO_WIDE:
        amount = y & ((1 << width) - 1)
        raise error_at(op, f"'{op.name}' shifts a {type_} value by {amount} bits")
    message = scalar_ops.fault_message(kind, short, width)
    if kind == scalar_ops.QUOTIENT_OVERFLOWS:
        raise error_at(op, message)
    raise error_at(op, f"{message} ({short} of {x} and {y})")


ARITH_OPS.impl(*op_classes(scalar_ops.INT_BINARY_OPS, "arith"))(_integer)


def float_op(c: Compiler, op: Operation) -> Step:
    """A float op of `scalar_ops.FLOAT_OPS`, computed by the definition every path shares;
    f16 through f64, rounded once (see `semantics`)."""
    type_ = op.results[0].type
    name = op.name
    if isinstance(type_, BFloat16Type) and name == "math.fma":
        name = "fma_bf16"  # rounded to odd in f64 first (see semantics), as the kernels do
    fn = numpy_semantics.float_function(name, isinstance(type_, Float32Type))
    cast = float_cast(type_)
    slots = tuple(c.slot(v) for v in op.operands)
    r = c.slot(op.results[0])
    if isinstance(type_, BFloat16Type) or (is_narrow(type_) and op.name in scalar_ops.DEFINED_OPS):

        def run_narrow(f: Frame) -> None:
            f[r] = cast(fn(*(np.float64(f[s]) for s in slots)))

        return run_narrow

    def run(f: Frame) -> None:
        f[r] = cast(fn(*(f[s] for s in slots)))

    return run


ARITH_OPS.impl(*op_classes(scalar_ops.FLOAT_OPS, "arith"))(float_op)


_CMPI: dict[int, tuple[Callable[[Any, Any], bool], bool]] = {
    0: (operator.eq, False),
    1: (operator.ne, False),
    2: (operator.lt, False),
    3: (operator.le, False),
    4: (operator.gt, False),
    5: (operator.ge, False),
    6: (operator.lt, True),
    7: (operator.le, True),
    8: (operator.gt, True),
    9: (operator.ge, True),
}


@ARITH_OPS.impl(arith.CmpiOp)
def _cmpi(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, arith.CmpiOp)
    compare, unsigned = _CMPI[op.predicate.value.data]
    mask = (1 << int_width(op.lhs.type)) - 1
    if unsigned:
        return binary(c, op, lambda x, y: compare(int(x) & mask, int(y) & mask))
    return binary(c, op, lambda x, y: compare(signed(x), signed(y)))


def _ordered(fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda x, y: not (math.isnan(x) or math.isnan(y)) and fn(x, y)


def _unordered(fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda x, y: math.isnan(x) or math.isnan(y) or fn(x, y)


_CMPF: dict[int, Callable[[Any, Any], bool]] = {
    0: lambda x, y: False,
    1: _ordered(operator.eq),
    2: _ordered(operator.gt),
    3: _ordered(operator.ge),
    4: _ordered(operator.lt),
    5: _ordered(operator.le),
    6: _ordered(operator.ne),
    7: lambda x, y: not (math.isnan(x) or math.isnan(y)),
    8: _unordered(operator.eq),
    9: _unordered(operator.gt),
    10: _unordered(operator.ge),
    11: _unordered(operator.lt),
    12: _unordered(operator.le),
    13: _unordered(operator.ne),
    14: lambda x, y: math.isnan(x) or math.isnan(y),
    15: lambda x, y: True,
}


@ARITH_OPS.impl(arith.CmpfOp)
def _cmpf(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, arith.CmpfOp)
    compare = _CMPF[op.predicate.value.data]
    return binary(c, op, lambda x, y: bool(compare(x, y)))


@ARITH_OPS.impl(arith.SelectOp)
def _select(c: Compiler, op: Operation) -> Step:
    cond, a, b, r = (c.slot(v) for v in (*op.operands, op.results[0]))

    def run(f: Frame) -> None:
        f[r] = f[a] if f[cond] else f[b]

    return run


@ARITH_OPS.impl(arith.IndexCastOp, arith.ExtSIOp, arith.TruncIOp)
def _int_cast(c: Compiler, op: Operation) -> Step:
    wrap = wrapper(op.results[0].type)
    return unary(c, op, lambda x: wrap(signed(x)))


@ARITH_OPS.impl(arith.ExtUIOp, upstream_arith.IndexCastUIOp)
def _unsigned_int_cast(c: Compiler, op: Operation) -> Step:
    wrap = wrapper(op.results[0].type)
    mask = (1 << int_width(op.operands[0].type)) - 1
    return unary(c, op, lambda x: wrap(int(x) & mask))


@ARITH_OPS.impl(arith.SIToFPOp, arith.UIToFPOp)
def _int_to_float(c: Compiler, op: Operation) -> Step:
    mask = (1 << int_width(op.operands[0].type)) - 1
    read: Callable[[Any], int] = (lambda x: int(x) & mask) if op.name.endswith("uitofp") else signed
    type_ = op.results[0].type
    if isinstance(type_, BFloat16Type):
        f32 = np.dtype(np.float32)
        return unary(c, op, lambda x: scalar_ops.int_to_float(read(x), f32, precision=8))
    dtype = numpy_dtype(type_)
    return unary(c, op, lambda x: scalar_ops.int_to_float(read(x), dtype))


@ARITH_OPS.impl(arith.FPToSIOp, arith.FPToUIOp)
def _float_to_int(c: Compiler, op: Operation) -> Step:
    type_ = op.results[0].type
    width, wrap = int_width(type_), wrapper(type_)
    unsigned = op.name.endswith("fptoui")
    lo, hi = (0, (1 << width) - 1) if unsigned else (-(1 << (width - 1)), (1 << (width - 1)) - 1)

    def convert(value: Any) -> int | bool:
        x = float(value)
        if not math.isfinite(x) or not lo <= math.trunc(x) <= hi:
            message = scalar_ops.fptoi_message(op.name.split(".")[1], width)
            raise error_at(op, f"{message} ({x} to {type_})")
        return wrap(math.trunc(x))

    return unary(c, op, convert)


@ARITH_OPS.impl(arith.ExtFOp, arith.TruncFOp)
def _float_cast(c: Compiler, op: Operation) -> Step:
    cast = float_cast(op.results[0].type)
    if isinstance(op.results[0].type, BFloat16Type):
        return unary(c, op, lambda x: cast(np.float64(x)))
    return unary(c, op, cast)


@ARITH_OPS.impl(arith.BitcastOp)
def _bitcast(c: Compiler, op: Operation) -> Step:
    """The same bits read as another type of the same width (through NumPy's `view`)."""
    src, dst = op.operands[0].type, op.results[0].type
    if isinstance(src, BFloat16Type) or isinstance(dst, BFloat16Type):
        return _bitcast_bf16(c, op)
    src_dtype, dst_dtype = numpy_dtype(src), numpy_dtype(dst)
    if src_dtype.itemsize != dst_dtype.itemsize or src_dtype.kind == "b":
        raise error_at(op, f"'arith.bitcast' from {src} to {dst} is not supported in host code")
    if src_dtype.kind == "u":
        src_dtype = np.dtype(f"i{src_dtype.itemsize}")
    as_int = is_integer_like(dst)
    wrap = wrapper(dst) if as_int else None

    def convert(x: Any) -> Any:
        bits = np.array(x if src_dtype.kind == "f" else signed(x), dtype=src_dtype)
        out = bits.view(dst_dtype)[()]
        return wrap(int(out)) if wrap is not None else out

    return unary(c, op, convert)


def _bitcast_bf16(c: Compiler, op: Operation) -> Step:
    src, dst = op.operands[0].type, op.results[0].type
    if isinstance(src, BFloat16Type) and isinstance(dst, BFloat16Type):
        return unary(c, op, lambda x: x)
    if isinstance(src, BFloat16Type):
        if isinstance(dst, Float16Type):
            return unary(c, op, lambda x: scalar_ops.bf16_bits_of_value(x).view(np.float16))
        wrap = wrapper(dst)
        return unary(c, op, lambda x: wrap(int(scalar_ops.bf16_bits_of_value(x))))
    if isinstance(src, Float16Type):
        return unary(c, op, lambda x: scalar_ops.bf16_value_of_bits(np.float16(x).view(np.uint16)))
    return unary(c, op, lambda x: scalar_ops.bf16_value_of_bits(int(x) & 0xFFFF))


@ARITH_OPS.impl(arith.MulSIExtendedOp, arith.MulUIExtendedOp)
def _mul_extended(c: Compiler, op: Operation) -> Step:
    """The low and high halves of the double-width product."""
    type_ = op.results[0].type
    width, wrap = int_width(type_), wrapper(type_)
    mask = (1 << width) - 1
    read: Callable[[Any], int] = (
        signed if op.name == "arith.mulsi_extended" else (lambda x: int(x) & mask)
    )
    a, b = c.slot(op.operands[0]), c.slot(op.operands[1])
    low, high = c.slot(op.results[0]), c.slot(op.results[1])

    def run(f: Frame) -> None:
        product = read(f[a]) * read(f[b])
        f[low], f[high] = wrap(product), wrap(product >> width)

    return run


@ARITH_OPS.impl(arith.AddUIExtendedOp)
def _add_extended(c: Compiler, op: Operation) -> Step:
    """The wrapped sum and whether the unsigned sum overflowed (an i1)."""
    type_ = op.results[0].type
    mask = (1 << int_width(type_)) - 1
    wrap = wrapper(type_)
    a, b = c.slot(op.operands[0]), c.slot(op.operands[1])
    total, carry = c.slot(op.results[0]), c.slot(op.results[1])

    def run(f: Frame) -> None:
        s = (int(f[a]) & mask) + (int(f[b]) & mask)
        f[total], f[carry] = wrap(s), s > mask

    return run


__all__ = ["ARITH_OPS", "float_op", "op_classes"]
