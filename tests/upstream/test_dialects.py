"""The contexts devplan builds load devplan's version of every upstream dialect it
replaces (`devplan.upstream.DIALECTS`), in place of xDSL's; the xdsl-opt plugin names none
of them, since xDSL's multiverse refuses a dialect name that two universes define."""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, gpu, tensor
from xdsl.universe import Universe

import devplan
from devplan.tools.opt import DevplanOptMain
from devplan.universe import UNIVERSE
from devplan.upstream import DIALECTS
from devplan.upstream.arith import CmpfOp
from devplan.upstream.gpu import LaunchOp
from devplan.upstream.tensor import EmptyOp


def _contexts() -> list[tuple[str, Context]]:
    return [("devplan.context()", devplan.context()), ("devplan-opt", DevplanOptMain([]).ctx)]


@pytest.mark.parametrize("name", sorted(DIALECTS))
def test_every_context_loads_devplans_version_of_a_replaced_dialect(name: str) -> None:
    dialect = DIALECTS[name]()
    for context_name, ctx in _contexts():
        loaded = {op.name: op for op in ctx.get_dialect(name).operations}
        wrong = [op.name for op in dialect.operations if loaded.get(op.name) is not op]
        assert wrong == [], f"{context_name} loads xDSL's {wrong}"


def test_devplans_ops_are_xdsls_ops_too() -> None:
    assert issubclass(CmpfOp, arith.CmpfOp)
    assert issubclass(EmptyOp, tensor.EmptyOp)
    assert issubclass(LaunchOp, gpu.LaunchOp)


def test_the_plugin_universe_replaces_no_upstream_dialect() -> None:
    assert set(UNIVERSE.all_dialects) & set(DIALECTS) == set()
    Universe.get_multiverse()  # raises on a dialect name two universes define
