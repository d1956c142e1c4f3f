# ruff: noqa: E501  (the IR lines of the benchmarked programs)
"""Runtime benchmark: launch overhead, copy throughput, elementwise add (issue 4).

    .venv/bin/python bench/runtime.py

Prints whole numbers; every ratio compares two timings taken in this one run (best of
a few repetitions each). Not a test: nothing here asserts a time.

1. Per-launch overhead: a host loop of 10,000 `device.launch`es of a 1-thread kernel
   through `devplan.execute`, minus the same loop without the launch, per launch; and
   where it goes (the kernel call, `DeviceAPI.launch` with its stream bookkeeping, the
   executor's step).
2. Copy throughput: 64 MiB host -> simulated device with `Runtime.copy` (the DeviceAPI's
   `copy_data_from_to`), against `numpy.copyto` between the same two memories.
3. Elementwise add of 2^24 float32 with the numpy kernel backend, against
   `numpy.add(a, b, out=c)`: end to end through `devplan.execute` (alloc, copies in,
   launch, copy out, free), split into its copies and its kernel, and the compiled
   kernel alone on host arrays.

The floor of (3): a run moves a and b to the device and c back (three 64 MiB copies,
each about 0.75x numpy.add, which reads 128 MiB and writes 64), runs the kernel (1x),
and hands the caller a new 64 MiB array, whose pages the OS maps on first touch (about
another copy). Device buffers reuse the storage of the previous run's buffers; the one
the kernel writes is zeroed first (a fresh buffer reads as zeros). So about 4x to 5x.
"""

from __future__ import annotations

import numpy as np
from _shared import (
    ADD_KERNEL,
    LAUNCH_LOOP,
    best,
    kernel_module,
    random_floats,
    seconds_per_launch,
)

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels.compile import compile_kernel
from devplan.runtime.runtime import Runtime
from devplan.system.description import System
from devplan.system.devices import Device

LAUNCHES = 10_000
COPY_BYTES = 64 << 20
ADD_N = 1 << 24

G = '#vdev.device<"cuda", 0, ?, "global">'


ADD = (
    kernel_module(ADD_KERNEL)
    + f"""
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
)


def us(seconds: float) -> int:
    return round(seconds * 1e6)


def ms(seconds: float) -> int:
    return round(seconds * 1e3)


def launch_overhead() -> None:
    module = devplan.parse(LAUNCH_LOOP)
    result = devplan.execute(module, [LAUNCHES, True])
    assert result.outputs[0][0] == LAUNCHES, result.outputs[0]
    with_launch = best(lambda: devplan.execute(module, [LAUNCHES, True]), 3)
    without = best(lambda: devplan.execute(module, [LAUNCHES, False]), 3)
    per_launch = (with_launch - without) / LAUNCHES
    # Where the time goes: the kernel call alone (as the executor makes it: under the
    # run's np.errstate), then DeviceAPI.launch (checks, stream token, cost-model
    # timeline) around the same call, without the executor.
    kernel = compile_kernel(next(op for op in module.walk() if isinstance(op, KernelFuncOp)))
    x = np.zeros(1, np.float32)
    with np.errstate(all="ignore"):
        call = seconds_per_launch(kernel.launch, [x], LAUNCHES)
    gpu = Device("cuda", 0)
    one = (1, 1, 1)

    def launch_all() -> None:
        # A fresh runtime each time, as each execute has.
        api = Runtime.from_system(System.default()).api(gpu)
        buffer = api.alloc_data_space(gpu, (1,), np.float32, label="x")
        for _ in range(LAUNCHES):
            api.launch(
                gpu, lambda v: kernel.launch(one, one, v), [buffer], name="bump", seconds=1e-6
            )

    with np.errstate(all="ignore"):
        api_launch = best(launch_all, 3) / LAUNCHES
    print(
        f"launch overhead: {us(per_launch)} us per launch of a 1-thread kernel through "
        f"devplan.execute, {round(per_launch / call)}x the kernel call alone "
        f"({LAUNCHES} launches in {ms(with_launch)} ms; the host loop without them {ms(without)} ms)"
    )
    print(
        f"  of which: kernel call (numpy backend) {us(call)} us, DeviceAPI.launch around "
        f"it {us(api_launch - call)} us, executor {us(per_launch - api_launch)} us"
    )


def copy_throughput() -> None:
    runtime = Runtime.from_system(System.default())
    gpu = Device("cuda", 0)
    api = runtime.api(gpu)
    (host,) = random_floats(COPY_BYTES // 4, 1)
    buffer = api.alloc_data_space(gpu, host.shape, host.dtype, label="bench")
    # The simulated device's own storage for the buffer: numpy.copyto's destination.
    storage = api._typed(buffer)  # pyright: ignore[reportPrivateUsage]
    seconds = best(lambda: runtime.copy(host, buffer))
    baseline = best(lambda: np.copyto(storage, host))
    assert np.array_equal(storage, host)
    api.free_data_space(gpu, buffer)
    print(
        f"copy 64 MiB host->cuda:0 (simulated): {round(COPY_BYTES / seconds / 1e9)} GB/s, "
        f"numpy.copyto {round(COPY_BYTES / baseline / 1e9)} GB/s: the copy takes "
        f"{round(100 * seconds / baseline)}% of the copyto time ({ms(seconds)} ms vs {ms(baseline)} ms)"
    )


def elementwise_add() -> None:
    a, b = random_floats(ADD_N, 2)
    c = np.empty_like(a)
    module = devplan.parse(ADD)
    (out,) = devplan.execute(module, [a, b]).outputs
    np.testing.assert_array_equal(out, a + b)
    runs: list[devplan.ExecutionResult] = []
    end_to_end = best(lambda: runs.append(devplan.execute(module, [a, b])), 3)
    fastest = min(runs, key=lambda r: r.report.wall_seconds)
    copies = fastest.report.copy_wall_seconds
    kernels = sum(d.kernel_wall_seconds for d in fastest.report.devices.values())

    kernel = next(op for op in module.walk() if isinstance(op, KernelFuncOp))
    compiled = compile_kernel(kernel, "numpy")
    grid, block = (ADD_N // 256, 1, 1), (256, 1, 1)
    compiled(grid, block, [a, b, c])
    np.testing.assert_array_equal(c, a + b)
    kernel_only = best(lambda: compiled(grid, block, [a, b, c]), 3)
    baseline = best(lambda: np.add(a, b, out=c))
    print(
        f"add 2^24 float32, numpy backend: end to end {ms(end_to_end)} ms "
        f"({round(end_to_end / baseline)}x numpy.add), kernel alone {ms(kernel_only)} ms "
        f"({round(kernel_only / baseline)}x numpy.add); numpy.add(a, b, out=c) {ms(baseline)} ms"
    )
    print(
        f"  of which: 3 copies of 64 MiB {ms(copies)} ms ({round(copies / baseline)}x numpy.add), "
        f"the kernel (with zeroing its reused output buffer) {ms(kernels)} ms, the rest "
        f"{ms(fastest.report.wall_seconds - copies - kernels)} ms"
    )


def main() -> None:
    launch_overhead()
    copy_throughput()
    elementwise_add()


if __name__ == "__main__":
    main()
