# ruff: noqa: E501  (the IR lines of the benchmarked programs)
"""Level-1 linalg ops on the numba backend against NumPy computing the same, in one run.

    .venv/bin/python bench/level1_ops.py [--repeat 5] [--only softmax,matmul]

Each program is planned and lowered once (default-pipeline), compiled to closures, run
once to compile its kernels (on a fresh kernel cache directory), then `WARM_UP` times
untimed and `--repeat` times timed, with warm kernels. NumPy does the same computation
the usual NumPy way (conv: im2col + matmul), as many times. The table gives the medians, the ratio NumPy / devplan
(>= 1: devplan is as fast) and the goal of issue #26. The cold compile of each generated
kernel is the wall time of the compile clock's blocks that name it in the cold run
(`compile_clock.compiles`: its source generated, then Numba's compile of it, and of its
parallel form when it ran in parallel); their distribution over every case's distinct
kernels ends the output (goal: median <= 5 s). Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

N = 1024


def _elementwise() -> tuple[str, list[Any], Callable[[list[Any]], Any]]:
    text = f"""
func.func @main(%a: tensor<{N}x{N}xf32>, %b: tensor<{N}x{N}xf32>) -> tensor<{N}x{N}xf32> {{
  %c = arith.addf %a, %b : tensor<{N}x{N}xf32>
  return %c : tensor<{N}x{N}xf32>
}}"""
    return text, [_rand(N, N), _rand(N, N)], lambda x: x[0] + x[1]


BROADCAST_BODY = """
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32"""


def _broadcast() -> tuple[str, list[Any], Callable[[list[Any]], Any]]:
    text = f"""
func.func @main(%a: tensor<{N}x{N}xf32>, %b: tensor<{N}xf32>) -> tensor<{N}x{N}xf32> {{
  %e = tensor.empty() : tensor<{N}x{N}xf32>
  %c = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}} ins(%a, %b : tensor<{N}x{N}xf32>, tensor<{N}xf32>) outs(%e : tensor<{N}x{N}xf32>) {{{BROADCAST_BODY}
  }} -> tensor<{N}x{N}xf32>
  return %c : tensor<{N}x{N}xf32>
}}"""
    return text, [_rand(N, N), _rand(N)], lambda x: x[0] + x[1]


def _row_reduce(name: str, src: str, op: str, init: str, n: int = N, m: int = N) -> str:
    return f"""
  %{name}_e = tensor.empty() : tensor<{n}xf32>
  %{name}_i = arith.constant {init} : f32
  %{name}_z = linalg.fill ins(%{name}_i : f32) outs(%{name}_e : tensor<{n}xf32>) -> tensor<{n}xf32>
  %{name} = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}} ins(%{src} : tensor<{n}x{m}xf32>) outs(%{name}_z : tensor<{n}xf32>) {{
  ^bb0(%x: f32, %o: f32):
    %r = {op} %o, %x : f32
    linalg.yield %r : f32
  }} -> tensor<{n}xf32>"""


def _row_map(name: str, src: str, row: str, body: str, n: int = N, m: int = N) -> str:
    """out[i, j] = body(src[i, j], row[i])."""
    return f"""
  %{name}_e = tensor.empty() : tensor<{n}x{m}xf32>
  %{name} = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}} ins(%{src}, %{row} : tensor<{n}x{m}xf32>, tensor<{n}xf32>) outs(%{name}_e : tensor<{n}x{m}xf32>) {{
  ^bb0(%x: f32, %y: f32, %o: f32):
{body}
  }} -> tensor<{n}x{m}xf32>"""


def _softmax_ops(src: str, n: int, m: int) -> str:
    return (
        _row_reduce("max", src, "arith.maximumf", "-3.0e38", n, m)
        + _row_map(
            "ex",
            src,
            "max",
            "    %d = arith.subf %x, %y : f32\n    %r = math.exp %d : f32\n    linalg.yield %r : f32",
            n,
            m,
        )
        + _row_reduce("sum", "ex", "arith.addf", "0.0", n, m)
        + _row_map(
            "sm", "ex", "sum", "    %r = arith.divf %x, %y : f32\n    linalg.yield %r : f32", n, m
        )
    )


def _numpy_softmax(x: Any) -> Any:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _softmax() -> tuple[str, list[Any], Callable[[list[Any]], Any]]:
    text = f"""
