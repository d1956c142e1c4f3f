"""The `numba-cuda` kernel backend: each kernel becomes a `numba.cuda.jit` kernel.

The same op emitter as the Numba CPU backend (`NumbaOps` in numba_ops.py) writes
the per-thread code; what differs on a GPU is the scaffolding around it, overridden here:

* **One thread per CUDA thread.** There is no loop over blocks and threads: the kernel
  reads its ids from `cuda.threadIdx`/`blockIdx`/`blockDim`/`gridDim` (as int64, so index
  arithmetic is 64-bit as in the IR) and runs the body once.
* **Shared memory** (`kernel.alloc_shared`) is `cuda.shared.array`; the block's threads
  zero it together before anything reads it (the CPU backends hand out zeroed shared
  memory, and programs may rely on that).
* **Barriers** are `cuda.syncthreads()`, in place: no phases. An `scf.if`/`scf.for` holding
  a barrier first checks that its condition (bounds, step) is the same in every thread
  of the block, through one shared scalar per value and `cuda.syncthreads_or`; a thread
  whose value differs from thread 0's reports the divergent-barrier fault and the whole
  block leaves the kernel (the CPU backends report the same fault at the same thread).
* **Faults** (out-of-bounds access, division by zero, ...) go to a small int64 error
  buffer in GPU memory (one per GPU, reset before and read after each launch). Its slot
  0 holds the lowest *order* of a faulting thread (block linear index z, y, x, then
  thread linear index: the order in which the CPU backends run threads), and slots 2..
  the record of that thread, in the CPU backends' layout (kind, site, block, thread,
  index): a faulting thread lowers slot 0 with `atomic.min` and, if it was the lowest so
  far, writes its record under a spin lock (slot 1) unless a lower thread got there
  first. The thread then returns; others run on. The launcher raises the same
  `KernelError` as the CPU backends from the record. As in every parallel run, what a
  faulting launch leaves in its buffers is unspecified.
* **Atomics** (`memref.atomic_rmw`) are `cuda.atomic` operations where one exists for
  the kind and type, else a compare-and-swap loop on 32/64-bit integers.

Not handled (a located error when compiling): `kernel.printf` and `kernel.assert` (CUDA
Python has no formatted printf and compiles `assert` only in debug builds), `scf.while`,
f16, atomics on i1/i8/i16 and float atomics other than addf, maxnumf and minnumf. The
fault reported for a kernel whose threads fault at different barrier phases of one block
may differ from the CPU backends' (they run phase by phase; a GPU reports the lowest
faulting thread).

Kernels launch on whatever arrays they get: `numba.cuda` device arrays (the memory of a
device whose DeviceAPI is `cuda`), or NumPy arrays, which numba copies to the GPU and back
around the launch (and which Numba's CUDA simulator runs on directly).

`numba.cuda` is imported only when a kernel is compiled for this backend; it needs an
NVIDIA GPU with its driver, or the simulator (`NUMBA_ENABLE_CUDASIM=1` in the environment
before Numba is first imported).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Generator
from contextlib import contextmanager, nullcontext
from typing import Any, cast

import numpy as np
from numba.core.errors import NumbaError  # pyright: ignore[reportMissingTypeStubs]
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation

from ...diagnostics import DevplanError, diagnostic_at
from ..compile_clock import numba_compile_for
from . import numba_ops
from .common import BARRIER_MESSAGE, Kernel, KernelError, contains_barrier, dtype_of, int_width
from .numba_backend import fault_error, is_f16
from .numba_ops import NumbaOps

NO_FAULT = np.iinfo(np.int64).max
"""Slot 0 of the error buffer while no thread has faulted."""

_RECORD = 16
"""Slots of a fault record (kind, site, block xyz, thread xyz, 8 index/detail values)."""


try:
    from numba import cuda as _cuda_module  # pyright: ignore[reportMissingTypeStubs]
except ImportError:  # pragma: no cover - numba-cuda is a test dependency
    _cuda_module = None
cuda: Any = _cuda_module
"""`numba.cuda` (a global of this module: the device functions below refer to it)."""


def numba_cuda() -> Any:
    """The `numba.cuda` module, once it is usable: a clear `DevplanError` when there is
    neither a GPU nor the simulator."""
    if cuda is None:  # pragma: no cover - numba-cuda is a test dependency
        raise DevplanError(
            "error: kernel backend 'numba-cuda' needs numba's CUDA target; install it "
            "with `pip install 'devplan[cuda]'` (the numba-cuda package)"
        )
    if not cuda.is_available():
        raise DevplanError(
            "error: kernel backend 'numba-cuda' needs an NVIDIA GPU and its driver "
            "(numba.cuda.is_available() is false), or Numba's CUDA simulator: set "
            "NUMBA_ENABLE_CUDASIM=1 in the environment to simulate one (slow; for testing)"
        )
    return cuda


def is_simulated() -> bool:
    """Whether `numba.cuda` is Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1)."""
    from numba.core import config  # pyright: ignore[reportMissingTypeStubs]

    return bool(getattr(config, "ENABLE_CUDASIM", False))


SIMULATOR_SWITCH_SECONDS = 2e-4
"""Python's thread switch interval during a simulated launch. The simulator runs each CUDA
thread as a Python thread while the launching thread polls them, holding the GIL; a thread
that releases the GIL (Numba compiling a semantics function at its first call, through
llvmlite's thousands of C calls) waits up to the switch interval (5 ms by default) to get
it back each time. The scalar-op cases of the simulator's tests took 149 s cold at 5 ms
and 34 s at 0.2 ms; warm, where nothing compiles, 14-19 s at any interval from 5 ms to
0.05 ms (`tests/runtime/kernels/numba_cuda_cases.py`)."""


@contextmanager
def _switching_often() -> Generator[None]:
    """Python threads switch at most `SIMULATOR_SWITCH_SECONDS` apart inside (or as often
    as they did, when that is more often)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, SIMULATOR_SWITCH_SECONDS))
    try:
        yield
    finally:
        sys.setswitchinterval(before)


