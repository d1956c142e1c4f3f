"""What a process pays before work starts: `import devplan` and parsing a program load
neither Numba, SciPy nor the runtime, and a run of a float program on the NumPy kernel
backend (`examples/mlp.mlir`: matmuls with `math.fma`, adds, max) imports neither Numba
nor SciPy, nor what only other programs need (host code of `vector`, `affine` or `scf`
ops, ray devices, plan-devices' cost strategy), and a NumPy-backend `devplan-run`
imports no Numba either for an example whose host code does integer arithmetic
(`examples/vector_add.mlir`'s grid size) or for one computing the transcendentals the C
library defines (`tanh`, `exp`) and `rsqrt`. Checked in a fresh interpreter, where
`sys.modules` shows what was loaded."""

from __future__ import annotations

import json
import subprocess
import sys

from support import EXAMPLES
from xdsl.dialects import func

import devplan
from devplan.runtime.numpy_semantics import LIBM_UNARY
from devplan.runtime.scalar_ops import INT_BINARY_OPS

PROGRAM = """
import json, sys
import numpy as np
import devplan

def loaded():
    return sorted(
        n for n in sys.modules if n in ("numba", "scipy") or n.startswith("devplan.runtime")
    )

module = devplan.parse(sys.argv[1])
after_parse = loaded()
rng = np.random.default_rng(0)
shapes = [(32, 64), (64, 128), (128,), (128, 10)]
inputs = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
devplan.execute(module, inputs, kernel_backend="numpy")
unused = (
    "numba", "scipy", "xdsl.dialects.vector", "xdsl.dialects.affine", "xdsl.dialects.cf",
    "xdsl.dialects.bufferization",
    "devplan.runtime.host.scf", "devplan.runtime.host.vector", "devplan.runtime.ray_device",
    "devplan.passes.plan_devices.cost_strategy", "devplan.passes.plan_devices.placement_cost",
)  # fmt: skip
heavy = sorted(n for n in unused if n in sys.modules)
print(json.dumps({"after_parse": after_parse, "heavy_after_run": heavy}))
"""


def test_import_and_parse_load_no_runtime_and_a_numpy_run_no_numba_or_scipy() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(EXAMPLES / "mlp.mlir")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["after_parse"] == []
    assert seen["heavy_after_run"] == []


RUNS = """
import contextlib, io, json, sys
from devplan.tools.run import main

codes = []
for path in sys.argv[1:]:
    with contextlib.redirect_stdout(io.StringIO()):
        codes.append(main([path, "--random-args", "0", "--kernel-backend", "numpy"]))
print(json.dumps({"codes": codes, "numba": "numba" in sys.modules}))
"""


def examples_with_host_integer_ops() -> list[str]:
    """The examples whose host functions (not kernels) hold a binary integer op."""
    found: list[str] = []
    for path in sorted(EXAMPLES.glob("*.mlir")):
        module = devplan.parse(str(path))
        host = (op for f in module.walk() if isinstance(f, func.FuncOp) for op in f.walk())
        if any(op.name in INT_BINARY_OPS for op in host):
            found.append(str(path))
    return found


def examples_with_transcendentals() -> list[str]:
    """The examples holding an op the NumPy backend computes by calling the C library, or
    `math.rsqrt`."""
    names = {*LIBM_UNARY, "math.rsqrt"}
    return [
        str(path)
        for path in sorted(EXAMPLES.glob("*.mlir"))
        if any(op.name in names for op in devplan.parse(str(path)).walk())
    ]


def test_a_numpy_run_of_host_integers_or_transcendentals_imports_no_numba() -> None:
    integers, transcendentals = examples_with_host_integer_ops(), examples_with_transcendentals()
    assert str(EXAMPLES / "vector_add.mlir") in integers
    for name in ("smoothing", "mlp_three_devices", "transformer"):
        assert str(EXAMPLES / f"{name}.mlir") in transcendentals
    paths = sorted({*integers, *transcendentals})
    done = subprocess.run(
        [sys.executable, "-c", RUNS, *paths], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {"codes": [0] * len(paths), "numba": False}, done.stderr
