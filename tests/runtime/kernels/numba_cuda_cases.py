# ruff: noqa: E501
"""Runs programs on the `numba-cuda` kernel backend and on the `numpy` one; writes JSON.

Not a test file: `test_kernel_backend_numba_cuda.py` runs it in a subprocess with
NUMBA_ENABLE_CUDASIM=1 (Numba reads that variable once, when it is first imported, so the
simulator cannot be switched on inside the test process without leaking into the rest of
the suite), and checks what it writes (`cases.json`): for each case, the outputs or the
error message of each backend. All cases share one process, so numba.cuda is imported once.

The simulator runs each CUDA thread as a Python thread: the examples run at reduced sizes
(`SHRINK`), the same text for both backends.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

import devplan
from devplan.runtime.executor import random_inputs

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

SHRINK: dict[str, list[tuple[str, str]]] = {
    "vector_add": [("1000", "100")],
    "async_overlap": [("1048576", "512"), ("arith.constant 4096", "arith.constant 2")],
    "smoothing": [("1000", "64")],
    "two_gpus": [("512", "256"), ("grid(%c2,", "grid(%c1,")],
    "reduction": [
        ("4096", "256"), ("16xf32", "1xf32"),
        ("arith.constant 16 : index", "arith.constant 1 : index"),
    ],
    "matmul": [
        ("64x48x", "16x32x"), ("48x80x", "32x16x"), ("64x80x", "16x16x"),
        ("grid(%c5, %c4, %c1)", "grid(%c1, %c1, %c1)"),
    ],
    "mlp": [("32x", "4x"), ("x64x", "x8x"), ("<64x", "<8x"), ("128", "16")],
    "mlp_three_devices": [("256x", "8x"), ("512", "16"), ("x128x", "x8x")],
    "transformer": [("<16x", "<4x"), ("x16xf32", "x4xf32")],
    "cnn": [
        ("<8x", "<2x"), ("x8x", "x2x"), ("<16x", "<4x"),
        ("1x16x5x5", "1x4x5x5"), ("1x16xf32", "1x4xf32"),
    ],
}  # fmt: skip
"""Text replacements that make an example small enough for the simulator."""

GPU_SYSTEM = """
[[device]]
type = "cpu"
id = 0
target = { kind = "llvm" }
api = "cpu"
scopes = { global = "8 GiB" }

[[device]]
type = "cuda"
id = 0
target = { kind = "cuda", arch = "sm_80" }
api = "%s"
scopes = { global = "1 GiB", shared = "48 KiB" }

[[device]]
type = "cuda"
id = 1
target = { kind = "cuda", arch = "sm_80" }
api = "simulated"
scopes = { global = "1 GiB", shared = "48 KiB" }

[[link]]
between = ["cpu:0", "cuda:0"]
bandwidth = "24 GB/s"
latency = "10 us"

[[link]]
between = ["cpu:0", "cuda:1"]
bandwidth = "24 GB/s"
latency = "10 us"

[[link]]
between = ["cuda:0", "cuda:1"]
bandwidth = "100 GB/s"
latency = "5 us"
"""
"""cuda:0 through the `cuda` DeviceAPI (device arrays) for numba-cuda, `simulated` for the
reference; cuda:1 is simulated (NumPy memory) for both, as the simulator has one GPU."""

SHARED = '#vdev.device<?, ?, ?, "shared">'
DEV = '#vdev.device<"cuda", 0, ?, "global">'


def program(kernel: str, params: str, launch: str, copies_in: str, results: str) -> str:
    return f"""
