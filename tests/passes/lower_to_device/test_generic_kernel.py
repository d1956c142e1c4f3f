# ruff: noqa: E501  (IR lines in test programs are long)
"""lower-to-device's `linalg.generic` kernels, run through `devplan.execute` against NumPy.

One program holds a generic of each kind of map and iterator the lowering accepts
(permutation, broadcast with a body of several ops, projection with a reduction, a
constant index, an affine sum, two outputs with `linalg.index`, a dynamic shape, the
matmul-like contraction, a full reduction to a rank-0 tensor, long reductions over one and
over two dimensions, which take a block of threads each), so each backend compiles its
kernels once. The expected values are NumPy's own expressions of the same computations,
not the oracle's (`reference/linalg.py` evaluates the generics too, and the fuzzer holds
the lowering to it).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import devplan
from devplan.diagnostics import DevplanError
from devplan.reference.program import evaluate

KINDS = """
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<4x6xf32>, %b: tensor<6xf32>, %sig: tensor<9xf32>, %w: tensor<3xf32>, %y: tensor<?x6xf32>, %long: tensor<2x1024xf32>)
    -> (tensor<6x4xf32>, tensor<4x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<?x6xf32>, tensor<4x4xf32>, tensor<f32>, tensor<2xf32>, tensor<f32>) {
  %t0 = tensor.empty() : tensor<6x4xf32>
  %perm = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%t0 : tensor<6x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<6x4xf32>
  %t1 = tensor.empty() : tensor<4x6xf32>
  %bcast = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> (d1)>, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x6xf32>, tensor<6xf32>) outs(%t1 : tensor<4x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %z : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %zero = arith.constant 0.0 : f32
  %t2 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%t2 : tensor<4xf32>) -> tensor<4xf32>
  %rowsum = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x6xf32>) outs(%z4 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %t3 = tensor.empty() : tensor<4xf32>
  %col0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4x6xf32>) outs(%t3 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %t4 = tensor.empty() : tensor<4x6xf32>
  %conv = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0 * 2 + d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sig, %w : tensor<9xf32>, tensor<3xf32>) outs(%t4 : tensor<4x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  %t5 = tensor.empty() : tensor<4x6xf32>
  %t6 = tensor.empty() : tensor<4x6xf32>
  %two:2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%t5, %t6 : tensor<4x6xf32>, tensor<4x6xf32>) {
  ^bb0(%a: f32, %o: f32, %p: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %m = arith.mulf %a, %f : f32
    linalg.yield %a, %m : f32, f32
  } -> tensor<4x6xf32>, tensor<4x6xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?x6xf32>
  %t7 = tensor.empty(%n) : tensor<?x6xf32>
  %dyn = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> (d1)>, #id2], iterator_types = ["parallel", "parallel"]} ins(%y, %b : tensor<?x6xf32>, tensor<6xf32>) outs(%t7 : tensor<?x6xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.mulf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<?x6xf32>
  %t8 = tensor.empty() : tensor<4x4xf32>
  %z44 = linalg.fill ins(%zero : f32) outs(%t8 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %perm : tensor<4x6xf32>, tensor<6x4xf32>) outs(%z44 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %t9 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%t9 : tensor<f32>) -> tensor<f32>
  %dot = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%sig, %sig : tensor<9xf32>, tensor<9xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %t10 = tensor.empty() : tensor<2xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%t10 : tensor<2xf32>) -> tensor<2xf32>
  %rowsums = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%long : tensor<2x1024xf32>) outs(%z2 : tensor<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.addf %o, %a : f32
    linalg.yield %m : f32
  } -> tensor<2xf32>
  %t11 = tensor.empty() : tensor<f32>
  %z1 = linalg.fill ins(%zero : f32) outs(%t11 : tensor<f32>) -> tensor<f32>
  %total = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%long : tensor<2x1024xf32>) outs(%z1 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.addf %o, %a : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %perm, %bcast, %rowsum, %col0, %conv, %two#0, %two#1, %dyn, %mm, %dot, %rowsums, %total : tensor<6x4xf32>, tensor<4x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<?x6xf32>, tensor<4x4xf32>, tensor<f32>, tensor<2xf32>, tensor<f32>
}
"""


def _inputs_and_expected() -> tuple[list[Any], list[Any]]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    sig = rng.standard_normal(9).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    y = rng.standard_normal((5, 6)).astype(np.float32)
    long = rng.random((2, 1024)).astype(np.float32)  # positive: sums far from 0
    strided = np.array([sum(sig[2 * i + k] * w[k] for k in range(3)) for i in range(4)])
    expected = [
        x.T,
        np.maximum(x + b, 0),
        x.sum(axis=1),
        x[:, 0],
        np.repeat(strided[:, None], 6, axis=1),
        x,
        x * np.arange(6, dtype=np.float32),
        y * b,
        x @ x.T,
        np.array(sig @ sig),
        long.sum(axis=1),
        np.array(long.sum()),
    ]
    return [x, b, sig, w, y, long], expected


# The numpy backend only: the numba backend is held to it kernel by kernel
# (tests/runtime/kernels/test_backend_agreement.py), and compiling these kernels with
# Numba costs ~45 CPU-s of a cold `make test`; mlp.mlir runs its generics on both.
@pytest.mark.parametrize("backend", ["numpy"])
def test_generic_of_every_map_kind_matches_numpy(backend: str) -> None:
    inputs, expected = _inputs_and_expected()
    lowered = str(devplan.apply(devplan.parse(KINDS), "default-pipeline"))
    # the long row sums, and the sum over both dimensions of the same rows
    assert lowered.count("kernel.func @block_add_f32_") == 2
    assert lowered.count("kernel.func @matmul_f32_rows8") == 1  # the contraction
    result = devplan.execute(devplan.parse(KINDS), inputs, kernel_backend=backend, strict=True)
    assert len(result.outputs) == len(expected)
    for i, (got, want) in enumerate(zip(result.outputs, expected, strict=True)):
        assert got.dtype == np.float32, i
        assert got.shape == want.shape, i
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"output {i}")


def test_three_unsupported_ops_are_three_located_errors() -> None:
    text = """
