"""The ops the kernel dialect promises every backend compiles are the ops the backends
group by how they compile them, and every float op `semantics` defines."""

from __future__ import annotations

from devplan.dialects.kernel import SUPPORTED_OPS
from devplan.runtime import semantics
from devplan.runtime.kernels.common import (
    BIT_OPS,
    CAST_OPS,
    FLOAT_ARITH_OPS,
    INT_BINARY_OPS,
    OTHER_OPS,
)


def test_supported_ops_are_the_backends_op_groups() -> None:
    groups = INT_BINARY_OPS + FLOAT_ARITH_OPS + CAST_OPS + BIT_OPS + OTHER_OPS
    assert frozenset(groups) == SUPPORTED_OPS


def test_supported_ops_hold_every_float_op_of_semantics() -> None:
    assert semantics.FLOAT_OPS <= SUPPORTED_OPS
