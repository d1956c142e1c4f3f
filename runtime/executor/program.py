"""A level-2 module compiled once into Python callables (`Program`), and its runs.

Every `func.func` becomes a `CompiledFunction` of closures (host code: one slot per SSA
value, one step per op); the `device` ops compile to steps that call the DeviceAPI of
their device (`device_ops.py`); each `device.launch` compiles its kernel on first use,
once per kernel and backend. `Program.run` binds the inputs (`inputs.py`), runs the entry
function and finishes the run: results copied to the host, the driver's buffers freed,
every stream synchronised, buffers still live listed as leaks in the report (an error
with `strict=True`).

Host code sees host memory only: `memref.load`/`store` on memory of a device is an
error unless the system makes that scope host-visible (a CPU device, a "host" scope).
"""

from __future__ import annotations

import time
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import BFloat16Type, DenseIntOrFPElementsAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from ...analysis.dtypes import numpy_dtype
from ...diagnostics import DevplanError, error_at
from ...dialects import device as dev
from ...dialects.kernel import KernelModuleOp
from ...dialects.kernel_arguments import atomic_arguments, stored_arguments
from ...dialects.virtual_device import DeviceAttr, memory_space_of
from ...system.description import System
from ..device_api import Buffer
from ..host.frame import CompiledFunction, Frame, Getter, Step, run_steps
from ..host.ops import HOST_OPS
from ..host.values import element_type
from .device_ops import DEVICE_OPS
from .inputs import EntryFacts, bind_inputs, collect_outputs, entry_facts, find_entry
from .launch import launched_kernel
from .messages import placed_at, reason, ssa_name
from .state import (
    Execution,
    ExecutionResult,
    as_memref_type,
    memref_type_of,
    system_for,
)

if TYPE_CHECKING:
    from ..kernels.launch import CompiledKernel
    from ..runtime import Runtime

_SPARE_RUNTIMES = 2
"""The most runtimes of finished runs a program keeps for its next runs."""

KERNEL_BACKENDS = ("numpy", "numba", "numba-cuda")
"""Kernel backends a program may run its kernels with."""


def check_kernel_backend(kernel_backend: str) -> None:
    """An error when `kernel_backend` is not one of `KERNEL_BACKENDS`, or is
    "numba-cuda" on a machine with neither a GPU nor the simulator."""
    if kernel_backend not in KERNEL_BACKENDS:
        raise DevplanError(
            f"error: unknown kernel backend '{kernel_backend}'; valid: {', '.join(KERNEL_BACKENDS)}"
        )
    if kernel_backend == "numba-cuda":
        from ..kernels.cuda_backend import numba_cuda

        numba_cuda()