kernel.module @kernels target #target.target<"cuda"> {{
{kernel}
}}
func.func @main({params}) -> ({results}) {{
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
{copies_in}
{launch}
}}
"""


# Each thread stores its value to the mirror position of its block through shared memory
# (correct only with the barrier) plus a shared array nobody writes (reads as zeros).
REVERSE = program(
    f"""
  kernel.func @reverse(%x: memref<?xi32>, %y: memref<?xi32>) {{
    %tx = kernel.thread_id x
    %ty = kernel.thread_id y
    %bx = kernel.block_id x
    %c4 = arith.constant 4 : index
    %c7 = arith.constant 7 : index
    %c8 = arith.constant 8 : index
    %tile = kernel.alloc_shared : memref<2x4xi32, {SHARED}>
    %untouched = kernel.alloc_shared : memref<8xi32, {SHARED}>
    %row = arith.muli %ty, %c4 : index
    %lin = arith.addi %row, %tx : index
    %base = arith.muli %bx, %c8 : index
    %g = arith.addi %base, %lin : index
    %v = memref.load %x[%g] : memref<?xi32>
    memref.store %v, %tile[%ty, %tx] : memref<2x4xi32, {SHARED}>
    kernel.barrier
    %m = arith.subi %c7, %lin : index
    %my = arith.divui %m, %c4 : index
    %mx = arith.remui %m, %c4 : index
    %w = memref.load %tile[%my, %mx] : memref<2x4xi32, {SHARED}>
    %z = memref.load %untouched[%lin] : memref<8xi32, {SHARED}>
    %r = arith.addi %w, %z : i32
    memref.store %r, %y[%g] : memref<?xi32>
    kernel.return
  }}""",
    "%x: memref<16xi32>",
    f"""  device.launch @kernels::@reverse on #vdev.device<"cuda", 0> grid(%c2, %c1, %c1) block(%c4, %c2, %c1) args(%dx, %dy) : memref<16xi32, {DEV}>, memref<16xi32, {DEV}>
  %y = memref.alloc() : memref<16xi32>
  device.copy %dy to %y : memref<16xi32, {DEV}> to memref<16xi32>
  device.free %dx : memref<16xi32, {DEV}>
  device.free %dy : memref<16xi32, {DEV}>
  func.return %y : memref<16xi32>""",
    f"""  %dx = device.alloc() : memref<16xi32, {DEV}>
  %dy = device.alloc() : memref<16xi32, {DEV}>
  device.copy %x to %dx : memref<16xi32> to memref<16xi32, {DEV}>""",
    "memref<16xi32>",
)

# Thread 5 of block 1 and thread 2 of block 3 store out of bounds: the first in thread
# order (block 1's) is the fault reported.
FAULTS = program(
    """
  kernel.func @faulty(%a: memref<?xi64>) {
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c42 = arith.constant 42 : index
    %c99 = arith.constant 99 : index
    %one = arith.constant 1 : i64
    %is5 = arith.cmpi eq, %tx, %c5 : index
    %b1 = arith.cmpi eq, %bx, %c1 : index
    %first = arith.andi %is5, %b1 : i1
    %is2 = arith.cmpi eq, %tx, %c2 : index
    %b3 = arith.cmpi eq, %bx, %c3 : index
    %second = arith.andi %is2, %b3 : i1
    %j = arith.select %second, %c42, %tx : index
    %i = arith.select %first, %c99, %j : index
    memref.store %one, %a[%i] : memref<?xi64>
    kernel.return
  }""",
    "",
    f"""  device.launch @kernels::@faulty on #vdev.device<"cuda", 0> grid(%c4, %c1, %c1) block(%c8, %c1, %c1) args(%da) : memref<8xi64, {DEV}>
  %a = memref.alloc() : memref<8xi64>
  device.copy %da to %a : memref<8xi64, {DEV}> to memref<8xi64>
  device.free %da : memref<8xi64, {DEV}>
  func.return %a : memref<8xi64>""",
    f"""  %da = device.alloc() : memref<8xi64, {DEV}>""",
    "memref<8xi64>",
)

# Threads 0-3 of each block take a barrier that threads 4-7 skip.
DIVERGENT = program(
    f"""
  kernel.func @bad_barrier(%a: memref<?xf32>) {{
    %c4 = arith.constant 4 : index
    %s = kernel.alloc_shared : memref<8xf32, {SHARED}>
    %tx = kernel.thread_id x
    %low = arith.cmpi ult, %tx, %c4 : index
    scf.if %low {{
      kernel.barrier
    }}
    kernel.return
  }}""",
    "",
    f"""  device.launch @kernels::@bad_barrier on #vdev.device<"cuda", 0> grid(%c2, %c1, %c1) block(%c8, %c1, %c1) args(%da) : memref<8xf32, {DEV}>
  device.free %da : memref<8xf32, {DEV}>
  %r = arith.constant 0 : index
  func.return %r : index""",
    f"""  %da = device.alloc() : memref<8xf32, {DEV}>""",
    "index",
)

# Atomics of every strategy: cuda.atomic functions (addf, addi i32, maxs i64, ori) and
# compare-and-swap loops (muli i32, addi i64, maxu i32). Results do not depend on order.
ATOMICS = program(
    """
  kernel.func @atomics(%f: memref<?xf32>, %i: memref<?xi32>, %l: memref<?xi64>) {
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %half = arith.constant 0.5 : f32
    %two = arith.constant 2 : i32
    %t32 = arith.index_cast %tx : index to i32
    %t64 = arith.index_cast %tx : index to i64
    %neg = arith.subi %t32, %two : i32
    %a = memref.atomic_rmw addf %half, %f[%c0] : (f32, memref<?xf32>) -> f32
    %b = memref.atomic_rmw addi %t32, %i[%c0] : (i32, memref<?xi32>) -> i32
    %c = memref.atomic_rmw muli %two, %i[%c1] : (i32, memref<?xi32>) -> i32
    %d = memref.atomic_rmw ori %t32, %i[%c2] : (i32, memref<?xi32>) -> i32
    %e = memref.atomic_rmw maxu %neg, %i[%c3] : (i32, memref<?xi32>) -> i32
    %g = memref.atomic_rmw maxs %t64, %l[%c0] : (i64, memref<?xi64>) -> i64
    %h = memref.atomic_rmw addi %t64, %l[%c1] : (i64, memref<?xi64>) -> i64
    kernel.return
  }""",
    "%f: memref<1xf32>, %i: memref<4xi32>, %l: memref<2xi64>",
    f"""  device.launch @kernels::@atomics on #vdev.device<"cuda", 0> grid(%c2, %c1, %c1) block(%c8, %c1, %c1) args(%df, %di, %dl) : memref<1xf32, {DEV}>, memref<4xi32, {DEV}>, memref<2xi64, {DEV}>
  device.copy %df to %f : memref<1xf32, {DEV}> to memref<1xf32>
  device.copy %di to %i : memref<4xi32, {DEV}> to memref<4xi32>
  device.copy %dl to %l : memref<2xi64, {DEV}> to memref<2xi64>
  device.free %df : memref<1xf32, {DEV}>
  device.free %di : memref<4xi32, {DEV}>
  device.free %dl : memref<2xi64, {DEV}>
  func.return %f, %i, %l : memref<1xf32>, memref<4xi32>, memref<2xi64>""",
    f"""  %df = device.alloc() : memref<1xf32, {DEV}>
  %di = device.alloc() : memref<4xi32, {DEV}>
  %dl = device.alloc() : memref<2xi64, {DEV}>
  device.copy %f to %df : memref<1xf32> to memref<1xf32, {DEV}>
  device.copy %i to %di : memref<4xi32> to memref<4xi32, {DEV}>
  device.copy %l to %dl : memref<2xi64> to memref<2xi64, {DEV}>""",
    "memref<1xf32>, memref<4xi32>, memref<2xi64>",
)

PRINTF = program(
    """
  kernel.func @hello() {
    %tx = kernel.thread_id x
    kernel.printf "thread %d\\n" (%tx) : index
    kernel.return
  }""",
    "",
    """  device.launch @kernels::@hello on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c2, %c1, %c1) args()
  %r = arith.constant 0 : index
  func.return %r : index""",
    "",
    "index",
)

# One-op elementwise kernels (`c[i] = op(a[i], b[i])`) over every scalar op, on inputs with
# signed zeros, NaN, infinities and integer extremes ("special") and on ordinary ones.
ELEMENTWISE = """
kernel.module @k target #target.target<"cuda"> {{
  kernel.func @op(%a: memref<?x{t}>, %b: memref<?x{t}>, %c: memref<?x{r}>) {{
    %tx = kernel.thread_id x
    %x = memref.load %a[%tx] : memref<?x{t}>
    %y = memref.load %b[%tx] : memref<?x{t}>
    {line}
    memref.store %z, %c[%tx] : memref<?x{r}>
    kernel.return
  }}
}}"""

FLOAT_SPECIAL = ([0.5, -1.5, 2.25, -0.0, np.nan, np.inf, -np.inf, 1e30],
                 [1.25, 2.0, -0.0, np.nan, 4.0, -np.inf, 0.75, -3.0])  # fmt: skip
FLOAT_ORDINARY = ([0.5, -1.5, 2.25, -0.25, 3.0, 1e-3, 7.5, -10.5],
                  [1.25, 2.0, -0.5, 4.0, -3.0, 0.1, 0.75, 9.0])  # fmt: skip
POSITIVE = ([0.5, 1.5, 2.25, 0.25, 3.0, 1e-3, 7.5, 10.5], FLOAT_ORDINARY[1])
INT_VALUES = ([7, -7, 0, 1, -1, 100, 2**31 - 1, -(2**31)], [3, 3, 5, -2, 7, -9, 2, 1])
SHIFT_VALUES = (INT_VALUES[0], [0, 1, 5, 31, 2, 7, 3, 30])


def op_lines() -> list[tuple[str, str, str, str, tuple[list[Any], list[Any]]]]:
    """(name, IR line, operand type, result type, inputs) of each elementwise case."""
    from devplan.runtime import semantics
    from devplan.runtime.kernels.common import (
        CMPF_PREDICATES,
        CMPI_PREDICATES,
        FLOAT_ARITH_OPS,
        INT_BINARY_OPS,
    )  # fmt: skip

    ops = list(FLOAT_ARITH_OPS)
    float_binary = [op for op in ops if semantics.arity(op) == 2]
    float_unary = [op for op in ops if semantics.arity(op) == 1]

    cases: list[tuple[str, str, str, str, tuple[list[Any], list[Any]]]] = []
    for t in ("f32", "f64"):
        for op in float_binary:
            cases.append((f"{op} {t}", f"%z = {op} %x, %y : {t}", t, t, FLOAT_SPECIAL))
        for op in float_unary:
            cases.append((f"{op} {t}", f"%z = {op} %x : {t}", t, t, FLOAT_SPECIAL))
        cases.append((f"math.fma {t}", f"%z = math.fma %x, %y, %x : {t}", t, t, FLOAT_SPECIAL))
    for pred in CMPF_PREDICATES:
        cases.append((f"cmpf {pred}", f"%z = arith.cmpf {pred}, %x, %y : f32", "f32", "i1",
                      FLOAT_SPECIAL))  # fmt: skip
    for t in ("i32", "i64"):
        for op in INT_BINARY_OPS:
            values = SHIFT_VALUES if "sh" in op else INT_VALUES
            cases.append((f"{op} {t}", f"%z = {op} %x, %y : {t}", t, t, values))
        for pred in CMPI_PREDICATES:
            cases.append((f"cmpi {pred} {t}", f"%z = arith.cmpi {pred}, %x, %y : {t}", t, "i1",
                          INT_VALUES))  # fmt: skip
    for line, t, r in [
        ("%z = arith.sitofp %x : i32 to f32", "i32", "f32"),
        ("%z = arith.uitofp %x : i32 to f64", "i32", "f64"),
        ("%z = arith.extsi %x : i32 to i64", "i32", "i64"),
        ("%z = arith.trunci %x : i64 to i32", "i64", "i32"),
        ("%z = math.absi %x : i32", "i32", "i32"),
    ]:
        cases.append((line, line, t, r, INT_VALUES))
    for line, t, r in [
        ("%z = arith.fptosi %x : f32 to i32", "f32", "i32"),
        ("%z = arith.extf %x : f32 to f64", "f32", "f64"),
        ("%z = arith.truncf %x : f64 to f32", "f64", "f32"),
    ]:
        cases.append((line, line, t, r, FLOAT_ORDINARY))
    return cases


def elementwise_ops(gpu_spellings: bool) -> dict[str, Any]:
    """Each op on numba-cuda and numpy. With `gpu_spellings`, the kernels use the spellings
    a real GPU compiles (`math` functions, which raise in Python on domain errors, so the
    inputs are ordinary) instead of the simulator's NumPy ones."""
    from devplan.dialects.kernel import SUPPORTED_OPS, KernelFuncOp
    from devplan.runtime.kernels import cuda_backend
    from devplan.runtime.kernels.compile import compile_kernel

    if gpu_spellings:
        cuda_backend.is_simulated = lambda: False  # compile the GPU's source, run it simulated
    dtypes = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "i1": bool}
    results: dict[str, Any] = {}
    for name, line, t, r, (a, b) in op_lines():
        op = line.split("=")[1].split()[0]
        if op.startswith(("arith.", "math.")) and op not in SUPPORTED_OPS:
            raise AssertionError(f"{op} is not a supported op")
        if gpu_spellings:
            if op not in cuda_backend._GPU_FLOAT_OPS:  # pyright: ignore[reportPrivateUsage]
                continue
            a, b = POSITIVE if op in ("math.sqrt", "math.rsqrt", "math.log1p") else FLOAT_ORDINARY
        func = next(
            o for o in devplan.parse(ELEMENTWISE.format(t=t, r=r, line=line)).walk()
            if isinstance(o, KernelFuncOp)
        )  # fmt: skip
        outcome: dict[str, Any] = {"kernel": ELEMENTWISE.format(t=t, r=r, line=line),
                                   "inputs": [a, b, r]}  # fmt: skip
        for backend in ("numba-cuda", "numpy"):
            x, y = np.array(a, dtypes[t]), np.array(b, dtypes[t])
            z = np.zeros(len(a), dtypes[r])
            try:
                compile_kernel(func, backend)((1, 1, 1), (len(a), 1, 1), [x, y, z])
                outcome[backend] = {"outputs": [z.tolist()]}
            except Exception as e:
                outcome[backend] = {"error": f"{type(e).__name__}: {e}"}
        results[name] = outcome
    return results


