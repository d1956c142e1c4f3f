"""The executor's compilers of `device` ops, and of the memref ops that need a run's state.

`DEVICE_OPS` maps each op class to the compiler of its step. The steps call the
DeviceAPI of the op's device through the run's `Execution` (slot 0 of every frame) and
re-raise the runtime's errors placed at their op. `memref.dealloc` and
`memref.get_global` are here rather than in host code: a freed host array is remembered
by the run, and a global's data by the program.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from xdsl.dialects import memref
from xdsl.ir import Operation

from ...analysis.dtypes import numpy_dtype
from ...diagnostics import DevplanError, error_at
from ...dialects import device as dev
from ...dialects.virtual_device import memory_space_of
from ...dispatch import OpTable
from ..device_api import Buffer
from ..host.frame import Frame, Step
from ..host.memref import shape_with
from ..host.values import element_type, from_python, wrapper
from .launch import LaunchCompiler, compile_launch
from .messages import buffer_label, place_of, placed_at, ssa_name
from .state import Execution, device_of, memref_type_of


class DeviceOpCompiler(LaunchCompiler, Protocol):
    """What compiling a device op asks of the program being compiled."""

    globals: dict[str, np.ndarray[Any, Any]]
    """Constant `memref.global` data by name (read-only host arrays)."""


CompileDeviceOp = Callable[[DeviceOpCompiler, Any], Step]
"""The compiler of one op class: the program being compiled and the op give its step."""

DEVICE_OPS = OpTable[CompileDeviceOp]("the executor")
"""The compiler of each device op (and of memref.dealloc and memref.get_global)."""


@DEVICE_OPS.impl(dev.AllocOp, dev.AllocWorkspaceOp)
def _allocation(p: DeviceOpCompiler, op: dev.AllocOp | dev.AllocWorkspaceOp) -> Step:
    workspace = isinstance(op, dev.AllocWorkspaceOp)
    type_ = memref_type_of(op.result)
    space = memory_space_of(type_)
    if space is None:
        raise error_at(op, f"'{op.name}' of host memory {type_}; use memref.alloc")
    device = device_of(space, op)
    scope = space.scope or "global"
    shape = shape_with(op, type_, [p.slot(v) for v in op.dynamic_sizes])
    dtype = numpy_dtype(element_type(type_))
    r = p.slot(op.result)
    label = buffer_label(op.result, op)

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
            raise placed_at(op, e) from None
        f[r] = buffer

    return run


@DEVICE_OPS.impl(dev.FreeOp, dev.FreeWorkspaceOp)
def _release(p: DeviceOpCompiler, op: dev.FreeOp | dev.FreeWorkspaceOp) -> Step:
    workspace = isinstance(op, dev.FreeWorkspaceOp)
    s = p.slot(op.buffer)
    where = place_of(op)

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
            raise placed_at(op, e) from None

    return run


@DEVICE_OPS.impl(memref.DeallocOp)
def _dealloc(p: DeviceOpCompiler, op: memref.DeallocOp) -> Step:
    s = p.slot(op.memref)
    where = place_of(op)

    def run(f: Frame) -> None:
        ex: Execution = f[0]
        array = f[s]
        if isinstance(array, Buffer):
            raise error_at(op, f"'memref.dealloc' of device memory ({array}); use device.free")
        freed = ex.freed_host.get(id(array))
        if freed is not None:
            raise error_at(
                op,
                f"'memref.dealloc' double free: {ssa_name(op.memref)} was already freed by "
                f"memref.dealloc at {freed[1]}",
            )
        try:
            ex.runtime.scheduler.quiesce(array)
        except DevplanError as e:
            raise placed_at(op, e) from None
        ex.freed_host[id(array)] = (array, where)

    return run


@DEVICE_OPS.impl(memref.GetGlobalOp)
def _get_global(p: DeviceOpCompiler, op: memref.GetGlobalOp) -> Step:
    name = op.name_.string_value()
    data = p.globals.get(name)
    if data is None:
        raise error_at(op, f"'memref.get_global' of @{name}, which is not a memref.global")
    r = p.slot(op.memref)

    def run(f: Frame) -> None:
        f[r] = data

    return run


@DEVICE_OPS.impl(dev.ViewOp)
def _view(p: DeviceOpCompiler, op: dev.ViewOp) -> Step:
    """A view of a device buffer through its DeviceAPI (`DeviceAPI.view`), of a host
    array as a NumPy view of its elements; nothing is allocated or copied."""
    src, at = p.slot(op.source), p.slot(op.offset)
    sizes = tuple(p.slot(v) for v in op.sizes)
    strides = tuple(p.slot(v) for v in op.strides)
    r = p.slot(op.result)
    label = buffer_label(op.result, op)

    def run(f: Frame) -> None:
        ex: Execution = f[0]
        source = f[src]
        offset, dims, steps = f[at], [f[s] for s in sizes], [f[s] for s in strides]
        if isinstance(source, Buffer):
            api = source.api
            assert api is not None
            try:
                f[r] = api.view(source, offset, dims, steps, label=label)
            except DevplanError as e:
                raise placed_at(op, e) from None
            return
        if id(source) in ex.freed_host:
            raise error_at(
                op, f"'{op.name}' of host memory freed by memref.dealloc at "
                f"{ex.freed_host[id(source)][1]}",
            )  # fmt: skip
        f[r] = host_view(op, source, offset, dims, steps)

    return run


def host_view(
    op: Operation, source: np.ndarray[Any, Any], offset: int, dims: list[int], steps: list[int]
) -> np.ndarray[Any, Any]:
    """The elements of the host array `source` at `offset + sum(i_d * steps_d)`."""
    count = source.size
    last = offset + sum((n - 1) * t for n, t in zip(dims, steps, strict=True))
    window = f"offset {offset}, sizes {dims}, strides {steps}"
    if offset < 0 or any(n < 0 or t < 0 for n, t in zip(dims, steps, strict=True)):
        raise error_at(op, f"'{op.name}' {window}: nothing may be negative")
    if math.prod(dims) and last >= count:
        raise error_at(op, f"'{op.name}' {window} reach element {last} of {count}")
    if not source.flags.c_contiguous:
        raise error_at(op, f"'{op.name}' of a strided host array; view its base")
    size = source.itemsize
    if not math.prod(dims):
        offset = 0  # no element: where it starts has no meaning, and may be past the end
    return np.ndarray(
        tuple(dims), source.dtype, source.reshape(-1), offset=offset * size,
        strides=[t * size for t in steps],
    )  # fmt: skip


@DEVICE_OPS.impl(dev.CopyOp, dev.CopyAsyncOp)
def _copy_step(p: DeviceOpCompiler, op: dev.CopyOp | dev.CopyAsyncOp) -> Step:
    is_async = isinstance(op, dev.CopyAsyncOp)
    src, dst = p.slot(op.source), p.slot(op.destination)
    deps = tuple(p.slot(d) for d in op.dependencies) if isinstance(op, dev.CopyAsyncOp) else ()
    token_slot = p.slot(op.token) if isinstance(op, dev.CopyAsyncOp) else None
    label = f"{ssa_name(op.source)} -> {ssa_name(op.destination)} ({place_of(op)})"

    def run(f: Frame) -> None:
        ex: Execution = f[0]
        source: Any = f[src]
        destination: Any = f[dst]
        for memory in (source, destination):
            if not isinstance(memory, Buffer) and id(memory) in ex.freed_host:
                raise error_at(
                    op,
                    f"'{op.name}' uses host memory freed by memref.dealloc at "
                    f"{ex.freed_host[id(memory)][1]}",
                )
        performer = ex.performer(source, destination)
        stream = None
        if is_async:
            # One stream per copy direction, as one copy engine per direction of a link:
            # a download can overlap an upload.
            route = f"copy {ex.device_name(source)}->{ex.device_name(destination)}"
            stream = ex.stream(performer, route, op)
        # A strided host view (`device.view` of host memory) goes through a row-major
        # copy of its elements: the DeviceAPI copies contiguous memory (as TVM's).
        if _strided_host(source):
            source = np.ascontiguousarray(source)
        into: Any = destination
        if _strided_host(destination):
            if is_async:
                raise error_at(op, f"'{op.name}' into a strided host view; use device.copy")
            into = np.empty_like(destination, order="C")
        try:
            token = ex.api(performer, op).copy_data_from_to(
                source, into, stream, wait_for=[f[d] for d in deps], label=label
            )
        except DevplanError as e:
            raise placed_at(op, e) from None
        if into is not destination:
            destination[...] = into
        if token_slot is not None:
            f[token_slot] = token

    return run


def _strided_host(memory: Any) -> bool:
    return isinstance(memory, np.ndarray) and not memory.flags.c_contiguous


@DEVICE_OPS.impl(dev.WaitOp)
def _wait(p: DeviceOpCompiler, op: dev.WaitOp) -> Step:
    tokens = tuple(p.slot(t) for t in op.tokens)

    def run(f: Frame) -> None:
        ex: Execution = f[0]
        try:
            if tokens:
                ex.runtime.wait(*(f[t] for t in tokens))
            else:
                ex.runtime.synchronize()
        except DevplanError as e:
            raise placed_at(op, e) from None

    return run


@DEVICE_OPS.impl(dev.AttrOp)
def _attr(p: DeviceOpCompiler, op: dev.AttrOp) -> Step:
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
            raise placed_at(op, e) from None
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


DEVICE_OPS.register(dev.LaunchOp, compile_launch)
