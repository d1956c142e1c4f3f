"""The executor: runs level-2 devplan programs on a `Runtime` (DESIGN §5, §6).

`execute(module, inputs)` compiles the module once into a `Program` (cached per
module object and kernel backend) and runs its entry function:

1. **Compile** (once). Every `func.func` becomes a `CompiledFunction` of closures
   (`host.py`: one slot per SSA value, one step per op). The `device` ops compile
   to steps that call the DeviceAPI of their device; each `device.launch` compiles
   its kernel through `compile_kernel` on first use (once per kernel and backend)
   and knows statically which arguments the kernel stores to.
2. **Bind inputs.** NumPy arrays become host memory (copied, so a run never changes
   its inputs) or, for an argument whose memory space is a device, a buffer on
   that device filled by a copy (the host side of a driver); Python scalars become
   run-time values of the argument's type. Wrong count, shape, dtype or type is an
   error naming the argument and the signature.
3. **Run.** Synchronous copies and launches block (run on the device's default
   stream); `async` ones go on streams of the device that performs them — one
   compute stream per device for launches, one stream per copy direction (as one
   copy engine per direction of a link) — ordered after their dependency tokens (a
   token is the runtime's stream token; `device.wait` waits for the given tokens,
   or for everything when given none). Each launch declares its cost-model time
   (`kernel_cost`, from the one cost model of `cost.py`), copies get theirs from the
   system's links. The runtime defers
   async work until something needs it and checks every ordering: host reads of
   memory with a pending async write, unordered async accesses to one buffer
   (races), use after free, double free, out of memory, buffers of another device.
   Each such error is re-raised at the op that caused it (`file:line:col: error:
   'device.launch' ...`). A blocking launch that repeats its op's last launch (the
   same grid, block and argument objects, no buffer of its device freed since,
   nothing queued) skips the checks that launch passed and runs the compiled kernel
   on the views it saw (`_launch`); any other launch takes the general path.
4. **Finish.** Results are copied to host NumPy values (memrefs as arrays, scalars
   as NumPy scalars); the driver frees the device buffers it made for arguments and
   results; every stream is synchronised; buffers still live are leaks, listed in
   the report (an error with `strict=True`).

Host code sees host memory only: `memref.load`/`store` on memory of a device is an
error unless the system makes that scope host-visible (a CPU device, a "host" scope).
"""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FunctionType,
    MemRefType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from ..diagnostics import (
    DevplanError,
    LocatedError,
    check_argument,
    describe_value,
    diagnostic_at,
    error_at,
    location_of,
    with_deep_stack,
)
from ..dialects import device as dev
from ..dialects.kernel import (
    AllocSharedOp,
    KernelFuncOp,
    KernelModuleOp,
    atomic_arguments,
    known_sizes,
    launch_size_conflict,
    stored_arguments,
)
from ..dialects.vdev import DeviceAttr, memory_space_of
from ..passes.pipeline import COMPILED_PROGRAMS_ATTRIBUTE
from ..system.cost import WORK_ATTR, CostModel, kernel_work
from ..system.description import System
from . import runner_utils  # noqa: F401  # pyright: ignore[reportUnusedImport]  (registers vector.print & co.)
from .device_api import Buffer, Device, DeviceAPI, copy_performer
from .host import (
    HOST_OPS,
    CompiledFunction,
    Frame,
    Getter,
    Step,
    element_type,
    from_python,
    machine_memory,
    numpy_dtype,
    run_steps,
    shape_with,
    to_numpy_scalar,
    wrapper,
)
from .kernels.launch import MAX_GRID, grid_beyond_limit
from .kernels.watchdog import StoppedError
from .semantics import narrow_ufuncs

if TYPE_CHECKING:
    from .kernels.launch import CompiledKernel
    from .report import Report
    from .runtime import Runtime
    from .streams import Stream, Token

KERNEL_BACKENDS = ("numpy", "numba", "numba-cuda")
"""Kernel backends `execute` accepts."""


# ---------------------------------------------------------------------------------------
# Results and the per-run state


@dataclass
class ExecutionResult:
    """What a run gives back.

    `outputs` has one entry per result of the entry function: a memref result is a
    NumPy array (a host copy, whatever memory it lived in), a scalar result a NumPy
    scalar of its type (`np.float32`, `np.int64` for `index`, `np.bool_` for `i1`;
    `.shape == ()`, so `np.asarray` gives a 0-d array).
    """

    outputs: list[Any]
    report: Report
    leaks: list[Buffer] = field(default_factory=list[Buffer])
    """Device buffers the program allocated and never freed."""


class Execution:
    """The state of one run, kept in slot 0 of every frame."""

    def __init__(self, program: Program, runtime: Runtime, system: System) -> None:
        self.program = program
        self.runtime = runtime
        self.system = system
        self.apis: dict[Device, DeviceAPI] = {}
        self.streams: dict[tuple[Device, str], Stream] = {}
        self.atomic_streams: dict[Device, list[Stream]] = {}
        """Per device, the streams of async launches of kernels with atomics
        (`unordered_stream`)."""
        self.freed_host: dict[int, tuple[np.ndarray[Any, Any], str]] = {}
        """Host arrays freed by memref.dealloc (kept alive so their ids stay unique)."""
        self.max_threads: dict[Device, float] = {}
        """Each device's max_threads_per_block (infinity when it reports none)."""
        self.launch_sites: dict[Operation, _LaunchSite] = {}
        """Per `device.launch` op, what its launches in this run share."""
        self.host_capacity = host_capacity(system)
        """Bytes of host memory (`memref.alloc` beyond it is out of host memory)."""

    def api(self, device: Device, op: Operation) -> DeviceAPI:
        """The DeviceAPI of `device`; a located error at `op` when the system lacks it."""
        api = self.apis.get(device)
        if api is None:
            try:
                api = self.runtime.api(device)
            except DevplanError as e:
                raise error_at(op, f"'{op.name}' on {device}: {_text(e)}") from None
            self.apis[device] = api
        return api

    def limit(self, device: Device, api: DeviceAPI) -> float:
        """The device's max_threads_per_block (infinity when it reports none)."""
        limit = self.max_threads.get(device)
        if limit is None:
            value = api.get_attr(device, "max_threads_per_block")
            limit = self.max_threads[device] = value if isinstance(value, int) else math.inf
        return limit

    def stream(self, device: Device, purpose: str, op: Operation) -> Stream:
        """The stream of `device` for async work of one kind ("compute", or a copy
        direction such as "copy cpu:0->cuda:0"), created on first use."""
        stream = self.streams.get((device, purpose))
        if stream is None:
            stream = self.api(device, op).create_stream(device)
            self.streams[(device, purpose)] = stream
        return stream

    def unordered_stream(self, device: Device, wait_for: Sequence[Token], op: Operation) -> Stream:
        """A stream for an async launch of a kernel with atomic arguments, which orders it
        after nothing but `wait_for` (MLIR's `gpu.launch_func async` is ordered only by
        its tokens): a stream whose last operation has run or is waited for, else a new
        one. Launches that meet only through atomics can then run at once (see
        `Scheduler`); other async launches share one stream per device, as before."""
        pool = self.atomic_streams.setdefault(device, [])
        for stream in pool:
            last = stream.last
            if last is None or last.done or any(last is t for t in wait_for):
                return stream
        stream = self.api(device, op).create_stream(device)
        pool.append(stream)
        return stream


