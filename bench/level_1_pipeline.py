"""Level-1 examples end to end: where the time goes (parse, plan, lower, compile, run).

    .venv/bin/python bench/level_1_pipeline.py [--repeat 5] [--backend numpy|numba]

For each level-1 program in examples/ it prints the median of `--repeat` timings of
each phase — parse, plan-devices, lower-to-device + classify-regions, compiling the
level-2 program to closures, and running it (kernels compiled on the first run are not
counted: the first run is a warm-up) — their total, and the ratio of the run to the
oracle (`devplan.reference.program.evaluate`, plain NumPy on the host) measured in the same
run. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import devplan
from devplan.reference.program import evaluate
from devplan.runtime.executor import Program, random_inputs

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
LEVEL_1 = ("mlp", "smoothing")


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def phases(path: Path, backend: str, repeat: int) -> dict[str, float]:
    text = path.read_text()
    module = devplan.parse(text)
    inputs = random_inputs(module, seed=0)
    planned = devplan.apply(devplan.parse(text), "plan-devices")
    lowered = devplan.apply(planned.clone(), "lower-to-device,classify-regions")
    program = Program(lowered, backend)
    program.run(inputs)  # warm-up: kernels compile on their first launch
    return {
        "parse": median_seconds(lambda: devplan.parse(text), repeat),
        "plan": median_seconds(lambda: devplan.apply(module.clone(), "plan-devices"), repeat),
        "lower": median_seconds(
            lambda: devplan.apply(planned.clone(), "lower-to-device,classify-regions"), repeat
        ),
        "compile": median_seconds(lambda: Program(lowered, backend), repeat),
        "run": median_seconds(lambda: program.run(inputs), repeat),
        "oracle": median_seconds(lambda: evaluate(module, inputs), repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--backend", default="numpy", choices=("numpy", "numba"))
    args = parser.parse_args()
    print(f"level-1 examples, {args.backend} kernels, median of {args.repeat} (ms)")
    header = (
        "example",
        "parse",
        "plan",
        "lower",
        "compile",
        "run",
        "total",
        "oracle",
        "run/oracle",
    )
    print("  ".join(f"{h:>10}" for h in header))
    for name in LEVEL_1:
        t = phases(EXAMPLES / f"{name}.mlir", args.backend, args.repeat)
        total = t["parse"] + t["plan"] + t["lower"] + t["compile"] + t["run"]
        cells = [t[k] * 1e3 for k in ("parse", "plan", "lower", "compile", "run")]
        row = [name, *(f"{c:.2f}" for c in cells), f"{total * 1e3:.2f}", f"{t['oracle'] * 1e3:.2f}"]
        row.append(f"{t['run'] / t['oracle']:.1f}x")
        print("  ".join(f"{c:>10}" for c in row))


if __name__ == "__main__":
    main()