# Kernels launched directly (`compile_kernel`): rank-0 memrefs with i1 and i32 scalar
# arguments, and every thread and block id and dimension on all three axes.
KERNELS: dict[str, tuple[str, tuple[int, int, int], tuple[int, int, int], Any]] = {
    "scalars": ("""
  kernel.func @scale(%a: memref<f32>, %flag: i1, %k: i32) {
    %x = memref.load %a[] : memref<f32>
    %kf = arith.sitofp %k : i32 to f32
    %y = arith.mulf %x, %kf : f32
    %z = arith.select %flag, %y, %x : f32
    memref.store %z, %a[] : memref<f32>
    kernel.return
  }""", (1, 1, 1), (1, 1, 1), lambda: [np.array(3.0, np.float32), True, 5]),
    "coords": ("""
  kernel.func @coords(%out: memref<?x?x?x?xi32>) {
    %tx = kernel.thread_id x
    %ty = kernel.thread_id y
    %tz = kernel.thread_id z
    %bx = kernel.block_id x
    %by = kernel.block_id y
    %bz = kernel.block_id z
    %dx = kernel.block_dim x
    %dy = kernel.block_dim y
    %gx = kernel.grid_dim x
    %gy = kernel.grid_dim y
    %gz = kernel.grid_dim z
    %t0 = arith.muli %tz, %dy : index
    %t1 = arith.addi %t0, %ty : index
    %t2 = arith.muli %t1, %dx : index
    %t = arith.addi %t2, %tx : index
    %b0 = arith.muli %bz, %gy : index
    %b1 = arith.addi %b0, %by : index
    %b2 = arith.muli %b1, %gx : index
    %b = arith.addi %b2, %bx : index
    %k = arith.constant 1000 : index
    %bk = arith.muli %b, %k : index
    %g = arith.muli %gz, %k : index
    %v0 = arith.addi %bk, %t : index
    %v = arith.addi %v0, %g : index
    %vi = arith.index_cast %v : index to i32
    %row = arith.muli %by, %dy : index
    %r = arith.addi %row, %ty : index
    %col = arith.muli %bx, %dx : index
    %c = arith.addi %col, %tx : index
    memref.store %vi, %out[%bz, %tz, %r, %c] : memref<?x?x?x?xi32>
    kernel.return
  }""", (3, 2, 2), (4, 2, 2), lambda: [np.zeros((2, 2, 4, 12), np.int32)]),
    # An scf.index_switch on each thread's value picks what to store (scf.while is
    # refused on this backend: see the "while" case).
    "index_switch": ("""
  kernel.func @halvings(%a: memref<?xi32>, %out: memref<?xi32>) {
    %tx = kernel.thread_id x
    %x0 = memref.load %a[%tx] : memref<?xi32>
    %k = arith.index_cast %x0 : i32 to index
    %v = scf.index_switch %k -> i32
    case 0 {
      %m = arith.constant -1 : i32
      scf.yield %m : i32
    }
    case 3 {
      %m = arith.constant 333 : i32
      scf.yield %m : i32
    }
    default {
      scf.yield %x0 : i32
    }
    memref.store %v, %out[%tx] : memref<?xi32>
    kernel.return
  }""", (1, 1, 1), (8, 1, 1), lambda: [
        np.array([1, 2, 3, 8, 0, 1 << 20, 7, 0], np.int32), np.zeros(8, np.int32)
    ]),
}  # fmt: skip


