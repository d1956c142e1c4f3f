"""`devplan.runtime.host.ops.HOST_OPS`: one table of host-code compilers, keyed by op class."""

from __future__ import annotations

from xdsl.dialects import arith, func, memref, scf, vector

from devplan.runtime.host.ops import HOST_OPS


def test_the_table_holds_every_dialect_and_the_runner_utilities() -> None:
    for op_class in (
        func.CallOp,
        arith.AddiOp,
        arith.AddfOp,
        scf.ForOp,
        memref.LoadOp,
        vector.PrintOp,
        vector.TransferReadOp,
    ):
        assert op_class in HOST_OPS, op_class.name


def test_a_subclass_of_an_upstream_op_finds_the_compiler_of_the_op_it_extends() -> None:
    class WiderCmpfOp(arith.CmpfOp):
        """As devplan's upstream/ versions of upstream ops are: a subclass, never a patch."""

    assert HOST_OPS.lookup(WiderCmpfOp) is HOST_OPS.lookup(arith.CmpfOp) is not None


def test_an_op_of_no_dialect_host_code_runs_has_no_compiler() -> None:
    assert HOST_OPS.lookup(func.FuncOp) is None