# Device functions (compiled for the GPU by `cuda.jit(device=True)` on first use).


def _record(
    err: Any, order: int, kind: int, site: int, bix: int, biy: int, biz: int,
    tix: int, tiy: int, tiz: int, d0: int, d1: int, d2: int, d3: int,
    d4: int, d5: int, d6: int, d7: int,
) -> None:  # fmt: skip
    """Record a fault of the thread of `order` unless a thread of lower order did."""
    if cuda.atomic.min(err, 0, order) > order:
        waiting = True
        while waiting:  # the critical section sits inside the loop: no warp deadlock
            if cuda.atomic.cas(err, 1, 0, 1) == 0:
                if cuda.atomic.cas(err, 0, order, order) == order:  # still the lowest
                    err[2] = kind
                    err[3] = site
                    err[4] = bix
                    err[5] = biy
                    err[6] = biz
                    err[7] = tix
                    err[8] = tiy
                    err[9] = tiz
                    err[10] = d0
                    err[11] = d1
                    err[12] = d2
                    err[13] = d3
                    err[14] = d4
                    err[15] = d5
                    err[16] = d6
                    err[17] = d7
                cuda.threadfence()
                cuda.atomic.exch(err, 1, 0)
                waiting = False


_INTEGRAL = 4503599627370496.0
"""2**52: every float of at least this magnitude is an integer (f32's bound is lower)."""


def _floor(x: Any) -> Any:
    if not abs(x) < _INTEGRAL:  # NaN, an infinity, or an integer already
        return x
    return math.copysign(math.floor(x), x)  # floor's result has x's sign (-0.0 stays)


def _ceil(x: Any) -> Any:
    if not abs(x) < _INTEGRAL:
        return x
    return math.copysign(math.ceil(x), x)


