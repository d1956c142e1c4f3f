# ruff: noqa: E501  (the IR lines of the benchmarked programs)
"""Runtime benchmark: launch overhead, copy throughput, elementwise add (issue 4).

    .venv/bin/python bench/runtime.py

Prints whole numbers; every ratio compares two timings taken in this one run (best of
a few repetitions each). Not a test: nothing here asserts a time.

1. Per-launch overhead: a host loop of 10,000 `device.launch`es of a 1-thread kernel
   through `devplan.execute`, minus the same loop without the launch, per launch.
2. Copy throughput: 64 MiB host -> simulated device with `Runtime.copy` (the DeviceAPI's
   `copy_data_from_to`), against `numpy.copyto` between the same two memories.
3. Elementwise add of 2^24 float32 with the numpy kernel backend, against
   `numpy.add(a, b, out=c)`: end to end through `devplan.execute` (alloc, copies in,
   launch, copy out, free) and the compiled kernel alone on host arrays.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.device_api import Device
from devplan.runtime.kernels import compile_kernel
from devplan.runtime.runtime import Runtime
from devplan.runtime.system import System

LAUNCHES = 10_000
COPY_BYTES = 64 << 20
ADD_N = 1 << 24

G = '#vdev.device<"cuda", 0, ?, "global">'

LOOP = f"""
kernel.module @k target #target.target<"cuda"> {{
  kernel.func @bump(%x: memref<?xf32>) {{
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %v = memref.load %x[%c0] : memref<?xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %x[%c0] : memref<?xf32>
    kernel.return
  }}
}}
func.func @main(%n: index, %launch: i1) -> memref<1xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = memref.alloc() : memref<1xf32>
  %d = device.alloc() : memref<1xf32, {G}>
  device.copy %h to %d : memref<1xf32> to memref<1xf32, {G}>
  scf.for %i = %c0 to %n step %c1 {{
    scf.if %launch {{
      device.launch @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : memref<1xf32, {G}>
    }}
  }}
  device.copy %d to %h : memref<1xf32, {G}> to memref<1xf32>
  device.free %d : memref<1xf32, {G}>
  func.return %h : memref<1xf32>
}}
"""

ADD = f"""
kernel.module @k target #target.target<"cuda"> {{
  kernel.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {{
    %c0 = arith.constant 0 : index
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %i0 = arith.muli %bx, %bd : index
    %i = arith.addi %i0, %tx : index
    %n = memref.dim %a, %c0 : memref<?xf32>
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {{
      %x = memref.load %a[%i] : memref<?xf32>
      %y = memref.load %b[%i] : memref<?xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %c[%i] : memref<?xf32>
    }}
    kernel.return
  }}
}}
func.func @main(%a: memref<{ADD_N}xf32>, %b: memref<{ADD_N}xf32>) -> memref<{ADD_N}xf32> {{
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %blocks = arith.constant {ADD_N // 256} : index
  %da = device.alloc() : memref<{ADD_N}xf32, {G}>
  %db = device.alloc() : memref<{ADD_N}xf32, {G}>
  %dc = device.alloc() : memref<{ADD_N}xf32, {G}>
  device.copy %a to %da : memref<{ADD_N}xf32> to memref<{ADD_N}xf32, {G}>
  device.copy %b to %db : memref<{ADD_N}xf32> to memref<{ADD_N}xf32, {G}>
  device.launch @k::@add on #vdev.device<"cuda", 0> grid(%blocks, %c1, %c1) block(%c256, %c1, %c1) args(%da, %db, %dc) : memref<{ADD_N}xf32, {G}>, memref<{ADD_N}xf32, {G}>, memref<{ADD_N}xf32, {G}>
  %c = memref.alloc() : memref<{ADD_N}xf32>
  device.copy %dc to %c : memref<{ADD_N}xf32, {G}> to memref<{ADD_N}xf32>
  device.free %da : memref<{ADD_N}xf32, {G}>
  device.free %db : memref<{ADD_N}xf32, {G}>
  device.free %dc : memref<{ADD_N}xf32, {G}>
  func.return %c : memref<{ADD_N}xf32>
}}
"""


def best(fn: Callable[[], object], repeat: int = 5) -> float:
    """The fastest of `repeat` timings of `fn()`, in seconds."""
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def launch_overhead() -> None:
    module = devplan.parse(LOOP)
    result = devplan.execute(module, [LAUNCHES, True])
    assert result.outputs[0][0] == LAUNCHES, result.outputs[0]
    with_launch = best(lambda: devplan.execute(module, [LAUNCHES, True]), 3)
    without = best(lambda: devplan.execute(module, [LAUNCHES, False]), 3)
    per_launch = (with_launch - without) / LAUNCHES
    print(
        f"launch overhead: {round(per_launch * 1e6)} us per launch of a 1-thread kernel "
        f"({LAUNCHES} launches in {round(with_launch * 1e3)} ms; the host loop alone "
        f"{round(without * 1e3)} ms)"
    )
    # Where the time goes: the kernel call alone, and DeviceAPI.launch (streams,
    # checks, accounting) with the kernel, without the executor around them.
    kernel = compile_kernel(next(op for op in module.walk() if isinstance(op, KernelFuncOp)))
    x = np.zeros(1, np.float32)
    one = (1, 1, 1)
    call = best(lambda: [kernel(one, one, [x]) for _ in range(LAUNCHES)], 3) / LAUNCHES
    gpu = Device("cuda", 0)

    def launch_all() -> None:
        # A fresh runtime each time, as each execute has (its streams keep every token).
        api = Runtime.from_system(System.default()).api(gpu)
        buffer = api.alloc_data_space(gpu, (1,), np.float32, label="x")
        for _ in range(LAUNCHES):
            api.launch(gpu, lambda v: kernel(one, one, v), [buffer], name="bump", seconds=1e-6)

    api_launch = best(launch_all, 3) / LAUNCHES
    print(
        f"  of which: kernel call (numpy backend) {round(call * 1e6)} us, DeviceAPI.launch "
        f"around it {round((api_launch - call) * 1e6)} us, executor "
        f"{round((per_launch - api_launch) * 1e6)} us"
    )


def copy_throughput() -> None:
    runtime = Runtime.from_system(System.default())
    gpu = Device("cuda", 0)
    api = runtime.api(gpu)
    host = np.random.default_rng(0).standard_normal(COPY_BYTES // 4).astype(np.float32)
    buffer = api.alloc_data_space(gpu, host.shape, host.dtype, label="bench")
    # The simulated device's own storage for the buffer: numpy.copyto's destination.
    storage = api._typed(buffer)  # pyright: ignore[reportPrivateUsage]
    seconds = best(lambda: runtime.copy(host, buffer))
    baseline = best(lambda: np.copyto(storage, host))
    assert np.array_equal(storage, host)
    api.free_data_space(gpu, buffer)
    gbs = COPY_BYTES / seconds / 1e9
    base_gbs = COPY_BYTES / baseline / 1e9
    print(
        f"copy 64 MiB host->cuda:0 (simulated): {round(gbs)} GB/s, numpy.copyto "
        f"{round(base_gbs)} GB/s: the copy takes {round(100 * seconds / baseline)}% of the "
        f"copyto time ({round(seconds * 1e3)} ms vs {round(baseline * 1e3)} ms)"
    )


def elementwise_add() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(ADD_N).astype(np.float32)
    b = rng.standard_normal(ADD_N).astype(np.float32)
    c = np.empty_like(a)
    module = devplan.parse(ADD)
    (out,) = devplan.execute(module, [a, b]).outputs
    np.testing.assert_array_equal(out, a + b)
    end_to_end = best(lambda: devplan.execute(module, [a, b]), 3)

    kernel = next(op for op in module.walk() if isinstance(op, KernelFuncOp))
    compiled = compile_kernel(kernel, "numpy")
    grid, block = (ADD_N // 256, 1, 1), (256, 1, 1)
    compiled(grid, block, [a, b, c])
    np.testing.assert_array_equal(c, a + b)
    kernel_only = best(lambda: compiled(grid, block, [a, b, c]), 3)
    baseline = best(lambda: np.add(a, b, out=c))
    print(
        f"add 2^24 float32, numpy backend: end to end {round(end_to_end * 1e3)} ms "
        f"({round(end_to_end / baseline)}x numpy.add), kernel alone "
        f"{round(kernel_only * 1e3)} ms ({round(kernel_only / baseline)}x numpy.add); "
        f"numpy.add(a, b, out=c) {round(baseline * 1e3)} ms"
    )


def main() -> None:
    launch_overhead()
    copy_throughput()
    elementwise_add()


if __name__ == "__main__":
    main()
