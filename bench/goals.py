# ruff: noqa: E501  (the IR lines of the benchmarked programs)
"""The speed goals of fast kernels and launches: one line per goal, ratios from this run.

    .venv/bin/python bench/goals.py [--repeat 3] [--skip-matmul]

Each measurement is repeated `--repeat` times (each time the best of a few timings of
both sides; the matmuls' after a rest, see `_shared.settled`); a line prints the median
of the repeats' ratios and the goal. Not a test.

1. elementwise add of 2^24 float32, numba backend (compiled kernel on host arrays) vs
   `numpy.add(a, b, out=c)`: speed ratio numpy time / numba time, goal >= 1.5; also with
   the blocks in order (no `prange`), to show what parallel blocks add on this machine;
2. per-launch overhead of a 1-thread kernel, numba backend, 10,000 launches: the compiled
   kernel called alone, and through `devplan.execute` (a host loop of `device.launch`es
   minus the same loop without them), goal <= 3 us;
3. copy of 64 MiB host -> simulated cuda:0 (`Runtime.copy`) vs `numpy.copyto` between the
   same two memories: speed ratio, goal >= 0.9;
4. matmul 1024^3 float32, the kernel `lower-to-device` generates (each thread 8 rows of
   one column, k in steps of 4 with a `math.fma` per row and step, blocks of 8 rows
   along x and of 256 columns along y), numba backend vs `numpy.matmul` (BLAS): speed
   ratio, goal >= 0.25; also the 16x16 shared-memory tiled kernel below, for comparison;
5. cold compile of the examples' kernels (numba backend): seconds spent compiling in a
   first process with an empty kernel cache, and in a second process with the cache the
   first one filled (the first run of each example minus its second run, after Numba's
   start-up, which is measured apart as the first compilation of a trivial function,
   and after importing devplan's runtime, also measured apart); goal <= 0.1 s for the
   second.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np
from _shared import (
    ADD_KERNEL,
    BUMP_KERNEL,
    LAUNCH_LOOP,
    best,
    kernel_module,
    random_floats,
    seconds_per_launch,
    settled,
)

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels.compile import compile_kernel
from devplan.runtime.runtime import Runtime
from devplan.system.description import System
from devplan.system.devices import Device

SHARED = '#vdev.device<?, ?, ?, "shared">'


TILE = 16
MATMUL = f"""
  kernel.func @matmul(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %ct = arith.constant {TILE} : index
    %zero = arith.constant 0.0 : f32
    %sa = kernel.alloc_shared : memref<{TILE}x{TILE}xf32, {SHARED}>
    %sb = kernel.alloc_shared : memref<{TILE}x{TILE}xf32, {SHARED}>
    %tx = kernel.thread_id x
    %ty = kernel.thread_id y
    %bx = kernel.block_id x
    %by = kernel.block_id y
    %dx = kernel.block_dim x
    %dy = kernel.block_dim y
    %r0 = arith.muli %by, %dy : index
    %row = arith.addi %r0, %ty : index
    %q0 = arith.muli %bx, %dx : index
    %col = arith.addi %q0, %tx : index
    %K = memref.dim %A, %c1 : memref<?x?xf32>
    %tiles = arith.divsi %K, %ct : index
    %acc = scf.for %t = %c0 to %tiles step %c1 iter_args(%sum = %zero) -> (f32) {{
      %t0 = arith.muli %t, %ct : index
      %ak = arith.addi %t0, %tx : index
      %bk = arith.addi %t0, %ty : index
      %x = memref.load %A[%row, %ak] : memref<?x?xf32>
      memref.store %x, %sa[%ty, %tx] : memref<{TILE}x{TILE}xf32, {SHARED}>
      %y = memref.load %B[%bk, %col] : memref<?x?xf32>
      memref.store %y, %sb[%ty, %tx] : memref<{TILE}x{TILE}xf32, {SHARED}>
      kernel.barrier
      %part = scf.for %k = %c0 to %ct step %c1 iter_args(%s = %sum) -> (f32) {{
        %u = memref.load %sa[%ty, %k] : memref<{TILE}x{TILE}xf32, {SHARED}>
        %v = memref.load %sb[%k, %tx] : memref<{TILE}x{TILE}xf32, {SHARED}>
        %p = arith.mulf %u, %v : f32
        %s2 = arith.addf %s, %p : f32
        scf.yield %s2 : f32
      }}
      kernel.barrier
      scf.yield %part : f32
    }}
    memref.store %acc, %C[%row, %col] : memref<?x?xf32>
    kernel.return
  }}