def _text(error: BaseException) -> str:
    """An error's message without a leading "error: " (it is re-placed at an op)."""
    return str(error).removeprefix("error: ")


def _at(op: Operation, error: DevplanError) -> LocatedError:
    """`error` from the runtime, placed at `op` (kept as is when it is already placed)."""
    if isinstance(error, LocatedError):
        return error
    return error_at(op, f"'{op.name}' {_text(error)}")


def _ssa(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "a buffer"


def _label(value: SSAValue, op: Operation) -> str:
    """How a buffer is named in messages: its SSA name and where it was made."""
    return f"{_ssa(value)} at {_where(op)}"


def _where(op: Operation) -> str:
    """`file:line:col` of `op`, for run-time messages."""
    loc = location_of(op)
    return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}" if loc else "<unknown>"


def device_of(attr: DeviceAttr, op: Operation) -> Device:
    """The runtime `Device` a fully constrained `#vdev.device` names."""
    if attr.type_name is None or attr.device_id is None:
        raise error_at(op, f"'{op.name}' needs a device with a type and an id, got {attr}")
    return Device(attr.type_name, attr.device_id)


def _memref_type(value: SSAValue) -> MemRefType[Attribute]:
    type_: Any = value.type
    assert isinstance(type_, MemRefType)
    return type_  # pyright: ignore[reportUnknownVariableType]


# ---------------------------------------------------------------------------------------
# Compilation


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
        self._entry_facts: dict[func.FuncOp, tuple[tuple[bool, ...], tuple[str, ...]]] = {}
        self._own_system: System | None = None
        """The system runs use when given none (see `run`), resolved on first use."""
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

    # -- the Compiler protocol of host.py ---------------------------------------------------

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
        space = memory_space_of(_memref_type(value))
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
        compile_ = HOST_OPS.get(op.name) or DEVICE_OPS.get(op.name)
        if compile_ is None:
            raise error_at(
                op,
                f"'{op.name}' is not supported by the executor in host code; it runs func, "
                "arith, math, scf (for, if, while), memref (alloc, alloca, dealloc, load, "
                "store, dim, cast, memory_space_cast), cf.assert and device ops",
            )
        return compile_(self, op)

    def kernel(self, op: dev.LaunchOp) -> tuple[CompiledKernel, tuple[int, ...], tuple[int, ...]]:
        """The launch's kernel compiled for this program's backend, the indices of the
        arguments it writes, and of those it touches only through atomics."""
        from .kernels.compile import compile_kernel

        key = str(op.kernel)
        found = _lookup_kernel(op)
        compiled = self.kernels.get(key)
        if compiled is None:
            compiled = self.kernels[key] = compile_kernel(found, self.kernel_backend)
        return compiled, stored_arguments(found), atomic_arguments(found)

    def entry_facts(self, function: func.FuncOp) -> tuple[tuple[bool, ...], tuple[str, ...]]:
        """Per argument of the entry `function`: whether host code only reads it
        (`_only_read`), and its name in messages; found on first use."""
        facts = self._entry_facts.get(function)
        if facts is None:
            count = len(function.function_type.inputs.data)
            names = tuple(_argument_name(function, i) for i in range(count))
            facts = self._entry_facts[function] = (_only_read(function), names)
        return facts

    # -- running -------------------------------------------------------------------------------

    def run(
        self,
        inputs: Sequence[object],
        entry: str = "main",
        system: System | str | Path | None = None,
        strict: bool = False,
    ) -> ExecutionResult:
        from .runtime import Runtime

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
        runtime = Runtime.from_system(resolved)
        ex = Execution(self, runtime, resolved)
        began = time.perf_counter()
        # Kernels run under this error state (IEEE results are values, not warnings);
        # the teardown is inside it too, since it runs what async work is still queued.
        with np.errstate(all="ignore"):
            args, owned = _bind_inputs(ex, function, inputs)
            results = compiled(ex, args)
            outputs, returned = _collect_outputs(ex, function, results)
            for buffer in (*owned, *returned):
                api = buffer.api
                if buffer.is_live and api is not None:
                    release = (
                        api.free_workspace if buffer.kind == "workspace" else api.free_data_space
                    )
                    release(buffer.device, buffer, at="the end of the run")
            leaks = runtime.teardown()
        report = runtime.report(wall_seconds=time.perf_counter() - began)
        if strict and leaks:
            listed = "; ".join(b.describe() for b in leaks)
            raise DevplanError(
                f"error: {len(leaks)} device buffer(s) leaked at the end of @{entry} "
                f"(never freed): {listed}"
            )
        return ExecutionResult(outputs, report, leaks)


def system_for(module: ModuleOp, system: System | str | Path | None) -> System:
    """The system a run of `module` uses: `system` when given (it wins), else the
    module's own `vdev.system`, else the embedded default."""
    if system is not None:
        return System.resolve(system)
    return System.from_module(module) or System.default()