def fresh_memory() -> dict[str, Any]:
    """What kernels see in a new buffer and in a reused workspace page of the cuda
    DeviceAPI after a kernel wrote ones to the page's last user."""
    from devplan.runtime.registry import get_device_api
    from devplan.runtime.scheduler import Scheduler
    from devplan.system.devices import Device

    gpu = Device("cuda", 0)
    api = get_device_api("cuda")(device=gpu, scopes={"global": 1 << 20}, scheduler=Scheduler())
    seen: list[Any] = []

    def read(views: list[Any]) -> None:
        seen.append(views[0].copy_to_host().tolist())

    def write_ones(views: list[Any]) -> None:
        views[0].copy_to_device(np.ones(16, np.float32))

    buffer = api.alloc_data_space(gpu, (16,), "float32", label="%b")
    api.launch(gpu, read, [buffer], name="@read")
    first = api.alloc_workspace(gpu, 64, np.float32, label="%w")
    api.launch(gpu, write_ones, [first], name="@write")
    api.free_workspace(gpu, first)
    again = api.alloc_workspace(gpu, 64, np.float32, label="%w2")
    api.launch(gpu, read, [again], name="@read")
    return {"new buffer": seen[0], "reused workspace": seen[1]}


def kernels() -> dict[str, Any]:
    from devplan.dialects.kernel import KernelFuncOp
    from devplan.runtime import compile_clock
    from devplan.runtime.kernels.compile import compile_kernel

    results: dict[str, Any] = {}
    for name, (text, grid, block, make_args) in KERNELS.items():
        module = devplan.parse(f'kernel.module @k target #target.target<"cuda"> {{{text}\n}}')
        func = next(o for o in module.walk() if isinstance(o, KernelFuncOp))
        outcome: dict[str, Any] = {}
        for backend in ("numba-cuda", "numpy"):
            args = make_args()
            before = len(compile_clock.compiles())
            compile_kernel(func, backend)(grid, block, args)
            arrays = [a for a in args if isinstance(a, np.ndarray)]
            compiles = [what for what, _ in compile_clock.compiles()[before:]]
            outcome[backend] = {"outputs": [a.tolist() for a in arrays], "compiles": compiles}
        results[name] = outcome
    return results


