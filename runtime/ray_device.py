"""The `ray` DeviceAPI: a device that is a Ray actor, on this machine or another node.

TVM's RPC devices on an existing engine: the driver (this process) keeps what every
DeviceAPI keeps — buffer handles, scope statistics, streams and the scheduler's timeline —
and a `DeviceActor` (`ray_actor.py`) owns the bytes and the compiled kernels, running the
DeviceAPI the system names as the device's `actor_api` inside. Host code cannot touch a
ray device's memory (`host_can_access` is false: the same `HostAccessError` as for a
simulated device); it reaches it through copies.

How each operation travels. The driver's scheduler decides *when* an operation happens,
as for every DeviceAPI; what its effect does here is submit one actor call (`.remote`,
which does not block) and keep the call's ObjectRef:

* alloc/free: `alloc`/`free` calls by the driver's buffer id;
* host -> device: `write(id, bytes)` (Ray serialises the bytes when the call is made);
* device -> host: `read(id)`, waited for (the host needs the bytes);
* device -> device of one actor: `copy`; of two actors: the source's `read_out` puts the
  bytes in Ray's object store and returns their ObjectRef in a list, and the
  destination's `write_in` takes the `read_out` call's ObjectRef, so Ray starts the
  write once the read is done and the bytes go actor to actor: the driver, waiting for
  both calls, gets the list, never the bytes;
* launch: `launch(kernel key, IR text the first time, backend, grid, block, args)`; the
  kernel's IR (`KernelCall`: the executor's launch) is printed once per compiled kernel,
  with each op's location and the source file's text, so a fault in the actor reads as
  the same fault in this process would.

Order: an actor runs one submitter's calls in submission order, one at a time, without
retries (`max_task_retries=0`), and the driver submits in the scheduler's happens-before
order, so one stream's work stays in order and a cross-device dependency rides on the
ObjectRef a copy passes. A launch or a copy into the actor does not wait for it, blocking
or not: nothing in this process can see the difference, since host code reaches the
device's memory only by copies (Ray takes a copy's host bytes when the call is submitted).
A copy to the host, a stream sync and `device.wait` (`wait_device`: every ray device's
calls, whatever tokens it names) wait for the device's calls so far (`_settle`), as does
every `MAX_INFLIGHT`-th call or `MAX_INFLIGHT_BYTES` of copies. A kernel's fault is raised
at that wait, placed at its launch (`KernelCall.located`).

Faults: every wait has a deadline (`DEVPLAN_RAY_TIMEOUT` seconds, default 120). An actor
that died, or passed the deadline, makes the device lost: `DeviceLostError` naming the
device and its node at the operation that waited; every later operation on it raises the
same; its buffers are not reported as leaks. A copy from a device whose actor died, before
or after its `read_out` (the bytes it put in the store die with it), makes the source
lost, not the destination. No actor is restarted (`ray_cluster.py`: a restarted actor
would have lost the memory its buffers name).

The actors themselves, the cluster they run on and the nodes they are placed on are
`ray_cluster.py`'s: one actor per device description in the process, reused by the next
runtime (a new session on the actor, its compiled kernels kept).
"""

from __future__ import annotations

import io
import itertools
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, NoReturn, cast

import numpy as np
from numpy.typing import DTypeLike
from xdsl.printer import Printer

from ..diagnostics import DevplanError, location_of, registered_source
from ..system.description import NodeSpec
from ..system.devices import Device
from .device_api import ALLOC_ALIGNMENT, Buffer, BufferKind, KernelArg
from .errors import DeviceError, DeviceLostError
from .kernels.launch import CompiledKernel, KernelCall
from .ray_actor import ACTOR_APIS, kernel_key
from .ray_cluster import actor_for, forget, ray_module, timeout_seconds
from .scheduler import Scheduler
from .simulated import SimulatedDeviceAPI
from .streams import Stream, Token

MAX_INFLIGHT = 1024
"""Calls submitted and not yet waited for, per device, before the next one waits for them
(a host loop of launches runs ahead of its device by at most this many)."""

