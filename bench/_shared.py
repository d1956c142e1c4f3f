# ruff: noqa: E501  (the IR lines of the benchmarked programs)
"""What the benchmark scripts share: the benchmarked kernels and the timing helpers.

Imported by the scripts of this folder as `from _shared import ...` (a script's own
folder is first on `sys.path`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

ADD_KERNEL = """
  kernel.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %i0 = arith.muli %bx, %bd : index
    %i = arith.addi %i0, %tx : index
    %n = memref.dim %a, %c0 : memref<?xf32>
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {
      %x = memref.load %a[%i] : memref<?xf32>
      %y = memref.load %b[%i] : memref<?xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %c[%i] : memref<?xf32>
    }
    kernel.return
  }
"""
"""`c[i] = a[i] + b[i]` for each thread i of a 1-D grid (a `kernel.func`, to put in a module)."""

BUMP_KERNEL = """
  kernel.func @bump(%x: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %v = memref.load %x[%c0] : memref<?xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %x[%c0] : memref<?xf32>
    kernel.return
  }
"""
"""`x[0] += 1`: the 1-thread kernel whose launches measure per-launch overhead."""


def kernel_module(*kernels: str) -> str:
    """`kernel.module @k` for a CUDA target holding `kernels`."""
    return f'kernel.module @k target #target.target<"cuda"> {{{"".join(kernels)}}}\n'


SETTLE_SECONDS = 0.3
"""How long `settled` waits before timing: longer than OpenBLAS's worker threads spin
after a `numpy.matmul` (they keep a core busy for a while, waiting for more work)."""


def settled(fn: Callable[[], object], repeat: int = 5) -> float:
    """`best(fn, repeat)` after `SETTLE_SECONDS` of rest, so that threads another
    measurement left spinning do not take cores from this one. On 2 cores, a numba
    matmul kernel timed right after `numpy.matmul` took 30 ms, and 17.7 ms 0.3 s later."""
    fn()
    time.sleep(SETTLE_SECONDS)
    return best(fn, repeat)


def best(fn: Callable[[], object], repeat: int = 5) -> float:
    """The fastest of `repeat` timings of `fn()`, in seconds."""
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def seconds_per_launch(
    kernel: Callable[[Sequence[int], Sequence[int], Sequence[Any]], None],
    args: Sequence[Any],
    launches: int,
) -> float:
    """Per launch, the best of three loops of `launches` 1-thread launches of `kernel`."""
    one = (1, 1, 1)

    def loop() -> None:
        for _ in range(launches):
            kernel(one, one, args)

    return best(loop, 3) / launches


def random_floats(n: int, count: int) -> list[np.ndarray[Any, Any]]:
    """`count` arrays of `n` standard-normal float32 (seed 0)."""
    rng = np.random.default_rng(0)
    return [rng.standard_normal(n).astype(np.float32) for _ in range(count)]


_G = '#vdev.device<"cuda", 0, ?, "global">'

LAUNCH_LOOP = (
    kernel_module(BUMP_KERNEL)
    + f"""
func.func @main(%n: index, %launch: i1) -> memref<1xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = memref.alloc() : memref<1xf32>
  %d = device.alloc() : memref<1xf32, {_G}>
  device.copy %h to %d : memref<1xf32> to memref<1xf32, {_G}>
  scf.for %i = %c0 to %n step %c1 {{
    scf.if %launch {{
      device.launch @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : memref<1xf32, {_G}>
    }}
  }}
  device.copy %d to %h : memref<1xf32, {_G}> to memref<1xf32>
  device.free %d : memref<1xf32, {_G}>
  func.return %h : memref<1xf32>
}}
"""
)
"""`@main(n, launch)`: a host loop of `n` iterations, each launching `@k::@bump` (1 thread)
when `launch` is true: the per-launch overhead is the difference of the two runs."""
