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


def test_parse_error_in_the_first_token_is_one_located_message() -> None:
    with pytest.raises(devplan.DevplanError) as info:
        devplan.parse("\ufefffunc.func @f() {\n  func.return\n}\n")
    assert str(info.value).splitlines()[0] == (
        "<string>:1:1: error: Unexpected character U+FEFF (a byte order mark: save the file "
        "without it)"
    )


def test_parse_reads_a_path(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "f.mlir"
    path.write_text("func.func @g() {\n  func.return\n}\n")
    module = devplan.parse(path)
    func = next(iter(module.ops))
    assert isinstance(func.location, FileLineColLoc)
    assert func.location.filename.data == str(path)


@pytest.mark.parametrize("source", ["examples/vectr_add.mlir", "vectr_add.mlir", "data/input"])
def test_parse_of_a_path_naming_no_file_says_no_such_file(source: str) -> None:
    with pytest.raises(devplan.DevplanError) as info:
        devplan.parse(source)
    assert str(info.value) == f"error: devplan.parse: no such file: {source}"


def test_parse_reads_a_path_given_as_a_string(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "program.ir"
    path.write_text("func.func @g() {\n  func.return\n}\n")
    func = next(iter(devplan.parse(str(path)).ops))
    assert isinstance(func.location, FileLineColLoc)
    assert func.location.filename.data == str(path)


@pytest.mark.parametrize(
    "text", ["func.func @f() { func.return }", '"test.op"() {file = "a/b.mlir"} : () -> ()']
)
def test_parse_of_one_line_of_ir_is_not_taken_for_a_path(text: str) -> None:
    assert isinstance(devplan.parse(text, verify=False), ModuleOp)


def test_parse_verify_must_be_a_bool() -> None:
    # verify=None skipped verification without a word, as verify=False does.
    with pytest.raises(devplan.DevplanError) as info:
        devplan.parse("func.func @f() {\n  func.return\n}\n", verify=None)  # type: ignore[arg-type]
    assert (
        str(info.value) == "error: devplan.parse: verify must be True or False, got NoneType None"
    )


def test_apply_unknown_pass_is_a_user_error() -> None:
    module = devplan.parse("func.func @f() {\n  func.return\n}\n")
    with pytest.raises(devplan.DevplanError) as info:
        devplan.apply(module, "no-such-pass")
    assert str(info.value) == (
        "error: unknown pass 'no-such-pass'; `devplan-opt --list-passes` lists every pass"
    )


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        (
            "elide-copies{stats=true stats=false}",
            "error: pass 'elide-copies' is given option 'stats' twice; give each option once",
        ),
        (
            "plan-devices{dynamic-size=1 strategy=cost dynamic_size=2}",
            "error: pass 'plan-devices' is given option 'dynamic-size' twice; "
            "give each option once",
        ),
    ],
)
def test_apply_an_option_given_twice_is_an_error_not_one_value_dropped(
    pipeline: str, message: str
) -> None:
    module = devplan.parse("func.func @f() {\n  func.return\n}\n")
    with pytest.raises(devplan.DevplanError) as info:  # xDSL kept one value silently
        devplan.apply(module, pipeline)
    assert str(info.value) == message


def test_apply_the_same_option_in_two_passes_is_fine() -> None:
    module = devplan.parse("func.func @f() {\n  func.return\n}\n")
    remarks: list[str] = []
    applied = devplan.apply(
        module, "elide-copies{stats=false},elide-copies{stats=false}", remarks=remarks
    )
    assert str(applied) == str(devplan.parse("func.func @f() {\n  func.return\n}\n"))
    assert remarks == []  # stats=false in both: no statistics


def test_apply_an_option_without_a_value_says_so() -> None:
    module = devplan.parse("func.func @f() {\n  func.return\n}\n")
    with pytest.raises(devplan.DevplanError) as info:  # it ended "expects bool, got "
        devplan.apply(module, "elide-copies{stats}")
    assert (
        str(info.value) == "error: pass 'elide-copies': option 'stats' expects bool, got no value"
    )


def test_apply_runs_an_xdsl_pipeline() -> None:
    module = devplan.parse(
        "func.func @f() -> i32 {\n  %a = arith.constant 1 : i32\n  %b = arith.constant 2 : i32\n"
        "  %c = arith.addi %a, %b : i32\n  func.return %c : i32\n}\n"
    )
    devplan.apply(module, "canonicalize")
    assert "arith.constant 3 : i32" in str(module)


LEVEL_1 = """func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %s = arith.addf %a, %b : tensor<8xf32>
  %g = vdev.on_device %s to #vdev.device<"cuda", 1> : tensor<8xf32>
  %p = arith.mulf %g, %a : tensor<8xf32>
  func.return %p : tensor<8xf32>
}
"""


def test_execute_runs_a_level_1_module_through_the_default_pipeline_without_changing_it() -> None:
    import numpy as np

    from devplan.execution import compile_program

    module = devplan.parse(LEVEL_1)
    before = str(module)
    a = np.arange(8, dtype=np.float32)
    b = np.full(8, 2, np.float32)
    result = devplan.execute(module, [a, b], strict=True)
    np.testing.assert_array_equal(result.outputs[0], (a + b) * a)
    assert result.report.devices["cuda:1"].launches == 2
    assert str(module) == before
    # Lowered once per module: another kernel backend reuses the lowered program.
    assert compile_program(module, "numba").module is compile_program(module, "numpy").module


def test_a_fault_at_run_time_of_a_level_1_program_points_at_its_source_line() -> None:
    import numpy as np

    module = devplan.parse(
        "func.func @main(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {\n"
        "  %q = arith.remsi %a, %b : tensor<4xi32>\n"
        "  func.return %q : tensor<4xi32>\n}\n"
    )
    with pytest.raises(devplan.DevplanError, match=r"^<string>:2:3: error: in kernel @remsi_i32"):
        devplan.execute(module, [np.ones(4, np.int32), np.array([1, 2, 0, 1], np.int32)])


def test_verification_reports_a_use_moved_above_its_definition_at_the_use() -> None:
    """IR a transform built with a use before its definition is the use's located error
    (with a note at the definition), not a crash when it runs."""
    module = devplan.parse(
        "func.func @f(%a: index) -> index {\n  %b = arith.addi %a, %a : index\n"
        "  func.return %b : index\n}\n"
    )
    block = next(iter(module.ops)).regions[0].block
    ret, first = block.last_op, block.first_op
    assert ret is not None
    assert first is not None
    ret.detach()
    block.insert_op_before(ret, first)
    with pytest.raises(devplan.DevplanError) as info:
        devplan.diagnostics.verify_located(module)
    lines = str(info.value).splitlines()
    assert lines[0] == (
        "<string>:3:3: error: 'func.return' operand #0 does not dominate this use: it is "
        "defined after it"
    )
    assert lines[3] == "<string>:2:3: note: operand defined here"
