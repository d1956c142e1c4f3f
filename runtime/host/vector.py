"""Host-code compilers of the `vector` ops MLIR's integration tests print with:
`vector.print %x : T` of a scalar or a 1-D vector (formatted as the runner utilities
format them, `runner_utils`), and the `vector.transfer_read` from a memref that feeds it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import vector
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    VectorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.ir.affine import AffineMap

from ...analysis.dtypes import numpy_dtype
from ...diagnostics import error_at
from ...dispatch import OpTable
from .frame import Compiler, Frame, OpCompiler, Step
from .runner_utils import element_type, format_scalar, host_array

VECTOR_OPS = OpTable[OpCompiler]("host code")
"""Compilers of the `vector` ops host code runs."""


@VECTOR_OPS.impl(vector.PrintOp)
def _vector_print(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, vector.PrintOp)
    type_ = op.source.type
    slot = c.slot(op.source)
    if isinstance(type_, VectorType):
        if type_.get_num_dims() != 1:  # pyright: ignore[reportUnknownMemberType]
            raise error_at(op, f"'vector.print' of {type_}: only 1-D vectors are printed")
        element: Attribute = type_.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]

        def run_vector(f: Frame) -> None:
            values: list[Any] = list(f[slot])
            items = ", ".join(format_scalar(x, element) for x in values)  # pyright: ignore[reportUnknownArgumentType]
            print(f"( {items} )")

        return run_vector
    scalar: Attribute = type_
    if not isinstance(scalar, IntegerType | IndexType | Float16Type | Float32Type | Float64Type):
        raise error_at(op, f"'vector.print' of {type_} is not supported")

    def run(f: Frame) -> None:
        print(format_scalar(f[slot], scalar))  # pyright: ignore[reportUnknownArgumentType]

    return run


@VECTOR_OPS.impl(vector.TransferReadOp)
def _transfer_read(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, vector.TransferReadOp)
    source_type = op.source.type
    result_type = op.result.type
    if not isinstance(source_type, MemRefType) or op.mask is not None:
        raise error_at(op, "'vector.transfer_read' is supported from a memref, unmasked")
    rank = source_type.get_num_dims()
    shape = tuple(result_type.get_shape())
    permutation = op.permutation_map
    if permutation.data != AffineMap.minor_identity(rank, len(shape)):
        raise error_at(op, "'vector.transfer_read' is supported with the minor identity map")
    source, padding, r = c.slot(op.source), c.slot(op.padding), c.slot(op.result)
    indices = [c.slot(i) for i in op.indices]
    dtype = numpy_dtype(element_type(result_type))

    def run(f: Frame) -> None:
        array = host_array(op, f[source])
        start = [f[i] for i in indices]
        out = np.full(shape, f[padding], dtype)
        lead, minor = start[: rank - len(shape)], start[rank - len(shape) :]
        if all(0 <= s < n for s, n in zip(lead, array.shape, strict=False)):
            window = array[tuple(lead)] if lead else array
            region = tuple(
                slice(max(s, 0), min(s + k, n))
                for s, k, n in zip(minor, shape, window.shape, strict=True)
            )
            target = tuple(
                slice(max(s, 0) - s, min(s + k, n) - s)
                for s, k, n in zip(minor, shape, window.shape, strict=True)
            )
            out[target] = window[region]
        f[r] = out

    return run


__all__ = ["VECTOR_OPS"]
