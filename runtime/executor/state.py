"""One run of a program: its state (`Execution`), what it gives back (`ExecutionResult`),
and the system, devices and host memory it runs with."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue

from ...diagnostics import DevplanError, error_at
from ...dialects.virtual_device import DeviceAttr
from ...system.description import System
from ...system.devices import Device
from ..device_api import Buffer, DeviceAPI, copy_performer
from ..host.memref import machine_memory
from .messages import reason

if TYPE_CHECKING:
    from ..report import Report
    from ..runtime import Runtime
    from ..streams import Stream, Token


class ExecutionResult:
    """What a run gives back.

    `outputs` has one entry per result of the entry function: a memref result is a
    NumPy array (a host copy, whatever memory it lived in), a scalar result a NumPy
    scalar of its type (`np.float32`, `np.int64` for `index`, `np.bool_` for `i1`;
    `.shape == ()`, so `np.asarray` gives a 0-d array). `report` is the run's `Report`,
    gathered on first use when given as a function (`Runtime.final_report`).
    """

    def __init__(
        self,
        outputs: list[Any],
        report: Report | Callable[[], Report],
        leaks: list[Buffer] | None = None,
    ) -> None:
        self.outputs = outputs
        self._report = report
        self.leaks: list[Buffer] = leaks if leaks is not None else []
        """Device buffers the program allocated and never freed."""

    @property
    def report(self) -> Report:
        if callable(self._report):
            self._report = self._report()
        return self._report


class Execution:
    """The state of one run, kept in slot 0 of every frame."""

    def __init__(self, runtime: Runtime, system: System) -> None:
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
        self.max_block_dims: dict[Device, tuple[float, float, float]] = {}
        """Each device's largest block along x, y and z (its max_thread_dimensions;
        infinity where it reports none)."""
        self.launch_sites: dict[Operation, Any] = {}
        """Per `device.launch` op, what its launches in this run share (a `LaunchSite` of
        `launch.py`, which builds on this module)."""
        self.host_capacity = host_capacity(system)
        """Bytes of host memory (`memref.alloc` beyond it is out of host memory)."""

    def api(self, device: Device, op: Operation) -> DeviceAPI:
        """The DeviceAPI of `device`; a located error at `op` when the system lacks it."""
        api = self.apis.get(device)
        if api is None:
            try:
                api = self.runtime.api(device)
            except DevplanError as e:
                raise error_at(op, f"'{op.name}' on {device}: {reason(e)}") from None
            self.apis[device] = api
        return api

    def limit(self, device: Device, api: DeviceAPI) -> float:
        """The device's max_threads_per_block (infinity when it reports none)."""
        limit = self.max_threads.get(device)
        if limit is None:
            value = api.get_attr(device, "max_threads_per_block")
            limit = self.max_threads[device] = value if isinstance(value, int) else math.inf
        return limit

    def block_dims(self, device: Device, api: DeviceAPI) -> tuple[float, float, float]:
        """The device's largest block along x, y and z (`max_thread_dimensions`, TVM's
        `"[1024, 1024, 64]"` text; infinity along each axis when it reports none)."""
        dims = self.max_block_dims.get(device)
        if dims is None:
            dims = self.max_block_dims[device] = thread_dimensions(
                api.get_attr(device, "max_thread_dimensions")
            )
        return dims

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
        `Scheduler`); other async launches share one stream per device."""
        pool = self.atomic_streams.setdefault(device, [])
        for stream in pool:
            last = stream.last
            if last is None or last.done or any(last is t for t in wait_for):
                return stream
        stream = self.api(device, op).create_stream(device)
        pool.append(stream)
        return stream

    def device_name(self, memory: object) -> str:
        """The device whose memory `memory` is (the host for a NumPy array)."""
        return str(memory.device if isinstance(memory, Buffer) else self.runtime.host)

    def performer(self, source: object, destination: object) -> Device:
        """Whose DeviceAPI performs a copy: the source's unless it is CPU memory (TVM)."""
        host = self.runtime.scheduler.host
        src = source.device if isinstance(source, Buffer) else host
        dst = destination.device if isinstance(destination, Buffer) else host
        return copy_performer(src, dst)


def device_of(attr: DeviceAttr, op: Operation) -> Device:
    """The runtime `Device` a fully constrained `#vdev.device` names."""
    if attr.type_name is None or attr.device_id is None:
        raise error_at(op, f"'{op.name}' needs a device with a type and an id, got {attr}")
    return Device(attr.type_name, attr.device_id)


def system_for(module: ModuleOp, system: System | str | Path | None) -> System:
    """The system a run of `module` uses: `system` when given (it wins), else the
    module's own `vdev.system`, else the embedded default."""
    if system is not None:
        return System.resolve(system)
    return System.from_module(module) or System.default()


def host_capacity(system: System) -> int:
    """Host memory a run may use: the host device's `global` scope, or this machine's
    physical memory when that is less."""
    declared = system.host.scopes["global"]
    physical = machine_memory()
    return declared if physical is None else min(declared, physical)


def memref_type_of(value: SSAValue) -> MemRefType[Attribute]:
    """The type of a value the verifier made sure is a memref."""
    type_: Any = value.type
    assert isinstance(type_, MemRefType)
    return type_  # pyright: ignore[reportUnknownVariableType]


def as_memref_type(type_: Attribute) -> MemRefType[Attribute]:
    """`type_`, a memref (or a tensor, whose shape and element type read the same)."""
    loose: Any = type_
    return loose


def thread_dimensions(value: object) -> tuple[float, float, float]:
    """`"[1024, 1024, 64]"` as a tuple; infinity along each axis for anything else (a
    device that does not report its limits; a system checks the text it gives)."""
    dims: object = None
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            dims = json.loads(value)
    if isinstance(dims, list):
        items = cast(list[object], dims)
        if len(items) == 3 and all(type(d) is int and d > 0 for d in items):
            x, y, z = cast(list[int], items)
            return (x, y, z)
    return (math.inf, math.inf, math.inf)
