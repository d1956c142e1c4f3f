"""What runs inside the Ray actor of a `ray` device (`ray_device.py` is the driver's side).

A `DeviceActor` owns one device's memory and compiled kernels. Inside it, the DeviceAPI
the system names as the device's `actor_api` (`cpu`, `simulated`, `cuda`) does the work,
with its own checks: the actor is that API in another process. The driver's
`RayDeviceAPI` keeps the bookkeeping (buffers, scopes, streams, the timeline) and sends
the actor what must happen to the bytes: allocate and free buffers (by the driver's
buffer id), write and read them, copy between two of them, launch a kernel.

Kernels travel as IR text: a `kernel.func` printed by the driver (with its ops'
locations, so faults name the program's lines) is parsed and compiled
here once, kept by the SHA-256 of its text and backend (the driver sends the text only
with the first launch of a kernel on this actor), and the Numba backend's disk cache
(`DEVPLAN_CACHE_DIR`) serves actors on the same machine as it serves processes.

Each runtime that uses the actor opens a session (a fresh inner DeviceAPI, so memory
statistics are per run) and closes it at teardown; compiled kernels outlive sessions.
An actor runs the calls of one submitter in submission order, one at a time; that is
the ordering the driver relies on.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, cast

import numpy as np

from ..diagnostics import DevplanError, register_source
from ..diagnostics.parser import LocatingParser
from ..dialects.kernel import KernelFuncOp
from ..system.cost import CostModel
from ..system.devices import Device
from .cpu import CPUDeviceAPI
from .cuda import CUDADeviceAPI
from .device_api import Buffer, DeviceAPI
from .errors import DeviceError
from .kernels.compile import compile_kernel
from .kernels.launch import CompiledKernel
from .scheduler import Scheduler
from .simulated import SimulatedDeviceAPI

ACTOR_APIS: dict[str, type[DeviceAPI]] = {
    "cpu": CPUDeviceAPI,
    "simulated": SimulatedDeviceAPI,
    "cuda": CUDADeviceAPI,
}
"""The DeviceAPIs an actor may run (a system's `actor_api`)."""


def kernel_key(text: str, backend: str) -> str:
    """The name a kernel's IR text and backend are cached under, in the driver and here."""
    return hashlib.sha256(f"{backend}\n{text}".encode()).hexdigest()


class _Session:
    """One runtime's view of the actor: an inner DeviceAPI and the buffers by driver id."""

    def __init__(self, api: DeviceAPI) -> None:
        self.api = api
        self.buffers: dict[int, Buffer] = {}


class DeviceActor:
    """The Ray actor of one device (made an actor class by `ray.remote` in the driver)."""

    def __init__(
        self,
        actor_api: str,
        device: Device,
        scopes: dict[str, int | None],
        attrs: dict[str, object],
        host_scopes: list[str],
    ) -> None:
        if actor_api not in ACTOR_APIS:
            raise DeviceError(
                f"device {device}: actor_api '{actor_api}' is none of {', '.join(ACTOR_APIS)}"
            )
        self.api_class = ACTOR_APIS[actor_api]
        self.device = device
        self.scopes = scopes
        self.attrs = attrs
        self.host_scopes = host_scopes
        self.kernels: dict[str, CompiledKernel] = {}
        self.compiles = 0
        """Kernels compiled in this actor (a kernel is compiled once, whatever the runs)."""
        self.sessions: dict[int, _Session] = {}
        self._ctx: Any = None

    # -- sessions --------------------------------------------------------------------------

    def ping(self) -> tuple[int, int, int]:
        """The actor's process id, how many kernels it compiled, how many sessions are open."""
        return os.getpid(), self.compiles, len(self.sessions)

    def open(self, session: int) -> None:
        host = Device("cpu", 0)
        scheduler = Scheduler(CostModel.zero(), host=host)
        self.sessions[session] = _Session(
            self.api_class(
                device=self.device,
                scopes=dict(self.scopes),
                attrs=dict(self.attrs),
                host_scopes=list(self.host_scopes),
                scheduler=scheduler,
            )
        )

    def close(self, session: int) -> None:
        found = self.sessions.pop(session, None)
        if found is not None:
            for buffer in list(found.buffers.values()):
                if buffer.base is None:  # a view ends with its base
                    self._free(found, buffer)
            found.api.teardown()

    # -- memory ----------------------------------------------------------------------------

    def alloc(
        self, session: int, bid: int, shape: tuple[int, ...], dtype: str, scope: str, label: str
    ) -> None:
        s = self.sessions[session]
        s.buffers[bid] = s.api.alloc_data_space(self.device, shape, dtype, scope, label=label)

    def view(
        self,
        session: int,
        vid: int,
        bid: int,
        offset: int,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        label: str,
    ) -> None:
        s = self.sessions[session]
        s.buffers[vid] = s.api.view(s.buffers[bid], offset, shape, strides, label=label)

    def free(self, session: int, bid: int) -> None:
        s = self.sessions[session]
        buffer = s.buffers.pop(bid)
        for vid in [v for v, b in s.buffers.items() if b.base is buffer]:
            del s.buffers[vid]  # its views end with it
        self._free(s, buffer)

    def _free(self, s: _Session, buffer: Buffer) -> None:
        s.api.free_data_space(self.device, buffer)

    def write(self, session: int, bid: int, data: np.ndarray) -> None:
        """Host bytes (`uint8`) into the buffer."""
        s = self.sessions[session]
        buffer = s.buffers[bid]
        typed = np.ascontiguousarray(data).view(buffer.dtype).reshape(buffer.shape)
        s.api.copy_data_from_to(typed, buffer)

    def read(self, session: int, bid: int) -> np.ndarray:
        """The buffer's bytes (`uint8`), for the host or another actor."""
        s = self.sessions[session]
        buffer = s.buffers[bid]
        out = np.empty(buffer.shape, buffer.dtype)
        s.api.copy_data_from_to(buffer, out)
        return out.reshape(-1).view(np.uint8)

    def copy(self, session: int, src: int, dst: int) -> None:
        """A copy between two buffers of this device."""
        s = self.sessions[session]
        s.api.copy_data_from_to(s.buffers[src], s.buffers[dst])

    # -- kernels ---------------------------------------------------------------------------

    def launch(
        self,
        session: int,
        key: str,
        ir: tuple[str, tuple[str, str] | None] | None,
        backend: str,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: list[object],
        name: str,
    ) -> None:
        """Run a kernel; `args` are ("buffer", id) pairs for buffers and scalars. `ir` (the
        kernel's text, with locations, and its source file's name and text) comes with the
        first launch of a kernel only."""
        kernel = self.kernels.get(key)
        if kernel is None:
            if ir is None:
                raise DeviceError(f"kernel {name}: its IR was never sent to {self.device}")
            text, source = ir
            if source is not None:
                register_source(*source)  # a fault quotes its line, as in the driver
            kernel = self.kernels[key] = compile_kernel(self._parse(text, name), backend)
            self.compiles += 1
        s = self.sessions[session]
        values: list[object] = []
        for a in args:
            if isinstance(a, tuple):
                ref = cast(tuple[str, int], a)
                values.append(s.buffers[ref[1]])
            else:
                values.append(a)

        def body(views: list[Any]) -> None:
            with np.errstate(all="ignore"):
                kernel.launch(grid, block, views)

        s.api.launch(self.device, body, values, name=name)  # pyright: ignore[reportArgumentType]

    def _parse(self, text: str, name: str) -> KernelFuncOp:
        if self._ctx is None:
            from xdsl.context import Context
            from xdsl.universe import Universe

            from ..upstream import DIALECTS as UPSTREAM_DIALECTS

            ctx = Context()
            factories = {**Universe.get_multiverse().all_dialects, **UPSTREAM_DIALECTS}
            for dialect, factory in factories.items():
                ctx.register_dialect(dialect, factory)
            self._ctx = ctx
        module = LocatingParser(self._ctx, f"builtin.module {{\n{text}\n}}", name).parse_module()
        func = next((op for op in module.walk() if isinstance(op, KernelFuncOp)), None)
        if func is None:
            raise DevplanError(f"error: kernel {name}: no kernel.func in the IR sent")
        return func


__all__ = ["ACTOR_APIS", "DeviceActor", "kernel_key"]