WHILE = program(
    """
  kernel.func @count() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %n = scf.while (%i = %c0) : (index) -> index {
      %more = arith.cmpi ult, %i, %c3 : index
      scf.condition(%more) %i : index
    } do {
    ^bb0(%j: index):
      %next = arith.addi %j, %c1 : index
      scf.yield %next : index
    }
    kernel.return
  }""",
    "",
    """  device.launch @kernels::@count on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c2, %c1, %c1) args()
  %r = arith.constant 0 : index
  func.return %r : index""",
    "",
    "index",
)

G0 = '{vdev.device = #vdev.device<"cuda", 0>}'
VIEWS = f"""
func.func @main(%x: tensor<6x8xf32> {G0}, %i: index) -> (tensor<2x3xf32> {G0}, tensor<2x3xf32> {G0}, tensor<2x3xf32> {{vdev.device = #vdev.device<"cpu", 0>}}, tensor<4x12xf32> {G0}) {{
  %s = tensor.extract_slice %x[%i, 1] [2, 3] [2, 2] : tensor<6x8xf32> to tensor<2x3xf32>
  %a = arith.addf %s, %s : tensor<2x3xf32>
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<6x8xf32> into tensor<48xf32>
  %wide = tensor.expand_shape %flat [[0, 1]] output_shape [4, 12] : tensor<48xf32> into tensor<4x12xf32>
  %b = arith.mulf %wide, %wide : tensor<4x12xf32>
  return %a, %s, %s, %b : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x12xf32>
}}
"""
"""Views of a buffer (`device.view`) read by kernels, cloned on the device and copied to
the host: on the cuda DeviceAPI, device arrays strided in the base's memory."""

