"""Every example on a real NVIDIA GPU: the `numba-cuda` backend on an `api = "cuda"` device
against the `numpy` backend on the default (simulated) system, in one run.

    .venv/bin/python bench/real_gpu.py [--repeat 5] [EXAMPLE ...]

The system is the default one with cuda:0 described as `api = "cuda"` (buffers are
numba.cuda device arrays, none of them host-visible: its pinned `host` scope is dropped);
cuda:1 stays simulated, so `two_gpus` and the three-device MLP run across a real and a
simulated GPU. For each example with a `@main`: whether the outputs
agree (integers bit for bit, floats at the precision of their type), the first run's wall
time (Numba's compile for the GPU included) and the median of `--repeat` warm runs on each
side. Needs a GPU and `numba-cuda`; not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import devplan
from devplan.runtime.executor import random_inputs
from devplan.system.description import DEFAULT_SYSTEM_TOML, System

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TOLERANCE = {"float16": 4e-3, "bfloat16": 3e-2, "float32": 1e-5, "float64": 1e-12}


def gpu_system() -> System:
    """The default system with cuda:0 a real GPU (no pinned `host` scope)."""
    first_gpu = (
        'type = "cuda"\nid = 0\ntarget = "nvidia/nvidia-a100"\napi = "simulated"\n'
        'scopes = { global = "40 GiB", shared = "48 KiB", local = "512 KiB", host = "32 GiB" }\n'
    )
    pinned = '[[same_memory]]\nscopes = ["cpu:0/global", "cuda:0/host"]\n'
    assert first_gpu in DEFAULT_SYSTEM_TOML
    assert pinned in DEFAULT_SYSTEM_TOML
    real = first_gpu.replace('"simulated"', '"cuda"').replace(', host = "32 GiB"', "")
    text = DEFAULT_SYSTEM_TOML.replace(first_gpu, real).replace(pinned, "")
    return System.from_text(text, "real-gpu")


def agree(got: object, want: object) -> bool:
    a, b = np.asarray(got), np.asarray(want)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        tolerance = TOLERANCE.get(a.dtype.name, 1e-5)
        return bool(np.allclose(a, b, rtol=tolerance, atol=tolerance, equal_nan=True))
    return bool(np.array_equal(a, b))


def seconds(module: object, inputs: list[object], system: System | None, backend: str) -> float:
    """Wall time of one `devplan.execute`."""
    start = time.perf_counter()
    devplan.execute(module, inputs, system=system, kernel_backend=backend)  # type: ignore[arg-type]
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("names", nargs="*", help="examples to run (default: all)")
    args = parser.parse_args()
    system = gpu_system()
    print(f"{'example':<22} {'agree':<6} {'gpu first s':>11} {'gpu warm ms':>11} "
          f"{'numpy warm ms':>13}")  # fmt: skip
    failures = 0
    for path in sorted(EXAMPLES.glob("*.mlir")):
        if "func.func @main" not in path.read_text() or (
            args.names and path.stem not in args.names
        ):
            continue
        module = devplan.parse(path)
        inputs = random_inputs(module, seed=0)
        try:
            first = seconds(module, inputs, system, "numba-cuda")
            got = devplan.execute(module, inputs, system=system, kernel_backend="numba-cuda")
            want = devplan.execute(module, inputs, kernel_backend="numpy")
        except devplan.DevplanError as error:
            print(f"{path.stem:<22} error: {error}")
            failures += 1
            continue
        ok = len(got.outputs) == len(want.outputs) and all(
            agree(g, w) for g, w in zip(got.outputs, want.outputs, strict=True)
        )
        failures += not ok
        gpu = statistics.median(
            seconds(module, inputs, system, "numba-cuda") for _ in range(args.repeat)
        )
        cpu = statistics.median(seconds(module, inputs, None, "numpy") for _ in range(args.repeat))
        print(f"{path.stem:<22} {'yes' if ok else 'NO':<6} {first:>11.2f} {gpu * 1e3:>11.1f} "
              f"{cpu * 1e3:>13.1f}")  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
