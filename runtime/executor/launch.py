"""`device.launch` in the executor: the launch step, its fast path, and what a launch costs.

Each `device.launch` op compiles to one step (`compile_launch`) and, in each run, one
`LaunchSite` (the last run's, when the run renewed that run's runtime) holding what its
launches share: the compiled kernel, the DeviceAPI of its device, the device's limits,
the stream of an async launch, the modelled time of the last grid and block. A launch
takes the general path (`LaunchSite.launch`): every check, then the DeviceAPI submits
it. A blocking launch that repeats its site's last launch (the same grid, block and
argument objects, no buffer of its device freed since, nothing queued) skips the checks
that launch passed and runs the compiled kernel on the views it saw: this is the
executor's per-launch overhead, kept short.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

from xdsl.dialects.builtin import DenseArrayBase
from xdsl.ir import Operation

from ...analysis.dtypes import numpy_dtype
from ...diagnostics import DevplanError, LocatedError, diagnostic_at, error_at
from ...dialects import device as dev
from ...dialects.kernel import (
    AllocSharedOp,
    KernelFuncOp,
    known_sizes,
    launch_size_conflict,
    lookup_kernel,
)
from ...system.cost import WORK_ATTR, CostModel, kernel_work
from ...system.devices import Device
from ..device_api import Buffer, DeviceAPI
from ..host.frame import Compiler, Frame, Step
from ..kernels.launch import MAX_GRID, KernelCall, grid_beyond_limit
from .messages import place_of, placed_at
from .state import Execution, device_of, memref_type_of

if TYPE_CHECKING:
    from ..kernels.launch import CompiledKernel
    from ..streams import Stream, Token


class LaunchCompiler(Compiler, Protocol):
    """What compiling a `device.launch` asks of the program being compiled."""

    def kernel(
        self, op: dev.LaunchOp, device: str | None = None
    ) -> tuple[CompiledKernel, tuple[int, ...], tuple[int, ...]]:
        """The launch's kernel compiled for the program's backend (for `device`, which its
        progress line names), the indices of the arguments it writes, and of those it
        touches only through atomics."""
        ...


def compile_launch(p: LaunchCompiler, op: dev.LaunchOp) -> Step:
    """The step of a `device.launch`."""
    device = device_of(op.device, op)
    gx, gy, gz = (p.slot(v) for v in op.grid)
    bx, by, bz = (p.slot(v) for v in op.block)
    # A launch that repeats the site's last one (the same sizes and argument objects,
    # none freed since, nothing queued, a blocking launch) reuses what the last one
    # checked and made and goes straight to the compiled kernel; any other launch takes
    # the general path (`LaunchSite.launch`). This step is the executor's per-launch
    # overhead: keep the repeated case short.
    args = tuple(p.slot(v) for v in op.args)
    deps = tuple(p.slot(d) for d in op.dependencies)
    token_slot = p.slot(op.token) if op.token is not None else None
    name = f"{op.kernel}"
    where = place_of(op)
    kernel_op = launched_kernel(op)
    cost = kernel_cost(op, kernel_op)
    shared = shared_bytes(kernel_op)
    label = f"{name} ({where})"
    blocking = token_slot is None and not deps
    compiled: list[KernelFacts] = []
    """The launch's kernel compiled, what it writes and the sizes it declares: found at the
    first launch (compiling may fail: a later launch tries again) and kept for every run,
    since a run on a runtime built anew makes its launch sites anew."""

    def kernel_facts() -> KernelFacts:
        if not compiled:
            kernel, writes, atomics = p.kernel(op, str(device))
            compiled.append(KernelFacts(kernel, writes, atomics, known_sizes(kernel_op)))
        return compiled[0]

    read = operator.itemgetter(gx, gy, gz, bx, by, bz, *args, 0)
    """A launch's key: its grid, block and arguments (and the frame's execution, so that
    a key is never a single value)."""
    current: list[LaunchSite | None] = [None]
    """The site of the run that launched last (runs of one program may overlap)."""

    def located(error: DevplanError) -> DevplanError:
        """A kernel's error placed at this launch: a fault gets a note naming the launch;
        an argument check (an async launch runs at a later wait) is placed at this op,
        not at whatever op made it run."""
        if isinstance(error, LocatedError):
            note = diagnostic_at(op, f"{name} launched here on {device}", kind="note")
            return type(error)(f"{error}\n{note}")
        return placed_at(op, error)

    def new_site(ex: Execution) -> LaunchSite:
        return LaunchSite(
            ex, p, device, op, blocking, name, shared, label, cost, located, kernel_facts()
        )

    def run(f: Frame) -> None:
        ex: Execution = f[0]
        site = current[0]
        if site is None or site.ex is not ex:
            site = current[0] = _site_in(ex, op, new_site)
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


def _site_in(
    ex: Execution, op: dev.LaunchOp, new_site: Callable[[Execution], LaunchSite]
) -> LaunchSite:
    """The launch site of `op` in the run `ex`: made on its first launch, or the site of
    the last run on the same runtime (renewed since), which serves `ex` from now on."""
    site = ex.launch_sites.get(op)
    if site is None:
        site = ex.launch_sites[op] = new_site(ex)
    elif site.ex is not ex:
        site.renew(ex)
    return site


class KernelFacts(NamedTuple):
    """What every launch of one `device.launch` op shares, whatever the run."""

    kernel: CompiledKernel
    writes: tuple[int, ...]
    """The indices of the arguments the kernel writes."""
    atomics: tuple[int, ...]
    """The indices of the arguments it touches only through atomics."""
    known: dict[str, tuple[int, int, int]]
    """The block and grid the kernel declares (`known_block_size`/`known_grid_size`)."""


_NO_KEY = (object(),)
"""A launch site's key before a launch ran at once: no launch's key begins like it."""


class LaunchSite:
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
        "dims",
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
        p: LaunchCompiler,
        device: Device,
        op: dev.LaunchOp,
        blocking: bool,
        kernel: str,
        shared: int,
        label: str,
        cost: Callable[[CostModel, str, Sequence[int], Sequence[int]], float],
        located: Callable[[DevplanError], DevplanError],
        facts: KernelFacts,
    ) -> None:
        self.ex = ex
        self.op = op
        self.device = device
        self.name = kernel
        self.label = label
        self.cost = cost
        self.located = located
        self.kernel, self.writes, self.atomics, self.known = facts
        self.run = self.kernel.run_unchecked
        self.api = ex.api(device, op)
        backend = p.kernel_backend
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
        self.dims = ex.block_dims(device, self.api)
        """The device's largest block along x, y and z."""
        self.stream = None if blocking else ex.stream(device, "compute", op)
        """The stream of an async launch (None: blocking, on the device's current stream)."""
        self.now: Stream = self.api.get_current_stream(device)
        """The stream a blocking launch that runs at once runs on."""
        self.grid: tuple[int, int, int] | None = None
        self.block: tuple[int, int, int] | None = None
        self.seconds = 0.0
        self.key: tuple[Any, ...] = _NO_KEY
        """The key of the last launch that ran at once (see `compile_launch`), else `_NO_KEY`."""
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

    def renew(self, ex: Execution) -> None:
        """Serve `ex`, a run on the runtime this site's run ran on, renewed since
        (`Runtime.from_system` with a spare): its DeviceAPI is the same object, with the
        same attributes and limits, so only what belongs to a run is made again — the
        scheduler's totals, the current stream, the stream of an async launch."""
        assert ex.api(self.device, self.op) is self.api
        self.ex = ex
        self.scheduler = self.api.scheduler
        self.totals = self.scheduler.totals.kernel_totals(self.device_name)
        if self.stream is not None:
            self.stream = ex.stream(self.device, "compute", self.op)
        self.now = self.api.get_current_stream(self.device)

    def release(self) -> None:
        """Let go of the memory the last launch took, at the end of its run: the site and
        its compiled kernel (which skips the checks of a repeated launch) would else keep
        the run's arrays alive until the next run (see `storage.HostBlocks`)."""
        self.key = _NO_KEY
        self.views = []
        self.kernel.forget_last_launch()

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
            or b[0] > self.dims[0]
            or b[1] > self.dims[1]
            or b[2] > self.dims[2]
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
        body = KernelCall(kernel, g, b, located)

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
            raise placed_at(op, e) from None
        if immediate and self.repeatable and all(type(x) is int for x in key[:6]):
            # It ran at once and was accepted: the next launch with this key may skip
            # what was checked and reuse the views (see `compile_launch`).
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
            type_ = memref_type_of(inner.result)
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
    """The modelled time of a launch under the run's cost model (`system/cost.py`): the work
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
    `MAX_GRID`, a block beyond the device's size along an axis or of too many threads."""
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
    limit = ex.limit(device, api)
    if threads > limit:
        raise error_at(
            op,
            f"'device.launch' block ({', '.join(map(str, block))}) has {threads} threads, "
            f"more than max_threads_per_block = {limit} of {device}",
        )
    dims = ex.block_dims(device, api)
    axis, size, most = next(a for a in zip("xyz", block, dims, strict=True) if a[1] > a[2])
    raise error_at(
        op,
        f"'device.launch' block ({', '.join(map(str, block))}) on {device}: {size} threads "
        f"along {axis}, more than the limit of {most:g} (max_thread_dimensions "
        f"[{', '.join(f'{d:g}' for d in dims)}])",
    )


def launched_kernel(op: dev.LaunchOp) -> KernelFuncOp:
    """The `kernel.func` a launch names; a located error when there is none."""
    found = lookup_kernel(op, op.kernel)
    if found is None:
        raise error_at(op, f"'device.launch' of {op.kernel}: no such kernel.func")
    return found