CONTRACTIONS = f"""
func.func @main(%img: tensor<2x3x9x9xf32> {G0}, %f: tensor<4x3x3x3xf32> {G0}, %q: tensor<5x3xf32> {G0}, %k: tensor<6x3xf32> {G0}) -> (tensor<2x4x4x4xf32> {G0}, tensor<5x6xf32> {G0}) {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}} ins(%img, %f : tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%z : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %es = tensor.empty() : tensor<5x6xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<5x6xf32>) -> tensor<5x6xf32>
  %s = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}} ins(%q, %k : tensor<5x3xf32>, tensor<6x3xf32>) outs(%zs : tensor<5x6xf32>) {{
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }} -> tensor<5x6xf32>
  return %c, %s : tensor<2x4x4x4xf32>, tensor<5x6xf32>
}}
"""
"""Contractions on the matmul kernel (`lower_to_device/contraction.py`): a strided
convolution of two images (the image copied through an overlapping strided view, the
filter packed once per image, the batched kernel) and `q k^T` (k copied transposed)."""


def _uniform(*shape: int) -> Any:
    return np.random.default_rng(len(shape)).uniform(-1, 1, shape).astype(np.float32)


CASES = {
    "contractions": (CONTRACTIONS, [_uniform(2, 3, 9, 9), _uniform(4, 3, 3, 3), _uniform(5, 3), _uniform(6, 3)]),
    "reverse": (REVERSE, [np.arange(16, dtype=np.int32)]),
    "views": (VIEWS, [np.arange(48, dtype=np.float32).reshape(6, 8), 1]),
    "faults": (FAULTS, []),
    "divergent": (DIVERGENT, []),
    "atomics": (ATOMICS, [
        np.array([1.0], np.float32), np.array([0, 1, 0, 7], np.int32), np.array([-5, 1], np.int64)
    ]),
    "printf": (PRINTF, []),
    "while": (WHILE, []),
}  # fmt: skip


