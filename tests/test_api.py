"""The embedding API: devplan.context / parse / apply."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp

import devplan


def test_parse_stamps_file_line_col_on_every_op() -> None:
    module = devplan.parse("func.func @f() {\n  func.return\n}\n")
    assert isinstance(module, ModuleOp)
    locations = [op.location for op in module.walk() if op is not module]
    assert all(isinstance(loc, FileLineColLoc) for loc in locations)
    ret = locations[-1]
    assert isinstance(ret, FileLineColLoc)
    assert (ret.line.data, ret.column.data) == (2, 3)


def test_parse_error_is_one_located_message() -> None:
    with pytest.raises(devplan.DevplanError) as info:
        devplan.parse("func.func @f() {\n  %x = arith.bogus : i32\n}\n")
    text = str(info.value)
    assert text.splitlines()[0] == "<string>:2:8: error: Operation arith.bogus is not registered"
    assert text.splitlines()[2] == "       ^^^^^^^^^^^"


def test_parse_reads_a_path(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "f.mlir"
    path.write_text("func.func @g() {\n  func.return\n}\n")
    module = devplan.parse(path)
    func = next(iter(module.ops))
    assert isinstance(func.location, FileLineColLoc)
    assert func.location.filename.data == str(path)


def test_apply_unknown_pass_is_a_user_error() -> None:
    module = devplan.parse("func.func @f() {\n  func.return\n}\n")
    with pytest.raises(devplan.DevplanError) as info:
        devplan.apply(module, "no-such-pass")
    assert str(info.value) == (
        "error: unknown pass 'no-such-pass'; `devplan-opt --help` lists every pass"
    )


def test_apply_runs_an_xdsl_pipeline() -> None:
    module = devplan.parse(
        "func.func @f() -> i32 {\n  %a = arith.constant 1 : i32\n  %b = arith.constant 2 : i32\n"
        "  %c = arith.addi %a, %b : i32\n  func.return %c : i32\n}\n"
    )
    devplan.apply(module, "canonicalize")
    assert "arith.constant 3 : i32" in str(module)
