"""plan-devices benchmark: time against xDSL's canonicalize on the same module (issue 8).

    .venv/bin/python bench/plan_devices.py [--sizes 1000,10000,100000] [--repeat 3]

Two shapes of level-1 program, each at 1k, 10k and 100k ops:
  * chain: one function, a chain of `arith.negf`; every 100th value is hinted
    (`vdev.on_device`), to the CPU and to cuda:0 in turn, so each hint costs a copy.
  * dag: functions of 100 ops each (`addf`/`mulf`/`negf` over recent values, a hint
    every 25 ops, one pinned argument) called in a chain from `@main`.

For each module it prints the median of `--repeat` timings of `plan-devices` and of
xDSL's `canonicalize`, each on a fresh clone of the same module in this run, their
ratio, and the growth from one size to the next (10x the ops: linear is 10x). Times
are the process's CPU time (`time.process_time`), which other work on a shared
machine disturbs less than wall time.
Modules are built with op constructors (parsing 100k ops would dominate the run);
building and cloning are not timed. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import Callable

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, TensorType, f32
from xdsl.ir import Block, Region, SSAValue
from xdsl.transforms.canonicalize import CanonicalizePass

import devplan
from devplan.dialects.vdev import DEFAULT_DEVICE_ATTR, DEVICE_ATTR, OnDeviceOp
from devplan.dialects.virtual_device import DeviceAttr
from devplan.passes.plan_devices import PlanDevicesPass

T = TensorType(f32, [4])
CPU = DeviceAttr.make("cpu", 0)
GPU = DeviceAttr.make("cuda", 0)


def _module(functions: list[func.FuncOp]) -> ModuleOp:
    module = ModuleOp(functions)
    module.attributes[DEFAULT_DEVICE_ATTR] = GPU
    return module


def _function(name: str, n_args: int, build: Callable[[Block], SSAValue]) -> func.FuncOp:
    block = Block(arg_types=[T] * n_args)
    result = build(block)
    block.add_op(func.ReturnOp(result))
    return func.FuncOp(name, ([T] * n_args, [T]), Region(block))


def chain(n: int) -> ModuleOp:
    def build(block: Block) -> SSAValue:
        value: SSAValue = block.args[0]
        for i in range(1, n):
            if i % 100 == 0:
                op = OnDeviceOp(value, CPU if (i // 100) % 2 else GPU)
            else:
                op = arith.NegfOp(value)
            block.add_op(op)
            value = op.results[0]
        return value

    return _module([_function("chain", 1, build)])


def dag(n: int, seed: int = 0) -> ModuleOp:
    rnd = random.Random(seed)
    per_function = 100
    functions: list[func.FuncOp] = []
    for k in range(max(1, n // per_function - 1)):

        def build(block: Block) -> SSAValue:
            values: list[SSAValue] = list(block.args)
            for i in range(per_function - 1):
                a, b = rnd.choice(values[-8:]), rnd.choice(values[-8:])
                if i % 25 == 24:
                    op = OnDeviceOp(a, rnd.choice([CPU, GPU]))
                else:
                    op = rnd.choice([arith.AddfOp(a, b), arith.MulfOp(a, b), arith.NegfOp(a)])
                block.add_op(op)
                values.append(op.results[0])
            return values[-1]

        function = _function(f"f{k}", 2, build)
        pinned = DictionaryAttr({DEVICE_ATTR: rnd.choice([CPU, GPU])})
        function.arg_attrs = ArrayAttr([pinned, DictionaryAttr({})])
        functions.append(function)

    def build_main(block: Block) -> SSAValue:
        value: SSAValue = block.args[0]
        for function in functions:
            call = func.CallOp(function.sym_name.data, [value, block.args[1]], [T])
            block.add_op(call)
            value = call.results[0]
        return value

    functions.append(_function("main", 2, build_main))
    return _module(functions)


def ops_in(module: ModuleOp) -> int:
    return sum(1 for _ in module.walk()) - 1


def median_time(module: ModuleOp, apply: Callable[[ModuleOp], None], repeat: int) -> float:
    times: list[float] = []
    for _ in range(repeat):
        copy = module.clone()
        gc.collect()
        start = time.process_time()
        apply(copy)
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    ctx = devplan.context()
    plan = PlanDevicesPass()
    canonicalize = CanonicalizePass()
    for shape, make in (("chain", chain), ("dag", dag)):
        previous: float | None = None
        for n in sizes:
            module = make(n)
            planned = module.clone()
            plan.apply(ctx, planned)  # warm caches; and say what planning did
            copies = sum(1 for op in planned.walk() if op.name == "vdev.device_copy")
            t_plan = median_time(module, lambda m: plan.apply(ctx, m), args.repeat)
            t_canon = median_time(module, lambda m: canonicalize.apply(ctx, m), args.repeat)
            growth = f"  growth x{t_plan / previous:.1f}" if previous else ""
            print(
                f"{shape:5} {ops_in(module):7d} ops ({copies} copies): plan-devices "
                f"{t_plan * 1e3:9.1f} ms  canonicalize {t_canon * 1e3:9.1f} ms  "
                f"ratio {t_plan / t_canon:.2f}{growth}",
                flush=True,
            )
            previous = t_plan


if __name__ == "__main__":
    main()
