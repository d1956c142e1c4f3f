"""Every program in examples/ runs on both kernel backends and agrees with NumPy.

Level-1 programs (tensors) run through default-pipeline and are checked against the
oracle, `devplan.reference.program.evaluate`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import devplan
from devplan.reference.program import evaluate
from devplan.runtime.executor import ExecutionResult, random_inputs

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

BACKENDS = ["numpy", "numba"]


def run_example(name: str, backend: str, seed: int = 0) -> tuple[list[Any], ExecutionResult]:
    module = devplan.parse(EXAMPLES / f"{name}.mlir")
    inputs = random_inputs(module, "main", seed)
    result = devplan.execute(module, inputs, kernel_backend=backend, strict=True)
    assert result.leaks == []
    return inputs, result


@pytest.mark.parametrize("backend", BACKENDS)
def test_vector_add_sums_on_cuda0_with_three_buffers_and_three_copies(backend: str) -> None:
    (a, b), result = run_example("vector_add", backend)
    np.testing.assert_array_equal(result.outputs[0], a + b)
    gpu = result.report.devices["cuda:0"]
    assert (gpu.launches, gpu.allocations, gpu.frees) == (1, 3, 3)
    assert gpu.peak_bytes["global"] == 3 * 1000 * 4
    link = result.report.links["cpu:0<->cuda:0"]
    assert (link.copies, link.bytes) == (3, 3 * 4000)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reduction_with_shared_memory_and_barriers(backend: str) -> None:
    (x,), result = run_example("reduction", backend)
    (total,) = result.outputs
    assert total.dtype == np.float32
    # The tree sums in a different order than numpy's pairwise sum.
    assert total == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5, abs=1e-4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiled_matmul_matches_numpy(backend: str) -> None:
    (a, b), result = run_example("matmul", backend)
    np.testing.assert_allclose(result.outputs[0], a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_gpus_exchange_data_device_to_device(backend: str) -> None:
    (a, b), result = run_example("two_gpus", backend)
    expected = np.float32(2) * a + np.float32(3) * b
    np.testing.assert_allclose(result.outputs[0], expected, rtol=1e-6)
    np.testing.assert_allclose(result.outputs[1], expected, rtol=1e-6)
    peer = result.report.links["cuda:0<->cuda:1"]
    assert (peer.copies, peer.bytes) == (2, 2 * 512 * 4)
    assert result.report.devices["cuda:0"].launches == 2
    assert result.report.devices["cuda:1"].launches == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_async_copies_overlap_kernels(backend: str) -> None:
    (a, b, k), result = run_example("async_overlap", backend)
    k32 = np.float32(k)
    np.testing.assert_array_equal(result.outputs[0], a * k32 + np.float32(1))
    np.testing.assert_array_equal(result.outputs[1], b * k32 + np.float32(1))
    report = result.report
    kernels = [s for s in report.slices if not s.track.startswith("copy ")]
    copies = [s for s in report.slices if s.track.startswith("copy ")]
    assert (len(kernels), len(copies)) == (2, 4)
    # Under the cost model some copy runs while a kernel runs, and the whole run takes
    # less than its parts one after another.
    assert any(c.start < g.end and g.start < c.end for c in copies for g in kernels)
    assert report.model_seconds < sum(s.end - s.start for s in report.slices)


LEVEL_1 = ["mlp", "smoothing"]
"""Level-1 examples run on both kernel backends."""

LEVEL_1_MODELS = ["transformer", "cnn", "split_batch"]
"""Level-1 examples run on the numpy backend only: each has a dozen or more distinct
kernels, and compiling them with Numba would cost minutes of `make test`; the numba
backend is held to the numpy one kernel by kernel in tests/runtime/kernels."""


def check_against_the_oracle(name: str, backend: str) -> ExecutionResult:
    module = devplan.parse(EXAMPLES / f"{name}.mlir")
    result = None
    for seed in (0, 1):
        inputs, result = run_example(name, backend, seed)
        (expected,) = evaluate(module, inputs)
        # f32 sums in another order than the oracle's: relative error of a few units of
        # f32's precision, against the largest value for those near zero.
        scale = float(np.max(np.abs(expected)))
        np.testing.assert_allclose(result.outputs[0], expected, rtol=1e-5, atol=1e-6 * scale)
    assert result is not None
    return result


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", LEVEL_1)
def test_level_1_examples_match_the_oracle(name: str, backend: str) -> None:
    check_against_the_oracle(name, backend)


def test_mlp_runs_each_layer_where_its_hint_puts_it() -> None:
    _, result = run_example("mlp", "numpy")
    devices = result.report.devices
    # layer 1 (fill, matmul, the broadcast bias) on cuda:0, the ReLU on the CPU,
    # layer 2 (fill, matmul) on cuda:1
    assert (devices["cuda:0"].launches, devices["cpu:0"].launches) == (3, 1)
    assert devices["cuda:1"].launches == 2
    assert result.report.links["cpu:0<->cuda:0"].copies >= 1
    assert result.report.links["cpu:0<->cuda:1"].copies >= 1


def test_transformer_block_matches_the_oracle_split_over_two_gpus_and_the_cpu() -> None:
    result = check_against_the_oracle("transformer", "numpy")
    devices, links = result.report.devices, result.report.links
    # attention (a layer norm, four matmuls, scores, softmax and their fills, and the
    # copy kernel that transposes k for the matmul kernel) on cuda:0; the MLP (a layer
    # norm, two matmuls, the GELU, fills) on cuda:1; the residuals on the CPU
    assert (devices["cuda:0"].launches, devices["cuda:1"].launches) == (17, 8)
    assert devices["cpu:0"].launches == 2
    # the two GPUs exchange nothing directly: each layer's input comes from the CPU's
    # residual, and its output goes back there
    assert links["cuda:0<->cuda:1"].copies == 0
    assert links["cpu:0<->cuda:0"].copies > 0
    assert links["cpu:0<->cuda:1"].copies > 0


def test_cnn_matches_the_oracle_with_features_on_cuda0_and_the_classifier_on_the_cpu() -> None:
    result = check_against_the_oracle("cnn", "numpy")
    devices = result.report.devices
    # two convolutions, two bias + ReLU, a max pooling, the average pooling (sum and
    # divide) and four fills on cuda:0; the classifier's fill and matmul on the CPU
    assert (devices["cuda:0"].launches, devices["cpu:0"].launches) == (11, 2)
    assert devices["cuda:1"].launches == 0


def test_split_batch_sends_each_gpu_its_half_and_concatenates_on_the_cpu() -> None:
    result = check_against_the_oracle("split_batch", "numpy")
    links, devices = result.report.links, result.report.devices
    # Per GPU: the weights (8 KiB) and its half of the batch (1 KiB, not the 2 KiB batch)
    # go there, its half of the result (512 B) comes back; the concat runs on the CPU.
    for gpu in ("cuda:0", "cuda:1"):
        assert (links[f"cpu:0<->{gpu}"].copies, links[f"cpu:0<->{gpu}"].bytes) == (3, 9728)
        assert devices[gpu].launches == 2  # fill, matmul
    assert links["cuda:0<->cuda:1"].copies == 0


def test_examples_directory_has_the_five_programs() -> None:
    names = sorted(p.stem for p in EXAMPLES.glob("*.mlir"))
    assert {"vector_add", "reduction", "matmul", "two_gpus", "async_overlap"} <= set(names)
    assert set(LEVEL_1) | set(LEVEL_1_MODELS) <= set(names)