func.func @main(%input: tensor<{N}x{N}xf32>) -> tensor<{N}x{N}xf32> {{{_softmax_ops("input", N, N)}
  return %sm : tensor<{N}x{N}xf32>
}}"""
    return text, [_rand(N, N)], lambda x: _numpy_softmax(x[0])


def _layernorm() -> tuple[str, list[Any], Callable[[list[Any]], Any]]:
    scale = f"    %k = arith.constant {1.0 / N:e} : f32\n"
    center = (
        scale
        + "    %mu = arith.mulf %y, %k : f32\n    %r = arith.subf %x, %mu : f32\n    linalg.yield %r : f32"
    )
    square = "    %r = arith.mulf %x, %x : f32\n    linalg.yield %r : f32"
    norm = (
        scale
        + "    %eps = arith.constant 1.0e-5 : f32\n    %m = arith.mulf %y, %k : f32\n"
        + "    %a = arith.addf %m, %eps : f32\n    %q = math.rsqrt %a : f32\n"
        + "    %r = arith.mulf %x, %q : f32\n    linalg.yield %r : f32"
    )
    ops = (
        _row_reduce("s", "input", "arith.addf", "0.0")
        + _row_map("c", "input", "s", center)
        + _row_map("sq", "c", "s", square)
        + _row_reduce("v", "sq", "arith.addf", "0.0")
        + _row_map("ln", "c", "v", norm)
    )
    text = f"""
func.func @main(%input: tensor<{N}x{N}xf32>) -> tensor<{N}x{N}xf32> {{{ops}
  return %ln : tensor<{N}x{N}xf32>
}}"""

    def numpy_layernorm(x: list[Any]) -> Any:
        c = x[0] - x[0].mean(axis=1, keepdims=True)
        return c / np.sqrt((c * c).mean(axis=1, keepdims=True) + 1e-5)

    return text, [_rand(N, N)], numpy_layernorm


def _attention() -> tuple[str, list[Any], Callable[[list[Any]], Any]]:
    s, d = 512, 64
    text = f"""
func.func @main(%q: tensor<{s}x{d}xf32>, %k: tensor<{s}x{d}xf32>, %v: tensor<{s}x{d}xf32>) -> tensor<{s}x{d}xf32> {{
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<{s}x{s}xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<{s}x{s}xf32>) -> tensor<{s}x{s}xf32>
  %scores = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}} ins(%q, %k : tensor<{s}x{d}xf32>, tensor<{s}x{d}xf32>) outs(%sz : tensor<{s}x{s}xf32>) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }} -> tensor<{s}x{s}xf32>
  {_softmax_ops("scores", s, s)}
  %oe = tensor.empty() : tensor<{s}x{d}xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%oe : tensor<{s}x{d}xf32>) -> tensor<{s}x{d}xf32>
  %out = linalg.matmul ins(%sm, %v : tensor<{s}x{s}xf32>, tensor<{s}x{d}xf32>) outs(%oz : tensor<{s}x{d}xf32>) -> tensor<{s}x{d}xf32>
  return %out : tensor<{s}x{d}xf32>
}}"""
    return (
        text,
        [_rand(s, d), _rand(s, d), _rand(s, d)],
        lambda x: _numpy_softmax(x[0] @ x[1].T) @ x[2],
    )


def _conv() -> tuple[str, list[Any], Callable[[list[Any]], Any]]:
    text = """
func.func @main(%img: tensor<1x64x56x56xf32>, %f: tensor<64x64x3x3xf32>) -> tensor<1x64x54x54xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x54x54xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x54x54xf32>) -> tensor<1x64x54x54xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%img, %f : tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) outs(%z : tensor<1x64x54x54xf32>) -> tensor<1x64x54x54xf32>
  return %c : tensor<1x64x54x54xf32>
}"""

    def im2col(x: list[Any]) -> Any:
        img, f = x[0][0], x[1]
        cols = np.lib.stride_tricks.sliding_window_view(img, (3, 3), axis=(1, 2))
        cols = cols.transpose(0, 3, 4, 1, 2).reshape(64 * 9, 54 * 54)
        return (f.reshape(64, 64 * 9) @ cols).reshape(1, 64, 54, 54)

    return text, [_rand(1, 64, 56, 56), _rand(64, 64, 3, 3)], im2col


def _matmul() -> tuple[str, list[Any], Callable[[list[Any]], Any]]:
    text = f"""
