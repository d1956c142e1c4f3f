"""TVM's runtime `DeviceAPI` in Python: memory, copies, streams and attributes of a device.

One `DeviceAPI` object serves one device (TVM keeps one per device *type* and passes
the id; here the id is checked against the device the object serves, which turns
"free of a buffer from another device" into a clear error). The surface is TVM's
(`include/tvm/runtime/device_api.h`) in snake case: `get_attr`, `set_device`,
`alloc_data_space` (by shape and scope, and the flat `(nbytes, alignment)` form),
`free_data_space`, `alloc_workspace`/`free_workspace`, `copy_data_from_to`,
`create_stream`/`free_stream`/`stream_sync`/`sync_stream_from_to`,
`set_stream`/`get_current_stream`. devplan adds what an executor needs to check
programs: `launch` (a kernel queued on a stream), `host_view`/`device_view`,
`pending_writes`, `live_buffers` and `teardown`.

Memory is described by `Buffer` handles. Their bytes live inside the API that
allocated them; the host reaches them through `host_view` only where the API says
the host can (`host_can_access(scope)`: all of a CPU's memory, a simulated device's
"host" scope), and kernels through `device_view` only while they run on that
device. Everything else goes through `copy_data_from_to`.

Blocking versus async: an operation given `stream=None` runs on the device's current
stream and blocks the host until it is done (like `cudaMemcpy`); given a stream it
is queued there and returns a `Token` to wait on (see `scheduler.py`).

Who performs a copy (TVM's `Tensor::CopyFromTo`): the API of the source when the
source is not CPU memory, else the API of the destination (`copy_performer`).

A new buffer reads as zeros. Large freed storage is kept for the next allocation of
its size (`storage.STORAGE_CACHE`); a reused block is zeroed before anything reads it,
or not at all when a copy overwrites it first.

This file holds one concept and reads best whole: the base class and the `Buffer`
handles it hands out, which name their API (`Buffer.api`) as the API names them. Its
errors are in `errors.py`, the registry of APIs by name in `registry.py`, the device
kinds in `cpu.py`, `simulated.py` and `cuda.py`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import DTypeLike

from ..diagnostics import describe_value
from ..dialects.device import DEVICE_ATTR_KINDS as DEVICE_ATTR_VALUE_KINDS
from ..system.cost import Hop
from ..system.devices import Device
from .errors import (
    CopySizeError,
    DeviceError,
    DoubleFreeError,
    HostAccessError,
    Name,
    OutOfDeviceMemoryError,
    StreamError,
    UseAfterFreeError,
    WrongDeviceError,
    name_text,
)
from .scheduler import Scheduler
from .storage import STORAGE_CACHE, aligned_bytes
from .streams import Stream, Token
from .workspace import WorkspacePool

DEVICE_ATTR_KINDS: tuple[str, ...] = tuple(DEVICE_ATTR_VALUE_KINDS)
"""TVM's `DeviceAttrKind` in snake case, in enum order (kExist = 0 ... 16): the names
`device.attr` accepts (one list, in `dialects/device.py`, with the kind of each value)."""

KERNEL_ONLY_SCOPES = frozenset({"shared", "local", "warp"})
"""Scopes that exist per thread block or thread; kernels allocate them, the host cannot."""

ALLOC_ALIGNMENT = 64
"""TVM's `kAllocAlignment`: minimum alignment of `alloc_data_space`."""

BufferKind = Literal["data", "workspace", "view"]


@dataclass(eq=False, slots=True)
class Buffer:
    """An opaque handle to memory allocated by a DeviceAPI (its bytes stay in the API).

    Only `freed_at` changes after allocation. Its description (`describe`, `str`) is
    made when asked, so a message is formatted only when an error is raised.
    """

    id: int
    device: Device
    shape: tuple[int, ...]
    dtype: np.dtype[np.generic]
    scope: str
    nbytes: int
    label: str
    """Who allocated it, for messages: an SSA name and/or an op location."""
    kind: BufferKind = "data"
    alignment: int = ALLOC_ALIGNMENT
    freed_at: str | None = None
    """Set when freed: the label of the free (or "freed"); for a view, when its base is."""
    api: DeviceAPI | None = field(default=None, repr=False)
    base: Buffer | None = field(default=None, repr=False)
    """For a view (`DeviceAPI.view`): the allocation whose memory it is."""
    offset: int = 0
    """For a view: the element of its base at its index 0."""
    strides: tuple[int, ...] = ()
    """For a view: the elements of its base one step along each dimension moves."""

    @property
    def is_live(self) -> bool:
        return self.freed_at is None

    def describe(self) -> str:
        dims = "x".join(str(d) for d in self.shape)
        shape = f"{dims}x{self.dtype}" if dims else str(self.dtype)
        what = {"workspace": "workspace buffer", "view": "view"}.get(self.kind, "buffer")
        text = f"{what} {self.label} ({self.device} scope '{self.scope}', {shape}, {self.nbytes} B"
        if self.base is not None:
            text += f", of {self.base.label}"
        return text + ")"

    @property
    def memory(self) -> Buffer:
        """The allocation whose memory this is: the buffer itself, or a view's base."""
        return self.base if self.base is not None else self

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        return f"Buffer({self.describe()})"


Memory = Buffer | np.ndarray
"""What copies accept: a device buffer, or a NumPy array standing for plain host memory."""

KernelArg = Buffer | np.ndarray | int | float | bool