MAX_INFLIGHT_BYTES = 256 * 2**20
"""Bytes of copies into a device submitted and not yet waited for before the next call
waits for them (Ray keeps a copy's bytes in its object store until the call has run: a
host loop of copies must not fill the store)."""

_sessions = itertools.count(1)
_kernel_texts: weakref.WeakKeyDictionary[
    CompiledKernel, tuple[str, str, tuple[str, str] | None]
] = weakref.WeakKeyDictionary()
"""Per compiled kernel: its key, IR text and source file (see `_kernel_ir`)."""


def _kernel_ir(compiled: CompiledKernel) -> tuple[str, str, tuple[str, str] | None]:
    """What an actor needs to compile `compiled` and place its faults as here: its key, its
    `kernel.func` printed with each op's location, and the text of the file it came from
    (so that a fault quotes the line)."""
    func = compiled.kernel.func
    out = io.StringIO()
    Printer(stream=out, print_debuginfo=True).print_op(func)
    text = out.getvalue()
    loc = location_of(func)
    source: tuple[str, str] | None = None
    if loc is not None:
        name = loc.filename.data
        found = registered_source(name)
        source = (name, found) if found is not None else None
    return kernel_key(text, compiled.backend), text, source


class _Submitted(NamedTuple):
    """An actor call not yet waited for: its ObjectRef, how to place a fault it raises
    (a launch's), and the device a copy's bytes came from (a copy from another actor)."""

    ref: Any
    located: Callable[[DevplanError], DevplanError] | None
    source: RayDeviceAPI | None


class _RemoteBytes:
    """What a ray device's buffer is to the DeviceAPI machinery: its bytes are in the
    actor. Converting it to an array reads them (a copy to the host by another DeviceAPI);
    assigning to `[...]` writes them (a copy from the host)."""

    __slots__ = ("api", "buffer")

    def __init__(self, api: RayDeviceAPI, buffer: Buffer) -> None:
        self.api = api
        self.buffer = buffer

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        data = self.api.fetch(self.buffer)
        return data if dtype is None else data.astype(dtype)

    def __setitem__(self, key: object, value: object) -> None:
        if key is not Ellipsis:
            raise DeviceError(f"{self.buffer}: only whole-buffer copies reach a ray device")
        if isinstance(value, _RemoteBytes):
            self.api.copy_between(value, self)
        else:
            self.api.store(self.buffer, np.asarray(value))