func.func @main(%a: tensor<{N}x{N}xf32>, %b: tensor<{N}x{N}xf32>) -> tensor<{N}x{N}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{N}x{N}xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<{N}x{N}xf32>) -> tensor<{N}x{N}xf32>
  %c = linalg.matmul ins(%a, %b : tensor<{N}x{N}xf32>, tensor<{N}x{N}xf32>) outs(%z : tensor<{N}x{N}xf32>) -> tensor<{N}x{N}xf32>
  return %c : tensor<{N}x{N}xf32>
}}"""
    return text, [_rand(N, N), _rand(N, N)], lambda x: x[0] @ x[1]


def _rand(*shape: int) -> Any:
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


CASES: dict[str, tuple[Callable[[], tuple[str, list[Any], Callable[[list[Any]], Any]]], float]] = {
    "elementwise": (_elementwise, 1.0),
    "broadcast": (_broadcast, 1.0),
    "softmax": (_softmax, 0.5),
    "layernorm": (_layernorm, 0.5),
    "conv_2d_nchw_fchw": (_conv, 0.25),
    "attention": (_attention, 0.3),
    "matmul": (_matmul, 0.35),
}
"""Name -> (program, inputs and NumPy's way; the goal ratio NumPy / devplan)."""


WARM_UP = 10
"""Untimed runs before the timed ones, of devplan and of NumPy alike: the first few warm
runs of a program are slower (the blocks of its buffers first faulted in and then kept
for reuse, Numba's thread pool started), up to 3x for the elementwise case."""


def median(fn: Callable[[], object], repeat: int) -> float:
    """The median wall time of `repeat` runs of `fn`, after `WARM_UP` untimed ones."""
    for _ in range(WARM_UP):
        fn()
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated case names")
    args = parser.parse_args()
    os.environ["DEVPLAN_CACHE_DIR"] = tempfile.mkdtemp(prefix="level1-ops-")  # cold compiles

    chosen = [c for c in args.only.split(",") if c] or list(CASES)
    print(f"level-1 ops, numba backend, median of {args.repeat} (ms); ratio = NumPy / devplan")
    print(
        f"{'case':>20} {'devplan':>10} {'numpy':>10} {'ratio':>7} {'goal':>6} {'kernels':>8} {'cold 1st run (s)':>17}"
    )
    first_compiles: dict[str, float] = {}  # a kernel two cases share compiles in the first
    for name in chosen:
        make, goal = CASES[name]
        for kernel, seconds in measure(name, make, goal, args.repeat).items():
            first_compiles.setdefault(kernel, seconds)
    compiles = sorted(first_compiles.values())
    quartiles = statistics.quantiles(compiles, n=4) if len(compiles) > 1 else compiles * 3
    print(
        f"cold compile of each of {len(compiles)} distinct kernels (s): min {compiles[0]:.1f}, "
        f"quartiles {quartiles[0]:.1f} / {quartiles[1]:.1f} / {quartiles[2]:.1f}, "
        f"max {compiles[-1]:.1f} (goal: median <= 5 s)"
    )
    print("  " + " ".join(f"{c:.1f}" for c in compiles))


def measure(
    name: str,
    make: Callable[[], tuple[str, list[Any], Callable[[list[Any]], Any]]],
    goal: float,
    repeat: int,
) -> dict[str, float]:
    """Print one row of the table (see the header); return the cold compile time of each
    of the case's kernels (seconds), by kernel name."""
    import devplan
    from devplan.runtime import compile_clock
    from devplan.runtime.executor import Program

    text, inputs, numpy_way = make()
    lowered = devplan.apply(devplan.parse(text), "default-pipeline")
    kernels = str(lowered).count("kernel.func @")
    program = Program(lowered, "numba")
    compiled_before = len(compile_clock.compiles())
    start = time.perf_counter()
    first = program.run(inputs)
    cold = time.perf_counter() - start
    compile_blocks = compile_clock.compiles()[compiled_before:]
    np.testing.assert_allclose(first.outputs[0], numpy_way(inputs), rtol=2e-3, atol=2e-3)
    ours = median(lambda: program.run(inputs), repeat)
    theirs = median(lambda: numpy_way(inputs), repeat)
    print(
        f"{name:>20} {ours * 1e3:>10.2f} {theirs * 1e3:>10.2f} {theirs / ours:>6.2f}x "
        f"{goal:>5.2f}x {kernels:>8} {cold:>17.1f}",
        flush=True,
    )
    return compile_seconds(compile_blocks)


def compile_seconds(blocks: list[tuple[str, float]]) -> dict[str, float]:
    """Seconds of compile clock per kernel, from its blocks (`compiling kernel @name for
    cpu:0 (numba)`, `..., in parallel`), by kernel name."""
    seconds: dict[str, float] = {}
    for what, spent in blocks:
        found = re.search(r"kernel (@[^ ,]+)", what)
        if found is not None:
            seconds[found.group(1)] = seconds.get(found.group(1), 0.0) + spent
    return seconds


if __name__ == "__main__":
    main()
