# ruff: noqa: E501  (IR lines in test programs are long)
"""Contractions on the register-tiled matmul kernel (`lower_to_device/contraction.py`).

One generated test draws contractions of every form the lowering maps onto the kernel
(convolutions in both layouts, strided and dilated, with one image or two; `q k^T`, also
batched; a read at a `mod` that only a copy kernel packs; an accumulator that is a
strided slice, or a function argument) and holds each to the oracle at f32's precision
and the lowering to the matmul kernel (no generic kernel of the multiply-add). The NHWC
convolutions into a zero fill also run on the numba backend, bit for bit as on the numpy
backend: the examples compile the kernel for their kinds of arguments (row-major,
writable but for B) already, and each other kind (a batch, a strided or read-only
accumulator or A) is another Numba compilation of it, up to a minute of `make test`
each. The other forms are held to the numpy backend under the CUDA simulator
(`tests/runtime/kernels/test_cuda_backend.py`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import devplan
from devplan.reference.program import evaluate


def _t(*shape: int) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


BODY = """ {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }"""


Form = tuple[str, list[tuple[int, ...]], tuple[int, ...], bool]
"""Op text over %in0, %in1 and %init; the inputs' shapes; the init's shape; whether it
is an NHWC convolution (see the module docstring)."""


def _conv(draw: st.DrawFn) -> Form:
    n, c, f = draw(st.integers(1, 2)), draw(st.integers(1, 4)), draw(st.integers(1, 10))
    k, s, d = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    o = draw(st.integers(1, 5))
    h = (o - 1) * s + d * (k - 1) + 1
    attrs = f"{{dilations = dense<{d}> : tensor<2xi64>, strides = dense<{s}> : tensor<2xi64>}}"
    if draw(st.booleans()):
        shapes, out = [(n, c, h, h), (f, c, k, k)], (n, f, o, o)
        name = "conv_2d_nchw_fchw"
    else:
        shapes, out = [(n, h, h, c), (k, k, c, f)], (n, o, o, f)
        name = "conv_2d_nhwc_hwcf"
    text = f"linalg.{name} {attrs} ins(%in0, %in1 : {_t(*shapes[0])}, {_t(*shapes[1])}) outs(%init : {_t(*out)}) -> {_t(*out)}"
    return text, shapes, out, name == "conv_2d_nhwc_hwcf"


def _q_k_transposed(draw: st.DrawFn) -> Form:
    m, n, k = draw(st.integers(1, 20)), draw(st.integers(1, 20)), draw(st.integers(1, 9))
    batch: tuple[int, ...] = (draw(st.integers(1, 3)),) if draw(st.booleans()) else ()
    b = ["d0"] if batch else []
    dims = [*b, *(f"d{i + len(b)}" for i in range(3))]
    i, j, r = dims[-3:]
    loops = f"({', '.join(dims)})"
    maps = [f"affine_map<{loops} -> ({', '.join([*b, i, r])})>",
            f"affine_map<{loops} -> ({', '.join([*b, j, r])})>",
            f"affine_map<{loops} -> ({', '.join([*b, i, j])})>"]  # fmt: skip
    iterators = ", ".join(['"parallel"'] * (len(dims) - 1) + ['"reduction"'])
    shapes = [(*batch, m, k), (*batch, n, k)]
    out = (*batch, m, n)
    text = (
        f"linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{iterators}]}} "
        f"ins(%in0, %in1 : {_t(*shapes[0])}, {_t(*shapes[1])}) outs(%init : {_t(*out)}){BODY} -> {_t(*out)}"
    )
    return text, shapes, out, False


def _modular(draw: st.DrawFn) -> Form:
    """B read at `d2 mod n`: no strided view, packed by a copy kernel."""
    m, n, k = draw(st.integers(1, 12)), draw(st.integers(1, 12)), draw(st.integers(1, 9))
    rows = draw(st.integers(1, k))
    maps = "affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2 mod ROWS, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>"
    text = (
        f"linalg.generic {{indexing_maps = [{maps.replace('ROWS', str(rows))}], iterator_types = "
        f'["parallel", "parallel", "reduction"]}} ins(%in0, %in1 : {_t(m, k)}, {_t(rows, n)}) '
        f"outs(%init : {_t(m, n)}){BODY} -> {_t(m, n)}"
    )
    return text, [(m, k), (rows, n)], (m, n), False


@st.composite
def contractions(draw: st.DrawFn) -> tuple[str, list[Any], bool]:
    """A program of one contraction, its inputs, and whether to run it on numba too."""
    form = draw(st.sampled_from([_conv, _conv, _conv, _q_k_transposed, _q_k_transposed, _modular]))
    op, shapes, out, plain = form(draw)
    init = draw(st.sampled_from(["zero", "zero", "argument", "slice"]))
    args = [f"%in{i}: {_t(*s)}" for i, s in enumerate(shapes)]
    lines = []
    if init == "zero":
        lines += [f"  %e = tensor.empty() : {_t(*out)}",
                  "  %zero = arith.constant 0.0 : f32",
                  f"  %init = linalg.fill ins(%zero : f32) outs(%e : {_t(*out)}) -> {_t(*out)}"]  # fmt: skip
    elif init == "argument":
        args.append(f"%init: {_t(*out)}")
        shapes = [*shapes, out]
    else:  # every other element of the last dimension of a wider argument
        wide = (*out[:-1], 2 * out[-1])
        args.append(f"%wide: {_t(*wide)}")
        shapes = [*shapes, wide]
        rank = len(out)
        lines.append(
            f"  %init = tensor.extract_slice %wide[{', '.join(['0'] * rank)}] "
            f"[{', '.join(map(str, out))}] [{', '.join(['1'] * (rank - 1) + ['2'])}] : "
            f"{_t(*wide)} to {_t(*out)}"
        )
    lines += [f"  %r = {op}", f"  return %r : {_t(*out)}"]
    text = f"func.func @main({', '.join(args)}) -> {_t(*out)} {{\n" + "\n".join(lines) + "\n}\n"
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return text, inputs, plain and init == "zero"


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(contractions())
def test_contractions_run_the_matmul_kernel_as_the_oracle_computes(
    case: tuple[str, list[Any], bool],
) -> None:
    text, inputs, on_numba = case
    lowered = str(devplan.apply(devplan.parse(text), "default-pipeline"))
    assert "matmul_f32_rows8 on" in lowered, lowered
    assert "kernel.func @mul_add" not in lowered, lowered
    want = evaluate(devplan.parse(text), inputs)[0]
    backends = ("numpy", "numba") if on_numba else ("numpy",)
    got = {
        backend: devplan.execute(devplan.parse(text), inputs, kernel_backend=backend, strict=True)
        for backend in backends
    }
    assert got["numpy"].leaks == []
    if on_numba:
        np.testing.assert_array_equal(got["numba"].outputs[0], got["numpy"].outputs[0])
    # Both sum at most 36 products in f32, in their own orders: each within 36 units of
    # f32 rounding of the sum of the terms' magnitudes (the oracle on |inputs|).
    magnitude = evaluate(devplan.parse(text), [np.abs(x) for x in inputs])[0]
    error = np.abs(got["numpy"].outputs[0].astype(np.float64) - want)
    assert np.all(error <= 2 * 36 * float(np.finfo(np.float32).eps) * magnitude)


def test_matmul_blocks_are_all_the_columns_or_divide_them_evenly() -> None:
    from devplan.passes.lower_to_device.contraction import matmul_threads

    assert matmul_threads(24, 1024) == 24  # a narrow result: no idle threads
    assert matmul_threads(1024, 1024) == 1024
    assert matmul_threads(54 * 54, 1024) == 972  # a conv's pixels: 3 blocks, none ragged
    assert matmul_threads(1100, 1024) == 550
    assert matmul_threads(1031, 1024) == 256  # a prime: the last block is ragged
    assert matmul_threads(2000, 64) == 64  # no divisor as wide as the block
    assert matmul_threads(5000, 1024) == 1000


def test_matmul_blocks_widen_past_256_columns_on_a_cpu_only() -> None:
    from devplan.passes.lower_to_device.contraction import matmul_columns

    assert matmul_columns(devplan.Target("llvm")) == 1024
    assert matmul_columns(devplan.Target("cuda")) == 256  # registers: see matmul_columns
    assert matmul_columns(devplan.Target("rocm")) == 256


def test_a_matmul_in_blocks_that_divide_its_columns_agrees_across_backends() -> None:
    m, k, n = 9, 6, 1100  # two blocks of 550 columns, and a ragged tile of rows
    text = f"""func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>, %c: tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %r = linalg.matmul ins(%a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%c : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %r : tensor<{m}x{n}xf32>
}}
"""
    lowered = str(devplan.apply(devplan.parse(text), "default-pipeline"))
    launch = next(line for line in lowered.splitlines() if "matmul_f32_rows8 on" in line)
    threads = launch.split("block(")[1].split(",")[0]
    assert f"{threads} = arith.constant 550 : index" in lowered, lowered
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (m, n))]
    got = [
        devplan.execute(devplan.parse(text), inputs, kernel_backend=backend, strict=True)
        for backend in ("numpy", "numba")
    ]
    np.testing.assert_array_equal(got[1].outputs[0], got[0].outputs[0])
    a, b, c = (x.astype(np.float64) for x in inputs)
    np.testing.assert_allclose(got[0].outputs[0], c + a @ b, rtol=1e-5, atol=1e-5)