class Program:
    """A level-2 module compiled once to closures; `run` executes an entry function."""

    def __init__(self, module: ModuleOp, kernel_backend: str) -> None:
        self.module = module
        self.kernel_backend = kernel_backend
        self.functions: dict[str, CompiledFunction] = {}
        self.kernels: dict[str, CompiledKernel] = {}
        """Compiled kernels by "@module::@kernel", filled on first launch."""
        self.globals: dict[str, np.ndarray[Any, Any]] = {}
        """Constant `memref.global` data by name (read-only host arrays)."""
        self._slots: dict[SSAValue, int] = {}
        self._entry_facts: dict[func.FuncOp, EntryFacts] = {}
        self._own_system: System | None = None
        """The system runs use when given none (see `run`), resolved on first use."""
        self._spares: list[Runtime] = []
        """Runtimes of finished runs that leaked nothing, which the next runs renew rather
        than build anew (`Runtime.from_system`); one a run, so runs at once in several
        threads never share one."""
        for op in module.ops:
            if isinstance(op, func.FuncOp):
                self.functions[op.sym_name.data] = CompiledFunction(op.sym_name.data, op)
            elif isinstance(op, memref.GlobalOp):
                self.globals[op.sym_name.data] = _global_data(op)
            elif not isinstance(op, KernelModuleOp):
                raise error_at(
                    op,
                    f"'{op.name}' at the top level of a program is not supported by the "
                    "executor (expected func.func, kernel.module and memref.global)",
                )
        for compiled in self.functions.values():
            self._compile_function(compiled)

    # -- the compiler protocols of host code and device ops ----------------------------------

    def slot(self, value: SSAValue) -> int:
        index = self._slots.get(value)
        if index is None:
            index = self._slots[value] = len(self._slots) + 1
        return index

    def compile_block(self, block: Block) -> Step:
        ops = list(block.ops)
        body = ops[:-1] if ops and ops[-1].has_trait(IsTerminator) else ops
        return run_steps([self._compile_op(op) for op in body])

    def host_memory(self, op: Operation, value: SSAValue, write: bool) -> Getter:
        space = memory_space_of(memref_type_of(value))
        s = self.slot(value)
        if space is None:
            return _host_array_getter(op, value, s, write)
        return _device_memory_getter(op, s, write, space)

    def call_target(self, op: Operation, name: str) -> CompiledFunction:
        callee = self.functions.get(name)
        if callee is None:
            known = ", ".join(f"@{n}" for n in self.functions) or "none"
            raise error_at(
                op, f"'{op.name}' calls @{name}, which is not a function (known: {known})"
            )
        return callee

    # -- functions and ops -------------------------------------------------------------------

    def _compile_function(self, compiled: CompiledFunction) -> None:
        op = compiled.op
        self._slots = compiled.slots
        if not op.body.blocks:
            return  # a declaration: calling it is an error (CompiledFunction.__call__)
        if len(op.body.blocks) > 1:
            raise error_at(
                op,
                f"function @{compiled.name} has {len(op.body.blocks)} blocks; the executor "
                "runs structured control flow (scf) only, not branches between blocks",
            )
        block = op.body.block
        compiled.arg_slots = tuple(self.slot(a) for a in block.args)
        last = block.last_op
        compiled.body = self.compile_block(block)
        compiled.result_slots = (
            tuple(self.slot(v) for v in last.operands) if isinstance(last, func.ReturnOp) else ()
        )
        compiled.nslots = len(self._slots) + 1

    def _compile_op(self, op: Operation) -> Step:
        compile_ = HOST_OPS.lookup(op) or DEVICE_OPS.lookup(op)
        if compile_ is None:
            raise error_at(
                op,
                f"'{op.name}' is not supported by the executor in host code; it runs func, "
                "arith, math, scf (for, if, while), memref (alloc, alloca, dealloc, load, "
                "store, dim, cast, memory_space_cast), cf.assert and device ops",
            )
        return compile_(self, op)

    def kernel(
        self, op: dev.LaunchOp, device: str | None = None
    ) -> tuple[CompiledKernel, tuple[int, ...], tuple[int, ...]]:
        """The launch's kernel compiled for this program's backend (for `device`, which its
        progress line names), the indices of the arguments it writes, and of those it
        touches only through atomics."""
        from ..kernels.compile import compile_kernel

        key = str(op.kernel)
        found = launched_kernel(op)
        compiled = self.kernels.get(key)
        if compiled is None:
            compiled = self.kernels[key] = compile_kernel(found, self.kernel_backend, device)
        return compiled, stored_arguments(found), atomic_arguments(found)

    def entry_facts(self, function: func.FuncOp) -> EntryFacts:
        """The `EntryFacts` of the entry `function`, found on first use."""
        facts = self._entry_facts.get(function)
        if facts is None:
            facts = self._entry_facts[function] = entry_facts(function)
        return facts

    # -- running -------------------------------------------------------------------------------

    def run(
        self,
        inputs: Sequence[object],
        entry: str = "main",
        system: System | str | Path | None = None,
        strict: bool = False,
    ) -> ExecutionResult:
        """Run `@entry` on `inputs` on a new `Runtime` of `system` (None: the module's
        own `vdev.system`, else the embedded default): the runtime of an earlier run
        that leaked nothing renewed when it can be (`Runtime.from_system`), which
        behaves as one built anew and saves building its DeviceAPIs again."""
        from ..runtime import Runtime

        compiled = self.functions.get(entry)
        if compiled is None or not compiled.op.body.blocks:
            find_entry(self.module, entry)  # raises the error that names the functions
            raise AssertionError("unreachable")
        function = compiled.op
        if system is None:
            # The module's own system (or the default one) is read once per program:
            # parsing its TOML costs more than a small run.
            if self._own_system is None:
                self._own_system = system_for(self.module, None)
            resolved = self._own_system
        else:
            resolved = system_for(self.module, system)
        try:
            spare: Runtime | None = self._spares.pop()  # (atomic: runs may overlap)
        except IndexError:
            spare = None
        runtime = Runtime.from_system(resolved, spare=spare)
        ex = Execution(runtime, resolved)
        # A renewed runtime brings the launch sites of its last run (`LaunchSite.renew`).
        ex.launch_sites = cast(dict[Operation, Any], runtime.kept)
        began = time.perf_counter()
        # Kernels run under this error state (IEEE results are values, not warnings);
        # the teardown is inside it too, since it runs what async work is still queued.
        with np.errstate(all="ignore"), _abandoned_on_fault(runtime):
            args, owned = bind_inputs(ex, function, inputs, self.entry_facts(function))
            results = compiled(ex, args)
            outputs, returned = collect_outputs(ex, function, results)
            for buffer in (*owned, *returned):
                api = buffer.api
                if buffer.is_live and api is not None:
                    release = (
                        api.free_workspace if buffer.kind == "workspace" else api.free_data_space
                    )
                    release(buffer.device, buffer, at="the end of the run")
            leaks = runtime.teardown()
        # The run is over: what its launches and frees hold of its memory goes, so that
        # host arrays nothing else holds die now and their blocks serve the next run.
        for site in ex.launch_sites.values():
            site.release()
        ex.freed_host.clear()
        report = runtime.final_report(wall_seconds=time.perf_counter() - began)
        if not leaks and len(self._spares) < _SPARE_RUNTIMES:
            self._spares.append(runtime)
        if strict and leaks:
            listed = "; ".join(b.describe() for b in leaks)
            raise DevplanError(
                f"error: {len(leaks)} device buffer(s) leaked at the end of @{entry} "
                f"(never freed): {listed}"
            )
        return ExecutionResult(outputs, report, leaks)


