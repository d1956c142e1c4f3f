"""devplan's versions of upstream dialects, and an MLIR dialect xDSL lacks.

xDSL 0.74 restricts some upstream ops (arith comparisons, `select` and casts take no
tensors), reads others only in generic form (the `gpu` ops, `memref.cast`) and lacks a
few (`gpu.shuffle`, `linalg.batch_matmul`, ...). Each module here is devplan's version
of one dialect, with its own op classes subclassing xDSL's where xDSL has them; nothing
of xDSL is changed.
`DIALECTS` lists the dialects devplan replaces: the contexts devplan builds
(`devplan.context()`, and so devplan-opt) register them in place of xDSL's of the same
name. `async_` is MLIR's `async` dialect, which xDSL lacks: a dialect of devplan's own,
registered through `universe.py` like `vdev`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect


def _arith() -> Dialect:
    from .arith import Arith

    return Arith


def _tensor() -> Dialect:
    from .tensor import Tensor

    return Tensor


def _gpu() -> Dialect:
    from .gpu import GPU

    return GPU


def _memref() -> Dialect:
    from .memref import MemRef

    return MemRef


def _scf() -> Dialect:
    from .scf import Scf

    return Scf


def _linalg() -> Dialect:
    from .linalg import Linalg

    return Linalg


def _vector() -> Dialect:
    from .vector import Vector

    return Vector


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "arith": _arith,
    "tensor": _tensor,
    "gpu": _gpu,
    "memref": _memref,
    "scf": _scf,
    "vector": _vector,
    "linalg": _linalg,
}
"""Upstream dialect name -> factory of devplan's version of it, which the contexts devplan
builds load in place of xDSL's."""
