"""`devplan.execute`: a program run on the executor, a level-1 program lowered first.

A level-1 module (tensors) runs through `default-pipeline` first, on a copy, so the
caller's module does not change; a level-2 module runs as it is. The compiled program
is kept for later runs of the same module object on the same kernel backend
(`compile_program`), and `devplan.apply` forgets the programs of the module it changes
(`forget_programs`); a module changed by other means after it ran must be parsed or
cloned anew.

The programs are kept outside the IR, in a table keyed weakly by the module. A program
is compiled from a copy of the module (the lowered copy, at level 1): a program refers
to the ops it was compiled from, and they to their module, so a program compiled from
the module itself would keep its key, and itself, alive.

The runtime is imported on first use, not with this module, so that `devplan.apply`
(which imports it to forget programs) keeps `import devplan` light.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType

from .diagnostics import check_argument, with_deep_stack

if TYPE_CHECKING:
    from .runtime.executor import ExecutionResult, Program
    from .system.description import System

_PROGRAMS: weakref.WeakKeyDictionary[ModuleOp, dict[str, Program]] = weakref.WeakKeyDictionary()
"""The programs compiled from each module, by kernel backend."""


def compile_program(module: ModuleOp, kernel_backend: str = "numpy") -> Program:
    """The program `module` compiles to for `kernel_backend`, compiled once per module
    object and backend; a level-1 module is lowered once for every backend, and the
    program's `.module` is the lowered copy."""
    from .runtime.executor import Program, check_kernel_backend

    check_kernel_backend(kernel_backend)  # before any lowering
    per_backend = _PROGRAMS.setdefault(module, {})
    program = per_backend.get(kernel_backend)
    if program is None:
        compiled = next(iter(per_backend.values()), None)
        if compiled is not None:
            copy = compiled.module
        elif is_level_1(module):
            copy = lower_level_1(module)
        else:
            copy = module.clone()
            lower_host_linalg(copy)
        program = per_backend[kernel_backend] = Program(copy, kernel_backend)
    return program


def forget_programs(module: ModuleOp) -> None:
    """Drop the programs compiled from `module`: it is about to change."""
    _PROGRAMS.pop(module, None)


def is_level_1(module: ModuleOp) -> bool:
    """Whether `module` has tensor values (a level-1 program)."""
    for op in module.walk():
        if isinstance(op, func.FuncOp):
            types = [*op.function_type.inputs.data, *op.function_type.outputs.data]
            if any(isinstance(t, TensorType) for t in types):
                return True
        elif any(isinstance(r.type, TensorType) for r in op.results):
            return True
    return False


def lower_host_linalg(module: ModuleOp) -> None:
    """Linalg ops on memrefs (MLIR's buffer form) become loops host code runs."""
    from xdsl.context import Context

    from .passes.host_linalg_to_loops import HostLinalgToLoopsPass

    HostLinalgToLoopsPass().apply(Context(), module)


def lower_level_1(module: ModuleOp) -> ModuleOp:
    """A copy of level-1 `module` run through `default-pipeline` (plan, lower, classify).

    Each function of the copy remembers the level-1 type it was lowered from, so that
    messages about inputs speak of the tensors the user wrote.
    """
    from xdsl.context import Context

    from .passes.default_pipeline import DefaultPipelinePass
    from .runtime.executor import record_source_type

    lowered = module.clone()
    # The passes of default-pipeline build IR from op classes and never look a dialect
    # up in the context; `devplan.context()` is the package root's, which imports this
    # module.
    DefaultPipelinePass().apply(Context(), lowered)
    written = {f.sym_name.data: f.function_type for f in module.ops if isinstance(f, func.FuncOp)}
    for function in lowered.ops:
        if isinstance(function, func.FuncOp) and function.sym_name.data in written:
            record_source_type(function, written[function.sym_name.data])
    return lowered


@with_deep_stack
def execute(
    module: ModuleOp,
    inputs: Sequence[object],
    entry: str = "main",
    system: System | str | Path | None = None,
    kernel_backend: str = "numpy",
    strict: bool = False,
) -> ExecutionResult:
    """Run `@entry` of a program on `inputs`; `.outputs` (host NumPy values), `.report`.

    A level-1 (tensor) program runs through `default-pipeline` first (on a copy).

    Memref arguments take NumPy arrays, scalars Python int/float/bool; `system` is
    None (the embedded default), a TOML path or a `System`; `strict` makes leaked
    device buffers an error. How a run goes: the `devplan.runtime.executor` docstring.
    `system` wins over the module's own `vdev.system`. An argument of the wrong type
    raises `DevplanError` naming the parameter.
    """
    from .system.description import System

    name = "devplan.execute"
    check_argument(name, "module", module, ModuleOp, "a builtin.module (devplan.parse gives one)")
    check_argument(name, "inputs", inputs, (list, tuple), "a list of NumPy arrays and scalars")
    check_argument(name, "entry", entry, str, 'a function name such as "main"')
    check_argument(
        name, "system", system, (System, str, Path, type(None)), "None, a System or a TOML path"
    )
    check_argument(name, "kernel_backend", kernel_backend, str, '"numpy", "numba" or "numba-cuda"')
    check_argument(name, "strict", strict, bool, "True or False")
    return compile_program(module, kernel_backend).run(inputs, entry, system, strict)


__all__ = [
    "compile_program",
    "execute",
    "forget_programs",
    "is_level_1",
    "lower_level_1",
]