@dataclass
class ScopeStats:
    """Memory accounting of one scope of one device."""

    capacity: int | None
    in_use: int = 0
    peak: int = 0
    allocations: int = 0
    frees: int = 0
    buffers: int = 0


_next_buffer_id = 0


def _new_buffer_id() -> int:
    global _next_buffer_id
    _next_buffer_id += 1
    return _next_buffer_id


def _as_dtype(dtype: DTypeLike, where: str) -> np.dtype[np.generic]:
    if dtype is None:  # pyright: ignore[reportUnnecessaryComparison]  (np.dtype(None) is float64)
        raise DeviceError(f"{where}: a dtype is needed, got None")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise DeviceError(f"{where}: unknown dtype {dtype!r}") from None
    if dt.kind not in "biufc":
        raise DeviceError(
            f"{where}: device memory holds numbers (bool, int, uint, float, complex), not {dt}"
        )
    return dt


def _is_whole(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _whole_number(value: object, what: str, where: str) -> int:
    """`value` (a Python or NumPy integer) as an int; int() would truncate 2.5 to 2 and
    read "8" as 8, so anything else is a `DeviceError`."""
    if not _is_whole(value):
        raise DeviceError(f"{where}: {what} must be a whole number, got {value!r}")
    return int(cast(int, value))


def _shape(shape: object, where: str) -> tuple[int, ...]:
    """`shape` (a sequence of Python or NumPy integers) as a tuple of ints."""
    if isinstance(shape, Sequence | np.ndarray) and not isinstance(shape, str):
        dims = list(cast(Sequence[object], shape))
        if all(_is_whole(d) for d in dims):
            return tuple(int(cast(int, d)) for d in dims)
    raise DeviceError(f"{where}: shape must be a sequence of whole numbers, got {shape!r}")


def _row_major(shape: Sequence[int]) -> tuple[int, ...]:
    """The strides, in elements, of a row-major array of `shape`."""
    strides: list[int] = []
    step = 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def copy_performer(src: Device, dst: Device) -> Device:
    """The device whose DeviceAPI performs a copy from `src` to `dst` (TVM's
    `Tensor::CopyFromTo`): the source's unless that is CPU memory, else the destination's."""
    return src if src.type != "cpu" else dst


class DeviceAPI(ABC):
    """TVM's `DeviceAPI` for one device, with buffer bookkeeping and run-time checks.

    Subclasses say what the host may touch (`host_can_access`) and which attributes
    the device has (`_get_attr`); `_allocate_storage` may be overridden to change how
    bytes are held.
    """

    api_name: str = ""
    """The name it is registered under (reports show it); set by `Runtime.from_system`."""

    view_bytes_are_storage = False
    """Whether a view's bytes are storage of its own to copies (a ray device's, which its
    actor keeps), rather than elements strided in its base's storage."""

    kernel_backends: tuple[str, ...] | None = None
    """The kernel backends whose kernels run on this device's memory; None: all of them
    (memory held in NumPy arrays)."""

    renewable = False
    """Whether `renew` may return an API of this very class to the state its constructor
    built: true of a class whose state is all the base class's (`cpu`, `simulated`). Read
    from the class's own namespace, never inherited: a subclass with state of its own is
    not renewed unless it says so itself."""

    def __init__(
        self,
        device: Device,
        scopes: Mapping[str, int | None] | None = None,
        attrs: Mapping[str, object] | None = None,
        scheduler: Scheduler | None = None,
        host_scopes: Iterable[str] = (),
    ) -> None:
        self.device = device
        self.host_scopes = frozenset(host_scopes)
        """Scopes of this device the host may read and write directly (pinned host memory)."""
        self.scopes: dict[str, ScopeStats] = {
            name: ScopeStats(capacity) for name, capacity in (scopes or {"global": None}).items()
        }
        if "global" not in self.scopes:
            raise DeviceError(f"device {device} must have a 'global' memory scope")
        unknown = sorted(set(attrs or {}) - set(DEVICE_ATTR_KINDS))
        if unknown:
            raise DeviceError(
                f"device {device}: unknown attribute(s) {', '.join(unknown)}; "
                f"valid: {', '.join(DEVICE_ATTR_KINDS)}"
            )
        self.attrs: dict[str, object] = dict(attrs or {})
        self.scheduler = scheduler if scheduler is not None else Scheduler()
        self._storage: dict[int, Any] = {}
        """Bytes of each live buffer: a uint8 NumPy array here, a device array on CUDA."""
        self._reuses_storage = type(self)._allocate_storage is DeviceAPI._allocate_storage
        """Whether its storage is `aligned_bytes` (then freed blocks go to `STORAGE_CACHE`)."""
        self._unzeroed: set[int] = set()
        """Buffers on reused storage not yet zeroed: zeroed before anything reads them,
        skipped when a copy overwrites them first (see `_storage_of`)."""
        self._live: dict[int, Buffer] = {}
        self.frees = 0
        """Buffers freed so far (data and workspace): while it is unchanged, every buffer
        that was live is live still, with the same storage."""
        self._views: dict[int, Any] = {}
        """Typed views of live buffers by id, made on first use and dropped on free."""
        self._views_of: dict[int, list[Buffer]] = {}
        """The views (`view`) of each live buffer by its id: they end when it is freed."""
        self._default_stream = self.scheduler.new_stream(device)
        self._current_stream = self._default_stream
        self._pool: WorkspacePool | None = None
        self.torn_down = False
        self._abandoned = False

    # -- what subclasses decide ----------------------------------------------------------

    @abstractmethod
    def host_can_access(self, scope: str) -> bool:
        """Whether host code may read and write this device's memory in `scope`."""

    @abstractmethod
    def _get_attr(self, kind: str) -> object | None:
        """The value of a valid `DeviceAttrKind` name, or None when unsupported."""

    def _allocate_storage(self, nbytes: int, alignment: int) -> np.ndarray:
        return aligned_bytes(nbytes, alignment)

    @property
    def kernels_reach_host_memory(self) -> bool:
        """Whether kernels on this device may take plain host arrays (CPU kernels)."""
        return False

    # -- TVM surface: device and attributes -----------------------------------------------

    def set_device(self, device: Device) -> None:
        """`SetDevice`: make `device` active for following kernels (checks it is served)."""
        self._check_device(device, "set_device")

    def get_attr(self, device: Device, kind: str) -> object | None:
        """`GetAttr`: a `DeviceAttrKind` (snake case) value, None when not supported."""
        self._check_device(device, "get_attr")
        if kind not in DEVICE_ATTR_KINDS:
            raise DeviceError(
                f"unknown device attribute '{kind}' for {device}; valid: "
                f"{', '.join(DEVICE_ATTR_KINDS)}"
            )
        return self._get_attr(kind)

    # -- TVM surface: memory ---------------------------------------------------------------

    def alloc_data_space(
        self,
        device: Device,
        shape: Sequence[int],
        dtype: DTypeLike,
        scope: str | None = None,
        *,
        label: str = "<unnamed>",
    ) -> Buffer:
        """`AllocDataSpace` by shape: `prod(shape) * itemsize` bytes in `scope` (None = global)."""
        self._check_device(device, "alloc_data_space")
        dt = _as_dtype(dtype, f"alloc_data_space of {label} on {device}")
        dims = _shape(shape, f"alloc_data_space of {label} on {device}")
        if any(d < 0 for d in dims):
            raise DeviceError(f"alloc_data_space of {label} on {device}: negative shape {dims}")
        nbytes = math.prod(dims) * dt.itemsize
        alignment = max(ALLOC_ALIGNMENT, dt.itemsize)
        return self._allocate(dims, dt, nbytes, alignment, scope, label, "data")

    def alloc_data_space_flat(
        self,
        device: Device,
        nbytes: int,
        alignment: int,
        dtype_hint: DTypeLike | None = None,
        *,
        scope: str | None = None,
        label: str = "<unnamed>",
    ) -> Buffer:
        """`AllocDataSpace(dev, nbytes, alignment, type_hint)`: a 1-D buffer of `nbytes` bytes.

        Its elements are of `dtype_hint` (uint8 when none); `nbytes` must be a whole
        number of them, and `alignment` a power of two.
        """
        self._check_device(device, "alloc_data_space_flat")
        dt = _as_dtype(dtype_hint if dtype_hint is not None else np.uint8, f"alloc of {label}")
        where = f"alloc_data_space_flat of {label} on {device}"
        nbytes = _whole_number(nbytes, "nbytes", where)
        alignment = _whole_number(alignment, "alignment", where)
        if nbytes < 0:
            raise DeviceError(f"{where}: negative size {nbytes}")
        if alignment <= 0 or alignment & (alignment - 1):
            raise DeviceError(f"{where}: alignment {alignment} is not a power of two")
        if nbytes % dt.itemsize:
            raise DeviceError(
                f"{where}: {nbytes} bytes is not a whole number of {dt} elements "
                f"({dt.itemsize} bytes each)"
            )
        shape = (nbytes // dt.itemsize,)
        return self._allocate(shape, dt, nbytes, alignment, scope, label, "data")

    def free_data_space(self, device: Device, buffer: Buffer, *, at: str | None = None) -> None:
        """`FreeDataSpace`; waits first for queued operations on the buffer (as `cudaFree`)."""
        self._check_device(device, "free_data_space")
        self._check_free(buffer, "free_data_space", at)
        if buffer.kind == "view":
            raise DeviceError(
                f"free_data_space of {buffer}: a view is not freed; it ends when its base is freed"
            )
        if buffer.kind == "workspace":
            raise DeviceError(
                f"free_data_space of {buffer}: it was allocated by alloc_workspace; "
                "free it with free_workspace"
            )
        self.scheduler.quiesce(buffer)
        self._release(buffer, at)

    def alloc_workspace(
        self,
        device: Device,
        nbytes: int,
        dtype_hint: DTypeLike | None = None,
        *,
        shape: Sequence[int] | None = None,
        label: str = "<unnamed>",
    ) -> Buffer:
        """`AllocWorkspace`: temporary memory from the device's page-rounded pool.

        The buffer holds `nbytes` bytes of `dtype_hint` elements (uint8 when none), 1-D
        unless `shape` is given, whose elements must fill exactly `nbytes`. Workspace
        buffers live in the global scope and cannot be copied to or from the host
        (TVM does not require them to be host-transferable).
        """
        self._check_device(device, "alloc_workspace")
        dt = _as_dtype(dtype_hint if dtype_hint is not None else np.uint8, f"alloc of {label}")
        where = f"alloc_workspace of {label} on {device}"
        nbytes = _whole_number(nbytes, "nbytes", where)
        if nbytes < 0 or nbytes % dt.itemsize:
            raise DeviceError(
                f"alloc_workspace of {label} on {device}: {nbytes} bytes is not a whole, "
                f"non-negative number of {dt} elements"
            )
        dims = (nbytes // dt.itemsize,) if shape is None else _shape(shape, where)
        if any(d < 0 for d in dims) or math.prod(dims) * dt.itemsize != nbytes:
            raise DeviceError(
                f"alloc_workspace of {label} on {device}: shape {dims} of {dt} is not "
                f"{nbytes} bytes"
            )
        if self._pool is None:
            self._pool = WorkspacePool(self._allocate_page, self._release_page)
        new_pages = self._pool.device_allocations
        page = self._pool.alloc(nbytes, label)
        buffer = Buffer(
            _new_buffer_id(), self.device, dims, dt, "global", nbytes, label,
            kind="workspace", api=self,
        )  # fmt: skip
        self._storage[buffer.id] = page.storage[:nbytes]
        self._live[buffer.id] = buffer
        if self._pool.device_allocations == new_pages:
            # A reused page holds what its last user wrote: zeroed before anything reads it.
            self._unzeroed.add(buffer.id)
        self._pool.bind(page, buffer)
        return buffer

    def free_workspace(self, device: Device, buffer: Buffer, *, at: str | None = None) -> None:
        """`FreeWorkspace`: the page goes back to the pool (not to the device)."""
        self._check_device(device, "free_workspace")
        self._check_free(buffer, "free_workspace", at)
        if buffer.kind != "workspace" or self._pool is None:
            raise DeviceError(
                f"free_workspace of {buffer}: it was not allocated by alloc_workspace; "
                "free it with free_data_space"
            )
        self.scheduler.quiesce(buffer)
        self._end_views(buffer, at or "free_workspace")
        self._pool.free(buffer)
        self._unzeroed.discard(buffer.id)
        buffer.freed_at = at or "free_workspace"
        self.frees += 1
        del self._live[buffer.id]
        del self._storage[buffer.id]
        self._views.pop(buffer.id, None)

    # -- views ------------------------------------------------------------------------------

    def view(
        self,
        base: Buffer,
        offset: int,
        shape: Sequence[int],
        strides: Sequence[int],
        *,
        label: str = "<unnamed>",
    ) -> Buffer:
        """A view of `base` (TVM's `NDArray::CreateView`, with strides): the elements at
        `offset + sum(i_d * strides_d)` of `base` in row-major order, for each index `i`
        of `shape`. Nothing is allocated or copied. A view of a row-major view is a view
        of its base. The view is never freed; it ends when its base is freed (then a use
        is a use after free), and the base may not be freed before its pending work on
        any view of it ran (`free_data_space` waits, as for the base)."""
        where = f"view {label} of {base}"
        self._check_live(base, where)
        self._check_owned(base, "view")
        dims = _shape(shape, where)
        steps = _shape(strides, where)
        if len(steps) != len(dims) or offset < 0 or any(d < 0 for d in dims):
            raise DeviceError(
                f"{where}: offset {offset}, shape {dims} and strides {steps} do not describe "
                "a window (one stride per dimension, nothing negative)"
            )
        if base.base is not None:
            if base.strides != _row_major(base.shape):
                raise DeviceError(f"{where}: the source is a strided view; view its base")
            offset, base = offset + base.offset, base.base
        count = math.prod(base.shape)
        last = offset + sum((n - 1) * t for n, t in zip(dims, steps, strict=True))
        if math.prod(dims) and last >= count:
            raise DeviceError(
                f"{where}: offset {offset}, shape {dims}, strides {steps} reach element "
                f"{last} of a buffer of {count} elements"
            )
        if not math.prod(dims):
            offset = 0  # no element: where it starts has no meaning, and may be past the end
        nbytes = math.prod(dims) * base.dtype.itemsize
        view = Buffer(
            _new_buffer_id(), base.device, dims, base.dtype, base.scope, nbytes, label,
            kind="view", alignment=base.alignment, api=self, base=base, offset=offset,
            strides=steps,
        )  # fmt: skip
        self._views_of.setdefault(base.id, []).append(view)
        self._register_view(view)
        return view

    def _register_view(self, view: Buffer) -> None:  # noqa: B027 (a hook, empty here)
        """What a subclass keeps for a new view (a ray device tells its actor)."""

    def _view_array(self, storage: Any, view: Buffer) -> Any:
        """`view`'s elements as an array strided in its base's `storage` (bytes)."""
        size = view.dtype.itemsize
        return np.ndarray(
            view.shape, view.dtype, storage, offset=view.offset * size,
            strides=[t * size for t in view.strides],
        )  # fmt: skip

    # -- TVM surface: copies ---------------------------------------------------------------

    def copy_data_from_to(
        self,
        src: Memory,
        dst: Memory,
        stream: Stream | None = None,
        *,
        wait_for: Sequence[Token] = (),
        label: str | None = None,
    ) -> Token:
        """`CopyDataFromTo`: copy all bytes of `src` into `dst` (sizes must match exactly).

        `src`/`dst` are buffers of any device or NumPy arrays (host memory). This API
        must be the one TVM would pick (the source's unless that is CPU memory, else
        the destination's). Without a stream the copy blocks; with one it is queued.
        """
        for role, memory in (("src", src), ("dst", dst)):
            if not isinstance(memory, Buffer | np.ndarray):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise DeviceError(
                    f"copy_data_from_to: {role} must be a Buffer or a NumPy array, got "
                    f"{describe_value(memory)}"
                )
        src_dev, dst_dev = self._memory_device(src), self._memory_device(dst)
        src_name, dst_name = self._memory_namer(src), self._memory_namer(dst)
        name: Name = label or (lambda: f"{name_text(src_name)} -> {name_text(dst_name)}")
        self._check_copy_operands(src, dst, name)
        performer = copy_performer(src_dev, dst_dev)
        if performer is not self.device and performer != self.device:
            raise WrongDeviceError(
                f"copy {name_text(name)} from {src_dev} to {dst_dev} is performed by the "
                f"DeviceAPI of {performer} (the non-CPU side, as in TVM), not by that of "
                f"{self.device}"
            )
        hops: tuple[Hop, ...] = self.scheduler.cost_model.route_between(src_dev, dst_dev)
        nbytes = self._nbytes(src)

        def effect() -> None:
            self._copy_bytes(self._bytes_of(src), self._bytes_of(dst, overwrite=True))

        def elements() -> None:  # a view on either side: element by element
            data: Any = self._elements_of(src)
            if not isinstance(data, np.ndarray):  # a GPU's array (numba.cuda), maybe strided
                data = data.copy_to_host()
            values = cast(np.ndarray[Any, Any], data)
            self._elements_of(dst)[...] = values.reshape(dst.shape)

        strided = any(
            isinstance(m, Buffer) and m.base is not None and not self._copies_views_as_bytes(m)
            for m in (src, dst)
        )
        return self.scheduler.submit(
            self._stream_for(stream, "copy_data_from_to"), "copy", name,
            elements if strided else effect,
            reads=((_memory_key(src), self._race_name(src, src_name)),),
            writes=((_memory_key(dst), self._race_name(dst, dst_name)),),
            wait_for=wait_for, hops=hops, nbytes=nbytes, blocking=stream is None,
        )  # fmt: skip

    # -- kernels -----------------------------------------------------------------------

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
        """Queue `kernel(views)` on a stream of `device`; `seconds` is its cost-model time.

        Buffer arguments become device views when the kernel runs; `writes` are the
        indices of the arguments it may write (all buffer arguments when None), `atomics`
        of those it touches only through atomic read-modify-writes (launches meeting
        only there do not race, and run at once: see `Scheduler`).
        """
        if device is not self.device and device != self.device:
            self._check_device(device, f"launch of {name}")
        scheduler = self.scheduler
        if stream is None and not wait_for and not scheduler.queued:
            # Nothing is queued anywhere: the launch runs now, on views taken now, and
            # needs none of the bookkeeping that orders it against pending work.
            return scheduler.run_now(
                self._current_stream, "kernel", name, kernel, self.kernel_views(name, args),
                seconds,
            )  # fmt: skip
        written: Collection[int] | None = (
            writes if writes is None or isinstance(writes, Collection) else set(writes)
        )
        reads: list[tuple[object, Name]] = []
        write_set: list[tuple[object, Name]] = []
        atomic_set = set(atomics)
        atomic: list[object] = []
        for i, arg in enumerate(args):
            if isinstance(arg, Buffer):
                if arg.freed_at is not None:
                    self._check_live(arg, f"kernel {name} on {device}")
                if arg.api is not self:
                    raise WrongDeviceError(
                        f"kernel {name} on {device} got {arg} as argument {i}; kernels "
                        f"reach only memory of their own device"
                    )
                access: tuple[object, Name] = (arg.memory, arg)  # str(buffer) describes it
            elif isinstance(arg, np.ndarray):
                if not self.kernels_reach_host_memory:
                    raise HostAccessError(
                        f"kernel {name} on {device} got a host array as argument {i}; "
                        f"kernels on {device} cannot reach host memory (copy it to the device)"
                    )
                access = (arg, f"host array argument {i} of {name}")
            else:
                continue
            reads.append(access)
            if written is None or i in written:
                write_set.append(access)
            if i in atomic_set:
                atomic.append(access[0])

        def effect() -> None:
            # The arguments were checked at submission, and a buffer is freed only after
            # the tokens that use it ran (free_data_space quiesces it): while this kernel
            # runs on this device, each buffer argument is its live device memory.
            kernel([self._typed(a) if isinstance(a, Buffer) else a for a in args])

        return self.scheduler.submit(
            self._stream_for(stream, f"launch of {name}"), "kernel", name, effect,
            reads=reads, writes=write_set, wait_for=wait_for, seconds=seconds,
            blocking=stream is None, atomics=atomic,
        )  # fmt: skip

    def kernel_views(self, name: str, args: Sequence[KernelArg]) -> list[Any]:
        """`args` as a kernel running now sees them (buffers as their typed views), with
        the checks `launch` makes at submission. The views stay valid while `frees` does
        not change (the executor's launch sites reuse them)."""
        views: list[Any] = []
        for i, arg in enumerate(args):
            if isinstance(arg, Buffer):
                if arg.freed_at is not None:
                    self._check_live(arg, f"kernel {name} on {self.device}")
                if arg.api is not self:
                    raise WrongDeviceError(
                        f"kernel {name} on {self.device} got {arg} as argument {i}; kernels "
                        f"reach only memory of their own device"
                    )
                views.append(self._typed(arg))
            else:
                if isinstance(arg, np.ndarray) and not self.kernels_reach_host_memory:
                    raise HostAccessError(
                        f"kernel {name} on {self.device} got a host array as argument {i}; "
                        f"kernels on {self.device} cannot reach host memory (copy it to the "
                        "device)"
                    )
                views.append(arg)
        return views

    # -- views ---------------------------------------------------------------------------

    def host_view(self, buffer: Buffer, *, write: bool = False) -> np.ndarray:
        """The buffer's memory as a NumPy array for host code, where the host can see it."""
        self._check_live(buffer, "host access")
        self._check_owned(buffer, "host_view")
        if buffer.kind == "workspace" or not self.host_can_access(buffer.scope):
            raise HostAccessError(
                f"host code cannot access {buffer}: the host reaches memory of "
                f"{self.device} in scope '{buffer.scope}' only through copies "
                "(copy_data_from_to)"
            )
        self.scheduler.check_host_access(buffer.memory, buffer, write)
        return self._typed(buffer)

    def device_view(self, buffer: Buffer) -> np.ndarray:
        """The buffer's memory as a NumPy array for a kernel running on this device."""
        self._check_live(buffer, "device access")
        self._check_owned(buffer, "device_view")
        running = self.scheduler.current
        in_kernel = (
            running is not None
            and running.kind == "kernel"
            and running.stream.device == self.device
        )
        if not in_kernel and not self.host_can_access(buffer.scope):
            raise HostAccessError(
                f"device_view of {buffer} outside a kernel running on {self.device}: "
                "the host reaches this memory only through copies (copy_data_from_to)"
            )
        return self._typed(buffer)

    # -- TVM surface: streams --------------------------------------------------------------

    def create_stream(self, device: Device) -> Stream:
        """`CreateStream`: a new in-order queue on `device`."""
        self._check_device(device, "create_stream")
        return self.scheduler.new_stream(device)

    def free_stream(self, device: Device, stream: Stream) -> None:
        """`FreeStream`: finishes what is queued, then the stream may not be used again."""
        self._check_stream(device, stream, "free_stream")
        if stream is self._default_stream:
            raise DeviceError(f"free_stream: the default stream of {device} cannot be freed")
        if stream is self._current_stream:
            self._current_stream = self._default_stream
        self.scheduler.free_stream(stream)

    def stream_sync(self, device: Device, stream: Stream | None = None) -> None:
        """`StreamSync`: returns once everything queued on `stream` (current when None) ran."""
        self.scheduler.sync(self._stream_for(stream, "stream_sync"))

    def wait_device(self) -> None:
        """The host waits until the device has done the work of every operation that ran so
        far (`device.wait`, `Runtime.synchronize`). A device in this process did that work
        as the operations ran; a `ray` device waits for its actor's calls."""
        return None

    def sync_stream_from_to(self, device: Device, src: Stream, dst: Stream) -> None:
        """`SyncStreamFromTo`: `dst` runs nothing queued later until `src`'s queue is done."""
        self._check_stream(device, src, "sync_stream_from_to")
        self._check_stream(device, dst, "sync_stream_from_to")
        if src.last is not None:
            self.scheduler.submit(dst, "marker", f"wait for {src.name}", None, wait_for=[src.last])

    def set_stream(self, device: Device, stream: Stream) -> None:
        """`SetStream`: `stream` receives the operations given no stream."""
        self._check_stream(device, stream, "set_stream")
        self._current_stream = stream

    def get_current_stream(self, device: Device) -> Stream:
        """`GetCurrentStream` (the default stream unless `set_stream` changed it)."""
        self._check_device(device, "get_current_stream")
        return self._current_stream

    # -- checks the executor calls ---------------------------------------------------------

    def pending_writes(self, memory: Memory) -> list[Token]:
        """Queued operations not yet run that write `memory`."""
        return self.scheduler.pending_writes(memory)

    def live_buffers(self) -> list[Buffer]:
        """Buffers allocated and not freed (leaks, at teardown)."""
        return list(self._live.values())

    def teardown(self) -> list[Buffer]:
        """Finish all streams, return the workspace pool's pages; the leaked buffers."""
        device = self.device
        for stream in self.scheduler.streams:
            if stream.device is device or stream.device == device:
                self.scheduler.sync(stream)
        leaks = self.live_buffers()
        if self._pool is not None:
            self._pool.release_all()
        self.torn_down = True
        return leaks

    def can_renew(self) -> bool:
        """Whether `renew` applies: the class is `renewable` (its own attribute), and the API
        was torn down, not abandoned, holding no memory (no buffer live, no view kept)."""
        return (
            type(self).__dict__.get("renewable", False) is True
            and self.torn_down
            and not self._abandoned
            and not self._live
            and not self._storage
        )

    def renew(self, scheduler: Scheduler) -> None:
        """Become what the constructor built, on `scheduler` (its default stream a new one
        there): for the next run of a program, which then need not build its DeviceAPIs
        again (`Runtime.from_system` with a spare). Call only when `can_renew()`; the old
        statistics are gone, so a report of the old run must have been gathered first."""
        assert self.can_renew()
        for stats in self.scopes.values():
            stats.in_use = stats.peak = stats.allocations = stats.frees = stats.buffers = 0
        self._unzeroed.clear()
        self._views.clear()
        self._views_of.clear()
        self.frees = 0
        self.scheduler = scheduler
        self._default_stream = scheduler.new_stream(self.device)
        self._current_stream = self._default_stream
        self._pool = None
        self.torn_down = False

    def abandon(self) -> None:
        """After a fault elsewhere in the run: end the device's part of the run without
        running what is still queued. A device whose memory lives in this process has
        nothing to free (its buffers go with the run); a `ray` device ends its actor's
        session."""
        self.torn_down = True
        self._abandoned = True

    # -- internals -------------------------------------------------------------------------

    def _check_device(self, device: Device, what: str) -> None:
        if device is not self.device and device != self.device:
            if not isinstance(device, Device):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise DeviceError(
                    f"{what}: device must be a Device such as Device('cuda', 0), got "
                    f"{describe_value(device)}"
                )
            raise WrongDeviceError(f"{what} for {device} called on the DeviceAPI of {self.device}")

    def _check_stream(self, device: Device, stream: Stream, what: str) -> None:
        self._check_device(device, what)
        if stream.device != self.device:
            raise WrongDeviceError(
                f"{what}: stream {stream.name} belongs to {stream.device}, not {self.device}"
            )
        if stream.freed:
            raise StreamError(f"{what}: stream {stream.name} was freed")

    def _stream_for(self, stream: Stream | None, what: str) -> Stream:
        if stream is None:
            return self._current_stream
        self._check_stream(self.device, stream, what)
        return stream

    def _check_live(self, buffer: Buffer, what: str) -> None:
        if not buffer.is_live:
            raise UseAfterFreeError(
                f"use after free in {what}: {buffer} was freed at {buffer.freed_at}"
            )

    def _check_owned(self, buffer: Buffer, what: str) -> None:
        if buffer.api is not self:
            raise WrongDeviceError(f"{what} of {buffer} called on the DeviceAPI of {self.device}")

    def _check_free(self, buffer: Buffer, what: str, at: str | None) -> None:
        if not isinstance(buffer, Buffer):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise DeviceError(f"{what}: expected a Buffer, got {describe_value(buffer)}")
        if not buffer.is_live:
            where = f" at {at}" if at else ""
            raise DoubleFreeError(
                f"double free{where}: {buffer} was already freed at {buffer.freed_at}"
            )
        if buffer.api is not self:
            raise WrongDeviceError(
                f"{what} of {buffer} on the DeviceAPI of {self.device}: the buffer belongs "
                f"to {buffer.device}; free it there"
            )

    def _scope(self, scope: str | None, label: str) -> ScopeStats:
        name = "global" if scope in (None, "") else scope
        assert name is not None
        if name in KERNEL_ONLY_SCOPES:
            raise DeviceError(
                f"cannot allocate {label} in scope '{name}' of {self.device} from the host: "
                f"'{name}' memory exists only inside kernels (use kernel.alloc_shared)"
            )
        stats = self.scopes.get(name)
        if stats is None:
            valid = ", ".join(s for s in self.scopes if s not in KERNEL_ONLY_SCOPES)
            raise DeviceError(
                f"device {self.device} has no memory scope '{name}' (for {label}); "
                f"scopes it allocates: {valid}"
            )
        return stats

    def _reserve(self, stats: ScopeStats, scope: str, nbytes: int, label: str) -> None:
        if stats.capacity is not None and stats.in_use + nbytes > stats.capacity:
            pooled = self._pool.held_bytes if self._pool is not None and scope == "global" else 0
            held = f", of which {pooled} held by the workspace pool" if pooled else ""
            raise OutOfDeviceMemoryError(
                f"out of device memory on {self.device} scope '{scope}': {label} requests "
                f"{nbytes} bytes, capacity {stats.capacity} bytes, {stats.in_use} bytes in "
                f"use by {stats.buffers} allocation(s){held}"
            )
        stats.in_use += nbytes
        stats.peak = max(stats.peak, stats.in_use)
        stats.allocations += 1
        stats.buffers += 1

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
        if self.torn_down:
            raise DeviceError(f"allocation of {label} on {self.device} after teardown")
        stats = self._scope(scope, label)
        name = "global" if scope in (None, "") else scope
        assert name is not None
        self._reserve(stats, name, nbytes, label)
        buffer = Buffer(
            _new_buffer_id(), self.device, shape, dtype, name, nbytes, label,
            kind=kind, alignment=alignment, api=self,
        )  # fmt: skip
        storage = STORAGE_CACHE.take(nbytes, alignment) if self._reuses_storage else None
        if storage is None:
            try:
                storage = self._allocate_storage(nbytes, alignment)
            except MemoryError:
                # Within the scope's capacity, but this device's memory is the
                # machine's (cpu, simulated), and the machine has less.
                stats.in_use -= nbytes
                stats.allocations -= 1
                stats.buffers -= 1
                raise OutOfDeviceMemoryError(
                    f"out of host memory: {label} on {self.device} requests {nbytes} bytes, "
                    f"which this machine cannot give ({self.device} keeps its memory in "
                    "host memory)"
                ) from None
        else:
            self._unzeroed.add(buffer.id)
        self._storage[buffer.id] = storage
        self._live[buffer.id] = buffer
        return buffer

    def _release(self, buffer: Buffer, at: str | None) -> None:
        self._end_views(buffer, at or "free_data_space")
        stats = self.scopes[buffer.scope]
        stats.in_use -= buffer.nbytes
        stats.frees += 1
        stats.buffers -= 1
        buffer.freed_at = at or "free_data_space"
        self.frees += 1
        del self._live[buffer.id]
        self._unzeroed.discard(buffer.id)
        self._views.pop(buffer.id, None)
        if self._reuses_storage:
            STORAGE_CACHE.keep(self._storage.pop(buffer.id), buffer.alignment)
        else:
            del self._storage[buffer.id]

    def _end_views(self, buffer: Buffer, at: str) -> None:
        for view in self._views_of.pop(buffer.id, ()):
            view.freed_at = f"{at} (the free of its base)"
            self._views.pop(view.id, None)
            self._storage.pop(view.id, None)

    def _allocate_page(self, nbytes: int, label: str) -> np.ndarray:
        self._reserve(self.scopes["global"], "global", nbytes, f"workspace page for {label}")
        return self._allocate_storage(nbytes, ALLOC_ALIGNMENT)

    def _release_page(self, nbytes: int) -> None:
        stats = self.scopes["global"]
        stats.in_use -= nbytes
        stats.frees += 1
        stats.buffers -= 1

    def _storage_of(self, buffer: Buffer, overwrite: bool = False) -> Any:
        """The bytes of `buffer`; zeroed first if its storage is reused and not yet zeroed,
        unless the caller is about to `overwrite` all of them (a copy into it)."""
        storage = self._storage[buffer.id]
        if self._unzeroed and buffer.id in self._unzeroed:
            self._unzeroed.discard(buffer.id)
            if not overwrite:
                storage.fill(0)
        return storage

    def _typed(self, buffer: Buffer) -> Any:
        """The buffer's storage as an array of its dtype and shape (made once per buffer;
        a buffer's storage does not move while it lives); a view's, strided in its base's."""
        view = self._views.get(buffer.id)
        memory = buffer.memory
        if view is None or (self._unzeroed and memory.id in self._unzeroed):
            if buffer.base is None:
                view = self._storage_of(buffer).view(buffer.dtype).reshape(buffer.shape)
            else:
                view = self._view_array(self._storage_of(memory), buffer)
            self._views[buffer.id] = view
        return view

    def _memory_device(self, memory: Memory) -> Device:
        return memory.device if isinstance(memory, Buffer) else self.scheduler.host

    def _memory_name(self, memory: Memory) -> str:
        return name_text(self._memory_namer(memory))

    def _memory_namer(self, memory: Memory) -> Name:
        """How `memory` is named in copy messages (formatted only when one is raised)."""
        if isinstance(memory, Buffer):
            return memory.label
        return lambda: f"host array {'x'.join(map(str, memory.shape))}x{memory.dtype}"

    @staticmethod
    def _race_name(memory: Memory, short: Name) -> Name:
        """How race messages name `memory`: a buffer fully, as launches do (`str(buffer)`)."""
        return memory if isinstance(memory, Buffer) else short

    def _nbytes(self, memory: Memory) -> int:
        return memory.nbytes

    def _copy_bytes(self, src: Any, dst: Any) -> None:
        """Copy between two byte arrays of equal length (storage or host arrays). A side
        that is not a NumPy array is another DeviceAPI's storage on a GPU (a numba.cuda
        device array, as `cuda` keeps it), which copies itself."""
        if isinstance(dst, np.ndarray) and isinstance(src, np.ndarray):
            dst[...] = src
        elif not isinstance(dst, np.ndarray):
            dst.copy_to_device(src)
        else:
            src.copy_to_host(dst)

    def _copies_views_as_bytes(self, memory: Buffer) -> bool:
        """Whether a copy reaches the view `memory` through its storage's bytes (a ray
        device's actor copies its views itself), not element by element."""
        owner = memory.api
        return owner is not None and owner.view_bytes_are_storage

    def _elements_of(self, memory: Memory) -> Any:
        """`memory` as an array of its elements, for a copy to or from a view: a NumPy
        array, or a GPU's (numba.cuda) device array."""
        if isinstance(memory, np.ndarray):
            return memory
        owner = memory.api
        assert owner is not None
        self._check_live(memory, "copy")
        return owner._typed(memory)

    def _bytes_of(self, memory: Memory, overwrite: bool = False) -> Any:
        if isinstance(memory, np.ndarray):
            return memory.reshape(-1).view(np.uint8)
        owner = memory.api
        assert owner is not None
        self._check_live(memory, "copy")
        return owner._storage_of(memory, overwrite)

    def _check_copy_operands(self, src: Memory, dst: Memory, name: Name) -> None:
        for memory, side in ((src, "source"), (dst, "destination")):
            if isinstance(memory, Buffer):
                if memory.freed_at is not None:
                    self._check_live(memory, f"copy {name_text(name)}")
                if memory.api is None or memory.api.scheduler is not self.scheduler:
                    raise DeviceError(
                        f"copy {name_text(name)}: {memory} belongs to another runtime"
                    )
                if memory.kind == "workspace" and not isinstance(
                    dst if side == "source" else src, Buffer
                ):
                    raise DeviceError(
                        f"copy {name_text(name)}: {memory} is workspace memory, which is not "
                        "transferable to or from the host; use alloc_data_space"
                    )
            elif not memory.flags.c_contiguous:
                raise CopySizeError(
                    f"copy {name_text(name)}: the {side} host array is not contiguous; copies "
                    "support contiguous arrays only (use numpy.ascontiguousarray)"
                )
        if self._nbytes(src) != self._nbytes(dst):
            raise CopySizeError(
                f"copy {name_text(name)}: the size in bytes must match exactly: source "
                f"{self._describe_memory(src)} has {self._nbytes(src)} bytes, destination "
                f"{self._describe_memory(dst)} has {self._nbytes(dst)} bytes"
            )

    def _describe_memory(self, memory: Memory) -> str:
        return memory.describe() if isinstance(memory, Buffer) else self._memory_name(memory)


def _memory_key(memory: Memory) -> object:
    """What orders work on `memory` (`Scheduler`): a view is ordered with its base."""
    return memory.memory if isinstance(memory, Buffer) else memory


__all__ = [
    "ALLOC_ALIGNMENT",
    "DEVICE_ATTR_KINDS",
    "KERNEL_ONLY_SCOPES",
    "Buffer",
    "BufferKind",
    "DeviceAPI",
    "KernelArg",
    "Memory",
    "ScopeStats",
    "copy_performer",
]
