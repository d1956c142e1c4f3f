"""Host-code compilers of the `math` ops: the float ones through `semantics`' definitions,
the bit counts, integer absolute value and the integer and float powers."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import BFloat16Type
from xdsl.ir import Operation

from ...analysis.dtypes import int_width, numpy_dtype
from ...diagnostics import error_at
from ...dispatch import OpTable
from .. import scalar_ops
from .arith import float_op, op_classes
from .frame import Compiler, Frame, OpCompiler, Step, unary
from .values import float_cast, is_narrow, signed, wrapper

MATH_OPS = OpTable[OpCompiler]("host code")
"""Compilers of the `math` ops host code runs."""

MATH_OPS.impl(*op_classes(scalar_ops.FLOAT_OPS, "math"))(float_op)


@MATH_OPS.impl(math.AbsIOp)
def _absi(c: Compiler, op: Operation) -> Step:
    wrap = wrapper(op.results[0].type)
    return unary(c, op, lambda x: wrap(abs(signed(x))))


def _count_bits(kind: str) -> OpCompiler:
    def compile_(c: Compiler, op: Operation) -> Step:
        type_ = op.results[0].type
        width, wrap = int_width(type_), wrapper(type_)
        mask = (1 << width) - 1

        def count(x: Any) -> int | bool:
            u = int(x) & mask
            if kind == "ctpop":
                return wrap(u.bit_count())
            if kind == "ctlz":
                return wrap(width - u.bit_length())
            return wrap(width if u == 0 else (u & -u).bit_length() - 1)

        return unary(c, op, count)

    return compile_


MATH_OPS.register(math.CountLeadingZerosOp, _count_bits("ctlz"))
MATH_OPS.register(math.CountTrailingZerosOp, _count_bits("cttz"))
MATH_OPS.register(math.CtPopOp, _count_bits("ctpop"))


@MATH_OPS.impl(math.IPowIOp)
def _ipowi(c: Compiler, op: Operation) -> Step:
    """Signed integer power, wrapped; a negative exponent gives 1 / x**-n truncated
    (1, -1 or 0), and raising 0 to a negative power divides by zero: an error."""
    type_ = op.results[0].type
    width, wrap = int_width(type_), wrapper(type_)
    a, b, r = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.results[0])

    def run(f: Frame) -> None:
        x, n = signed(f[a]), signed(f[b])
        if n >= 0:
            f[r] = wrap(pow(x, n, 1 << width) if width > 1 else x**n)
        elif x == 0:
            raise error_at(op, f"{scalar_ops.IPOWI_ZERO_MESSAGE} (0 to the power {n})")
        else:
            f[r] = wrap(1 if x == 1 else (-1 if n % 2 else 1) if x == -1 else 0)

    return run


@MATH_OPS.impl(math.FPowIOp)
def _fpowi(c: Compiler, op: Operation) -> Step:
    """`powf` of the base and the exponent converted to the base's type (`sitofp`)."""
    type_ = op.results[0].type
    bf16 = isinstance(type_, BFloat16Type)
    dtype = np.dtype(np.float32) if bf16 else numpy_dtype(type_)
    cast = float_cast(type_)
    from .. import semantics  # here, not at the top: it loads Numba

    fn = semantics.ufunc("math.powf")
    wide = is_narrow(type_)
    a, b, r = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.results[0])

    def run(f: Frame) -> None:
        n = scalar_ops.int_to_float(signed(f[b]), dtype, precision=8 if bf16 else None)
        x = f[a]
        f[r] = cast(fn(np.float64(x), np.float64(n)) if wide else fn(x, n))

    return run


__all__ = ["MATH_OPS"]
