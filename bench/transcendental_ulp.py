"""How far devplan's transcendental functions are from the correctly rounded result.

    .venv/bin/python bench/transcendental_ulp.py [--samples N] [--backend numpy|numba]

For each transcendental op and each float type (f16, bf16, f32, f64), runs N sampled
inputs through one kernel (default: the numpy backend, which calls the same compiled
code as the numba backend — `tests/runtime/test_arith_semantics.py` checks they are bitwise
equal) and prints the maximum and median error in units in the last place against the
real result computed by mpmath at 256 bits (`devplan.reference.transcendental`), and how many
results are not the correctly rounded value.

Inputs: half drawn uniformly from the function's usual interval, half with uniformly
random exponents over the function's whole domain (so tiny, huge and subnormal inputs
are sampled too). Inputs whose result C99 fixes exactly (NaN, infinities, zeros, ±1)
are left out: `tests/runtime/test_arith_semantics.py` checks those bit for bit.
"""

from __future__ import annotations

import argparse
import statistics
import time
from fractions import Fraction

import numpy as np

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.reference.arith import evaluate
from devplan.reference.expectations import Near
from devplan.reference.scalars import FLOAT_TYPES, FloatFormat, finite, round_to_format, ulp_error
from devplan.reference.transcendental import TRANSCENDENTAL_BINARY, TRANSCENDENTAL_UNARY
from devplan.runtime.kernels.compile import compile_kernel

TYPES = ("f16", "bf16", "f32", "f64")
STORAGE = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64}
OPS = (*TRANSCENDENTAL_UNARY, *TRANSCENDENTAL_BINARY)

USUAL: dict[str, tuple[float, float]] = {
    "exp": (-20, 20), "exp2": (-30, 30), "expm1": (-5, 5), "log": (0, 100), "log2": (0, 100),
    "log10": (0, 100), "log1p": (-1, 10), "sin": (-10, 10), "cos": (-10, 10), "tan": (-10, 10),
    "asin": (-1, 1), "acos": (-1, 1), "atan": (-10, 10), "sinh": (-10, 10), "cosh": (-10, 10),
    "tanh": (-5, 5), "asinh": (-100, 100), "acosh": (1, 100), "atanh": (-1, 1), "cbrt": (-100, 100),
    "erf": (-4, 4), "rsqrt": (0, 100), "powf": (0, 10), "atan2": (-10, 10),
}  # fmt: skip
"""Where each function is usually evaluated (the first operand's interval)."""


def sample(fmt: FloatFormat, name: str, rng: np.random.Generator, count: int) -> list[int]:
    """`count` bit patterns of `fmt`: half in the usual interval, half of random exponent."""
    lo, hi = USUAL[name]
    uniform = rng.uniform(lo, hi, count // 2)
    exponents = rng.uniform(fmt.emin - fmt.precision + 1, fmt.emax, count - count // 2)
    signs = rng.choice([-1.0, 1.0], count - count // 2) if lo < 0 else np.ones(count - count // 2)
    spread = [float(s) * 2.0 ** float(e) for s, e in zip(signs, exponents, strict=True)]
    values: list[int] = []
    for v in [*uniform, *spread]:
        value = Fraction(v) if np.isfinite(v) else Fraction(fmt.max_finite)
        values.append(round_to_format(fmt, finite(value)))
    return values


def kernel_text(t: str) -> str:
    ops = []
    for k, op in enumerate(OPS):
        args = ", ".join(f"%x{k}_{j}" for j in range(1 + (op in TRANSCENDENTAL_BINARY)))
        loads = "".join(
            f"      %x{k}_{j} = memref.load %in[%r{2 * k + j}, %i] : memref<?x?x{t}>\n"
            for j in range(1 + (op in TRANSCENDENTAL_BINARY))
        )
        ops.append(
            f"{loads}      %y{k} = {op} {args} : {t}\n"
            f"      memref.store %y{k}, %out[%r{k}, %i] : memref<?x?x{t}>\n"
        )
    rows = "".join(f"    %r{r} = arith.constant {r} : index\n" for r in range(2 * len(OPS)))
    return f"""kernel.module @ulp target #target.target<"llvm"> {{
  kernel.func @all(%in: memref<?x?x{t}>, %out: memref<?x?x{t}>) {{
{rows}    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %i0 = arith.muli %bx, %bd : index
    %i = arith.addi %i0, %tx : index
    %n = memref.dim %in, %r1 : memref<?x?x{t}>
    %inside = arith.cmpi ult, %i, %n : index
    scf.if %inside {{
{"".join(ops)}    }}
    kernel.return
  }}
}}
"""


def measure(t: str, samples: int, backend: str) -> dict[str, tuple[float, float, int, int]]:
    """Per op: (max ulp, median ulp, results not correctly rounded, inputs measured)."""
    fmt = FLOAT_TYPES[t]
    rng = np.random.default_rng(15)
    inputs = np.zeros((2 * len(OPS), samples), dtype=np.uint64)
    for k, op in enumerate(OPS):
        name = op.removeprefix("math.")
        inputs[2 * k] = sample(fmt, name, rng, samples)
        second = "atan2" if name == "atan2" else "exp"  # powf: exponents in [-20, 20]
        inputs[2 * k + 1] = sample(fmt, second, rng, samples)
    width = f"uint{fmt.width}"
    buffer = inputs.astype(width).view(STORAGE[t])
    out = np.zeros((len(OPS), samples), dtype=STORAGE[t])
    module = devplan.parse(kernel_text(t))
    func = next(op for op in module.walk() if isinstance(op, KernelFuncOp))
    compile_kernel(func, backend)(((samples + 127) // 128, 1, 1), (128, 1, 1), [buffer, out])
    got = out.view(width).astype(np.uint64)
    found: dict[str, tuple[float, float, int, int]] = {}
    for k, op in enumerate(OPS):
        errors: list[float] = []
        for i in range(samples):
            operands = [int(inputs[2 * k, i])]
            if op in TRANSCENDENTAL_BINARY:
                operands.append(int(inputs[2 * k + 1, i]))
            expected = evaluate(op, [fmt] * len(operands), [fmt], operands)
            if not isinstance(expected, Near):
                continue
            if int(got[k, i]) == expected.rounded:  # covers results rounded to ±inf
                errors.append(min(0.5, ulp_error(fmt, int(got[k, i]), expected.value)))
            else:
                errors.append(ulp_error(fmt, int(got[k, i]), expected.value))
        wrong = sum(1 for e in errors if e > 0.5)  # not the correctly rounded value
        found[op] = (max(errors), statistics.median(errors), wrong, len(errors))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="inputs per op and type")
    parser.add_argument("--backend", default="numpy", choices=("numpy", "numba"))
    options = parser.parse_args()
    start = time.perf_counter()
    table = {t: measure(t, options.samples, options.backend) for t in TYPES}
    print(f"ulp error against mpmath ({options.samples} sampled inputs per cell, "
          f"{options.backend} backend): max / median / share not correctly rounded")  # fmt: skip
    print(f"{'op':16}" + "".join(f"{t:>26}" for t in TYPES))
    for op in OPS:
        cells = []
        for t in TYPES:
            worst, median, wrong, n = table[t][op]
            cells.append(f"{worst:9.3f} {median:6.3f} {100 * wrong / n:6.2f}%")
        print(f"{op:16}" + "".join(f"{c:>26}" for c in cells))
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