func.func @main(%x: tensor<4x6xf32>, %i: index) -> tensor<4xf32> {
  %t = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%t : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %e = tensor.cast %x : tensor<4x6xf32> to tensor<*xf32>
  %f = tensor.cast %e : tensor<*xf32> to tensor<4x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "window"]} ins(%x : tensor<4x6xf32>) outs(%t : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}
"""
    with pytest.raises(devplan.DevplanError) as raised:
        devplan.apply(devplan.parse(text), "default-pipeline")
    message = str(raised.value)
    assert message.count("error:") == 3
    assert "<string>:4:3: error: 'linalg.generic' is not lowered" in message
    assert "<string>:9:3: error: 'tensor.cast' from an unranked tensor is not lowered" in message
    assert (
        "<string>:10:3: error: 'linalg.generic' is not lowered by lower-to-device: iterator d1 is 'window'"
        in message
    )


def test_linalg_reduce_and_broadcast_lower_to_kernels_that_match_numpy() -> None:
    """`linalg.reduce` over two of three dimensions and `linalg.broadcast` adding a middle
    dimension run as kernels on cuda:0 (their generic forms: MLIR's maps)."""
    text = """
func.func @main(%a: tensor<2x4x3xf32>, %v: tensor<2x3xf32>) -> (tensor<4xf32>, tensor<2x5x3xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %lowest = arith.constant -3.0e38 : f32
  %init = linalg.fill ins(%lowest : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.reduce ins(%a : tensor<2x4x3xf32>) outs(%init : tensor<4xf32>) dimensions = [0, 2]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %eb = tensor.empty() : tensor<2x5x3xf32>
  %b = linalg.broadcast ins(%v : tensor<2x3xf32>) outs(%eb : tensor<2x5x3xf32>) dimensions = [1]
  %rd = vdev.on_device %r to #vdev.device<"cuda", 0> : tensor<4xf32>
  %bd = vdev.on_device %b to #vdev.device<"cuda", 0> : tensor<2x5x3xf32>
  return %rd, %bd : tensor<4xf32>, tensor<2x5x3xf32>
}
"""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 4, 3)).astype(np.float32)
    v = rng.standard_normal((2, 3)).astype(np.float32)
    lowered = str(devplan.apply(devplan.parse(text), "default-pipeline"))
    assert "linalg.reduce" not in lowered
    assert "linalg.broadcast" not in lowered
    assert lowered.count("device.launch") == 3  # the fill, the reduce, the broadcast
    result = devplan.execute(devplan.parse(text), [a, v], kernel_backend="numpy", strict=True)
    reduced, broadcast = result.outputs
    np.testing.assert_array_equal(reduced, a.max(axis=(0, 2)))
    np.testing.assert_array_equal(broadcast, np.broadcast_to(v[:, None, :], (2, 5, 3)))