def _trunc(x: Any) -> Any:
    if not abs(x) < _INTEGRAL:
        return x
    return math.copysign(math.trunc(float(x)), x)


_DEVICE_FUNCTIONS: tuple[Callable[..., Any], ...] = (
    _record, _floor, _ceil, _trunc,
)  # fmt: skip

_GPU_FLOAT_OPS = {
    "math.exp": "math.exp({0})",
    "math.exp2": "math.exp2({0})",
    "math.expm1": "math.expm1({0})",
    "math.log1p": "math.log1p({0})",
    "math.sqrt": "math.sqrt({0})",
    "math.rsqrt": "1.0 / math.sqrt({0})",
    "math.absf": "abs({0})",
    "math.floor": "_floor({0})",
    "math.ceil": "_ceil({0})",
    "math.trunc": "_trunc({0})",
    "math.powf": "math.pow({0}, {1})",
    "math.copysign": "math.copysign({0}, {1})",
}
"""Float ops whose NumPy spelling (the numba backend's) numba-cuda cannot compile for a GPU,
as `math` functions and device functions it can. The simulator runs kernels as Python, where
`math` raises on domain errors and overflow (`math.sqrt(-1.0)`, `math.exp(1000.0)`) instead
of returning NaN or infinity: under it the NumPy spelling stays."""

_device_functions: dict[str, Any] = {}


def _namespace(cuda: Any) -> dict[str, Any]:
    """What generated kernels see: numpy, numba.cuda and the device functions."""
    if not _device_functions:
        for fn in _DEVICE_FUNCTIONS:
            _device_functions[fn.__name__] = cuda.jit(device=True)(fn)
        for name in numba_ops.HELPERS:  # the numba backend's, as Python
            _device_functions[name] = cuda.jit(device=True)(getattr(numba_ops, name).py_func)
    return {"np": np, "math": math, "cuda": cuda, **_device_functions}


# Atomic read-modify-writes: cuda.atomic functions by kind, for the types they support.
_CUDA_ATOMICS: dict[str, tuple[str, tuple[str, ...]]] = {
    "addf": ("add", ("float32", "float64")),
    "maxnumf": ("nanmax", ("float32", "float64")),
    "minnumf": ("nanmin", ("float32", "float64")),
    "addi": ("add", ("int32",)),
    "assign": ("exch", ("int32", "int64")),
    "maxs": ("max", ("int32", "int64")),
    "mins": ("min", ("int32", "int64")),
    "ori": ("or_", ("int32", "int64")),
    "andi": ("and_", ("int32", "int64")),
}
# Integer kinds done by a compare-and-swap loop: the new value from the old one.
_CAS_ATOMICS = {
    "addi": "{old} + {value}",
    "muli": "{old} * {value}",
    "maxu": "{old} if {uold} >= {uvalue} else {value}",
    "minu": "{old} if {uold} <= {uvalue} else {value}",
}


