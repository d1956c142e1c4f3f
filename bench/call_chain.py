"""Deep call chains through `default-pipeline`: does each pass stay linear in the depth?

    .venv/bin/python bench/call_chain.py [--repeat 3] [--depths 25,50,100,200]

A level-1 program whose @main calls @f0, which calls @f1, ... down to @f{depth}, each
function one elementwise op and one call, the last one pinned to cuda:1 (so every
function of the chain is a device program of cuda:1 after lowering). For each depth it
prints the median time of each pass of `default-pipeline` and, per pass, the time per
function relative to the smallest depth of the same run: about 1 for a pass linear in
the depth, growing with the depth for a quadratic one. Not a test: nothing here
asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import devplan
from devplan.passes.default_pipeline import DEFAULT_PIPELINE


def chain(depth: int) -> str:
    t = "tensor<4xi32>"
    functions = [
        f"func.func @f{i}(%a: {t}) -> {t} {{\n  %b = arith.addi %a, %a : {t}\n"
        f"  %c = func.call @f{i + 1}(%b) : ({t}) -> {t}\n  func.return %c : {t}\n}}\n"
        for i in range(depth)
    ]
    functions.append(
        f"func.func @f{depth}(%a: {t}) -> {t} {{\n  %b = arith.xori %a, %a : {t}\n"
        f'  %c = vdev.on_device %b to #vdev.device<"cuda", 1> : {t}\n  func.return %c : {t}\n}}\n'
    )
    functions.append(
        f"func.func @main(%a: {t}) -> {t} {{\n  %c = func.call @f0(%a) : ({t}) -> {t}\n"
        f"  func.return %c : {t}\n}}\n"
    )
    return "".join(functions)


def pass_times(text: str, repeat: int) -> list[float]:
    """Median seconds of each pass of default-pipeline, each on the previous one's output."""
    runs: list[list[float]] = []
    for _ in range(repeat):
        module = devplan.parse(text)
        times: list[float] = []
        for name in DEFAULT_PIPELINE:
            start = time.perf_counter()
            devplan.apply(module, name)
            times.append(time.perf_counter() - start)
        runs.append(times)
    return [statistics.median(column) for column in zip(*runs, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--depths", default="25,50,100,200")
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    names = list(DEFAULT_PIPELINE)
    print(f"default-pipeline on call chains, median of {args.repeat} (ms; in brackets: time")
    print(f"per function relative to depth {depths[0]})")
    print(f"{'depth':>6}  " + "  ".join(f"{n:>26}" for n in names))
    pass_times(chain(depths[0]), 1)  # warm-up: imports and first-use caches
    base: list[float] | None = None
    for depth in depths:
        per_function = [t / (depth + 2) for t in pass_times(chain(depth), args.repeat)]
        if base is None:
            base = per_function
        cells = [
            f"{p * (depth + 2) * 1e3:.1f} [{p / b:.2f}x]"
            for p, b in zip(per_function, base, strict=True)
        ]
        print(f"{depth:>6}  " + "  ".join(f"{c:>26}" for c in cells))


if __name__ == "__main__":
    main()