"""
"""`C = A @ B` for sizes that are multiples of the tile, one thread per element of C."""


def kernel_named(text: str, name: str) -> KernelFuncOp:
    module = devplan.parse(kernel_module(text))
    return next(op for op in module.walk() if isinstance(op, KernelFuncOp) and op.sym_name.data == name)


def median_line(label: str, ratios: list[float], unit: str, goal: str) -> None:
    shown = ", ".join(f"{r:.3g}" for r in ratios)
    print(f"{label}: median {statistics.median(ratios):.3g}{unit} (runs: {shown}); goal {goal}")


def elementwise_add(parallel: bool = True) -> float:
    from devplan.runtime.kernels import numba_backend

    numba_backend.PARALLEL_THREADS = 1 << 16 if parallel else 1 << 62
    n = 1 << 24
    a, b = random_floats(n, 2)
    c = np.empty_like(a)
    kernel = compile_kernel(kernel_named(ADD_KERNEL, "add"), "numba")
    grid, block = (n // 256, 1, 1), (256, 1, 1)
    kernel(grid, block, [a, b, c])
    assert np.array_equal(c, a + b)
    t_numba = best(lambda: kernel(grid, block, [a, b, c]))
    t_numpy = best(lambda: np.add(a, b, out=c))
    return t_numpy / t_numba


def elementwise_add_in_order() -> float:
    try:
        return elementwise_add(parallel=False)
    finally:
        elementwise_add(parallel=True)


def launch_alone() -> float:
    kernel = compile_kernel(kernel_named(BUMP_KERNEL, "bump"), "numba")
    x = np.zeros(1, np.float32)
    kernel((1, 1, 1), (1, 1, 1), [x])
    return seconds_per_launch(kernel, [x], 10_000) * 1e6


def launch_through_execute() -> float:
    module = devplan.parse(LAUNCH_LOOP)
    devplan.execute(module, [100, True], kernel_backend="numba")
    with_launch = best(lambda: devplan.execute(module, [10_000, True], kernel_backend="numba"), 3)
    without = best(lambda: devplan.execute(module, [10_000, False], kernel_backend="numba"), 3)
    return (with_launch - without) / 10_000 * 1e6


def copy_to_device() -> float:
    runtime = Runtime.from_system(System.default())
    gpu = Device("cuda", 0)
    api = runtime.api(gpu)
    (host,) = random_floats((64 << 20) // 4, 1)
    buffer = api.alloc_data_space(gpu, host.shape, host.dtype, label="bench")
    storage = api._typed(buffer)  # pyright: ignore[reportPrivateUsage]
    t_copy = best(lambda: runtime.copy(host, buffer))
    t_copyto = best(lambda: np.copyto(storage, host))
    api.free_data_space(gpu, buffer)
    return t_copyto / t_copy


LEVEL_1_MATMUL = """
func.func @main(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>, %c: tensor<1024x1024xf32>)
    -> tensor<1024x1024xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%c : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  func.return %r : tensor<1024x1024xf32>
}
"""


def matmul_generated() -> float:
    """The kernel lower-to-device generates for `linalg.matmul`, launched as it launches it."""
    module = devplan.apply(devplan.parse(LEVEL_1_MATMUL), "default-pipeline")
    func = next(op for op in module.walk() if isinstance(op, KernelFuncOp) and op.sym_name.data.startswith("matmul"))
    launch = next(op for op in module.walk() if op.name == "device.launch")
    sizes = [int(v.owner.value.value.data) for v in (*launch.grid, *launch.block)]  # pyright: ignore
    grid, block = tuple(sizes[:3]), tuple(sizes[3:])
    n = 1024
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    zeros = np.zeros((n, n), np.float32)
    out = np.zeros((n, n), np.float32)
    kernel = compile_kernel(func, "numba")
    kernel(grid, block, [a, b, zeros, out])  # pyright: ignore[reportArgumentType]
    np.testing.assert_allclose(out, a @ b, rtol=1e-3, atol=1e-3)
    t_numba = settled(lambda: kernel(grid, block, [a, b, zeros, out]), 3)  # pyright: ignore[reportArgumentType]
    t_blas = settled(lambda: np.matmul(a, b, out=out))
    return t_blas / t_numba


def matmul() -> float:
    n = 1024
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    kernel = compile_kernel(kernel_named(MATMUL, "matmul"), "numba")
    grid, block = (n // TILE, n // TILE, 1), (TILE, TILE, 1)
    kernel(grid, block, [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    t_numba = settled(lambda: kernel(grid, block, [a, b, c]), 2)
    t_blas = settled(lambda: np.matmul(a, b, out=c))
    return t_blas / t_numba


COMPILE_EXAMPLES = """
import json, pathlib, time
import numba
start = time.perf_counter()
numba.njit(lambda: 1)()
startup = time.perf_counter() - start
start = time.perf_counter()
import devplan
from devplan.runtime.executor import random_inputs
import devplan.runtime.kernels.numba_backend, devplan.runtime.runtime
imports = time.perf_counter() - start
examples = pathlib.Path({examples!r})
spent = 0.0
for path in sorted(examples.glob("*.mlir")):
    module = devplan.parse(path)
    if not any(op.name == "kernel.func" for op in module.walk()):
        continue
    inputs = random_inputs(module, "main", 0)
    start = time.perf_counter()
    devplan.execute(module, inputs, kernel_backend="numba")
    first = time.perf_counter() - start
    start = time.perf_counter()
    devplan.execute(module, inputs, kernel_backend="numba")
    spent += first - (time.perf_counter() - start)
