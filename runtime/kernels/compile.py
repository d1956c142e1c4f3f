"""Compile a `kernel.func` for a kernel backend, once per kernel op and backend.

The backends are one table, `COMPILERS`, from a backend's name to the function that
compiles a kernel for it; each entry imports its backend's module when first used, so that
a process that never compiles for Numba or CUDA does not load them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from ...diagnostics import DevplanError
from ...dialects.kernel import KernelFuncOp
from .common import Kernel
from .launch import CompiledKernel

BACKENDS = ("numpy", "numba")
"""The CPU kernel backends: they run on NumPy arrays, on any machine."""

GPU_BACKENDS = ("numba-cuda",)
"""Kernel backends that need an NVIDIA GPU (or Numba's CUDA simulator)."""

Compiler = Callable[[Kernel], tuple[Callable[..., None], str]]
"""Compiles a kernel for one backend: its launcher `run(grid, block, args)` and its
generated source."""


def _compile_numpy(kernel: Kernel) -> tuple[Callable[..., None], str]:
    from .numpy_backend import compile_numpy

    return compile_numpy(kernel)


def _compile_numba(kernel: Kernel) -> tuple[Callable[..., None], str]:
    from .numba_backend import compile_numba

    return compile_numba(kernel)


def _compile_cuda(kernel: Kernel) -> tuple[Callable[..., None], str]:
    from .cuda_backend import compile_cuda

    return compile_cuda(kernel)


COMPILERS: dict[str, Compiler] = {
    "numpy": _compile_numpy,
    "numba": _compile_numba,
    "numba-cuda": _compile_cuda,
}
"""Every kernel backend, by name (those of `BACKENDS` and `GPU_BACKENDS`)."""

_cache: weakref.WeakKeyDictionary[KernelFuncOp, dict[str, CompiledKernel]] = (
    weakref.WeakKeyDictionary()
)


def compile_kernel(func: KernelFuncOp, backend: str = "numpy") -> CompiledKernel:
    """Compile `func` for `backend` (in `BACKENDS` or `GPU_BACKENDS`), once per kernel op
    and backend.

    Raises a located `KernelError` for an op the backends do not support.
    """
    if backend not in BACKENDS + GPU_BACKENDS:
        raise DevplanError(
            f"error: unknown kernel backend '{backend}'; choose one of "
            f"{', '.join(BACKENDS + GPU_BACKENDS)}"
        )
    compiled = _cache.setdefault(func, {})
    found = compiled.get(backend)
    if found is not None:
        return found
    kernel = Kernel(func)
    run, source = COMPILERS[backend](kernel)
    found = CompiledKernel(kernel, backend, run, source)
    compiled[backend] = found
    return found
