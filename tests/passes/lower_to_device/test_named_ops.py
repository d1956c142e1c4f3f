"""Every named linalg op (`support.named_linalg_ops.CASES`: MLIR's contractions,
convolutions and poolings, the elementwise ops, mixed element types), lowered by
lower-to-device through its generic form and run, against the oracle.

All the cases are one `@main` (each op reads its own arguments and returns its result),
so the pipeline and the run are paid once; the numpy backend runs the kernels (the numba
backend is held to it kernel by kernel in `tests/runtime/kernels/test_backend_agreement.py`).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from support.named_linalg_ops import CASES, program, value

import devplan
from devplan.reference.program import evaluate


def _one_main() -> tuple[str, list[object]]:
    """The cases' `@main`s as one, their SSA names made distinct, and its inputs."""
    params: list[str] = []
    results: list[str] = []
    types: list[str] = []
    body: list[str] = []
    inputs: list[object] = []
    for i, case in enumerate(CASES):
        header, op, ret, _ = program(case).split("\n")
        rename = lambda text, i=i: re.sub(r"%(a\d+|o|r)\b", rf"%c{i}_\1", text)  # noqa: E731
        params.append(rename(header[header.index("(") + 1 : header.index(") ->")]))
        body.append(rename(op))
        results.append(f"%c{i}_r")
        types.append(ret.rsplit(" : ", 1)[1])
        rng = np.random.default_rng(len(case.op) + len(case.ins))
        inputs += [value(case, s, rng) for s in (*case.ins, case.out)]
    text = (
        f"func.func @main({', '.join(params)}) -> ({', '.join(types)}) {{\n"
        + "\n".join(body)
        + f"\n  func.return {', '.join(results)} : {', '.join(types)}\n}}\n"
    )
    return text, inputs


def _assert_agrees(got: Any, want: Any, what: str) -> None:
    assert got.dtype == want.dtype, what
    assert got.shape == want.shape, what
    if want.dtype.kind == "f":
        rtol = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5}[want.dtype]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def test_every_named_op_lowers_runs_and_computes_what_the_oracle_computes() -> None:
    text, inputs = _one_main()
    lowered = str(devplan.apply(devplan.parse(text), "default-pipeline"))
    assert "linalg." not in lowered  # every op became a kernel
    result = devplan.execute(devplan.parse(text), inputs, strict=True)
    expected = evaluate(devplan.parse(text), inputs)
    assert len(result.outputs) == len(expected) == len(CASES)
    for case, got, want in zip(CASES, result.outputs, expected, strict=True):
        _assert_agrees(np.asarray(got), np.asarray(want), f"linalg.{case.op} {case.ins}")