def shrunk(name: str, directory: Path) -> Path:
    """The example `name` at its `SHRINK` sizes, written to `directory` (beside copies of
    the examples' system descriptions, which programs name by relative paths)."""
    text = (EXAMPLES / f"{name}.mlir").read_text()
    for old, new in SHRINK.get(name, []):
        if old not in text:
            raise AssertionError(f"{name}.mlir no longer holds {old!r}: update SHRINK")
        text = text.replace(old, new)
    for toml in EXAMPLES.glob("*.toml"):
        (directory / toml.name).write_text(toml.read_text())
    path = directory / f"{name}.mlir"
    path.write_text(text)
    return path


def outcome(text: str | Path, inputs: list[Any], backend: str, system: Path) -> dict[str, Any]:
    try:
        module = devplan.parse(text)
        result = devplan.execute(module, inputs, kernel_backend=backend, system=system)
    except Exception as e:  # the message is what the test compares
        return {"error": f"{type(e).__name__}: {e}"}
    return {"outputs": [np.asarray(o).tolist() for o in result.outputs]}


def main(directory: Path, names: list[str]) -> None:
    """Run the cases and examples `names`; write their outcomes to `directory`/cases.json
    (not to stdout, which kernels on the numpy backend may print to)."""
    systems = {}
    for api in ("cuda", "simulated"):
        systems[api] = directory / f"{api}.toml"
        systems[api].write_text(GPU_SYSTEM % api)
    results: dict[str, Any] = {}
    for name in names:
        if name == "cpu-backend-on-gpu":  # vector_add, kernels on the cuda DeviceAPI
            text = shrunk("vector_add", directory)
            inputs = random_inputs(devplan.parse(text), "main", 0, system=systems["cuda"])
            results[name] = {"numpy": outcome(text, inputs, "numpy", systems["cuda"])}
            continue
        if name == "fresh-memory":
            results[name] = fresh_memory()
            continue
        if name == "kernels":
            results.update(kernels())
            continue
        if name in ("ops", "ops-gpu-spellings"):
            results[name] = elementwise_ops(gpu_spellings=name == "ops-gpu-spellings")
            continue
        if name in CASES:
            text, inputs = CASES[name]
        else:
            text = shrunk(name, directory)
            inputs = random_inputs(devplan.parse(text), "main", 0, system=systems["simulated"])
        results[name] = {
            "numba-cuda": outcome(text, inputs, "numba-cuda", systems["cuda"]),
            "numpy": outcome(text, inputs, "numpy", systems["simulated"]),
        }
    (directory / "cases.json").write_text(json.dumps(results))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
