"""The Numba kernel backend: explicit loops over blocks and threads, compiled by `numba.njit`.

The kernel is translated once into Python source over scalars (`numba_source.py`, around
the per-thread code of `numba_ops.py`): a function `blocks(first, last, ...)` that runs
the blocks numbered `first` to `last - 1` and returns True at the first fault, and
`run_par`, which runs chunks of consecutive blocks in parallel with `prange`. Both are
compiled with `numba.njit` at the first launch for the argument types, and cached on disk
(`kernel_cache.py`). This module compiles that source and launches it.

Large launches (`PARALLEL_THREADS`; fewer over big arrays: `BIG_ARRAYS_FACTOR`; more, and only
with a core to spare, without loops: `LOOP_FREE_FACTOR`) of kernels
(`ranges.separating_axes`, and no written array overlapping another argument) run their
blocks in parallel, in chunks of consecutive blocks handed to whichever thread is free
(a thread the machine's other work delays does not hold the others back): each chunk of
blocks stops at its first fault, and the first faulting chunk's fault is the one a run
in order meets. After a fault, blocks that a run in order
would not have reached may have run: what a faulting launch leaves in its buffers is
unspecified.

A fault writes its site, the block and thread, and the index into an error vector and
returns; the launcher turns that into the same `KernelError` the NumPy backend raises.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numba  # pyright: ignore[reportMissingTypeStubs]
import numpy as np
from numba.core.errors import NumbaError  # pyright: ignore[reportMissingTypeStubs]
from xdsl.dialects.builtin import Float16Type, MemRefType
from xdsl.ir import SSAValue

from ...diagnostics import diagnostic_at
from ...dialects.kernel import AssertOp, PrintfOp
from .. import numba_cache
from ..compile_clock import numba_compile_for
from . import kernel_cache, watchdog
from .common import Kernel, KernelError, dim_message
from .numba_ops import ERR_SIZE, HELPERS, OUT_OF_BOUNDS, STOP_FLAG, STOPPED
from .numba_source import RUN_BLOCKS, NumbaSource
from .ranges import separating_axes, stored_params

_njit = numba_cache.njit
_set_chunksize: Callable[[int], int] = numba.set_parallel_chunksize  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
_BACKEND_VERSION = hashlib.sha256(
    b"".join(p.read_bytes() for p in sorted(Path(__file__).parent.glob("*.py")))
    + Path(__file__).parent.with_name("semantics.py").read_bytes()
    + Path(__file__).parent.with_name("scalar_ops.py").read_bytes()
).hexdigest()[:16]
"""Changes with the source of the kernel backends, `semantics` and `scalar_ops` (the fault
kinds compiled into kernels): part of the key of
cached kernels (which is the kernel's IR, not the code generated from it)."""

PARALLEL_THREADS = 1 << 16
"""Launches of at least this many threads run their blocks in parallel (`prange`), when the
kernel's blocks are free of races (see `ranges.separating_axes`)."""

BIG_ARRAYS_FACTOR = 4
"""A launch of a kernel with loops over arrays of `BIG_ARRAYS` elements or more in all
runs in parallel from `PARALLEL_THREADS / BIG_ARRAYS_FACTOR` threads: each thread then
loops over a long stretch of them (a convolution as a matmul: 24,576 threads of 576
multiply-adds on 8 rows each took 4.8 ms in order, 2.7-3.1 ms on 2 cores). Launches of
fewer threads (a row reduction: one thread a row) lose more to handing chunks to Numba's
threads than they gain (layernorm's five kernels on 1024x1024: 1.16 ms in order, 1.83 ms
in parallel, `bench/level1_ops.py`)."""

BIG_ARRAYS = 1 << 20

LOOP_FREE_FACTOR = 16
"""A kernel without loops (a few operations a thread) runs in parallel only from
`LOOP_FREE_FACTOR * PARALLEL_THREADS` threads, and only while the machine has a core to
spare (`spare_core`): each chunk of such blocks is a few microseconds of work, so a launch
lasts as long as its slowest thread's chunks. On 2 cores, a 1024x1024 broadcast add took
0.14 ms in parallel against 0.18 ms in order on an idle machine (`bench/level1_ops.py`,
medians of 21), while at a load of 3-4 a parallel launch of 2^20 such threads took about
8 ms, against 0.2 ms in order."""

LOAD_FILE = Path("/proc/loadavg")
"""Linux's load: its fourth field is `runnable/all` scheduling entities at this moment."""

OWN_THREADS = Path("/proc/self/task")
"""This process's threads, each with its scheduling state in `<tid>/stat`."""

SPARE_CORE_SECONDS = 0.05
"""How long `spare_core` keeps its answer: a launch reads the load at most this often."""

_load_read_at = -SPARE_CORE_SECONDS
"""When (`time.monotonic`) `spare_core` last read the load; `_spare` is what it found."""
_spare = False


def spare_core() -> bool:
    """Whether no other process's work is runnable beside this process's, leaving a core
    idle for a parallel launch's second thread, as OpenMP's dynamic adjustment of threads
    (`OMP_DYNAMIC`) reads the system's load. It reads the count of runnable threads at
    this moment, not the 1-minute load average (which counts this process's own parallel
    launches, so that a run of them would stop itself), less this process's own runnable
    threads: after a parallel launch Numba's OpenMP workers spin for some milliseconds
    (as do OpenBLAS's after a NumPy matmul), and counted as load they turned the next
    launches serial, so that the same program ran in parallel or in order by what ran
    just before it (`bench/level1_ops.py`'s softmax swung 2x between runs). The calling
    thread's own count is among them. False where the load cannot be read (not Linux)."""
    global _load_read_at, _spare
    now = time.monotonic()
    if now - _load_read_at >= SPARE_CORE_SECONDS:
        try:
            runnable = int(LOAD_FILE.read_text().split()[3].split("/")[0])
            others = runnable - _own_runnable()
        except (OSError, IndexError, ValueError):
            others = 1 << 30
        _load_read_at, _spare = now, others <= (os.cpu_count() or 1) - 2
    return _spare


def _own_runnable() -> int:
    """How many of this process's threads are running or runnable (`R`), the caller's
    among them; a thread that ends while they are read is not counted."""
    running = 0
    for tid in os.listdir(OWN_THREADS):
        try:
            fd = os.open(OWN_THREADS / tid / "stat", os.O_RDONLY)
        except OSError:
            continue
        try:
            stat = os.read(fd, 512)
        finally:
            os.close(fd)
        # `pid (comm) state ...`: comm may hold spaces and parentheses, the state follows
        # the last `)`
        state = stat.rindex(b")") + 2
        running += stat[state : state + 1] == b"R"
    return running


def is_f16(type_: Any) -> bool:
    """f16 memory is passed to compiled code as its uint16 bit patterns (a view)."""
    if isinstance(type_, MemRefType):
        type_ = type_.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return isinstance(type_, Float16Type)


def compile_numba(kernel: Kernel, what: str = "") -> tuple[Callable[..., None], str]:  # noqa: C901
    """A run(grid, block, args) launcher of `kernel` compiled with Numba, and its source.

    The functions are loaded from the on-disk kernel cache (`kernel_cache`) when it is
    usable, so that a process running a kernel compiled before loads it instead of
    compiling it; else they are compiled in memory. Numba compiles (or loads) a function
    at its first launch, for the types of the arguments: that happens before the launch
    runs, on the compile clock (`compiling <what>`), not in the kernel's time.
    """
    what = what or f"kernel @{kernel.name} (numba)"
    # printf and assert call back into Python objects made for this compilation: such a
    # kernel is compiled in memory (the cache holds only self-contained modules) and runs
    # its blocks in order (its output and failures follow the order of threads).
    calls_back = any(isinstance(op, PrintfOp | AssertOp) for op in kernel.func.walk())
    try:  # generating the source and compiling it as Python both walk the kernel's IR
        namespace, source, messages = _namespace(kernel, calls_back)
    except RecursionError as e:
        raise _cannot_compile(kernel, _TOO_LARGE) from e
    split = "blocks_fast" in namespace
    """Whether the paths are functions of their own (`NumbaSource.split`): then the
    checked path is compiled at the first launch that meets a block it must run."""

    def with_checks(name: str) -> Callable[[], Any]:
        """The maker of the function `name`, whose code checks every fault site: a
        located error instead when there are more sites than `MAX_CHECKED_SITES`."""

        def make() -> Any:
            if len(kernel.sites) > MAX_CHECKED_SITES:
                raise _cannot_compile(kernel, _too_many_checks(len(kernel.sites), split))
            return namespace[name]

        return make

    fast = _FirstCall((lambda: namespace["blocks_fast"]) if split else with_checks("blocks"), what)
    checked = _FirstCall(with_checks("blocks_checked"), f"{what}, with bounds checks")
    # A process that never launches the kernel in parallel does not pay for its
    # parallel dispatcher (nor loads its code).
    parallel_options: dict[str, Any] = {"error_model": "numpy", "parallel": True, "nogil": True}
    jitted_par = _FirstCall(
        lambda: _njit(cache=namespace["CACHE"], **parallel_options)(namespace["run_par"]),
        f"{what}, in parallel",
    )

    def run_blocks(
        first: int, last: int, grid: Any, block: Any, err: Any, args: Any, path: Any = fast
    ) -> None:
        """Run blocks `first` to `last - 1` in order, faults recorded in `err`, starting
        on `path` and going from one path to the other where it stops."""
        stop = path.call(first, last, *grid, *block, err, *args)
        while split and stop < last and not err[0]:
            path = checked if path is fast else fast
            stop = path.call(stop, last, *grid, *block, err, *args)

    def run_in_parallel(chunks: int, nblocks: int, grid: Any, block: Any, args: Any) -> Any:
        """Run the blocks in `chunks` chunks of consecutive blocks in parallel; the error
        vector of the first chunk that faults (else of the first chunk)."""
        errs = np.zeros((chunks, ERR_SIZE), dtype=np.int64)
        stops = np.empty(chunks, dtype=np.int64)
        # One chunk at a time to whichever thread is free: a thread the machine's other
        # work delays does not hold the others back.
        previous = _set_chunksize(1)
        try:
            jitted_par.call(*grid, *block, errs, stops, *args)
        finally:
            _set_chunksize(previous)
        for chunk, stop in enumerate(stops.tolist()):
            # The first chunk that faults, on its fast path or in the blocks after the
            # first it could not run fast (run now, in order), holds the fault a run of
            # the blocks in order meets.
            last = (chunk + 1) * nblocks // chunks
            if not errs[chunk, 0] and stop < last:
                run_blocks(stop, last, grid, block, errs[chunk], args, checked)
            if errs[chunk, 0]:
                return errs[chunk]
        return errs[0]

    loops = kernel.has_while
    axes = None if calls_back or loops else separating_axes(kernel)
    loop_free = not any(op.name == "scf.for" for op in kernel.func.walk())
    own_errors = loops or kernel.has_atomics
    """Whether each run needs its own error vector: launches of a kernel with atomics
    may run at once (see `streams.Scheduler`), and a loop polls the vector's stop flag."""
    written = [i for i, p in enumerate(kernel.params) if p in stored_params(kernel)]

    def parallel(grid: tuple[int, int, int], block: tuple[int, int, int], args: list[Any]) -> int:
        """How many chunks of blocks to run in parallel (0: run the blocks in order)."""
        blocks = grid[0] * grid[1] * grid[2]
        if axes is None or blocks < 2:
            return 0
        threads_in_all = blocks * block[0] * block[1] * block[2]
        if threads_in_all < PARALLEL_THREADS * (LOOP_FREE_FACTOR if loop_free else 1) and (
            loop_free
            or threads_in_all < PARALLEL_THREADS // BIG_ARRAYS_FACTOR
            or _elements(args) < BIG_ARRAYS
        ):
            return 0
        if any(size > 1 and axis not in axes for axis, size in zip("xyz", grid, strict=True)):
            return 0
        threads = numba.get_num_threads()
        if threads < 2 or _aliased(written, args) or (loop_free and not spare_core()):
            return 0
        return min(blocks, 4 * threads)

    no_fault = np.zeros(ERR_SIZE, dtype=np.int64)
    """The error vector of launches in order (reset after a fault)."""
    f16_params = [i for i, p in enumerate(kernel.params) if is_f16(p.type)]
    """Parameters in f16 memory: the kernel reads and writes their bit patterns."""
    read_params = [
        i
        for i, p in enumerate(kernel.params)
        if isinstance(p.type, MemRefType) and i not in written
    ]
    """Memory the kernel only reads, passed to it read-only: Numba compiles a function
    once per argument types, read-only arrays apart, and the executor passes a program's
    inputs read-only but buffers other kernels wrote writable (a matmul's kernel takes some
    20 CPU-s to compile: once, not once per mix of the two)."""

    def run(grid: tuple[int, int, int], block: tuple[int, int, int], args: list[Any]) -> None:
        given = args
        for i in read_params:
            if args[i].flags.writeable:
                if args is given:
                    args = list(given)
                args[i] = args[i].view()
                args[i].flags.writeable = False
        if f16_params:
            args = list(args) if args is given else args
            for i in f16_params:
                args[i] = args[i].view(np.uint16)
        chunks = parallel(grid, block, args) if axes is not None else 0
        nblocks = grid[0] * grid[1] * grid[2]
        try:
            if chunks:
                err = run_in_parallel(chunks, nblocks, grid, block, args)
            elif loops:
                err = np.zeros(ERR_SIZE, dtype=np.int64)
                with watchdog.watching() as watch:
                    watch.attach(err, STOP_FLAG)
                    run_blocks(0, nblocks, grid, block, err, args)
                if err[0] == STOPPED:
                    raise watch.error(kernel, int(err[1]), err[2:5].tolist(), err[5:8].tolist())
            else:
                err = np.zeros(ERR_SIZE, dtype=np.int64) if own_errors else no_fault
                run_blocks(0, nblocks, grid, block, err, args)
        except NumbaError as e:  # a gap in this backend, reported at the kernel
            raise _cannot_compile(kernel, str(e).splitlines()[0]) from e
        except RecursionError as e:  # Numba's passes recurse along chains of branches
            raise _cannot_compile(kernel, _TOO_LARGE) from e
        if err[0]:
            fault = err.copy()
            err[:] = 0
            raise fault_error(kernel, messages, fault, args)

    return run, source


def _elements(args: list[Any]) -> int:
    """How many elements the array arguments of a launch hold in all."""
    return sum(a.size for a in args if isinstance(a, np.ndarray))


def _namespace(kernel: Kernel, calls_back: bool) -> tuple[dict[str, Any], str, dict[int, str]]:
    """The namespace of the kernel's module (from the on-disk cache, else generated and
    compiled in memory), its source and its fixed fault messages."""
    namespace = None if calls_back else _load_cached(kernel)
    if namespace is not None:
        ops = list(kernel.func.walk())  # the fault sites (when generated in another process)
        kernel.sites[:] = [ops[i] for i in namespace["SITES"]]
        return namespace, Path(namespace["__file__"]).read_text(), namespace["MESSAGES"]
    gen = NumbaSource(kernel)
    source = gen.generate()
    namespace = gen.namespace | {"njit": _njit, "prange": numba.prange, "CACHE": False}
    exec(compile(source, f"<kernel @{kernel.name} (numba)>", "exec"), namespace)
    return namespace, source, gen.messages


_TOO_LARGE = "it is too large for Numba's compiler (maximum recursion depth exceeded)"

MAX_CHECKED_SITES = 256
"""The most fault sites (ops that may fault: accesses, divisions, loop steps) the numba
backend compiles checked code for. Each is a branch to a fault exit inside the thread
loops, and Numba's compile time and memory grow about with their square: a chain of
loads launched with a faulting block compiled (both paths) in 15 s for 100 loads, 47 s
for 200 (0.4 GB); its checked path took 78 s for 500 on a faster machine (1.9 GB), and
was killed at 24 GB for 3000. The kernels devplan generates have at most 63 (every
kernel `make test` compiles); the fast path of a kernel that has one compiles in time
linear in its size, so only launches that need the checked path meet this."""


def _too_many_checks(sites: int, split: bool) -> str:
    needs = "this launch needs its bounds-checked path" if split else "its code checks them all"
    return (
        f"it has {sites} fault sites (ops that may fault: accesses, divisions, loop steps) "
        f"and {needs}; the numba backend compiles checks for at most {MAX_CHECKED_SITES}, "
        "since Numba's compile time grows with their square"
    )


def _cannot_compile(kernel: Kernel, why: str) -> KernelError:
    return KernelError(
        diagnostic_at(
            kernel.func,
            f"in kernel @{kernel.name}: numba cannot compile this kernel "
            f"(use the numpy backend): {why}",
        )
    )


class _FirstCall:
    """A kernel's Numba function, made by `make` and compiled (or loaded from the cache)
    on the compile clock at its first call, for that call's types: `call` is then
    Numba's dispatcher, called directly."""

    def __init__(self, make: Callable[[], Any], what: str) -> None:
        self.make = make
        self.what = what
        self.call: Callable[..., Any] = self.first

    def first(self, *args: Any) -> Any:
        dispatcher = self.make()
        compile_for(dispatcher, args, self.what)
        self.call = dispatcher
        return dispatcher(*args)


compile_for = numba_compile_for
"""How a kernel's Numba functions are compiled before their first launch runs."""


def _aliased(written: list[int], args: list[Any]) -> bool:
    """Whether an array the kernel writes may share memory with another array argument."""
    for i in written:
        for j, other in enumerate(args):
            if j == i or not isinstance(other, np.ndarray):
                continue
            if np.may_share_memory(args[i], cast(np.ndarray[Any, Any], other)):
                return True
    return False


def _load_cached(kernel: Kernel) -> dict[str, Any] | None:
    """The namespace of the kernel's module in the on-disk cache, found by the kernel's IR
    (the module is generated and written on first use: its source, the fault messages by
    site as `MESSAGES`, and as `SITES` each fault site's op by its place in the kernel's
    walk), or None when the cache directory cannot be written."""

    def module_text() -> str:
        gen = NumbaSource(kernel)
        source = gen.generate()
        walk_order = {op: i for i, op in enumerate(kernel.func.walk())}
        header = (
            "import numpy as np\n"
            "from numba import prange\n"
            "from devplan.runtime.numba_cache import njit\n"
            "from devplan.runtime import semantics\n"
            "from devplan.runtime.kernels.atomics import atomic_cas\n"
            "from devplan.runtime.kernels.numba_ops import record_fault\n"
            + "".join(f"from devplan.runtime.kernels.numba_ops import {h}\n" for h in HELPERS)
            + "".join(
                f"S_{name.replace('.', '_')} = semantics.scalar({name!r})\n"
                for name in gen.defined_ops
            )
            + "".join(
                f"I_{name.replace('.', '_')} = semantics.int_scalar({name!r})\n"
                for name in gen.int_defined_ops
            )
            + "CACHE = True\n"
            + f"MESSAGES = {gen.messages!r}\n"
            + f"SITES = {[walk_order[op] for op in kernel.sites]!r}\n\n"
        )
        return header + source

    key = f"RUN_BLOCKS = {RUN_BLOCKS}\n{kernel.func}"
    return kernel_cache.load_module(module_text, _BACKEND_VERSION, key=key)


def fault_error(
    kernel: Kernel, messages: dict[int, str], err: np.ndarray[Any, Any], args: list[Any]
) -> KernelError:
    site = int(err[1])
    block = [int(e) for e in err[2:5]]
    thread = [int(e) for e in err[5:8]]
    op = kernel.sites[site]
    if int(err[0]) == OUT_OF_BOUNDS:
        buffer: SSAValue = op.operands[0 if op.name == "memref.load" else 1]
        shape = _shape_of(kernel, buffer, args)
        index = [int(e) for e in err[8 : 8 + len(shape)]]
        return kernel.oob_error(site, buffer, index, shape, block, thread)
    message = messages.get(site) or dim_message(int(err[8]), int(err[9]))
    return kernel.error(site, message, block, thread)


def _shape_of(kernel: Kernel, buffer: SSAValue, args: list[Any]) -> tuple[int, ...]:
    if buffer in kernel.params:
        return tuple(args[kernel.params.index(buffer)].shape)
    type_ = buffer.type
    assert isinstance(type_, MemRefType)
    return tuple(type_.get_shape())