def test_scalars_a_generic_body_captures_reach_its_kernel() -> None:
    """A body using a constant, a scalar argument and a scalar computed on the host from
    outside itself (as MLIR allows) runs on cuda:0 as the oracle computes it; a captured
    tensor stays a located error."""
    text = """
func.func @main(%x: tensor<5xf32>, %s: f32) -> tensor<5xf32> {
  %e = tensor.empty() : tensor<5xf32>
  %c = arith.constant 2.0 : f32
  %t = arith.mulf %s, %s : f32
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<5xf32>) outs(%e : tensor<5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %n = arith.addf %m, %s : f32
    %k = arith.subf %n, %t : f32
    linalg.yield %k : f32
  } -> tensor<5xf32>
  %g = vdev.on_device %r to #vdev.device<"cuda", 0> : tensor<5xf32>
  return %g : tensor<5xf32>
}
"""
    x = np.linspace(-2, 2, 5, dtype=np.float32)
    s = np.float32(0.75)
    result = devplan.execute(devplan.parse(text), [x, s], kernel_backend="numpy", strict=True)
    want = evaluate(devplan.parse(text), [x, s])[0]
    np.testing.assert_array_equal(result.outputs[0], want)
    np.testing.assert_array_equal(want, x * np.float32(2) + s - s * s)
    captured_tensor = text.replace(
        "%k = arith.subf %n, %t : f32", "%k = tensor.extract %x[%i] : tensor<5xf32>"
    ).replace("^bb0(%a: f32, %o: f32):", "^bb0(%a: f32, %o: f32):\n    %i = linalg.index 0 : index")
    with pytest.raises(
        DevplanError,
        match=r"<string>:6:3: error: 'linalg.generic' is not lowered.*'tensor.extract' uses a value defined outside",
    ):
        devplan.execute(devplan.parse(captured_tensor), [x, s], kernel_backend="numpy")


CONTRACTIONS = """
func.func @main(%a: tensor<BxMxKxf32>, %b: tensor<BxKxNxf32>, %bt: tensor<BxNxKxi32>, %ai: tensor<BxMxKxi32>, %o: tensor<BxMxNxf32>, %oi: tensor<BxMxNxi32>, %q: tensor<MxKxf64>, %k: tensor<NxKxf64>, %s: tensor<MxNxf64>)
    -> (tensor<BxMxNxf32>, tensor<BxMxNxi32>, tensor<MxNxf64>) {
  %m = linalg.batch_matmul ins(%a, %b : tensor<BxMxKxf32>, tensor<BxKxNxf32>) outs(%o : tensor<BxMxNxf32>) -> tensor<BxMxNxf32>
  %mt = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ai, %bt : tensor<BxMxKxi32>, tensor<BxNxKxi32>) outs(%oi : tensor<BxMxNxi32>) {
  ^bb0(%x: i32, %y: i32, %acc: i32):
    %p = arith.muli %y, %x : i32
    %r = arith.addi %p, %acc : i32
    linalg.yield %r : i32
  } -> tensor<BxMxNxi32>
  %qk = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : tensor<MxKxf64>, tensor<NxKxf64>) outs(%s : tensor<MxNxf64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %p = arith.mulf %x, %y : f64
    %r = arith.addf %acc, %p : f64
    linalg.yield %r : f64
  } -> tensor<MxNxf64>
  func.return %m, %mt, %qk : tensor<BxMxNxf32>, tensor<BxMxNxi32>, tensor<MxNxf64>
}
"""


