"""`HOST_OPS`: the compiler of every op host code runs, keyed by op class.

Assembled here, explicitly, from the table each dialect's module fills; the executor asks
it first, then its own table of `device` ops.
"""

from __future__ import annotations

from ...dispatch import OpTable
from .affine import AFFINE_OPS
from .arith import ARITH_OPS
from .frame import OpCompiler
from .func import FUNC_OPS
from .math import MATH_OPS
from .memref import MEMREF_OPS
from .runner_utils import RUNNER_OPS
from .scf import SCF_OPS


def _assemble(*parts: OpTable[OpCompiler]) -> OpTable[OpCompiler]:
    table = OpTable[OpCompiler]("host code")
    for part in parts:
        for op_class in part:
            compile_ = part.lookup(op_class)
            assert compile_ is not None
            table.register(op_class, compile_)
    return table


HOST_OPS = _assemble(FUNC_OPS, AFFINE_OPS, ARITH_OPS, MATH_OPS, SCF_OPS, MEMREF_OPS, RUNNER_OPS)
"""Op class -> compiler, for every op the executor runs in host code."""

__all__ = ["HOST_OPS"]