print(json.dumps([startup, spent, imports]))
"""


def cold_compile() -> tuple[list[float], list[float]]:
    examples = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
    script = COMPILE_EXAMPLES.format(examples=examples)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, DEVPLAN_CACHE_DIR=cache)

        def one() -> list[float]:
            """Numba's start-up (its first compilation, of a trivial function), the time
            the examples' first runs took beyond their second runs, and the import of
            devplan's runtime (before them)."""
            done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
            return json.loads(done.stdout.splitlines()[-1])

        return one(), one()


def repeat(fn: Callable[[], float], times: int) -> list[float]:
    return [fn() for _ in range(times)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-matmul", action="store_true")
    args = parser.parse_args()
    r = args.repeat
    started = time.perf_counter()
    median_line("1. add 2^24 float32, numba vs numpy.add: speed", repeat(elementwise_add, r), "x", ">= 1.5x")
    median_line("   the same with the blocks in order (no prange)", repeat(elementwise_add_in_order, r), "x", "-")
    median_line("2. launch of a 1-thread kernel (numba), the compiled kernel alone", repeat(launch_alone, r), " us", "<= 3 us")
    median_line("   the same through devplan.execute (device.launch in a host loop)", repeat(launch_through_execute, r), " us", "<= 3 us")
    median_line("3. copy 64 MiB host->cuda:0 (simulated) vs numpy.copyto: speed", repeat(copy_to_device, r), "x", ">= 0.9x")
    if not args.skip_matmul:
        median_line("4. matmul 1024^3 float32 (lower-to-device's kernel), numba vs numpy.matmul: speed", repeat(matmul_generated, r), "x", ">= 0.25x")
        median_line("   the 16x16 shared-memory tiled kernel, for comparison", repeat(matmul, r), "x", "-")
    runs = [cold_compile() for _ in range(r)]
    median_line("5. compiling the examples' kernels, first process (empty cache)", [a[1] for a, _ in runs], " s", "-")
    median_line("   second process (kernel cache filled by the first)", [b[1] for _, b in runs], " s", "<= 0.1 s")
    median_line("   (each after Numba's start-up, measured apart: first process", [a[0] for a, _ in runs], " s)", "-")
    median_line("   (second process", [b[0] for _, b in runs], " s)", "-")
    median_line("   (importing devplan and its runtime, apart: second process", [b[2] for _, b in runs], " s)", "-")
    print(f"(benchmark took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