class CudaSource(NumbaOps):
    """Generates the `numba.cuda.jit` source of one kernel (see the module docstring)."""

    depth: int

    def __init__(self, kernel: Kernel, cuda: Any, simulated: bool) -> None:
        super().__init__(kernel)
        self.namespace = _namespace(cuda)
        self.simulated = simulated
        """Whether kernels run under Numba's CUDA simulator (as Python)."""

    # ------------------------------------------------------------ structure

    def generate(self) -> str:
        """The source of `kernel(err, ...params)`: one CUDA thread of the kernel."""
        kernel = self.kernel
        body = kernel.func.body.block
        for op in body.walk():
            if any(is_f16(v.type) for v in (*op.operands, *op.results)):
                raise self.error(op, "f16 is not supported by the numba-cuda backend; use numpy")
        params = "".join(", " + self.v(p) for p in kernel.params)
        self.lines.append("@cuda.jit")
        self.lines.append(f"def kernel(err{params}):")
        for axis in "xyz":
            self.emit(f"ti{axis} = np.int64(cuda.threadIdx.{axis})")
            self.emit(f"bi{axis} = np.int64(cuda.blockIdx.{axis})")
            self.emit(f"b{axis}_ = np.int64(cuda.blockDim.{axis})")
            self.emit(f"g{axis} = np.int64(cuda.gridDim.{axis})")
        self.emit("nthr = bx_ * by_ * bz_")
        self.emit("lin = (tiz * by_ + tiy) * bx_ + tix")
        self.emit("order = ((biz * gy + biy) * gx + bix) * nthr + lin")
        self.shared_memory()
        if any(_holds_barrier(op) for op in body.walk()):
            self.emit("uni = cuda.shared.array(3, np.int64)")
        self.hoist_constants(body)
        self.thread_ops(list(body.ops))
        self.emit("return")
        return "\n".join(self.lines) + "\n"

    def shared_memory(self) -> None:
        """`cuda.shared.array` per `kernel.alloc_shared`, zeroed by the block's threads."""
        if not self.kernel.shared:
            return
        for alloc in self.kernel.shared:
            type_ = alloc.result.type
            assert isinstance(type_, MemRefType)
            shape = tuple(type_.get_shape())
            dtype = dtype_of(type_.element_type)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
            assert dtype is not None
            name = self.v(alloc.result)
            self.emit(f"{name} = cuda.shared.array({shape}, np.{dtype.name})")
            self.emit(f"for k in range(lin, {int(np.prod(shape))}, nthr):")
            self.emit(f"    {name}[{_unravel('k', shape)}] = 0")
        self.emit("cuda.syncthreads()")

    def fault(self, site: int, kind: int = 1, details: list[str] | None = None) -> None:
        """Emit: record a fault of this thread at `site` in the error buffer, then stop."""
        values = [str(kind), str(site), "bix", "biy", "biz", "tix", "tiy", "tiz"]
        values += (details or []) + ["0"] * (8 - len(details or []))
        self.emit(f"_record(err, order, {', '.join(values)})")
        self.emit("return")

    # ------------------------------------------------------------ per-thread code

    def scalar(self, op: Operation) -> None:
        template = None if self.simulated else _GPU_FLOAT_OPS.get(op.name)
        if template is None:
            super().scalar(op)
            return
        args = [self.v(o) for o in op.operands]
        result = op.results[0]
        self.emit(f"{self.v(result)} = {self.dtype_name(result.type)}({template.format(*args)})")

    def thread_op(self, op: Operation) -> None:
        if op.name == "kernel.barrier":
            self.emit("cuda.syncthreads()")
            return
        if op.name in ("kernel.printf", "kernel.assert"):
            raise self.error(
                op,
                f"'{op.name}' is not supported by the numba-cuda backend (CUDA Python has "
                "no formatted printf and keeps assert only in debug builds); use the numpy "
                "or numba backend",
            )
        if op.name == "scf.while":
            raise self.error(
                op,
                "'scf.while' is not supported by the numba-cuda backend (its watchdog and "
                "stop flag are the CPU backends'); use the numpy or numba backend",
            )
        if op.name in ("scf.if", "scf.for") and contains_barrier(op):
            self.check_uniform(op)
        super().thread_op(op)

    def check_uniform(self, op: Operation) -> None:
        """Emit: every thread of the block has thread 0's value of `op`'s condition (or
        bounds and step); otherwise the threads that differ report the divergent-barrier
        fault and the block leaves the kernel."""
        barrier = next(inner for inner in op.walk() if inner.name == "kernel.barrier")
        site = self.site(barrier)
        self.messages[site] = BARRIER_MESSAGE
        operands = op.operands[:1] if op.name == "scf.if" else op.operands[:3]
        values = [
            f"(1 if {self.v(o)} else 0)" if int_width(o.type) == 1 else self.v(o)
            for o in operands
        ]
        self.emit("cuda.syncthreads()")  # every thread is done with `uni`'s last values
        self.emit("if lin == 0:")
        for k, value in enumerate(values):
            self.emit(f"    uni[{k}] = {value}")
        self.emit("cuda.syncthreads()")
        differs = self.fresh("differs")
        self.emit(f"{differs} = " + " or ".join(f"uni[{k}] != {v}" for k, v in enumerate(values)))
        self.emit(f"if cuda.syncthreads_or(1 if {differs} else 0) != 0:")
        self.depth += 1
        self.emit(f"if {differs}:")
        self.depth += 1
        self.fault(site)
        self.depth -= 1
        self.emit("return")
        self.depth -= 1

    def atomic_rmw(self, op: Operation) -> None:
        """`memref.atomic_rmw` as a `cuda.atomic` function, or a compare-and-swap loop."""
        from .device_io import atomic_kind

        value, mem, *idx = (self.v(o) for o in op.operands)
        self.check_index(op, mem, idx, op.operands[1])
        kind = atomic_kind(op)
        type_ = op.operands[1].type
        assert isinstance(type_, MemRefType)
        dtype = dtype_of(type_.element_type)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        assert dtype is not None
        # A 1-D array takes a scalar index (numba-cuda cannot lower a 1-tuple there).
        index = (idx[0] if len(idx) == 1 else f"({', '.join(idx)})") if idx else "0"
        old = self.v(op.results[0])
        typed = f"np.{dtype.name}({value})"
        function, dtypes = _CUDA_ATOMICS.get(kind, ("", ()))
        if dtype.name in dtypes:
            self.emit(f"{old} = cuda.atomic.{function}({mem}, {index}, {typed})")
        elif kind in _CAS_ATOMICS and dtype.name in ("int32", "int64"):
            self.cas_loop(op, kind, mem, index, typed, dtype)
        else:
            raise self.error(
                op,
                f"'memref.atomic_rmw {kind}' on {dtype.name} is not supported by the "
                "numba-cuda backend (CUDA atomics: addf, maxnumf, minnumf on f32/f64; "
                "addi, muli, assign, maxs, mins, maxu, minu, ori, andi on i32/i64)",
            )
        if dtype.kind == "i":
            self.emit(f"{old} = np.int64({old})")

    def cas_loop(
        self, op: Operation, kind: str, mem: str, index: str, value: str, dtype: np.dtype[Any]
    ) -> None:
        old = self.v(op.results[0])
        width = dtype.itemsize * 8
        mask = (1 << width) - 1
        new = _CAS_ATOMICS[kind].format(
            old=f"np.int64({old})", value=f"np.int64({value})",
            uold=f"(np.int64({old}) & {mask})" if width < 64 else f"np.uint64({old})",
            uvalue=f"(np.int64({value}) & {mask})" if width < 64 else f"np.uint64({value})",
        )  # fmt: skip
        seen = self.fresh("seen")
        self.emit(f"{old} = {mem}[{index}]")
        self.emit("while True:")
        self.depth += 1
        self.emit(f"{seen} = cuda.atomic.cas({mem}, {index}, {old}, np.{dtype.name}({new}))")
        self.emit(f"if {seen} == {old}:")
        self.emit("    break")
        self.emit(f"{old} = {seen}")
        self.depth -= 1


