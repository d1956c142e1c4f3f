# ruff: noqa: E501  (the IR lines of the benchmarked programs)
"""What a call of the public API costs beyond the work it does, and what host code costs
per op: figures from this run, medians of repeats. Not a test.

    .venv/bin/python bench/entry_overhead.py [--repeat 7]

1. `devplan.execute` of a trivial program (one scalar in, the same out), running the
   compiled program directly on the calling thread (`compile_program(...).run`), and a
   `with_deep_stack`-wrapped function that does nothing: what handing a call to a
   big-stack worker thread and back costs (the two runs differ by more than that on a
   loaded machine, either way), against starting a big-stack thread per call (what it
   did before);
2. host code: one `scf.for` iteration of 16 `arith.addi`s minus an empty iteration, per op;
3. a repeated blocking `device.launch` of a 1-thread kernel (numba backend) through
   `devplan.execute`, minus the same loop without it, against calling the compiled kernel
   (`CompiledKernel`) directly.
"""

from __future__ import annotations

import argparse
import statistics
import threading
from collections.abc import Callable

import numpy as np
from _shared import LAUNCH_LOOP, best

import devplan
from devplan.diagnostics import with_deep_stack
from devplan.execution import compile_program
from devplan.runtime.kernels.compile import compile_kernel

TRIVIAL = "func.func @main(%x: index) -> index {\n  func.return %x : index\n}\n"

ADDS = 16
_ADD_LINES = "".join(
    f"      %x{k} = arith.addi %{'a' if k == 0 else f'x{k - 1}'}, %c1 : index\n" for k in range(ADDS)
)
HOST_LOOP = f"""
func.func @main(%n: index, %work: i1) -> index {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c0) -> (index) {{
    %b = scf.if %work -> (index) {{
{_ADD_LINES}      scf.yield %x{ADDS - 1} : index
    }} else {{
      scf.yield %a : index
    }}
    scf.yield %b : index
  }}
  func.return %r : index
}}
"""



def per_call(fn: Callable[[], object], calls: int) -> float:
    """Microseconds per call of `fn`, the best of three loops of `calls` calls."""

    def loop() -> None:
        for _ in range(calls):
            fn()

    return best(loop, 3) / calls * 1e6


def new_thread_per_call() -> None:
    """What `with_deep_stack` did before its workers: start a big-stack thread per call."""
    previous = threading.stack_size(1 << 30)
    try:
        thread = threading.Thread(target=lambda: None, daemon=True)
        thread.start()
    finally:
        threading.stack_size(previous)
    thread.join()


def entry_overhead() -> tuple[float, float, float, float]:
    module = devplan.parse(TRIVIAL)
    devplan.execute(module, [1])
    program = compile_program(module, "numpy")
    nothing = with_deep_stack(lambda: None)
    through = per_call(lambda: devplan.execute(module, [1]), 300)
    direct = per_call(lambda: program.run([1]), 300)
    return through, direct, per_call(nothing, 1000), per_call(new_thread_per_call, 300)


def host_op() -> float:
    program = compile_program(devplan.parse(HOST_LOOP), "numpy")
    n = 20_000
    program.run([n, True])
    work = best(lambda: program.run([n, True]), 3)
    empty = best(lambda: program.run([n, False]), 3)
    return (work - empty) / (n * ADDS) * 1e9


def launch() -> tuple[float, float]:
    module = devplan.parse(LAUNCH_LOOP)
    devplan.execute(module, [100, True], kernel_backend="numba")
    n = 10_000
    with_launch = best(lambda: devplan.execute(module, [n, True], kernel_backend="numba"), 3)
    without = best(lambda: devplan.execute(module, [n, False], kernel_backend="numba"), 3)
    func = next(op for op in module.walk() if op.name == "kernel.func")
    kernel = compile_kernel(func, "numba")  # pyright: ignore[reportArgumentType]
    x = np.zeros(1, np.float32)
    one = (1, 1, 1)
    alone = per_call(lambda: kernel(one, one, [x]), n)
    return (with_launch - without) / n * 1e6, alone


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    r = parser.parse_args().repeat
    entries = [entry_overhead() for _ in range(r)]
    through, direct, nothing, thread = (statistics.median(e[i] for e in entries) for i in range(4))
    print(
        f"1. trivial devplan.execute: {through:.0f} us; the program run directly on the calling "
        f"thread: {direct:.0f} us; a with_deep_stack-wrapped no-op (the hand-off to a worker "
        f"and back): {nothing:.0f} us, against starting a big-stack thread per call: "
        f"{thread:.0f} us (ratio {statistics.median(e[3] / e[2] for e in entries):.1f})"
    )
    ops = [host_op() for _ in range(r)]
    print(f"2. host code, per arith.addi in an scf.for: median {statistics.median(ops):.0f} ns")
    launches = [launch() for _ in range(r)]
    via, alone = (statistics.median(x[i] for x in launches) for i in range(2))
    ratio = statistics.median(x[0] / x[1] for x in launches)
    print(
        f"3. repeated device.launch through devplan.execute: {via:.2f} us; the compiled "
        f"kernel called directly: {alone:.2f} us; ratio {ratio:.2f}"
    )


if __name__ == "__main__":
    main()
