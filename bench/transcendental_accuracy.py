"""How far the shared transcendentals (`runtime/semantics.py`) are from correctly rounded.

    .venv/bin/pip install mpmath   # not a dependency of devplan
    .venv/bin/python bench/transcendental_accuracy.py [values per op, default 3000]

For each op and f32/f64, random values over a range where the op is finite run through
the compiled definition every path calls (host code, both kernel backends); each result
is compared with mpmath at 200 bits. Prints the largest error in ulps of the result's
format (0.5 is correctly rounded).
"""

from __future__ import annotations

import math
import sys
from typing import Any

import mpmath  # pyright: ignore[reportMissingImports]
import numpy as np

from devplan.runtime import semantics

UNARY: dict[str, tuple[Any, float, float]] = {
    "math.exp": (mpmath.exp, -80, 80),
    "math.exp2": (lambda x: mpmath.power(2, x), -120, 120),
    "math.expm1": (mpmath.expm1, -20, 20),
    "math.log": (mpmath.log, 1e-30, 1e30),
    "math.log2": (lambda x: mpmath.log(x, 2), 1e-30, 1e30),
    "math.log10": (mpmath.log10, 1e-30, 1e30),
    "math.log1p": (lambda x: mpmath.log(1 + x), -0.9, 100),
    "math.sin": (mpmath.sin, -100, 100),
    "math.cos": (mpmath.cos, -100, 100),
    "math.tan": (mpmath.tan, -10, 10),
    "math.asin": (mpmath.asin, -1, 1),
    "math.acos": (mpmath.acos, -1, 1),
    "math.atan": (mpmath.atan, -100, 100),
    "math.sinh": (mpmath.sinh, -80, 80),
    "math.cosh": (mpmath.cosh, -80, 80),
    "math.tanh": (mpmath.tanh, -20, 20),
    "math.asinh": (mpmath.asinh, -1e6, 1e6),
    "math.acosh": (mpmath.acosh, 1, 1e6),
    "math.atanh": (mpmath.atanh, -1, 1),
    "math.cbrt": (mpmath.cbrt, -1e6, 1e6),
    "math.erf": (mpmath.erf, -5, 5),
}
BINARY: dict[str, tuple[Any, tuple[float, float], tuple[float, float]]] = {
    "math.powf": (mpmath.power, (0.01, 10), (-20, 20)),
    "math.atan2": (mpmath.atan2, (-10, 10), (-10, 10)),
}


def ulps(got: Any, exact: Any, dtype: Any) -> float:
    """|got - exact| in ulps of `got`'s format at `got`."""
    g = float(got)
    if not math.isfinite(g) or isinstance(exact, mpmath.mpc):
        return 0.0
    ulp = float(np.nextafter(dtype(got), dtype(np.inf)) - dtype(got))
    return float(abs(mpmath.mpf(g) - exact)) / ulp if ulp else 0.0


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    mpmath.mp.prec = 200
    rng = np.random.default_rng(0)
    for dtype, label in ((np.float32, "f32"), (np.float64, "f64")):
        worst: dict[str, float] = {}
        for op, (fn, lo, hi) in UNARY.items():
            xs = rng.uniform(lo, hi, n).astype(dtype)
            got = semantics.ufunc(op)(xs)
            worst[op] = max(
                ulps(g, fn(mpmath.mpf(float(x))), dtype) for x, g in zip(xs, got, strict=True)
            )
        for op, (fn, (a, b), (c, d)) in BINARY.items():
            xs, ys = rng.uniform(a, b, n).astype(dtype), rng.uniform(c, d, n).astype(dtype)
            got = semantics.ufunc(op)(xs, ys)
            worst[op] = max(
                ulps(g, fn(mpmath.mpf(float(x)), mpmath.mpf(float(y))), dtype)
                for x, y, g in zip(xs, ys, got, strict=True)
            )
        print(f"{label}: largest error in ulps over {n} values an op (0.5 = correctly rounded)")
        for op, error in worst.items():
            print(f"  {op:12} {error:.3f}")


if __name__ == "__main__":
    with np.errstate(all="ignore"):
        main()
