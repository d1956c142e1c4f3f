"""Host-code compiler of `affine.apply`: an affine map evaluated on index values.

The loops `host-linalg-to-loops` makes read operands at a map's results (`d0 + d2` for
a convolution's window): each is one `affine.apply` of a single-result map on the loop
variables. Division and modulo are MLIR's (`floordiv` and `mod` round towards negative
infinity, `ceildiv` towards positive infinity), as xDSL's map evaluation computes them.
"""

from __future__ import annotations

from xdsl.dialects import affine
from xdsl.ir import Operation

from ...dispatch import OpTable
from .frame import Compiler, Frame, OpCompiler, Step

AFFINE_OPS = OpTable[OpCompiler]("host code")
"""Compilers of the `affine` ops host code runs."""


@AFFINE_OPS.impl(affine.ApplyOp)
def _apply(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, affine.ApplyOp)
    map_ = op.map.data
    dims = [c.slot(v) for v in op.mapOperands[: map_.num_dims]]
    symbols = [c.slot(v) for v in op.mapOperands[map_.num_dims :]]
    r = c.slot(op.result)

    def run(f: Frame) -> None:
        (f[r],) = map_.eval([f[d] for d in dims], [f[s] for s in symbols])

    return run
