"""Remarks go through one sink: devplan-opt prints them to stderr, and a Python caller
collects them (`devplan.apply(..., remarks=list)` or `collect_remarks`), in the order the
passes emit them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import devplan
from devplan.diagnostics import DevplanError, collect_remarks, emit_remark

T = "tensor<4xf32>"
PROGRAM = (
    'builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>} {\n'
    f'  func.func @f(%x: {T} {{vdev.device = #vdev.device<"cpu">}}, %y: {T}) -> {T} {{\n'
    f"    %a = arith.addf %x, %y : {T}\n"
    f"    func.return %a : {T}\n"
    "  }\n}\n"
)
"""A level-1 function whose first argument is pinned to the CPU."""

EXPLAIN_AND_STATS = "plan-devices{explain=true},elide-copies{stats=true}"


def test_apply_appends_the_explain_remarks_of_plan_devices_to_the_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    remarks: list[str] = []
    devplan.apply(devplan.parse(PROGRAM), "plan-devices{explain=true}", remarks=remarks)
    assert [r.splitlines()[0] for r in remarks] == [
        "<string>:2:3: remark: argument 0 of @f is on cpu:0/global: decided by the "
        "vdev.device attribute of argument 0 of @f at line 2 (id, target and scope by default)",
        "<string>:2:3: remark: argument 1 of @f is on cpu:0/global: decided by the "
        "vdev.device attribute of argument 0 of @f at line 2, through dataflow: %y is operand "
        "1 of 'arith.addf' at line 3 and 1 more tie (id, target and scope by default)",
        "<string>:3:5: remark: 'arith.addf' (%a) is on cpu:0/global: decided by the "
        "vdev.device attribute of argument 0 of @f at line 2, through dataflow: %x is operand "
        "0 of 'arith.addf' at line 3 (id, target and scope by default)",
    ]
    assert capsys.readouterr().err == ""


def test_apply_appends_the_stats_of_elide_copies_to_the_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    remarks: list[str] = []
    devplan.apply(devplan.parse(PROGRAM), "elide-copies{stats=true}", remarks=remarks)
    assert remarks == [
        "elide-copies: removed 0 of 0 copies (0 bytes per execution) in 1 iteration(s); 0 left"
    ]
    assert capsys.readouterr().err == ""


def test_remarks_keep_the_order_the_passes_emit_them() -> None:
    remarks: list[str] = []
    devplan.apply(devplan.parse(PROGRAM), EXPLAIN_AND_STATS, remarks=remarks)
    assert [r.split(": remark: ")[0] for r in remarks[:3]] == [
        "<string>:2:3",
        "<string>:2:3",
        "<string>:3:5",
    ]
    assert remarks[3].startswith("elide-copies: removed")
    assert len(remarks) == 4


def test_without_a_list_remarks_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    remarks: list[str] = []
    devplan.apply(devplan.parse(PROGRAM), EXPLAIN_AND_STATS, remarks=remarks)
    devplan.apply(devplan.parse(PROGRAM), EXPLAIN_AND_STATS)
    assert capsys.readouterr().err == "".join(f"{r}\n" for r in remarks)


def test_collect_remarks_reaches_entry_points_that_run_on_deep_stack_workers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with collect_remarks() as remarks:
        devplan.apply(devplan.parse(PROGRAM), "elide-copies{stats=true}")
    assert remarks == [
        "elide-copies: removed 0 of 0 copies (0 bytes per execution) in 1 iteration(s); 0 left"
    ]
    assert capsys.readouterr().err == ""


def test_a_sink_ends_with_its_block(capsys: pytest.CaptureFixture[str]) -> None:
    outer: list[str] = []
    with collect_remarks(outer):
        emit_remark("first")
        with collect_remarks() as inner:
            emit_remark("second")
        emit_remark("third")
    emit_remark("fourth")
    assert (outer, inner) == (["first", "third"], ["second"])
    assert capsys.readouterr().err == "fourth\n"


def test_remarks_must_be_a_list() -> None:
    with pytest.raises(DevplanError, match=r"devplan.apply: remarks must be a list or None"):
        devplan.apply(devplan.parse(PROGRAM), "elide-copies", remarks="stats")  # type: ignore[arg-type]


def test_devplan_opt_prints_the_remarks_to_stderr_in_the_same_words(tmp_path: Path) -> None:
    source = tmp_path / "program.mlir"
    source.write_text(PROGRAM)
    remarks: list[str] = []
    devplan.apply(devplan.parse(source), EXPLAIN_AND_STATS, remarks=remarks)
    opt = Path(sys.executable).parent / "devplan-opt"
    done = subprocess.run(
        [str(opt), str(source), "-p", EXPLAIN_AND_STATS], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert done.stderr == "".join(f"{r}\n" for r in remarks)
    assert "func.func @f" in done.stdout
