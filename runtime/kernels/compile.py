"""Compile a `kernel.func` for a kernel backend, once per kernel op and backend.

The backends are one table, `COMPILERS`, from a backend's name to the function that
compiles a kernel for it; each entry imports its backend's module when first used, so that
a process that never compiles for Numba or CUDA does not load them. Compiling counts on
the compile clock (`compile_clock`), whose progress line names the kernel, the device it
is compiled for and the backend.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from ...diagnostics import DevplanError
from ...dialects.kernel import KernelFuncOp
from ..compile_clock import compiling
from .common import Kernel
from .launch import CompiledKernel

BACKENDS = ("numpy", "numba")
"""The CPU kernel backends: they run on NumPy arrays, on any machine."""

GPU_BACKENDS = ("numba-cuda",)
"""Kernel backends that need an NVIDIA GPU (or Numba's CUDA simulator)."""

Compiler = Callable[[Kernel, str], tuple[Callable[..., None], str]]
"""Compiles a kernel for one backend: its launcher `run(grid, block, args)` and its
generated source. The second argument is what the kernel's progress lines say it is
(`kernel @add for cuda:0 (numba)`): the Numba backend, which compiles at the first
launch, says `compiling <that>` then."""


def _compile_numpy(kernel: Kernel, what: str) -> tuple[Callable[..., None], str]:
    from .numpy_backend import compile_numpy

    return compile_numpy(kernel)


def _compile_numba(kernel: Kernel, what: str) -> tuple[Callable[..., None], str]:
    from .numba_backend import compile_numba

    return compile_numba(kernel, what)


def _compile_cuda(kernel: Kernel, what: str) -> tuple[Callable[..., None], str]:
    from .cuda_backend import compile_cuda

    return compile_cuda(kernel, what)


COMPILERS: dict[str, Compiler] = {
    "numpy": _compile_numpy,
    "numba": _compile_numba,
    "numba-cuda": _compile_cuda,
}
"""Every kernel backend, by name (those of `BACKENDS` and `GPU_BACKENDS`)."""

_cache: weakref.WeakKeyDictionary[KernelFuncOp, dict[str, CompiledKernel]] = (
    weakref.WeakKeyDictionary()
)


def compile_kernel(
    func: KernelFuncOp, backend: str = "numpy", device: str | None = None
) -> CompiledKernel:
    """Compile `func` for `backend` (in `BACKENDS` or `GPU_BACKENDS`), once per kernel op
    and backend; `device` (a name such as `cuda:0`) is only said in progress lines.

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
    what = f"kernel @{func.sym_name.data}{f' for {device}' if device else ''} ({backend})"
    with compiling(f"compiling {what}"):
        kernel = Kernel(func)
        run, source = COMPILERS[backend](kernel, what)
    found = CompiledKernel(kernel, backend, run, source)
    compiled[backend] = found
    return found