class RayDeviceAPI(SimulatedDeviceAPI):
    """A device whose memory and kernels are in a Ray actor (see the module docstring).
    Attributes and capacities are the system's, as for a simulated device."""

    api_name = "ray"

    def __init__(
        self,
        device: Device,
        scopes: Mapping[str, int | None] | None = None,
        attrs: Mapping[str, object] | None = None,
        scheduler: Scheduler | None = None,
        host_scopes: Iterable[str] = (),
        *,
        actor_api: str = "simulated",
        node: NodeSpec | None = None,
    ) -> None:
        super().__init__(device, scopes, attrs, scheduler, ())
        if actor_api not in ACTOR_APIS:
            raise DeviceError(
                f"device {device}: actor_api '{actor_api}' is none of {', '.join(ACTOR_APIS)}"
            )
        self.actor_api = actor_api
        self.node = node
        self.kernel_backends = ACTOR_APIS[actor_api].kernel_backends
        self.timeout = timeout_seconds()
        self.lost: DeviceLostError | None = None
        self._inflight: list[_Submitted] = []
        self._inflight_bytes = 0
        self._actor = actor_for(
            device, actor_api, node, {k: v.capacity for k, v in self.scopes.items()},
            self.attrs, host_scopes,
        )  # fmt: skip
        self.session = next(_sessions)
        self._call("open")  # not waited for: the actors of a runtime start side by side

    @property
    def where(self) -> str:
        """`cuda:1 on node n1` (or `cuda:1 (a Ray actor)` without nodes)."""
        if self.node is None:
            return f"{self.device} (a Ray actor)"
        return f"{self.device} on node {self.node.name}"

    def host_can_access(self, scope: str) -> bool:
        return False

    # -- actor calls -----------------------------------------------------------------------

    def _call(
        self,
        method: str,
        *args: object,
        located: Callable[[DevplanError], DevplanError] | None = None,
        nbytes: int = 0,
        source: RayDeviceAPI | None = None,
    ) -> Any:
        """Submit one actor call (does not wait); its ObjectRef. `nbytes`: the bytes the
        call keeps in Ray's object store until it has run (a copy's); `source`: the
        device whose actor handed over those bytes (a copy from another actor)."""
        if self.lost is not None:
            raise DeviceLostError(str(self.lost))
        ref = getattr(self._actor.handle, method).remote(self.session, *args)
        self._inflight.append(_Submitted(ref, located, source))
        self._inflight_bytes += nbytes
        if len(self._inflight) > MAX_INFLIGHT or self._inflight_bytes > MAX_INFLIGHT_BYTES:
            self._settle()
        return ref

    def _settle(self, extra: Sequence[Any] = ()) -> list[Any]:
        """Wait (with the deadline) for every call submitted so far; the values of `extra`."""
        if self.lost is not None:
            raise DeviceLostError(str(self.lost))
        pending, self._inflight = self._inflight, []
        self._inflight_bytes = 0
        refs = [call.ref for call in pending]
        ray = ray_module()
        try:
            ray.get(refs, timeout=self.timeout)
            return list(ray.get(list(extra), timeout=self.timeout))
        except ray.exceptions.GetTimeoutError:
            self._lose(f"it did not answer within {self.timeout:g} s (DEVPLAN_RAY_TIMEOUT)")
        except ray.exceptions.RayActorError as e:
            if isinstance(e, ray.exceptions.RayTaskError):
                # A call of this actor took the result of another actor's, and that actor
                # died: a copy into this device from a lost one.
                for call in pending:
                    if call.source is not None:
                        call.source._check_alive()
            self._lose(f"its Ray actor died ({type(e).__name__})")
        except ray.exceptions.RayTaskError:
            pass
        # A call raised: find which, and raise its error as the driver would have.
        for call in pending:
            try:
                ray.get(call.ref, timeout=self.timeout)
            except ray.exceptions.RayTaskError as e:
                cause = e.cause
                if isinstance(cause, DevplanError):
                    located = call.located
                    raise (located(cause) if located is not None else cause) from None
                if call.source is not None and isinstance(cause, ray.exceptions.ObjectLostError):
                    self._lost_hand_over(call.source, cause)
                raise DeviceError(f"{self.where}: {type(cause).__name__}: {cause}") from None
        raise DeviceError(f"{self.where}: a call failed and no call says why")

    def _lost_hand_over(self, source: RayDeviceAPI, cause: Exception) -> NoReturn:
        """A copy from `source` into this device found the bytes gone from Ray's store.
        `source`'s actor owns them (its `read_out` put them there), and Ray drops what a
        dead owner put (`OwnerDiedError`): a source that died between the two steps of
        the copy is the lost device. Bytes lost while their owner lives are this error."""
        source._check_alive()
        raise DeviceError(
            f"{self.where}: the bytes of a copy from {source.where} were lost from Ray's "
            f"object store ({type(cause).__name__})"
        )

    def _check_alive(self) -> None:
        """This device's `DeviceLostError` unless its actor answers (within the deadline)."""
        if self.lost is not None:
            raise DeviceLostError(str(self.lost))
        ray = ray_module()
        try:
            ray.get(self._actor.handle.ping.remote(), timeout=self.timeout)
        except ray.exceptions.GetTimeoutError:
            self._lose(f"it did not answer within {self.timeout:g} s (DEVPLAN_RAY_TIMEOUT)")
        except ray.exceptions.RayActorError as e:
            self._lose(f"its Ray actor died ({type(e).__name__})")

    def _lose(self, reason: str) -> None:
        self.lost = DeviceLostError(
            f"device {self.where} is lost: {reason}; its memory and the work queued on it "
            "are gone (devplan does not restart a device: a restarted one has lost its memory)"
        )
        forget(self._actor)
        raise self.lost

    def fetch(self, buffer: Buffer) -> np.ndarray:
        """The bytes of `buffer` in the driver (waits for them)."""
        ref = self._call("read", buffer.id)
        return self._settle([ref])[0]

    def store(self, buffer: Buffer, data: np.ndarray) -> None:
        """Write host bytes into `buffer` (submitted; Ray takes the bytes now)."""
        data = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        self._call("write", buffer.id, data, nbytes=data.nbytes)

    def copy_between(self, src: _RemoteBytes, dst: _RemoteBytes) -> None:
        """A device-to-device copy: within one actor, or actor to actor."""
        if src.api is dst.api:
            self._call("copy", src.buffer.id, dst.buffer.id)
            return
        ref = src.api._call("read_out", src.buffer.id)
        dst.api._call("write_in", dst.buffer.id, ref, nbytes=dst.buffer.nbytes, source=src.api)

    # -- memory ----------------------------------------------------------------------------

    def _allocate_storage(self, nbytes: int, alignment: int) -> np.ndarray:
        return np.empty(0, np.uint8)  # replaced by the buffer's `_RemoteBytes`

    def _allocate(
        self,
        shape: tuple[int, ...],
        dtype: np.dtype[np.generic],
        nbytes: int,
        alignment: int,
        scope: str | None,
        label: str,
        kind: BufferKind,
    ) -> Buffer:
        if self.lost is not None:
            raise DeviceLostError(str(self.lost))
        buffer = super()._allocate(shape, dtype, nbytes, alignment, scope, label, kind)
        self._storage[buffer.id] = _RemoteBytes(self, buffer)
        self._call("alloc", buffer.id, shape, dtype.str, buffer.scope, label)
        return buffer

    def _release(self, buffer: Buffer, at: str | None) -> None:
        super()._release(buffer, at)
        if self.lost is None:
            self._call("free", buffer.id)

    view_bytes_are_storage = True

    def _register_view(self, view: Buffer) -> None:
        """The actor makes the view of its base (`DeviceAPI.view` there); copies reach
        it by its id, as they reach a buffer."""
        self._storage[view.id] = _RemoteBytes(self, view)
        base = view.memory
        self._call("view", view.id, base.id, view.offset, view.shape, view.strides, view.label)

    def _typed(self, buffer: Buffer) -> Any:
        return self._storage[buffer.id]

    def alloc_workspace(
        self,
        device: Device,
        nbytes: int,
        dtype_hint: DTypeLike | None = None,
        *,
        shape: Sequence[int] | None = None,
        label: str = "<unnamed>",
    ) -> Buffer:
        """`AllocWorkspace`: a buffer of the actor's (the pool is the actor's allocator)."""
        self._check_device(device, "alloc_workspace")
        dt = np.dtype(dtype_hint if dtype_hint is not None else np.uint8)
        if isinstance(nbytes, bool) or nbytes < 0 or nbytes % dt.itemsize:
            raise DeviceError(
                f"alloc_workspace of {label} on {device}: {nbytes!r} bytes is not a whole, "
                f"non-negative number of {dt} elements"
            )
        dims = (nbytes // dt.itemsize,) if shape is None else tuple(int(d) for d in shape)
        if int(np.prod(dims)) * dt.itemsize != nbytes:
            raise DeviceError(
                f"alloc_workspace of {label} on {device}: shape {dims} of {dt} is not "
                f"{nbytes} bytes"
            )
        return self._allocate(dims, dt, nbytes, ALLOC_ALIGNMENT, "global", label, "workspace")

    def free_workspace(self, device: Device, buffer: Buffer, *, at: str | None = None) -> None:
        self._check_device(device, "free_workspace")
        self._check_free(buffer, "free_workspace", at)
        if buffer.kind != "workspace":
            raise DeviceError(
                f"free_workspace of {buffer}: it was not allocated by alloc_workspace; "
                "free it with free_data_space"
            )
        self.scheduler.quiesce(buffer)
        self._release(buffer, at or "free_workspace")

    # -- copies ----------------------------------------------------------------------------

    def _copy_bytes(self, src: Any, dst: Any) -> None:
        if isinstance(dst, _RemoteBytes):
            dst[...] = src
        elif isinstance(src, _RemoteBytes):
            dst[...] = src.api.fetch(src.buffer)
        else:
            dst[...] = src

    def copy_data_from_to(
        self,
        src: Buffer | np.ndarray,
        dst: Buffer | np.ndarray,
        stream: Stream | None = None,
        *,
        wait_for: Sequence[Token] = (),
        label: str | None = None,
    ) -> Token:
        """As for any DeviceAPI; a copy into the actor does not wait for it, blocking or
        not (Ray takes the host bytes when the call is submitted, so the host may reuse
        them at once, as after a blocking copy); a copy to the host waits for its bytes."""
        if self.lost is not None:
            raise DeviceLostError(str(self.lost))
        return super().copy_data_from_to(src, dst, stream, wait_for=wait_for, label=label)

    # -- kernels ---------------------------------------------------------------------------

    def launch(
        self,
        device: Device,
        kernel: Callable[[list[np.ndarray | int | float | bool]], None],
        args: Sequence[KernelArg],
        *,
        name: str,
        seconds: float = 0.0,
        stream: Stream | None = None,
        wait_for: Sequence[Token] = (),
        writes: Iterable[int] | None = None,
        atomics: Iterable[int] = (),
    ) -> Token:
        """Queue the launch as any DeviceAPI does; when it runs, the actor runs the kernel
        (`kernel` must be the executor's `KernelCall`: its IR is what travels)."""
        if not isinstance(kernel, KernelCall):
            raise DeviceError(
                f"kernel {name} on {self.where}: a ray device runs kernels compiled from IR "
                "(the executor's launches, KernelCall); a Python function cannot be sent"
            )
        if self.lost is not None:
            raise DeviceLostError(str(self.lost))
        call = kernel

        def remote(views: list[Any]) -> None:
            compiled = call.kernel
            known = _kernel_texts.get(compiled)
            if known is None:
                known = _kernel_texts[compiled] = _kernel_ir(compiled)
            key, text, source = known
            sent = key in self._actor.sent
            self._actor.sent.add(key)
            values = [
                ("buffer", v.buffer.id) if isinstance(v, _RemoteBytes) else _scalar(v)
                for v in views
            ]
            self._call(
                "launch", key, None if sent else (text, source), compiled.backend, call.grid,
                call.block, values, name, located=call.located,
            )  # fmt: skip

        return super().launch(
            device, remote, args, name=name, seconds=seconds, stream=stream,
            wait_for=wait_for, writes=writes, atomics=atomics,
        )  # fmt: skip

    # -- waiting and the end of a run ------------------------------------------------------

    def stream_sync(self, device: Device, stream: Stream | None = None) -> None:
        super().stream_sync(device, stream)
        self._settle()

    def wait_device(self) -> None:
        """Wait for every call submitted to the actor so far (`device.wait`)."""
        self._settle()

    def teardown(self) -> list[Buffer]:
        """Finish all streams and the actor's calls; the leaked buffers (none on a lost
        device: its memory is gone with it). The actor's session is closed either way."""
        if self.lost is not None:
            self.torn_down = True
            return []
        leaks = super().teardown()
        self._call("close")
        self._settle()
        return leaks

    def abandon(self) -> None:
        """End this run's session without waiting (after a fault elsewhere): the actor
        frees the run's buffers."""
        if self.lost is None and not self.torn_down:
            self._call("close")
            self._inflight.clear()
        self.torn_down = True


def _scalar(value: object) -> object:
    if isinstance(value, np.generic):
        return cast(object, value.item())  # pyright: ignore[reportUnknownMemberType]
    if isinstance(value, np.ndarray):
        raise DeviceError("a kernel on a ray device cannot take a host array: copy it first")
    return value


def ray_device_api(**kwargs: Any) -> RayDeviceAPI:
    """The factory the registry holds as `ray` (`Runtime.from_system` passes the device's
    `actor_api` and `node` too)."""
    return RayDeviceAPI(**kwargs)


__all__ = ["MAX_INFLIGHT", "MAX_INFLIGHT_BYTES", "RayDeviceAPI", "ray_device_api"]
