"""Pipelines (passes/pipeline.py, default-pipeline): MLIR's anchored form, and each pass
run inside a progress block named after it."""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import AbstractContextManager, contextmanager

import pytest

import devplan
from devplan.diagnostics import DevplanError
from devplan.passes import default_pipeline, pipeline
from devplan.passes.pipeline import unanchored

LEVEL1 = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""


@pytest.mark.parametrize(
    ("spec", "plain"),
    [
        ("builtin.module(a,b{x=1})", "a,b{x=1}"),
        (' builtin.module( a{s="(x)"} ) ', ' a{s="(x)"} '),
        ("builtin.module()", ""),
        ("a,b{x=1}", "a,b{x=1}"),
    ],
)
def test_builtin_module_anchor_is_unwrapped(spec: str, plain: str) -> None:
    assert unanchored(spec) == plain


def test_other_anchors_are_errors() -> None:
    with pytest.raises(DevplanError, match=r"anchored on 'func\.func'"):
        unanchored("func.func(canonicalize)")


def recording(names: list[str]) -> Callable[..., AbstractContextManager[None]]:
    @contextmanager
    def record(what: str, delay: float = 1.0) -> Generator[None]:
        names.append(what)
        yield

    return record


def test_each_pass_of_a_pipeline_runs_inside_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    names: list[str] = []
    monkeypatch.setattr(pipeline, "progress", recording(names))
    devplan.apply(devplan.parse(LEVEL1), "builtin.module(plan-devices,elide-copies)")
    assert names == ["running pass 'plan-devices'", "running pass 'elide-copies'"]


def test_each_step_of_default_pipeline_runs_inside_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names: list[str] = []
    monkeypatch.setattr(default_pipeline, "progress", recording(names))
    devplan.apply(devplan.parse(LEVEL1), "default-pipeline")
    assert names == [f"running pass '{s.name}'" for s in default_pipeline.STEPS]
