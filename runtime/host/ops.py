"""`HOST_OPS`: the compiler of every op host code runs, keyed by op class.

Joined here, explicitly, from the table each dialect's module fills, each module imported
the first time host code holds an op of its dialect (so that a run of a program without
`scf`, `affine` or `vector` ops imports neither those modules nor their xDSL dialects);
the executor asks it first, then its own table of `device` ops.
"""

from __future__ import annotations

from ...dispatch import DialectTables, OpTable
from .frame import OpCompiler


def _func() -> OpTable[OpCompiler]:
    from .func import FUNC_OPS

    return FUNC_OPS


def _affine() -> OpTable[OpCompiler]:
    from .affine import AFFINE_OPS

    return AFFINE_OPS


def _arith() -> OpTable[OpCompiler]:
    from .arith import ARITH_OPS

    return ARITH_OPS


def _math() -> OpTable[OpCompiler]:
    from .math import MATH_OPS

    return MATH_OPS


def _scf() -> OpTable[OpCompiler]:
    from .scf import SCF_OPS

    return SCF_OPS


def _memref() -> OpTable[OpCompiler]:
    from .memref import MEMREF_OPS

    return MEMREF_OPS


def _vector() -> OpTable[OpCompiler]:
    from .vector import VECTOR_OPS

    return VECTOR_OPS


HOST_OPS = DialectTables[OpCompiler](
    "host code",
    {
        "func": _func,
        "affine": _affine,
        "arith": _arith,
        "math": _math,
        "scf": _scf,
        "cf": _scf,  # cf.assert
        "memref": _memref,
        "vector": _vector,
    },
)
"""Op class -> compiler, for every op the executor runs in host code."""

__all__ = ["HOST_OPS"]