def _holds_barrier(op: Operation) -> bool:
    return op.name in ("scf.if", "scf.for") and contains_barrier(op)


def _unravel(flat: str, shape: tuple[int, ...]) -> str:
    """The subscript of element number `flat` of an array of `shape` (row-major)."""
    parts: list[str] = []
    stride = 1
    for size in reversed(shape):
        parts.append(f"({flat} // {stride}) % {size}" if stride > 1 else f"{flat} % {size}")
        stride *= size
    return ", ".join(reversed(parts))


def _gpu_argument(
    cuda: Any, arg: Any, staged: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]
) -> Any:
    """How a launch argument reaches the kernel (see `compile_cuda`'s `run`)."""
    if not isinstance(arg, np.ndarray):
        return arg
    array = cast(np.ndarray[Any, Any], arg)
    if array.flags.c_contiguous or array.ndim == 0:
        return array if array.flags.writeable else cuda.In(array)
    if is_simulated():
        from numba.cuda.simulator.cudadrv.devicearray import (  # pyright: ignore[reportMissingTypeStubs, reportMissingImports]
            FakeCUDAArray,
        )

        return FakeCUDAArray(array)  # the view itself, no copy
    copy = np.ascontiguousarray(array)
    if not array.flags.writeable:
        return cuda.In(copy)
    staged.append((array, copy))
    return copy