def _global_data(op: memref.GlobalOp) -> np.ndarray[Any, Any]:
    """The data of a constant `memref.global` as a read-only host array."""
    type_ = _type_as_memref(op.type)
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
        # Memory holds bf16 bit patterns: round each value once to them (uint16(1.5) was 1).
        values = list(narrow_ufuncs("bf16")[2](np.array(values, np.float64)))
    data = (
        np.full(shape, values[0], dtype)
        if len(values) == 1
        else np.array(values, dtype).reshape(shape)
    )
    data.flags.writeable = False
    return data


def _lookup_kernel(op: dev.LaunchOp) -> KernelFuncOp:
    from ..dialects.kernel import lookup_kernel

    found = lookup_kernel(op, op.kernel)
    if found is None:
        raise error_at(op, f"'device.launch' of {op.kernel}: no such kernel.func")
    return found


# ---------------------------------------------------------------------------------------
# Host memory access from host code


def _host_array_getter(op: Operation, value: SSAValue, s: int, write: bool) -> Getter:
    name = _ssa(value)
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
            raise _at(op, e) from None
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
                f"{space or buffer.device}: {_text(e)}",
            ) from None

    return get


# ---------------------------------------------------------------------------------------
# device ops

DEVICE_OPS: dict[str, Callable[[Program, Operation], Step]] = {}
"""Op name -> compiler for the `device` ops (and memref.dealloc, which needs run state)."""


def _device_op(
    *names: str,
) -> Callable[[Callable[[Program, Any], Step]], Callable[[Program, Any], Step]]:
    """Register a compiler for the ops `names` (a sync and an async form, or a data and
    a workspace form: it tells them apart by the op's class)."""

    def decorate(fn: Callable[[Program, Any], Step]) -> Callable[[Program, Any], Step]:
        for name in names:
            DEVICE_OPS[name] = fn
        return fn

    return decorate


@_device_op("device.alloc", "device.alloc_workspace")
def _allocation(p: Program, op: dev.AllocOp | dev.AllocWorkspaceOp) -> Step:
    workspace = isinstance(op, dev.AllocWorkspaceOp)
    type_ = _memref_type(op.result)
    space = memory_space_of(type_)
    if space is None:
        raise error_at(op, f"'{op.name}' of host memory {type_}; use memref.alloc")
    device = device_of(space, op)
    scope = space.scope or "global"
    shape = shape_with(op, type_, [p.slot(v) for v in op.dynamic_sizes])
    dtype = numpy_dtype(element_type(type_))
    r = p.slot(op.result)
    label = _label(op.result, op)

    def run(f: Frame) -> None:
        ex: Execution = f[0]
        api = ex.api(device, op)
        dims = shape(f)
        try:
            if workspace:
                nbytes = math.prod(dims) * dtype.itemsize
                buffer = api.alloc_workspace(device, nbytes, dtype, shape=dims, label=label)
            else:
                buffer = api.alloc_data_space(device, dims, dtype, scope, label=label)
        except DevplanError as e:
            raise _at(op, e) from None
        f[r] = buffer

    return run


@_device_op("device.free", "device.free_workspace")
def _release(p: Program, op: dev.FreeOp | dev.FreeWorkspaceOp) -> Step:
    workspace = isinstance(op, dev.FreeWorkspaceOp)
    s = p.slot(op.buffer)
    where = _where(op)

    def run(f: Frame) -> None:
        buffer = f[s]
        if not isinstance(buffer, Buffer):
            raise error_at(op, f"'{op.name}' of host memory; free it with memref.dealloc")
        api = buffer.api
        assert api is not None
        try:
            if workspace:
                api.free_workspace(buffer.device, buffer, at=where)
            else:
                api.free_data_space(buffer.device, buffer, at=where)
        except DevplanError as e:
            raise _at(op, e) from None

    return run


@_device_op("memref.dealloc")
def _dealloc(p: Program, op: memref.DeallocOp) -> Step:
    s = p.slot(op.memref)
    where = _where(op)

    def run(f: Frame) -> None:
        ex: Execution = f[0]
        array = f[s]
        if isinstance(array, Buffer):
            raise error_at(op, f"'memref.dealloc' of device memory ({array}); use device.free")
        freed = ex.freed_host.get(id(array))
        if freed is not None:
            raise error_at(
                op,
                f"'memref.dealloc' double free: {_ssa(op.memref)} was already freed by "
                f"memref.dealloc at {freed[1]}",
            )
        try:
            ex.runtime.scheduler.quiesce(array)
        except DevplanError as e:
            raise _at(op, e) from None
        ex.freed_host[id(array)] = (array, where)

    return run


@_device_op("memref.get_global")
def _get_global(p: Program, op: memref.GetGlobalOp) -> Step:
    name = op.name_.string_value()
    data = p.globals.get(name)
    if data is None:
        raise error_at(op, f"'memref.get_global' of @{name}, which is not a memref.global")
    r = p.slot(op.memref)

    def run(f: Frame) -> None:
        f[r] = data

    return run


@_device_op("device.copy", "device.copy_async")
def _copy_step(p: Program, op: dev.CopyOp | dev.CopyAsyncOp) -> Step:
    is_async = isinstance(op, dev.CopyAsyncOp)
    src, dst = p.slot(op.source), p.slot(op.destination)
    deps = tuple(p.slot(d) for d in op.dependencies) if isinstance(op, dev.CopyAsyncOp) else ()
    token_slot = p.slot(op.token) if isinstance(op, dev.CopyAsyncOp) else None
    label = f"{_ssa(op.source)} -> {_ssa(op.destination)} ({_where(op)})"

    def run(f: Frame) -> None:
        ex: Execution = f[0]
        source, destination = f[src], f[dst]
        for memory in (source, destination):
            if not isinstance(memory, Buffer) and id(memory) in ex.freed_host:
                raise error_at(
                    op,
                    f"'{op.name}' uses host memory freed by memref.dealloc at "
                    f"{ex.freed_host[id(memory)][1]}",
                )
        performer = _performer(source, destination, ex)
        stream = None
        if is_async:
            # One stream per copy direction, as one copy engine per direction of a link:
            # a download can overlap an upload.
            route = f"copy {_device_name(source, ex)}->{_device_name(destination, ex)}"
            stream = ex.stream(performer, route, op)
        try:
            token = ex.api(performer, op).copy_data_from_to(
                source, destination, stream, wait_for=[f[d] for d in deps], label=label
            )
        except DevplanError as e:
            raise _at(op, e) from None
        if token_slot is not None:
            f[token_slot] = token

    return run