@contextmanager
def _abandoned_on_fault(runtime: Any) -> Generator[None]:
    """A run that fails abandons its runtime: remote devices free its memory."""
    try:
        yield
    except BaseException:
        runtime.abandon()  # (a `Runtime`: imported where runs start, as `run` does)
        raise


def _global_data(op: memref.GlobalOp) -> np.ndarray[Any, Any]:
    """The data of a constant `memref.global` as a read-only host array."""
    type_ = as_memref_type(op.type)
    value = op.initial_value
    if op.constant is None or not isinstance(value, DenseIntOrFPElementsAttr):
        raise error_at(
            op,
            "the executor runs constant memref.global ops with dense<...> data only "
            f"(@{op.sym_name.data} is {'not constant' if op.constant is None else 'not dense'})",
        )
    dtype = numpy_dtype(element_type(type_))
    shape = tuple(d.data for d in type_.shape)
    values: list[Any] = list(value.get_values())
    if isinstance(element_type(type_), BFloat16Type):
        # Memory holds bf16 bit patterns: each value is rounded to its pattern, not
        # converted to uint16 as a number.
        from .. import semantics  # here, not at the top: it loads Numba

        values = list(semantics.narrow_ufuncs("bf16")[2](np.array(values, np.float64)))
    data = (
        np.full(shape, values[0], dtype)
        if len(values) == 1
        else np.array(values, dtype).reshape(shape)
    )
    data.flags.writeable = False
    return data


def _host_array_getter(op: Operation, value: SSAValue, s: int, write: bool) -> Getter:
    name = ssa_name(value)
    # A memref typed as host memory may still hold a device buffer (a
    # memref.memory_space_cast from a device's space): the DeviceAPI decides whether
    # the host may touch it, as for a memref typed with the device's space.
    device_memory = _device_memory_getter(op, s, write, None)

    def get(f: Frame) -> np.ndarray[Any, Any]:
        array = f[s]
        if isinstance(array, Buffer):
            return device_memory(f)
        ex: Execution = f[0]
        freed = ex.freed_host.get(id(array))
        if freed is not None:
            raise error_at(
                op, f"'{op.name}' uses {name}, host memory freed by memref.dealloc at {freed[1]}"
            )
        try:
            ex.runtime.scheduler.check_host_access(
                array, lambda: _host_array_name(name, array), write
            )
        except DevplanError as e:
            raise placed_at(op, e) from None
        return array

    return get


def _host_array_name(name: str, array: np.ndarray[Any, Any]) -> str:
    return f"{name} (host memory, {'x'.join(map(str, array.shape))}x{array.dtype})"


def _device_memory_getter(op: Operation, s: int, write: bool, space: DeviceAttr | None) -> Getter:
    def get(f: Frame) -> np.ndarray[Any, Any]:
        buffer = f[s]
        if not isinstance(buffer, Buffer):
            return buffer  # a host array bound to a host-visible memory space
        api = buffer.api
        assert api is not None
        try:
            return api.host_view(buffer, write=write)
        except DevplanError as e:
            raise error_at(
                op,
                f"'{op.name}' in host code {'writes' if write else 'reads'} memory of "
                f"{space or buffer.device}: {reason(e)}",
            ) from None

    return get
