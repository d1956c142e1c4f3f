"""Kernel backend benchmark: prints ratios measured in this one run (whole numbers).

    .venv/bin/python bench/kernel_backends.py

* elementwise add of 2^24 float32 (grid of 256-thread blocks) with the numpy and numba
  backends, against `numpy.add(a, b, out=c)` on the same arrays;
* per-launch overhead of a 1-thread kernel, averaged over 10,000 launches.

Times are the best of several repetitions; the numba kernel is compiled (and run once)
before timing.
"""

from __future__ import annotations

import numpy as np
from _shared import ADD_KERNEL, BUMP_KERNEL, best, kernel_module, random_floats, seconds_per_launch

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels.compile import compile_kernel


def main() -> None:
    module = devplan.parse(kernel_module(ADD_KERNEL, BUMP_KERNEL))
    funcs = {op.sym_name.data: op for op in module.walk() if isinstance(op, KernelFuncOp)}
    n = 1 << 24
    a, b = random_floats(n, 2)
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
        kernel = compile_kernel(funcs["bump"], backend)
        kernel((1, 1, 1), (1, 1, 1), [x])  # compile (numba) and warm up
        t = seconds_per_launch(kernel, [x], launches)
        print(f"  {backend} backend {round(t * 1e6)} us per launch")


if __name__ == "__main__":
    main()