def _device_name(memory: object, ex: Execution) -> str:
    return str(memory.device if isinstance(memory, Buffer) else ex.runtime.host)


def _performer(source: object, destination: object, ex: Execution) -> Device:
    """Whose DeviceAPI performs a copy: the source's unless it is CPU memory (TVM)."""
    host = ex.runtime.scheduler.host
    src = source.device if isinstance(source, Buffer) else host
    dst = destination.device if isinstance(destination, Buffer) else host
    return copy_performer(src, dst)


@_device_op("device.wait")
def _wait(p: Program, op: dev.WaitOp) -> Step:
    tokens = tuple(p.slot(t) for t in op.tokens)

    def run(f: Frame) -> None:
        ex: Execution = f[0]
        scheduler = ex.runtime.scheduler
        try:
            if tokens:
                for t in tokens:
                    scheduler.wait(f[t])
            else:
                scheduler.sync_all()
        except DevplanError as e:
            raise _at(op, e) from None

    return run


@_device_op("device.attr")
def _attr(p: Program, op: dev.AttrOp) -> Step:
    device = device_of(op.device, op)
    name = op.attr_name
    result_type = op.result.type
    r = p.slot(op.result)
    dtype = numpy_dtype(result_type)
    convert: Callable[[Any], Any] = (
        wrapper(result_type) if dtype.kind in "iub" else (lambda x: dtype.type(x))
    )

    def run(f: Frame) -> None:
        ex: Execution = f[0]
        try:
            value = ex.api(device, op).get_attr(device, name)
        except DevplanError as e:
            raise _at(op, e) from None
        if value is None or isinstance(value, str):
            raise error_at(
                op,
                f"'device.attr' \"{name}\" of {device}: "
                + (
                    "the device does not report it" if value is None else f"is the string {value!r}"
                ),
            )
        if dtype.kind in "iub":
            try:  # the value must fit the result type, not wrap around in it
                from_python(result_type, value, f"its result type {result_type}")
            except DevplanError:
                raise error_at(
                    op,
                    f"'device.attr' \"{name}\" of {device} is {value}, which does not fit "
                    f"in the result type {result_type} (use index or a wider integer)",
                ) from None
        f[r] = convert(int(value) if dtype.kind in "iub" else value)  # type: ignore[arg-type]

    return run


@_device_op("device.launch")
def _launch(p: Program, op: dev.LaunchOp) -> Step:
    device = device_of(op.device, op)
    gx, gy, gz = (p.slot(v) for v in op.grid)
    bx, by, bz = (p.slot(v) for v in op.block)
    # A launch that repeats the site's last one (the same sizes and argument objects,
    # none freed since, nothing queued, a blocking launch) reuses what the last one
    # checked and made and goes straight to the compiled kernel; any other launch takes
    # the general path (`_LaunchSite.launch`). This step is the executor's per-launch
    # overhead: keep the repeated case short.
    args = tuple(p.slot(v) for v in op.args)
    deps = tuple(p.slot(d) for d in op.dependencies)
    token_slot = p.slot(op.token) if op.token is not None else None
    name = f"{op.kernel}"
    where = _where(op)
    kernel_op = _lookup_kernel(op)
    cost = kernel_cost(op, kernel_op)
    shared = shared_bytes(kernel_op)
    label = f"{name} ({where})"
    blocking = token_slot is None and not deps
    read = operator.itemgetter(gx, gy, gz, bx, by, bz, *args, 0)
    """A launch's key: its grid, block and arguments (and the frame's execution, so that
    a key is never a single value)."""
    current: list[_LaunchSite | None] = [None]
    """The site of the run that launched last (runs of one program may overlap)."""

    def located(error: DevplanError) -> DevplanError:
        """A kernel's error placed at this launch: a fault gets a note naming the launch;
        an argument check (an async launch runs at a later wait) is placed at this op,
        not at whatever op made it run."""
        if isinstance(error, LocatedError):
            note = diagnostic_at(op, f"{name} launched here on {device}", kind="note")
            return type(error)(f"{error}\n{note}")
        return _at(op, error)

    def run(f: Frame) -> None:
        ex: Execution = f[0]
        site = current[0]
        if site is None or site.ex is not ex:
            site = ex.launch_sites.get(op)
            if site is None:
                site = ex.launch_sites[op] = _LaunchSite(
                    ex, p, device, op, blocking, name, shared, label, cost, located
                )
            current[0] = site
        key = read(f)
        if (
            all(map(operator.is_, key, site.key))
            and site.api.frees == site.frees
            and not site.scheduler.queued
            and len(ex.freed_host) == site.host_frees
        ):
            try:
                site.scheduler.run_kernel_now(
                    site.now, site.totals, label, site.run, site.grid, site.block, site.views,
                    site.seconds,
                )  # fmt: skip
            except DevplanError as e:
                raise located(e) from None
            return
        g: tuple[int, int, int] = key[:3]
        b: tuple[int, int, int] = key[3:6]
        if g != site.grid or b != site.block:
            site.resize(g, b)
        token = site.launch(f, key, list(key[6:-1]), deps)
        if token_slot is not None:
            f[token_slot] = token

    return run


_NO_KEY = (object(),)
"""A launch site's key before a launch ran at once: no launch's key begins like it."""


