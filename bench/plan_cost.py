"""plan-devices{strategy=cost} benchmark: planning time against the default strategy, and
how far alpha-expansion (three devices) lands from the optimum (issue 14).

    .venv/bin/python bench/plan_cost.py [--sizes 1000,10000] [--repeat 3] [--samples 200]

Planning time. Generated level-1 programs of 1k and 10k ops (a DAG in one function:
every 10th op a 256x256 `linalg.matmul`, the others `addf`/`mulf`/`tanh` over recent
values, every 50th value hinted to a device with `constrain_result`) are planned by
`plan-devices` with the default strategy and with `strategy=cost`, each on a fresh
clone of the same module in this run, under two systems: cpu:0 + cuda:0 (2 devices,
exact min cut) and the default system cpu:0 + cuda:0 + cuda:1 (3 devices,
alpha-expansion). Printed: medians of `--repeat` CPU times (`time.process_time`),
their ratio, and the modelled time (`planned_seconds`) of both plans.

Optimality. `--samples` random placement problems of up to 10 classes with three
devices (random compute, sizes, link speeds, some classes fixed), solved by
`placement_cost.solve` and by brute force: the worst and median ratio of the solver's
modelled time to the optimum. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import random
import statistics
import time

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr

import devplan
from devplan.passes.plan_devices.cost_strategy import planned_seconds
from devplan.passes.plan_devices.placement_cost import CopyTerm, Problem, solve
from devplan.system.description import System

TWO_DEVICES = """
[[device]]
type = "cpu"
id = 0
target = { kind = "llvm" }
api = "cpu"
scopes = { global = "64 GiB" }
[[device]]
type = "cuda"
id = 0
target = "nvidia/nvidia-a100"
api = "simulated"
scopes = { global = "40 GiB" }
[[link]]
between = ["cpu:0", "cuda:0"]
bandwidth = "24 GB/s"
latency = "10 us"
"""


def program(n: int, devices: list[str], seed: int = 0) -> str:
    rng = random.Random(seed)
    small, big = "tensor<64x64xf32>", "tensor<256x256xf32>"
    lines: list[str] = []
    values = {small: ["%a"], big: ["%w"]}
    for i in range(n):
        if i % 10 == 0:
            x = rng.choice(values[big][-8:])
            lines.append(f"%e{i} = tensor.empty() : {big}")
            lines.append(
                f"%v{i} = linalg.matmul ins({x}, %w : {big}, {big}) outs(%e{i} : {big}) -> {big}"
            )
            values[big].append(f"%v{i}")
            t = big
        else:
            t = small if rng.random() < 0.7 else big
            x, y = rng.choice(values[t][-8:]), rng.choice(values[t][-8:])
            kind = rng.choice(["addf", "mulf", "tanh"])
            if kind == "tanh":
                lines.append(f"%v{i} = math.tanh {x} : {t}")
            else:
                lines.append(f"%v{i} = arith.{kind} {x}, {y} : {t}")
            values[t].append(f"%v{i}")
        if i % 50 == 49:
            type_name, device_id = rng.choice(devices).split(":")
            lines.append(
                f'%h{i} = "vdev.on_device"(%v{i}) {{device = #vdev.device<"{type_name}", '
                f"{device_id}>, constrain_result}} : ({t}) -> {t}"
            )
            values[t].append(f"%h{i}")
    body = "\n    ".join(lines)
    return (
        f"func.func @main(%a: {small}, %w: {big}) -> ({small}, {big}) {{\n    {body}\n"
        f"    func.return {values[small][-1]}, {values[big][-1]} : {small}, {big}\n}}\n"
    )


def with_system(text: str, system: str | None) -> ModuleOp:
    module = devplan.parse(text)
    if system is not None:
        module.attributes["vdev.system"] = StringAttr(system)
    return module


def timed(module: ModuleOp, strategy: str, repeat: int) -> tuple[float, float]:
    times: list[float] = []
    modelled = 0.0
    for _ in range(repeat):
        clone = module.clone()
        gc.collect()
        start = time.process_time()
        devplan.apply(clone, f"plan-devices{{strategy={strategy}}}")
        times.append(time.process_time() - start)
        modelled = planned_seconds(clone)
    return statistics.median(times), modelled


def random_problem(rng: random.Random, devices: int, most: int) -> Problem:
    n = rng.randint(2, most)
    compute = [[rng.uniform(1e-6, 1e-2) for _ in range(devices)] for _ in range(n)]
    bandwidth = {(0, d): rng.uniform(1e8, 1e11) for d in range(1, devices)}
    for a, b in itertools.combinations(range(1, devices), 2):
        if rng.random() < 0.5:
            bandwidth[(a, b)] = rng.uniform(1e8, 1e11)

    def copy(a: int, b: int, nbytes: int) -> float:
        if a == b:
            return 0.0
        key = (min(a, b), max(a, b))
        if key in bandwidth:
            return 1e-5 + nbytes / bandwidth[key]
        return copy(a, 0, nbytes) + copy(0, b, nbytes)

    terms: list[CopyTerm] = []
    for source in range(n):
        users = sorted({rng.randrange(n) for _ in range(rng.randint(0, 3))})
        if users:
            nbytes = rng.randint(1, 1 << 24)
            table = [[copy(a, b, nbytes) for b in range(devices)] for a in range(devices)]
            terms.append(CopyTerm(source, users, table))
    fixed = [rng.randrange(devices) if rng.random() < 0.2 else None for _ in range(n)]
    default = [f if f is not None else 0 for f in fixed]
    return Problem(devices, compute, fixed, default, terms)


def optimum(problem: Problem) -> float:
    """The least objective over every placement of the free classes (vectorised)."""
    k = problem.devices
    free = [c for c, f in enumerate(problem.fixed) if f is None]
    grid = np.array(list(itertools.product(range(k), repeat=len(free))), dtype=np.int64)
    labels = np.tile(np.array([f or 0 for f in problem.fixed], dtype=np.int64), (len(grid), 1))
    if free:
        labels[:, free] = grid
    total = np.array(problem.compute)[np.arange(len(problem.fixed)), labels].sum(axis=1)
    for term in problem.terms:
        src = labels[:, term.source]
        table = np.array(term.seconds)
        for d in range(k):
            used = (labels[:, term.consumers] == d).any(axis=1) & (src != d)
            total += np.where(used, table[src, d], 0.0)
    return float(total.min())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    systems = {
        "2 devices": (TWO_DEVICES, ["cpu:0", "cuda:0"]),
        "3 devices": (None, [d.name for d in System.default().devices]),
    }
    print(
        f"{'ops':>6}  {'system':<10} {'default (s)':>11} {'cost (s)':>9} {'ratio':>6}"
        f"  {'modelled default':>16} {'modelled cost':>13}"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        for label, (system, devices) in systems.items():
            module = with_system(program(n, devices), system)
            base, base_model = timed(module, "default", args.repeat)
            cost, cost_model = timed(module, "cost", args.repeat)
            print(
                f"{n:>6}  {label:<10} {base:>11.3f} {cost:>9.3f} {cost / base:>6.2f}"
                f"  {base_model * 1e3:>13.3f} ms {cost_model * 1e3:>10.3f} ms"
            )
    rng = random.Random(1)
    ratios: list[float] = []
    for _ in range(args.samples):
        problem = random_problem(rng, 3, 10)
        ratios.append(problem.objective(solve(problem)) / optimum(problem))
    exact = sum(1 for r in ratios if r <= 1 + 1e-9)
    print(
        f"3 devices, {args.samples} random problems (<= 10 classes): optimum reached in "
        f"{exact}, median ratio {statistics.median(ratios):.4f}, worst {max(ratios):.4f}"
    )


if __name__ == "__main__":
    main()
