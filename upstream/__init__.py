"""devplan's versions of upstream dialects, and MLIR dialects xDSL lacks.

xDSL 0.74 restricts some upstream ops (arith comparisons, `select` and casts take no
tensors), reads others only in generic form (the `gpu` ops, `memref.cast`), and lacks a
few (`gpu.shuffle`, the `async` dialect). Each module here defines devplan's own op
classes for one dialect, subclassing xDSL's where it has them; nothing in xDSL is
changed. `DIALECTS` lists the dialects devplan replaces: every context devplan builds
(`devplan.context()`, devplan-opt) registers them in place of xDSL's of the same name.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect


def _arith() -> Dialect:
    from .arith import arith_dialect

    return arith_dialect()


def _tensor() -> Dialect:
    from .tensor import tensor_dialect

    return tensor_dialect()


def _gpu() -> Dialect:
    from .gpu import gpu_dialect

    return gpu_dialect()


def _memref() -> Dialect:
    from .memref import memref_dialect

    return memref_dialect()


def _scf() -> Dialect:
    from .scf import scf_dialect

    return scf_dialect()


def _vector() -> Dialect:
    from .vector import vector_dialect

    return vector_dialect()


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "arith": _arith,
    "tensor": _tensor,
    "gpu": _gpu,
    "memref": _memref,
    "scf": _scf,
    "vector": _vector,
}
"""Upstream dialect name -> factory of devplan's version of it, which the contexts devplan
builds load in place of xDSL's."""
