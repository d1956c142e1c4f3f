"""Kernel throughput of the numba backend against ceilings measured in the same run.

    .venv/bin/python bench/kernel_throughput.py [--repeat 3] [--skip-matmul] [--one-core]

Goals 1 and 4 of `goals.py` (elementwise add of 2^24 float32 vs `numpy.add`, tiled
matmul 1024^3 float32 vs `numpy.matmul`), each beside what bounds it on this machine:

* add: plain Numba loops `c[i] = a[i] + b[i]` (over `prange`, and in one thread) and
  `numpy.copyto` (one stream in, one out). The add moves 12 bytes per element and
  computes almost nothing: when the plain `prange` loop is no faster than `numpy.add`,
  memory bandwidth, not the generated code, is the limit.
* matmul: the same schedule as the kernel (16x16 tiles of A and B copied to local
  arrays, each thread's sum over k in order, block rows over `prange`) written by hand in
  Numba without checks: the best this kernel's algorithm does in Numba here. Its results
  are bitwise those of the kernel. Also the kernel and the ceiling at 1008^3 (not a power
  of two: rows of A and B 4 KiB apart fall into the same cache sets at 1024), and the
  kernel run with its blocks in order (one thread), per tile and block.

Every line prints the median of `--repeat` ratios (each the best of a few timings of both
sides). Not a test.

`--one-core` compares CPU time (`time.thread_time`) on one core instead: Numba and BLAS
on one thread (the script runs itself again with `OPENBLAS_NUM_THREADS=1`), the kernel's
blocks in order. Other processes' load then hardly moves the figures: what the generated
code costs against NumPy and BLAS, core for core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numba  # pyright: ignore[reportMissingTypeStubs]
import numpy as np
from _shared import ADD_KERNEL, best, random_floats
from goals import MATMUL, TILE, kernel_named

from devplan.runtime import numba_cache
from devplan.runtime.kernels import numba_backend
from devplan.runtime.kernels.compile import compile_kernel

Array = np.ndarray[Any, Any]
_njit: Callable[..., Any] = numba_cache.njit  # cached in devplan's cache, not beside this file
_prange: Callable[..., Any] = numba.prange  # pyright: ignore[reportUnknownMemberType]


@_njit(parallel=True, cache=True)
def add_prange(a: Array, b: Array, c: Array) -> None:
    for i in _prange(a.shape[0]):
        c[i] = a[i] + b[i]


@_njit(cache=True)
def add_loop(a: Array, b: Array, c: Array) -> None:
    for i in range(a.shape[0]):
        c[i] = a[i] + b[i]


@_njit(parallel=True, cache=True, error_model="numpy")
def tiled_matmul(a: Array, b: Array, c: Array, tile: int) -> None:
    """The kernel's schedule by hand: per block, tiles of A and B in local arrays, then
    each thread's sum over the tile's k (a row of threads at a time: vectorised)."""
    rows, inner = a.shape
    cols = b.shape[1]
    for by in _prange(rows // tile):
        sa = np.empty((tile, tile), np.float32)
        sb = np.empty((tile, tile), np.float32)
        acc = np.empty((tile, tile), np.float32)
        for bx in range(cols // tile):
            acc[:] = 0
            for t in range(inner // tile):
                for ty in range(tile):
                    for tx in range(tile):
                        sa[ty, tx] = a[by * tile + ty, t * tile + tx]
                        sb[ty, tx] = b[t * tile + ty, bx * tile + tx]
                for ty in range(tile):
                    for k in range(tile):
                        u = sa[ty, k]
                        for tx in range(tile):
                            acc[ty, tx] = acc[ty, tx] + u * sb[k, tx]
            for ty in range(tile):
                for tx in range(tile):
                    c[by * tile + ty, bx * tile + tx] = acc[ty, tx]


def median_line(label: str, ratios: list[float], unit: str = "x", goal: str = "-") -> None:
    shown = ", ".join(f"{r:.3g}" for r in ratios)
    print(f"{label}: median {statistics.median(ratios):.3g}{unit} (runs: {shown}); goal {goal}")


def add_ratios() -> dict[str, float]:
    """Speed of each way of adding 2^24 float32 relative to `numpy.add` (higher: faster)."""
    n = 1 << 24
    a, b = random_floats(n, 2)
    c = np.empty_like(a)
    kernel = compile_kernel(kernel_named(ADD_KERNEL, "add"), "numba")
    grid, block = (n // 256, 1, 1), (256, 1, 1)

    def launch(parallel: bool) -> None:
        numba_backend.PARALLEL_THREADS = 1 << 16 if parallel else 1 << 62
        try:
            kernel(grid, block, [a, b, c])
        finally:
            numba_backend.PARALLEL_THREADS = 1 << 16

    for warm in (lambda: launch(True), lambda: launch(False), lambda: add_prange(a, b, c)):
        warm()
    add_loop(a, b, c)
    assert np.array_equal(c, a + b)
    t_numpy = best(lambda: np.add(a, b, out=c))
    return {
        "kernel": t_numpy / best(lambda: launch(True)),
        "kernel, blocks in order": t_numpy / best(lambda: launch(False)),
        "plain numba prange loop": t_numpy / best(lambda: add_prange(a, b, c)),
        "plain numba loop, one thread": t_numpy / best(lambda: add_loop(a, b, c)),
        "numpy.copyto (one stream in, one out)": t_numpy / best(lambda: np.copyto(c, a)),
    }


def matmul_ratios(n: int) -> dict[str, float]:
    """Speed of the tiled kernel and of its hand-written ceiling relative to BLAS."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    ceiling = np.zeros((n, n), np.float32)
    kernel = compile_kernel(kernel_named(MATMUL, "matmul"), "numba")
    grid, block = (n // TILE, n // TILE, 1), (TILE, TILE, 1)
    kernel(grid, block, [a, b, c])
    tiled_matmul(a, b, ceiling, TILE)
    assert np.array_equal(c, ceiling), "the ceiling computes what the kernel does"
    t_blas = best(lambda: np.matmul(a, b, out=ceiling))
    return {
        "kernel": t_blas / best(lambda: kernel(grid, block, [a, b, c]), 2),
        "ceiling (same schedule by hand)": t_blas / best(lambda: tiled_matmul(a, b, c, TILE), 2),
    }


def cpu_seconds(fn: Callable[[], object], repeat: int = 5) -> float:
    """The least CPU time of this thread over `repeat` calls of `fn()`."""
    times: list[float] = []
    for _ in range(repeat):
        start = time.thread_time()
        fn()
        times.append(time.thread_time() - start)
    return min(times)


def one_core_ratios() -> dict[str, float]:
    """Speed relative to NumPy/BLAS in CPU time on one core (blocks in order)."""
    numba_backend.PARALLEL_THREADS = 1 << 62
    n = 1 << 24
    a, b = random_floats(n, 2)
    c = np.empty_like(a)
    add = compile_kernel(kernel_named(ADD_KERNEL, "add"), "numba")
    grid, block = (n // 256, 1, 1), (256, 1, 1)
    add(grid, block, [a, b, c])
    add_loop(a, b, c)
    t_add = cpu_seconds(lambda: np.add(a, b, out=c))
    label = "add 2^24 float32 vs numpy.add"
    ratios = {
        f"{label}, kernel": t_add / cpu_seconds(lambda: add(grid, block, [a, b, c])),
        f"{label}, plain numba loop": t_add / cpu_seconds(lambda: add_loop(a, b, c)),
    }
    m = 1024
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, m)).astype(np.float32)
    y = rng.standard_normal((m, m)).astype(np.float32)
    z = np.zeros((m, m), np.float32)
    matmul = compile_kernel(kernel_named(MATMUL, "matmul"), "numba")
    mgrid, mblock = (m // TILE, m // TILE, 1), (TILE, TILE, 1)
    matmul(mgrid, mblock, [x, y, z])
    tiled_matmul(x, y, z, TILE)
    t_blas = cpu_seconds(lambda: np.matmul(x, y, out=z), 3)
    ratios["tiled matmul 1024^3 float32 vs numpy.matmul, kernel"] = t_blas / cpu_seconds(
        lambda: matmul(mgrid, mblock, [x, y, z]), 3
    )
    ratios["tiled matmul 1024^3 float32 vs numpy.matmul, ceiling (same schedule by hand)"] = (
        t_blas / cpu_seconds(lambda: tiled_matmul(x, y, z, TILE), 3)
    )
    return ratios


def repeat(fn: Callable[[], dict[str, float]], times: int) -> dict[str, list[float]]:
    runs = [fn() for _ in range(times)]
    return {key: [run[key] for run in runs] for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-matmul", action="store_true")
    parser.add_argument("--one-core", action="store_true")
    args = parser.parse_args()
    if args.one_core:
        if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
            env = os.environ | {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            os.execve(sys.executable, [sys.executable, *sys.argv], env)
        numba.set_num_threads(1)
        print("(CPU time on one core: Numba and BLAS on one thread, blocks in order)")
        for key, ratios in repeat(one_core_ratios, args.repeat).items():
            median_line(f"{key}: speed", ratios)
        return
    print(f"(numba threads: {numba.get_num_threads()})")
    for key, ratios in repeat(add_ratios, args.repeat).items():
        goal = ">= 1.5x" if key == "kernel" else "-"
        median_line(f"add 2^24 float32 vs numpy.add, {key}: speed", ratios, goal=goal)
    if args.skip_matmul:
        return
    for n in (1024, 1008):
        for key, ratios in repeat(partial(matmul_ratios, n), args.repeat).items():
            goal = ">= 0.25x" if key == "kernel" and n == 1024 else "-"
            label = f"tiled matmul {n}^3 float32 vs numpy.matmul, {key}: speed"
            median_line(label, ratios, goal=goal)


if __name__ == "__main__":
    main()