class _LaunchSite:
    """What one `device.launch` op uses in one run: its compiled kernel, the DeviceAPI of
    its device, the device's max_threads_per_block, the stream of an async launch, the
    last grid and block with their modelled time, and — after a blocking launch that ran
    at once — the arguments it took and the views the kernel saw, which a launch with the
    same arguments reuses while no buffer of the device is freed."""

    __slots__ = (
        "api",
        "atomics",
        "block",
        "cost",
        "device",
        "device_name",
        "ex",
        "frees",
        "grid",
        "host_frees",
        "kernel",
        "key",
        "known",
        "label",
        "limit",
        "located",
        "model",
        "name",
        "now",
        "op",
        "repeatable",
        "run",
        "scheduler",
        "seconds",
        "stream",
        "totals",
        "views",
        "writes",
    )  # fmt: skip

    def __init__(
        self,
        ex: Execution,
        p: Program,
        device: Device,
        op: dev.LaunchOp,
        blocking: bool,
        kernel: str,
        shared: int,
        label: str,
        cost: Callable[[CostModel, str, Sequence[int], Sequence[int]], float],
        located: Callable[[DevplanError], DevplanError],
    ) -> None:
        self.ex = ex
        self.op = op
        self.device = device
        self.name = kernel
        self.label = label
        self.cost = cost
        self.located = located
        self.kernel, self.writes, self.atomics = p.kernel(op)
        self.run = self.kernel.run_unchecked
        self.api = ex.api(device, op)
        backend = ex.program.kernel_backend
        backends = self.api.kernel_backends
        if backends is not None and backend not in backends:
            raise error_at(
                op,
                f"'device.launch' of {kernel} on {device}: the '{backend}' kernel backend "
                f"cannot run kernels on the memory of DeviceAPI '{self.api.api_name}'; use "
                f"kernel backend {' or '.join(repr(b) for b in backends)} "
                f"(devplan-run --kernel-backend {backends[0]})",
            )
        self.scheduler = self.api.scheduler
        self.model = self.scheduler.cost_model
        self.device_name = str(device)
        self.totals = self.scheduler.totals.kernel_totals(self.device_name)
        self.limit = ex.limit(device, self.api)
        self.known = known_sizes(_lookup_kernel(op))
        """The block and grid the kernel declares (`known_block_size`/`known_grid_size`)."""
        self.stream = None if blocking else ex.stream(device, "compute", op)
        """The stream of an async launch (None: blocking, on the device's current stream)."""
        self.now: Stream = self.api.get_current_stream(device)
        """The stream a blocking launch that runs at once runs on."""
        self.grid: tuple[int, int, int] | None = None
        self.block: tuple[int, int, int] | None = None
        self.seconds = 0.0
        self.key: tuple[Any, ...] = _NO_KEY
        """The key of the last launch that ran at once (see `_launch`), else `_NO_KEY`."""
        self.views: list[Any] = []
        """The arguments as that launch's kernel saw them."""
        self.frees = 0
        self.host_frees = 0
        api_type = type(self.api)
        self.repeatable = (
            api_type.launch is DeviceAPI.launch and api_type.kernel_views is DeviceAPI.kernel_views
        )
        """Whether a launch may be repeated without the DeviceAPI: only where it launches
        as `DeviceAPI` does (a DeviceAPI that launches its own way is always asked)."""
        capacity = self.api.get_attr(device, "max_shared_memory_per_block")
        if isinstance(capacity, int) and shared > capacity:  # unchecked when not reported
            raise error_at(
                op,
                f"'device.launch' of {kernel} needs {shared} bytes of shared memory per "
                f"block (kernel.alloc_shared), more than {device} has "
                f"(max_shared_memory_per_block = {capacity})",
            )

    def resize(self, g: tuple[int, int, int], b: tuple[int, int, int]) -> None:
        """Check a new grid and block (a located error when out of limits) and model the
        time of a launch of that size."""
        threads = b[0] * b[1] * b[2]
        if (
            g[0] < 1
            or g[1] < 1
            or g[2] < 1
            or threads < 1
            or threads > self.limit
            or g[0] > MAX_GRID[0]
            or g[1] > MAX_GRID[1]
            or g[2] > MAX_GRID[2]
        ):
            _reject_launch_sizes(self.ex, self.api, self.device, self.op, g, b)
        if self.known:
            for keyword, sizes in (("grid", g), ("block", b)):
                conflict = launch_size_conflict(self.name, self.known, keyword, sizes)
                if conflict is not None:
                    raise error_at(self.op, f"'device.launch' {conflict}")
        self.seconds = self.cost(self.model, self.device_name, g, b)
        self.grid, self.block = g, b

    def launch(
        self, f: Frame, key: tuple[Any, ...], values: list[Any], deps: tuple[int, ...]
    ) -> Token:
        """The general path: every check, the launch submitted through the DeviceAPI."""
        ex, op, kernel, located = self.ex, self.op, self.kernel, self.located
        g: tuple[int, int, int] = key[:3]
        b: tuple[int, int, int] = key[3:6]
        self.key = _NO_KEY
        if ex.freed_host:
            _check_not_freed(ex, op, values)

        def body(views: list[Any]) -> None:
            try:
                # The run holds np.errstate(all="ignore") until its teardown, the last
                # moment a kernel can run, so the kernel need not enter it again.
                kernel.launch(g, b, views)
            except StoppedError:
                raise  # not a fault of its own: the scheduler reports the one that was
            except DevplanError as e:
                raise located(e) from None

        api = self.api
        immediate = self.stream is None and not self.scheduler.queued
        wait_for: Sequence[Token] = [f[d] for d in deps] if deps else ()
        stream = self.stream
        if stream is not None and self.atomics:
            stream = ex.unordered_stream(self.device, wait_for, op)
        try:
            token = api.launch(
                self.device,
                body,
                values,
                name=self.label,
                seconds=self.seconds,
                stream=stream,
                wait_for=wait_for,
                writes=self.writes,
                atomics=self.atomics,
            )
        except DevplanError as e:
            raise _at(op, e) from None
        if immediate and self.repeatable and all(type(x) is int for x in key[:6]):
            # It ran at once and was accepted: the next launch with this key may skip
            # what was checked and reuse the views (see `_launch`).
            self.key = key
            self.views = api.kernel_views(self.label, values)
            self.frees = api.frees
            self.host_frees = len(ex.freed_host)
            self.now = api.get_current_stream(self.device)
        return token


def shared_bytes(kernel: KernelFuncOp) -> int:
    """Bytes of shared memory one block of `kernel` allocates (`kernel.alloc_shared`)."""
    total = 0
    for inner in kernel.walk():
        if isinstance(inner, AllocSharedOp):
            type_ = _memref_type(inner.result)
            total += math.prod(type_.get_shape()) * numpy_dtype(type_.element_type).itemsize
    return total


