"""The tensor programs users write (`tests/support/linalg_programs.py`) parse, verify and
evaluate in the oracle, each giving one value known without the oracle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
import pytest
from support.linalg_programs import PROGRAMS
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType

import devplan
from devplan.analysis.dtypes import numpy_dtype
from devplan.reference.program import evaluate

Array = np.ndarray[Any, Any]


def _inputs(text: str, seed: int = 0) -> list[Array]:
    module = devplan.parse(text)
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    rng = np.random.default_rng(seed)
    inputs: list[Array] = []
    for type_ in main.function_type.inputs.data:
        tensor = cast(TensorType[Any], type_)
        dtype = numpy_dtype(tensor.element_type)
        shape = tuple(d if d >= 0 else 5 for d in tensor.get_shape())  # 5 rows where dynamic
        if dtype.kind == "i":
            inputs.append(rng.integers(-100, 100, shape).astype(dtype))
        else:
            inputs.append(rng.standard_normal(shape).astype(dtype))
    return inputs


def _mlp(x: Array, w: Array, b: Array) -> Array:
    return np.maximum(x @ w + b, 0)


def _softmax(x: Array) -> Array:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _layernorm(x: Array, gamma: Array, beta: Array) -> Array:
    mean = x.mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5) * gamma + beta


def _attention(q: Array, k: Array, v: Array) -> Array:
    return _softmax(q @ k.T * 0.5) @ v


def _conv_relu(x: Array, w: Array) -> Array:
    out = np.zeros((1, 4, 6, 6), np.float64)
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,fc->nfhw", x[:, :, i : i + 6, j : j + 6], w[:, :, i, j])
    return np.maximum(out, 0)


def _max_pool(x: Array) -> Array:
    return x.reshape(1, 2, 3, 2, 3, 2).max(axis=(3, 5))


def _gelu_transposed(x: Array) -> Array:
    t = x.T
    return 0.5 * t * (1 + np.tanh(0.7978845608028654 * (t + 0.044715 * t**3)))


EXPECTED: dict[str, tuple[Callable[..., Array], float]] = {
    "mlp_broadcast_bias_relu": (_mlp, 1e-5),
    "softmax": (_softmax, 1e-5),
    "layernorm": (_layernorm, 1e-12),
    "attention": (_attention, 1e-12),
    "conv_2d_nchw_fchw_relu": (_conv_relu, 1e-5),
    "max_pool": (_max_pool, 0.0),
    "batch_matmul": (np.matmul, 1e-12),
    "gelu_transposed": (_gelu_transposed, 1e-12),
    "matmul_i8_i32": (lambda a, b: a.astype(np.int32) @ b.astype(np.int32), 0.0),
    "column_sum": (lambda x: x.sum(axis=0), 0.0),
    "transpose_broadcast_add_exp": (lambda x, b: np.exp(x.T + b), 1e-5),
    "dynamic_rows_relu": (lambda x: np.maximum(x, 0), 0.0),
}


def test_every_program_has_a_known_value() -> None:
    assert set(EXPECTED) == set(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_evaluates_to_its_known_value(name: str) -> None:
    inputs = _inputs(PROGRAMS[name])
    (out,) = evaluate(devplan.parse(PROGRAMS[name]), list(inputs))
    expected_fn, rtol = EXPECTED[name]
    expected = expected_fn(*(i.astype(np.float64) if i.dtype.kind == "f" else i for i in inputs))
    assert out.shape == expected.shape
    if rtol == 0.0:
        np.testing.assert_array_equal(out, expected)
    else:
        np.testing.assert_allclose(out, expected, rtol=rtol, atol=rtol)


def test_softmax_rows_sum_to_one() -> None:
    (out,) = evaluate(devplan.parse(PROGRAMS["softmax"]), list(_inputs(PROGRAMS["softmax"], 1)))
    np.testing.assert_allclose(out.sum(axis=1), np.ones(4), rtol=1e-6)
