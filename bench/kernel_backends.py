"""Kernel backend benchmark: prints ratios measured in this one run (whole numbers).

    .venv/bin/python bench/kernel_backends.py

* elementwise add of 2^24 float32 (grid of 256-thread blocks) with the numpy and numba
  backends, against `numpy.add(a, b, out=c)` on the same arrays;
* per-launch overhead of a 1-thread kernel, averaged over 10,000 launches.

Times are the best of several repetitions; the numba kernel is compiled (and run once)
before timing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels import compile_kernel

ADD = """
kernel.module @k target #target.target<"cuda"> {
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
  kernel.func @one(%a: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %x = memref.load %a[%c0] : memref<?xf32>
    %y = arith.addf %x, %one : f32
    memref.store %y, %a[%c0] : memref<?xf32>
    kernel.return
  }
}
"""


def best(fn: Callable[[], None], repeat: int = 5) -> float:
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    module = devplan.parse(ADD)
    funcs = {op.sym_name.data: op for op in module.walk() if isinstance(op, KernelFuncOp)}
    n = 1 << 24
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.empty_like(a)
    grid, block = (n // 256, 1, 1), (256, 1, 1)

    t_numpy_add = best(lambda: np.add(a, b, out=c))
    results: dict[str, float] = {}
    for backend in ("numpy", "numba"):
        kernel = compile_kernel(funcs["add"], backend)
        kernel(grid, block, [a, b, c])  # compile (numba) and warm up
        assert np.array_equal(c, a + b)
        results[backend] = best(lambda kernel=kernel: kernel(grid, block, [a, b, c]))

    print(f"elementwise add of 2^24 float32: numpy.add(out=) {t_numpy_add * 1e3:.0f} ms")
    for backend, t in results.items():
        print(f"  {backend} backend {t * 1e3:.0f} ms = {round(t / t_numpy_add)}x numpy.add")

    launches = 10_000
    x = np.zeros(1, dtype=np.float32)
    print(f"per-launch overhead of a 1-thread kernel ({launches} launches):")
    for backend in ("numpy", "numba"):
        kernel = compile_kernel(funcs["one"], backend)
        kernel((1, 1, 1), (1, 1, 1), [x])
        x[0] = 0

        def loop(kernel: Callable[..., None] = kernel) -> None:
            for _ in range(launches):
                kernel((1, 1, 1), (1, 1, 1), [x])

        t = best(loop, repeat=3)
        print(f"  {backend} backend {round(t / launches * 1e6)} us per launch")


if __name__ == "__main__":
    main()