def _check_not_freed(ex: Execution, op: Operation, values: Sequence[Any]) -> None:
    for i, value in enumerate(values):
        if not isinstance(value, Buffer) and id(value) in ex.freed_host:
            raise error_at(
                op,
                f"'device.launch' argument {i} is host memory freed by memref.dealloc at "
                f"{ex.freed_host[id(value)][1]}",
            )


def kernel_cost(
    op: dev.LaunchOp, kernel: KernelFuncOp
) -> Callable[[CostModel, str, Sequence[int], Sequence[int]], float]:
    """The modelled time of a launch under the run's cost model (`cost.py`): the work
    `lower-to-device` recorded on the launch (`device.work`, the level-1 op's), else
    the kernel body's per-thread work times the launch's threads."""
    recorded = op.attributes.get(WORK_ATTR)
    if isinstance(recorded, DenseArrayBase):
        flops, nbytes = cast(tuple[int, int], tuple(recorded.get_values()))

        def recorded_cost(
            model: CostModel, device: str, grid: Sequence[int], block: Sequence[int]
        ) -> float:
            return model.kernel_seconds(device, flops, nbytes)

        return recorded_cost
    per_thread_flops, per_thread_bytes = kernel_work(kernel)

    def cost(model: CostModel, device: str, grid: Sequence[int], block: Sequence[int]) -> float:
        threads = grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2]
        return model.kernel_seconds(device, threads * per_thread_flops, threads * per_thread_bytes)

    return cost


def _reject_launch_sizes(
    ex: Execution,
    api: DeviceAPI,
    device: Device,
    op: Operation,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
) -> None:
    """Raise the error for a grid or block with a size below 1, a grid beyond
    `MAX_GRID` or a block of too many threads."""
    for what, sizes in (("grid", grid), ("block", block)):
        if min(sizes) < 1:
            raise error_at(
                op,
                f"'device.launch' {what} ({', '.join(map(str, sizes))}) on {device}: every "
                "size must be at least 1",
            )
    if any(size > most for size, most in zip(grid, MAX_GRID, strict=True)):
        raise error_at(
            op,
            f"'device.launch' grid ({', '.join(map(str, grid))}) on {device}: "
            f"{grid_beyond_limit(grid)}",
        )
    threads = block[0] * block[1] * block[2]
    raise error_at(
        op,
        f"'device.launch' block ({', '.join(map(str, block))}) has {threads} threads, "
        f"more than max_threads_per_block = {ex.limit(device, api)} of {device}",
    )


# ---------------------------------------------------------------------------------------
# Inputs and outputs


def find_entry(module: ModuleOp, entry: str) -> func.FuncOp:
    """The entry function `@entry` of a program; an error listing the functions if absent."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    for op in functions:
        if op.sym_name.data == entry:
            if not op.body.blocks:
                raise error_at(op, f"entry function @{entry} is a declaration without a body")
            return op
    known = ", ".join(f"@{op.sym_name.data}" for op in functions) or "none"
    raise DevplanError(f"error: no function @{entry} to run (functions: {known})")


_SOURCE_TYPE = "_devplan_level_1_type"
"""Where a function lowered from level 1 by `lower_level_1` keeps its level-1 type (in
the op object, not the IR), so messages about inputs speak of the tensors the user wrote."""


def source_type(function: func.FuncOp) -> FunctionType:
    """The type the user wrote: the level-1 one for a function `lower_level_1` lowered."""
    written: FunctionType | None = vars(function).get(_SOURCE_TYPE)
    return written if written is not None else function.function_type


def signature(function: func.FuncOp) -> str:
    """`@main(memref<4xf32>, f32) -> memref<4xf32>`, for messages (the level-1 types of
    a function `lower_level_1` lowered: `@main(tensor<4xf32>) -> tensor<4xf32>`)."""
    inputs = ", ".join(str(t) for t in source_type(function).inputs)
    outputs = [str(t) for t in source_type(function).outputs]
    result = (
        ""
        if not outputs
        else f" -> {outputs[0] if len(outputs) == 1 else '(' + ', '.join(outputs) + ')'}"
    )
    return f"@{function.sym_name.data}({inputs}){result}"


def _argument_name(function: func.FuncOp, i: int) -> str:
    arg = function.body.block.args[i]
    hint = f" %{arg.name_hint}" if arg.name_hint else ""
    return f"argument {i}{hint} of {signature(function)}"


def _bind_inputs(
    ex: Execution, function: func.FuncOp, inputs: Sequence[object]
) -> tuple[list[Any], list[Buffer]]:
    types = function.function_type.inputs.data
    if len(inputs) != len(types):
        raise DevplanError(
            f"error: {signature(function)} takes {len(types)} argument(s), got {len(inputs)}"
        )
    args: list[Any] = []
    owned: list[Buffer] = []
    read_only, names = ex.program.entry_facts(function)
    written = source_type(function).inputs.data
    for i, (type_, value) in enumerate(zip(types, inputs, strict=True)):
        what = names[i]
        if isinstance(type_, MemRefType):
            array = _checked_array(type_, value, what, written[i])  # pyright: ignore[reportUnknownArgumentType]
            space = memory_space_of(type_)  # pyright: ignore[reportUnknownArgumentType]
            if space is None and read_only[i] and array.flags.c_contiguous:
                # Host code only reads it: a read-only view of the caller's array serves
                # (a write through it would raise, never reach the caller's data).
                view = array.view()
                view.flags.writeable = False
                args.append(view)
            elif space is None:
                # A copy: host code may write its arguments, the caller's arrays stay.
                args.append(np.array(array, order="C", copy=True))
            else:
                buffer = _upload(ex, function, space, array, what)
                owned.append(buffer)
                args.append(buffer)
        else:
            args.append(from_python(type_, value, what))
    return args, owned


def _only_read(function: func.FuncOp) -> tuple[bool, ...]:
    """Per argument of `function`, whether host code only reads it in place: every use
    is a `memref.load` or `memref.dim` of it, or a device copy from it (to other memory).
    Anything else (a store, a call, a launch, a cast, a return, ...) may write it or let
    it escape, so such an argument is bound to a copy of the caller's array."""

    def only_read(arg: SSAValue) -> bool:
        for use in arg.uses:
            user = use.operation
            if isinstance(user, memref.LoadOp | memref.DimOp) and use.index == 0:
                continue
            copy = isinstance(user, dev.CopyOp | dev.CopyAsyncOp)
            if copy and user.source is arg and user.destination is not arg:
                continue
            return False
        return True

    return tuple(only_read(arg) for arg in function.body.block.args)


