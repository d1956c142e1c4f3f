"""The CPU time (user + sys) of one `devplan-run examples/mlp.mlir --random-args 0` per
kernel backend, with warm caches, beside the CPU time of importing NumPy and xDSL's
parser in the same run, and the floor under the numba backend: a process that imports
NumPy and Numba and calls one cached `@njit` function (which makes Numba import
`scipy.linalg` for its BLAS check). Not a test: issue #23 asks for <= 0.6 s on either
backend.

    .venv/bin/python bench/startup.py [--runs 5]

Each command runs once first (filling the kernel and Numba caches), then `--runs` times;
a run's CPU time is its child's `resource.getrusage(RUSAGE_CHILDREN)` growth, and the
line shows the median. The caches are `DEVPLAN_CACHE_DIR`/`NUMBA_CACHE_DIR` when set,
else a temporary directory of this run. Python's own cache of compiled modules is warm
too: `PYTHONDONTWRITEBYTECODE` is dropped from the runs' environment, since with it set
each run compiles devplan's sources again (0.4 s of CPU).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "mlp.mlir"
BASELINE = [sys.executable, "-c", "import numpy, xdsl.parser"]
NUMBA_FLOOR = """import numba

@numba.njit(cache=True)
def add(a, b):
    return a + b

add(1.0, 2.0)
import gc

gc.freeze()  # as devplan-run does before it exits: no final scan of Numba's objects
"""
"""A script (Numba caches only functions defined in a file) whose run is the floor."""


def cpu_seconds(command: list[str], env: dict[str, str]) -> float:
    """The CPU time (user + sys) of one run of `command` (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median_cpu(command: list[str], env: dict[str, str], runs: int) -> float:
    cpu_seconds(command, env)  # warm: fills the caches, loads the files into memory
    return statistics.median(cpu_seconds(command, env) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per command")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="devplan-startup-") as tmp:
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.setdefault("DEVPLAN_CACHE_DIR", str(Path(tmp) / "kernels"))
        env.setdefault("NUMBA_CACHE_DIR", str(Path(tmp) / "numba"))
        baseline = median_cpu(BASELINE, env, args.runs)
        print(f"import numpy, xdsl.parser: {baseline:.3f} s CPU (median of {args.runs})")
        floor_script = Path(tmp) / "numba_floor.py"
        floor_script.write_text(NUMBA_FLOOR)
        floor = median_cpu([sys.executable, str(floor_script)], env, args.runs)
        print(f"import numba, one cached @njit call: {floor:.3f} s CPU (the numba floor)")
        for backend in ("numpy", "numba"):
            command = [
                sys.executable, "-m", "devplan.tools.run", str(EXAMPLE),
                "--random-args", "0", "--kernel-backend", backend,
            ]  # fmt: skip
            seconds = median_cpu(command, env, args.runs)
            print(
                f"devplan-run mlp.mlir --kernel-backend {backend}: {seconds:.3f} s CPU "
                f"({seconds / baseline:.1f}x the imports; goal <= 0.6 s)"
            )


if __name__ == "__main__":
    main()