@pytest.mark.parametrize("sizes", [(3, 11, 5, 9), (0, 4, 3, 2), (2, 3, 0, 4), (2, 9, 7, 0)])
def test_batched_and_transposed_contractions_run_the_matmul_kernel_as_the_oracle_computes(
    sizes: tuple[int, int, int, int],
) -> None:
    """batch_matmul, a batched `A B^T` in i32 (its body's operands in the other order) and
    `q k^T` in f64 each run the register-tiled kernel, also with no batches, no columns
    and no steps of k."""
    text = CONTRACTIONS
    for letter, size in zip("BMNK", sizes, strict=True):
        text = re.sub(rf"(?<=[<x]){letter}(?=x)", str(size), text)
    lowered = str(devplan.apply(devplan.parse(text), "default-pipeline"))
    for kernel in ("batch_matmul_f32", "batch_matmul_i32", "matmul_f64"):
        assert f"kernel.func @{kernel}_rows8(" in lowered
    b, m, n, k = sizes
    rng = np.random.default_rng(sum(sizes))
    inputs = [
        rng.standard_normal((b, m, k)).astype(np.float32),
        rng.standard_normal((b, k, n)).astype(np.float32),
        rng.integers(-9, 9, (b, n, k)).astype(np.int32),
        rng.integers(-9, 9, (b, m, k)).astype(np.int32),
        rng.standard_normal((b, m, n)).astype(np.float32),
        rng.integers(-9, 9, (b, m, n)).astype(np.int32),
        rng.standard_normal((m, k)),
        rng.standard_normal((n, k)),
        rng.standard_normal((m, n)),
    ]
    got = devplan.execute(devplan.parse(text), inputs, strict=True).outputs
    want = evaluate(devplan.parse(text), inputs)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12, atol=1e-12)


LAST = """
func.func @main(%x: tensor<4x?xf32>) -> tensor<4xf32> {
  %seven = arith.constant 7.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%seven : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %last = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x?xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  func.return %last : tensor<4xf32>
}
"""


@pytest.mark.parametrize("columns", [3, 0])
def test_a_reduction_whose_body_ignores_its_output_still_starts_from_the_init(
    columns: int,
) -> None:
    # each row's last element; a row with no elements keeps the init's 7
    x = np.arange(4 * columns, dtype=np.float32).reshape(4, columns)
    expected = x[:, -1] if columns else np.full(4, 7.0, np.float32)
    (got,) = devplan.execute(devplan.parse(LAST), [x], kernel_backend="numpy").outputs
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(evaluate(devplan.parse(LAST), [x])[0], expected)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_generic_over_static_rows_runs_as_rows_and_matches_numpy(backend: str) -> None:
    """An output of static rows of at least 32 runs as rows (the row a global id along x,
    the other parallel dimensions split from the global id along y): a transposing
    broadcast-add of rank 3, exact in f32."""
    text = """
func.func @main(%x: tensor<3x2x40xf32>, %b: tensor<40xf32>) -> tensor<2x3x40xf32> {
  %e = tensor.empty() : tensor<2x3x40xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %b : tensor<3x2x40xf32>, tensor<40xf32>) outs(%e : tensor<2x3x40xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x3x40xf32>
  return %r : tensor<2x3x40xf32>
}
"""
    lowered = str(devplan.apply(devplan.parse(text), "default-pipeline"))
    assert "kernel.thread_id y" in lowered
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 2, 40)).astype(np.float32)
    b = rng.standard_normal(40).astype(np.float32)
    result = devplan.execute(devplan.parse(text), [x, b], kernel_backend=backend, strict=True)
    np.testing.assert_array_equal(result.outputs[0], x.transpose(1, 0, 2) + b)