def _checked_array(
    type_: Attribute, value: object, what: str, written: Attribute
) -> np.ndarray[Any, Any]:
    """`value` as an input of memref type `type_` (`written` in messages: the type the
    user wrote, a tensor at level 1)."""
    if not isinstance(value, np.ndarray):
        raise DevplanError(
            f"error: {what} is {written} and needs a NumPy array, got {type(value).__name__}"
        )
    array: np.ndarray[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
    memref_type = _type_as_memref(type_)
    expected = _input_dtype(element_type(memref_type), written, what)
    shape = [d.data for d in memref_type.shape]
    shape_text = "x".join("?" if d < 0 else str(d) for d in shape)
    got = f"{'x'.join(map(str, array.shape)) or 'a 0-d array'} of {array.dtype}"
    if isinstance(array, np.ma.MaskedArray):
        raise DevplanError(
            f"error: {what} is {written} and got a masked array, whose mask devplan would "
            "ignore; pass the values to use (.filled(value), or .data to use the masked ones)"
        )
    if array.dtype != expected and isinstance(element_type(memref_type), BFloat16Type):
        raise DevplanError(
            f"error: {what} is {written} and needs the bit patterns of its bf16 values as "
            f"uint16 (NumPy has no bf16), got {got}; .astype(np.uint16) would give integer "
            "values, not bits: (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16) "
            "gives the bits of x rounded toward zero"
        )
    if array.dtype != expected:
        raise DevplanError(
            f"error: {what} is {written} and needs dtype {expected}, got {got} "
            "(convert it with .astype)"
        )
    if array.ndim != len(shape) or any(
        d >= 0 and d != n for d, n in zip(shape, array.shape, strict=False)
    ):
        raise DevplanError(f"error: {what} is {written} and needs shape {shape_text}, got {got}")
    return array


def _input_dtype(element: Attribute, type_: Attribute, what: str) -> np.dtype[Any]:
    """The NumPy dtype of `element`, the element (or scalar) type of the argument `what`
    of type `type_`; an error naming the argument when the executor has none."""
    try:
        return numpy_dtype(element)
    except DevplanError:
        raise DevplanError(
            f"error: {what} has type {type_}, which the executor cannot pass in"
        ) from None


def _is_array(value: object) -> bool:
    return isinstance(value, np.ndarray)


def _is_shaped(type_: Attribute) -> bool:
    """A memref or (in a level-1 program) a tensor: an argument given as an array."""
    return isinstance(type_, MemRefType | TensorType)


def _type_as_memref(type_: Attribute) -> MemRefType[Attribute]:
    loose: Any = type_
    return loose


def _upload(
    ex: Execution, function: func.FuncOp, space: DeviceAttr, array: np.ndarray[Any, Any], what: str
) -> Buffer:
    try:
        device = device_of(space, function)
        api = ex.api(device, function)
        buffer = api.alloc_data_space(device, array.shape, array.dtype, space.scope, label=what)
        api.copy_data_from_to(np.ascontiguousarray(array), buffer, label=f"input: {what}")
    except DevplanError as e:
        raise _at(function, e) from None
    return buffer


def _collect_outputs(
    ex: Execution, function: func.FuncOp, results: Sequence[Any]
) -> tuple[list[Any], list[Buffer]]:
    outputs: list[Any] = []
    returned: list[Buffer] = []
    ret = function.body.block.last_op
    assert ret is not None
    for i, (type_, value) in enumerate(
        zip(function.function_type.outputs.data, results, strict=True)
    ):
        if isinstance(value, Buffer):
            host = np.empty(value.shape, value.dtype)
            try:
                ex.api(_performer(value, host, ex), ret).copy_data_from_to(
                    value, host, label=f"result of @{function.sym_name.data}"
                )
            except DevplanError as e:
                raise _at(ret, e) from None
            outputs.append(host)
            if value not in returned:
                returned.append(value)
        elif _is_array(value):
            freed = ex.freed_host.get(id(value))
            if freed is not None:
                raise error_at(
                    ret, f"'func.return' returns host memory freed by memref.dealloc at {freed[1]}"
                )
            try:
                ex.runtime.scheduler.check_host_access(value, "a returned host array")
            except DevplanError as e:
                raise _at(ret, e) from None
            # Every host array of a run is the run's own (inputs are copied in).
            outputs.append(value)
        else:
            try:
                outputs.append(to_numpy_scalar(type_, value))
            except DevplanError:
                raise error_at(
                    ret,
                    f"'func.return' result {i} of @{function.sym_name.data} is {type_}, which "
                    "the executor cannot return (it has no NumPy type for it)",
                ) from None
    return outputs, returned


def random_inputs(
    module: ModuleOp,
    entry: str = "main",
    seed: int = 0,
    given: Sequence[object] = (),
    system: System | str | Path | None = None,
) -> list[object]:
    """Inputs for `@entry` made from its argument types (those after `given`).

    Float memrefs (and tensors, in a level-1 program) get standard-normal values
    (bf16 as the bit patterns of those values rounded to bf16),
    integer memrefs integers in [0, 100), `i1` memrefs random booleans; float scalars a
    standard-normal value, integer and index scalars an integer in [1, 16], `i1` scalars
    a random boolean. Memrefs with a dynamic (`?`) dimension cannot be made: pass them
    with `--arg`. A memref larger than the memory it lives in under `system` (see
    `system_for`) is out of device (or host) memory, said before anything is allocated.
    """
    name = "random_inputs"
    check_argument(name, "module", module, ModuleOp, "a builtin.module (devplan.parse gives one)")
    check_argument(name, "entry", entry, str, 'a function name such as "main"')
    check_argument(name, "given", given, (list, tuple), "a list of NumPy arrays and scalars")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
        # None would draw different inputs on every call; True would be the seed 1.
        raise DevplanError(
            f"error: {name}: seed must be a whole number 0 or more, got {describe_value(seed)}"
        )
    function = find_entry(module, entry)
    systems: list[System] = []
    rng = np.random.default_rng(seed)
    inputs: list[object] = list(given)
    types = function.function_type.inputs.data
    if len(given) > len(types):
        raise DevplanError(
            f"error: {signature(function)} takes {len(types)} argument(s), got {len(given)}"
        )
    for i in range(len(given), len(types)):
        type_ = types[i]
        what = _argument_name(function, i)
        if _is_shaped(type_):
            memref_type = _type_as_memref(type_)
            shape = [d.data for d in memref_type.shape]
            if any(d < 0 for d in shape):
                raise DevplanError(
                    f"error: {what} has a dynamic shape; --random-args cannot choose its size "
                    "(pass it with --arg FILE.npy)"
                )
            dtype = _input_dtype(element_type(memref_type), type_, what)
            if not systems:
                systems.append(system_for(module, system))
            nbytes = math.prod(shape) * dtype.itemsize
            # A tensor argument (level 1) is given as host memory, as every input is.
            space = memory_space_of(memref_type) if isinstance(type_, MemRefType) else None
            _check_fits(systems[0], space, nbytes, what, function)
            try:
                inputs.append(_random_array(rng, tuple(shape), dtype, element_type(memref_type)))
            except MemoryError:
                raise DevplanError(
                    f"error: {what} needs {nbytes} bytes: out of host memory"
                ) from None
        else:
            dtype = _input_dtype(type_, type_, what)
            if dtype.kind == "f" or isinstance(type_, BFloat16Type):
                inputs.append(float(rng.standard_normal()))
            elif dtype.kind == "b":
                inputs.append(bool(rng.integers(0, 2)))
            else:
                inputs.append(int(rng.integers(1, 17)))
    return inputs


def _check_fits(
    system: System, space: DeviceAttr | None, nbytes: int, what: str, function: func.FuncOp
) -> None:
    """An error when `nbytes` exceed the capacity of the memory `space` names, or at
    `function` when the system has no such device."""
    if space is None:
        capacity = host_capacity(system)
        if nbytes > capacity:
            raise DevplanError(
                f"error: {what} needs {nbytes} bytes: out of host memory "
                f"(the host holds {capacity} bytes)"
            )
        return
    try:
        device = system.device_for(space)
    except DevplanError as e:
        reason = str(e).removeprefix("error: ")
        raise error_at(function, f"{what} lives in {space}: {reason}") from None
    scope = space.scope or "global"
    capacity = device.scopes.get(scope)
    if capacity is not None and nbytes > capacity:
        raise DevplanError(
            f"error: {what} needs {nbytes} bytes: out of device memory "
            f"({device.name}/{scope} holds {capacity} bytes in system {system.name})"
        )


def host_capacity(system: System) -> int:
    """Host memory a run may use: the host device's `global` scope, or this machine's
    physical memory when that is less."""
    declared = system.host.scopes["global"]
    physical = machine_memory()
    return declared if physical is None else min(declared, physical)


def _random_array(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype[Any], element: Attribute
) -> np.ndarray[Any, Any]:
    if isinstance(element, BFloat16Type):  # held as its bit pattern: round, keep the top half
        values = narrow_ufuncs("bf16")[0](rng.standard_normal(shape))
        return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    return rng.integers(0, 100, shape).astype(dtype)


# ---------------------------------------------------------------------------------------
# Entry point

_CACHE_ATTRIBUTE = COMPILED_PROGRAMS_ATTRIBUTE
"""Where a module keeps its compiled programs (per kernel backend).

On the module itself rather than in a weak-keyed table: a program refers to the
module's ops, which refer to the module, so a table entry would keep its key alive.
"""


def compile_program(module: ModuleOp, kernel_backend: str = "numpy") -> Program:
    """The module compiled for `kernel_backend`, cached per module object.

    A level-1 module (tensors) is first lowered through `default-pipeline` — on a
    copy, so `module` itself is not changed; the program's `.module` is the lowered
    one. `devplan.apply` drops the cache of the module it changes; a module changed by
    other means after it was first executed must be parsed or cloned anew.
    """
    if kernel_backend not in KERNEL_BACKENDS:
        raise DevplanError(
            f"error: unknown kernel backend '{kernel_backend}'; valid: {', '.join(KERNEL_BACKENDS)}"
        )
    if kernel_backend == "numba-cuda":
        from .kernels.cuda_backend import numba_cuda

        numba_cuda()  # no GPU and no simulator: say so before anything runs
    slots: dict[str, Any] = vars(module)
    per_backend: dict[str, Program] | None = slots.get(_CACHE_ATTRIBUTE)
    if per_backend is None:
        per_backend = slots[_CACHE_ATTRIBUTE] = {}
    program = per_backend.get(kernel_backend)
    if program is None:
        lowered = next((p.module for p in per_backend.values()), None)
        if lowered is None:
            lowered = lower_level_1(module) if is_level_1(module) else module
        program = per_backend[kernel_backend] = Program(lowered, kernel_backend)
    return program


def is_level_1(module: ModuleOp) -> bool:
    """Whether `module` has tensor values (a level-1 program, DESIGN §2)."""
    for op in module.walk():
        if isinstance(op, func.FuncOp):
            types = [*op.function_type.inputs.data, *op.function_type.outputs.data]
            if any(isinstance(t, TensorType) for t in types):
                return True
        elif any(isinstance(r.type, TensorType) for r in op.results):
            return True
    return False


def lower_level_1(module: ModuleOp) -> ModuleOp:
    """A copy of level-1 `module` run through `default-pipeline` (plan, lower, classify)."""
    from .. import apply
    from ..passes.default_pipeline import DefaultPipelinePass

    lowered = module.clone()
    apply(lowered, DefaultPipelinePass.name)
    written = {f.sym_name.data: f.function_type for f in module.ops if isinstance(f, func.FuncOp)}
    for function in lowered.ops:
        if isinstance(function, func.FuncOp) and function.sym_name.data in written:
            vars(function)[_SOURCE_TYPE] = written[function.sym_name.data]
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
    "DEVICE_OPS",
    "KERNEL_BACKENDS",
    "Execution",
    "ExecutionResult",
    "Program",
    "compile_program",
    "device_of",
    "execute",
    "find_entry",
    "is_level_1",
    "lower_level_1",
    "random_inputs",
    "signature",
]