def compile_cuda(kernel: Kernel, what: str = "") -> tuple[Callable[..., None], str]:
    """A run(grid, block, args) launcher of `kernel` as a `numba.cuda.jit` kernel, and its
    source. Raises a `DevplanError` when there is no GPU and no simulator.

    On a GPU, the first launch compiles the kernel for its arguments' types (or loads it
    from Numba's cache) in a compile-clock block saying `compiling <what>`, before it
    launches: numba-cuda would compile inside the launch, unseen by the progress line and
    counted as kernel time. The simulator compiles nothing (it runs the kernel's Python)."""
    cuda = numba_cuda()
    gen = CudaSource(kernel, cuda, simulated=is_simulated())
    source = gen.generate()
    namespace = dict(gen.namespace)
    exec(compile(source, f"<kernel @{kernel.name} (numba-cuda)>", "exec"), namespace)
    jitted = namespace["kernel"]
    messages = gen.messages
    fresh = np.zeros(2 + _RECORD, dtype=np.int64)
    fresh[0] = NO_FAULT
    err = fresh.copy()
    on_gpu: dict[int, Any] = {}
    """The error buffer in each GPU's memory (by device id), made at its first launch."""
    simulated = is_simulated()
    compiled = [not hasattr(jitted, "compile")]
    """Whether the kernel was compiled before a launch (the simulator's kernels, which run
    their Python, have nothing to compile)."""

    def run(grid: tuple[int, int, int], block: tuple[int, int, int], args: list[Any]) -> None:
        gpu = getattr(cuda.get_current_device(), "id", 0)  # the simulator's has no id
        buffer = on_gpu.get(gpu)
        if buffer is None:
            buffer = on_gpu[gpu] = cuda.to_device(fresh)
        else:
            buffer.copy_to_device(fresh)
        # Host memory is passed as NumPy arrays, which numba-cuda copies to the GPU and
        # back after the kernel; an input the kernel only reads is bound read-only, and
        # copying back into it would fail, so it travels one way (`cuda.In`). A strided
        # view (`device.view`) cannot be copied as one region: the simulator's kernels
        # read and write it in place, a GPU gets a row-major copy of its elements.
        staged: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = []
        args = [_gpu_argument(cuda, a, staged) for a in args]
        try:
            if not compiled[0]:
                numba_compile_for(jitted, [buffer, *args], what or f"kernel @{kernel.name}")
                compiled[0] = True  # a later launch with other types compiles in the launch
            with _switching_often() if simulated else nullcontext():
                jitted[grid, block](buffer, *args)
            buffer.copy_to_host(err)  # waits for the kernel
            for view, copy in staged:
                view[...] = copy
        except NumbaError as e:  # a gap in this backend, reported at the kernel
            raise KernelError(
                diagnostic_at(
                    kernel.func,
                    f"in kernel @{kernel.name}: numba-cuda cannot compile this kernel "
                    f"(use the numpy backend): {str(e).splitlines()[0]}",
                )
            ) from e
        if err[0] != NO_FAULT:
            raise fault_error(kernel, messages, err[2:].copy(), args)

    return run, source
