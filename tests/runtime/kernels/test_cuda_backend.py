"""The `numba-cuda` kernel backend, under Numba's CUDA simulator: every example, shared
memory with barriers, atomics and faults agree with the `numpy` backend.

On a machine with an NVIDIA GPU, `DEVPLAN_CUDA_TESTS=gpu` runs the same cases on the GPU
instead of the simulator (the examples keep their reduced sizes).

The simulator must be switched on before Numba is first imported, so the programs run in
one subprocess (`numba_cuda_cases.py`, with NUMBA_ENABLE_CUDASIM=1) and the tests here
check what it reports; the rest of the suite never sees the variable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import support

from devplan.tools.run import main as devplan_run

TESTS = Path(__file__).resolve().parent
LEVEL_1_MODELS = {"transformer", "cnn", "split_batch"}
"""Level-1 models whose kernels the examples' tests hold to the oracle on the numpy backend
(tests/test_examples.py); under the simulator they add ~15 CPU-s of `make test` and no
kernel the other examples lack (`DEVPLAN_CUDA_TESTS=gpu` runs them on a real GPU)."""
EXAMPLES = sorted(
    p.stem
    for p in support.EXAMPLES.glob("*.mlir")
    if "func.func @main" in p.read_text()
    and (p.stem not in LEVEL_1_MODELS or os.environ.get("DEVPLAN_CUDA_TESTS") == "gpu")
)
CASES = [
    "contractions",
    "reverse",
    "views",
    "faults",
    "divergent",
    "atomics",
    "printf",
    "while",
    "cpu-backend-on-gpu",
    "ops",
    "ops-gpu-spellings",
    "kernels",
    "fresh-memory",
]


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every case and example's outcome on the numba-cuda and the numpy backends."""
    directory = tmp_path_factory.mktemp("numba_cuda")
    on_gpu = os.environ.get("DEVPLAN_CUDA_TESTS") == "gpu"
    env = {**os.environ} if on_gpu else {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    result = subprocess.run(
        [sys.executable, str(TESTS / "numba_cuda_cases.py"), str(directory), *CASES, *EXAMPLES],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads((directory / "cases.json").read_text())


ON_GPU = os.environ.get("DEVPLAN_CUDA_TESTS") == "gpu"
"""Whether the cases ran on a real GPU (`DEVPLAN_CUDA_TESTS=gpu`) instead of the simulator."""
RTOL = 1e-5 if ON_GPU else 1e-6
"""Outputs of the examples agree within this: on a GPU at f32's precision, since NVVM
contracts a multiply and an add into one FMA (one rounding instead of two) where the CPU
backends round twice; under the simulator (Python arithmetic) closer."""
GPU_MATH_ULPS = 4
"""On a GPU, `math` functions (other than sqrt, fma and the exact ones) agree with the CPU
backends within this many units in the last place: CUDA's libdevice documents maximum
errors of up to 4 ulps for the single-precision functions devplan uses (atan2f: 3), and
the CPU's libm is not always correctly rounded either (seen on an H100: the CPU's
atan2f gave 1.5707962513 for pi/2, the GPU the correctly rounded 1.5707963705)."""


def assert_outputs_agree(outcome: dict[str, Any]) -> None:
    cuda, numpy = outcome["numba-cuda"], outcome["numpy"]
    assert "error" not in cuda, cuda.get("error")
    assert "error" not in numpy, numpy.get("error")
    assert len(cuda["outputs"]) == len(numpy["outputs"])
    for got, want in zip(cuda["outputs"], numpy["outputs"], strict=True):
        # Sums taken in another order (a thread per element against NumPy's pairwise
        # reductions) differ by a few units of f32 relative to the terms summed; where
        # they cancel (a layer norm's centred values) that is large against the result, so
        # elements are also allowed that much of the output's largest magnitude.
        want_array = np.asarray(want)
        scale = float(np.max(np.abs(want_array))) if want_array.size else 0.0
        np.testing.assert_allclose(np.asarray(got), want_array, rtol=RTOL, atol=RTOL * scale)


def test_examples_are_all_covered() -> None:
    assert {"vector_add", "reduction", "matmul", "two_gpus", "mlp"} <= set(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_on_numba_cuda_agrees_with_the_numpy_backend(
    simulated: dict[str, Any], name: str
) -> None:
    assert_outputs_agree(simulated[name])


def test_contractions_on_the_matmul_kernel_agree_bit_for_bit(simulated: dict[str, Any]) -> None:
    """A convolution and `q k^T` (views, strided copies, the batched and 2-D matmul
    kernels on the cuda DeviceAPI): each step of k one `math.fma`, in one order."""
    outcome = simulated["contractions"]
    assert_outputs_agree(outcome)
    if not ON_GPU:
        assert outcome["numba-cuda"]["outputs"] == outcome["numpy"]["outputs"]


def test_shared_memory_with_a_barrier_reverses_each_block(simulated: dict[str, Any]) -> None:
    assert_outputs_agree(simulated["reverse"])
    (reversed_,) = simulated["reverse"]["numba-cuda"]["outputs"]
    assert reversed_ == [*range(7, -1, -1), *range(15, 7, -1)]


def test_views_on_the_cuda_device_api_agree_with_the_numpy_backend(
    simulated: dict[str, Any],
) -> None:
    assert_outputs_agree(simulated["views"])
    x = np.arange(48, dtype=np.float32).reshape(6, 8)
    _, view, on_host, _ = simulated["views"]["numba-cuda"]["outputs"]
    assert view == on_host == x[1:5:2, 1:7:2].tolist()


def test_rank_zero_memrefs_and_scalar_arguments(simulated: dict[str, Any]) -> None:
    assert_outputs_agree(simulated["scalars"])
    assert simulated["scalars"]["numba-cuda"]["outputs"] == [15.0]


def test_a_gpu_compiles_each_kernel_before_its_first_launch_on_the_compile_clock(
    simulated: dict[str, Any],
) -> None:
    """Its source is generated, then (on a GPU, not in the simulator, which runs the
    kernel's Python) numba-cuda compiles it for the launch's types in a block of its own,
    which prints the progress line and is kept out of the kernel's time."""
    for name in ("scalars", "coords", "index_switch"):
        compiles = simulated[name]["numba-cuda"]["compiles"]
        assert len(compiles) == (2 if ON_GPU else 1), (name, compiles)
        assert all(c.startswith("compiling kernel @") for c in compiles), compiles
        assert all(c.endswith("(numba-cuda)") for c in compiles), compiles


def test_thread_and_block_ids_and_dims_on_three_axes(simulated: dict[str, Any]) -> None:
    assert_outputs_agree(simulated["coords"])
    (out,) = simulated["coords"]["numba-cuda"]["outputs"]
    assert np.asarray(out).min() >= 2000  # every element written (grid z is 2)
    assert sorted(np.asarray(out).ravel().tolist()) == sorted(
        2000 + 1000 * b + t for b in range(12) for t in range(16)
    )


def test_index_switches_agree_with_the_numpy_backend(simulated: dict[str, Any]) -> None:
    assert_outputs_agree(simulated["index_switch"])
    _, out = simulated["index_switch"]["numba-cuda"]["outputs"]
    assert out == [1, 2, 333, 8, -1, 1 << 20, 7, -1]


def test_atomics_agree_with_the_numpy_backend(simulated: dict[str, Any]) -> None:
    assert_outputs_agree(simulated["atomics"])
    f, i, l_ = simulated["atomics"]["numba-cuda"]["outputs"]
    assert f == [9.0]  # 1 + 16 * 0.5
    assert i == [56, 1 << 16, 7, -1]  # sum of ids twice, 2**16, or of ids, maxu of -2..5
    assert l_ == [7, 57]


def test_first_fault_in_thread_order_is_reported_verbatim_as_on_the_numpy_backend(
    simulated: dict[str, Any],
) -> None:
    cuda = simulated["faults"]["numba-cuda"]["error"]
    assert cuda == simulated["faults"]["numpy"]["error"]
    assert cuda.startswith(
        "KernelError: <string>:22:5: error: in kernel @faulty: out-of-bounds store to "
        "argument 0 (%a): index [99] is outside shape (8) (block (1, 0, 0), thread (5, 0, 0))"
    )
    assert "note: @kernels::@faulty launched here on cuda:0" in cuda


def test_barrier_in_divergent_control_flow_is_the_numpy_backends_fault(
    simulated: dict[str, Any],
) -> None:
    cuda = simulated["divergent"]["numba-cuda"]["error"]
    assert cuda == simulated["divergent"]["numpy"]["error"]
    assert "'kernel.barrier' is in divergent control flow" in cuda
    assert "(block (0, 0, 0), thread (4, 0, 0))" in cuda


def test_printf_is_a_located_refusal(simulated: dict[str, Any]) -> None:
    assert simulated["printf"]["numba-cuda"]["error"].startswith(
        "KernelError: <string>:6:5: error: in kernel @hello: 'kernel.printf' is not "
        "supported by the numba-cuda backend"
    )


def test_scf_while_is_a_located_refusal(simulated: dict[str, Any]) -> None:
    assert simulated["while"]["numba-cuda"]["error"].startswith(
        "KernelError: <string>:8:5: error: in kernel @count: 'scf.while' is not "
        "supported by the numba-cuda backend"
    )
    assert "error" not in simulated["while"]["numpy"]


def test_cpu_backend_on_memory_of_the_cuda_device_api_is_a_located_error(
    simulated: dict[str, Any],
) -> None:
    message = simulated["cpu-backend-on-gpu"]["numpy"]["error"]
    assert message.startswith("LocatedError: /")
    assert message.split("/vector_add.mlir", 1)[1].startswith(
        ":42:3: error: 'device.launch' of @kernels::@add on cuda:0: the "
        "'numpy' kernel backend cannot run kernels on the memory of DeviceAPI 'cuda'; use "
        "kernel backend 'numba-cuda' (devplan-run --kernel-backend numba-cuda)"
    )


def test_new_buffers_and_reused_workspace_of_the_cuda_device_api_read_as_zeros(
    simulated: dict[str, Any],
) -> None:
    assert simulated["fresh-memory"] == {
        "new buffer": [0.0] * 16,
        "reused workspace": [0.0] * 16,
    }


def test_devplan_run_on_numba_cuda_without_gpu_or_simulator_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from numba import cuda  # this process has no simulator

    # As on a machine without an NVIDIA GPU, also where there is one.
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    example = str(support.EXAMPLES / "vector_add.mlir")
    assert devplan_run([example, "--random-args", "0", "--kernel-backend", "numba-cuda"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "error: kernel backend 'numba-cuda' needs an NVIDIA GPU and its driver "
        "(numba.cuda.is_available() is false), or Numba's CUDA simulator: set "
        "NUMBA_ENABLE_CUDASIM=1 in the environment to simulate one (slow; for testing)"
    )


def op_outputs(outcome: dict[str, Any], backend: str) -> Any:
    """The output of an elementwise op case on `backend`; for the CPU backends, computed
    here when the subprocess's numpy backend failed (the `numba` backend instead)."""
    result = outcome[backend]
    if backend == "numba-cuda" or "error" not in result:
        assert "error" not in result, result.get("error")
        return np.asarray(result["outputs"][0])
    import devplan
    from devplan.dialects.kernel import KernelFuncOp
    from devplan.runtime.kernels.compile import compile_kernel

    func = next(o for o in devplan.parse(outcome["kernel"]).walk() if isinstance(o, KernelFuncOp))
    a, b, result_type = outcome["inputs"]
    dtype = {"i32": np.int32, "i64": np.int64}[result_type]
    x, y, z = np.array(a, dtype), np.array(b, dtype), np.zeros(len(a), dtype)
    compile_kernel(func, "numba")((1, 1, 1), (len(a), 1, 1), [x, y, z])
    return z


def ulps_apart(got: np.ndarray[Any, Any], want: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """How many representable floats lie between `got` and `want`, element by element
    (0 where both are NaN: NaN payloads are not compared)."""
    bits = {4: np.int32, 8: np.int64}[got.dtype.itemsize]
    ordered = [np.where(v.view(bits) < 0, np.iinfo(bits).min - v.view(bits), v.view(bits))
               for v in (got, want)]  # fmt: skip
    apart = np.abs(ordered[0].astype(np.float64) - ordered[1].astype(np.float64))
    return np.where(np.isnan(got) & np.isnan(want), 0, apart)


EXACT_MATH = {"math.sqrt", "math.fma", "math.absf", "math.copysign", "math.ceil", "math.floor",
              "math.round", "math.roundeven", "math.trunc"}  # fmt: skip
"""`math` ops every backend computes exactly (correctly rounded, or exact)."""


def test_every_scalar_op_agrees_with_the_cpu_backends(simulated: dict[str, Any]) -> None:
    """NaN, infinities, signed zeros and integer extremes included; bit for bit (on a GPU,
    its approximate `math` functions within `GPU_MATH_ULPS`)."""
    for name, outcome in simulated["ops"].items():
        got, want = op_outputs(outcome, "numba-cuda"), op_outputs(outcome, "numpy")
        op, type_ = name.split()[:2]
        float_type = {"f32": np.float32, "f64": np.float64}.get(type_)
        if ON_GPU and op.startswith("math.") and op not in EXACT_MATH and float_type:
            apart = ulps_apart(got.astype(float_type), want.astype(float_type))
            assert apart.max(initial=0) <= GPU_MATH_ULPS, (name, got, want)
            continue
        np.testing.assert_array_equal(got, want, err_msg=name)
    assert len(simulated["ops"]) > 140


def test_gpu_spellings_of_float_ops_agree_within_a_few_ulps(simulated: dict[str, Any]) -> None:
    """The `math` spellings a real GPU compiles, run as Python by the simulator on ordinary
    inputs: they round through float64, so f32 results may differ in the last bit."""
    for name, outcome in simulated["ops-gpu-spellings"].items():
        got, want = op_outputs(outcome, "numba-cuda"), op_outputs(outcome, "numpy")
        np.testing.assert_allclose(got, want, rtol=4 * 2.0**-23, atol=0, err_msg=name)
    assert len(simulated["ops-gpu-spellings"]) == 24


def test_simulated_launches_switch_threads_often_and_restore_the_interval() -> None:
    """Under the simulator a launch runs with Python's switch interval at most
    `SIMULATOR_SWITCH_SECONDS` (a simulated thread that compiles otherwise waits 5 ms
    for the GIL at each of llvmlite's calls), and gives back the interval it found; a
    smaller interval set by the process is kept."""
    from devplan.runtime.kernels import cuda_backend

    before = sys.getswitchinterval()
    try:
        for given, inside in ((5e-3, cuda_backend.SIMULATOR_SWITCH_SECONDS), (1e-5, 1e-5)):
            sys.setswitchinterval(given)
            with cuda_backend._switching_often():  # pyright: ignore[reportPrivateUsage]
                assert sys.getswitchinterval() == pytest.approx(inside)
            assert sys.getswitchinterval() == pytest.approx(given)
    finally:
        sys.setswitchinterval(before)
