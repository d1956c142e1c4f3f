"""Plain `xdsl-opt` with devplan's universe: devplan errors print as diagnostics (no
traceback), with the op printed where xdsl-opt's parser kept no location; remarks name
ops the same way; Python callers still get the exception."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import devplan
from devplan.diagnostics import LocatedError

XDSL_OPT = Path(sys.executable).parent / "xdsl-opt"

CONFLICT = """builtin.module {
  func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
    %b = vdev.on_device %a to #vdev.device<"cuda", 0> {constrain_result} : tensor<4xf32>
    %c = vdev.on_device %b to #vdev.device<"cpu", 0> {constrain_result} : tensor<4xf32>
    func.return %c : tensor<4xf32>
  }
}
"""


def _xdsl_opt(text: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(XDSL_OPT), *args], input=text, capture_output=True, text=True, timeout=120
    )


def test_a_devplan_error_in_xdsl_opt_is_a_diagnostic_without_traceback() -> None:
    run = _xdsl_opt(CONFLICT, "-p", "plan-devices")
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr == (
        "<unknown>: error: conflicting placement: the 'vdev.on_device' hint places %b on "
        '#vdev.device<"cpu", 0>, but it is already placed on #vdev.device<"cuda", 0>\n'
        '  see current operation: %c = vdev.on_device %b to #vdev.device<"cpu", 0> '
        "{constrain_result} : tensor<4xf32>\n"
        "<unknown>: note: the 'vdev.on_device' hint places it on #vdev.device<\"cuda\", 0>\n"
        '  see current operation: %b = vdev.on_device %a to #vdev.device<"cuda", 0> '
        "{constrain_result} : tensor<4xf32>\n"
    )


def test_a_devplan_op_that_fails_to_verify_in_xdsl_opt_shows_the_op_without_traceback() -> None:
    text = (
        "builtin.module {\n"
        '  func.func @f(%h: memref<16xf32>, %d: memref<8xf32, #vdev.device<"cuda", 0>>) {\n'
        '    device.copy %h to %d : memref<16xf32> to memref<8xf32, #vdev.device<"cuda", 0>>\n'
        "    func.return\n  }\n}\n"
    )
    run = _xdsl_opt(text)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    lines = run.stderr.splitlines()
    assert lines[0] == (
        'error: cannot copy memref<16xf32> to memref<8xf32, #vdev.device<"cuda", 0>>: '
        "dimension 0 is 16 in the source and 8 in the destination"
    )
    marked = lines.index(
        '    "device.copy"(%h, %d) : (memref<16xf32>, memref<8xf32, #vdev.device<"cuda", 0>>) -> ()'
    )
    assert lines[marked + 1].startswith("    ^^^^^^^^^^^^^")


def test_a_devplan_attribute_that_fails_to_parse_in_xdsl_opt_is_located_without_traceback() -> None:
    run = _xdsl_opt('"test.op"() {t = #target.target<"cudaa">} : () -> ()\n')
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert run.stderr.splitlines()[:3] == [
        "stdin:1:33",
        '"test.op"() {t = #target.target<"cudaa">} : () -> ()',
        "                                ^^^^^^^",
    ]
    assert "unknown target kind 'cudaa' (did you mean 'cuda'?)" in run.stderr


def test_xdsl_opt_verify_diagnostics_still_sees_the_error() -> None:
    """xdsl-opt catches DiagnosticException itself under --verify-diagnostics: the hook
    changes nothing there (the message on stdout, exit 0, as xDSL does)."""
    run = _xdsl_opt(CONFLICT, "-p", "plan-devices", "--verify-diagnostics")
    assert run.returncode == 0
    assert "Traceback" not in run.stderr
    assert "error: conflicting placement" in run.stdout


def test_remarks_in_xdsl_opt_name_the_op_instead_of_an_unknown_place() -> None:
    text = CONFLICT.replace('#vdev.device<"cpu", 0>', '#vdev.device<"cuda", 0>')
    run = _xdsl_opt(text, "-p", "plan-devices{explain=true}")
    assert run.returncode == 0, run.stderr
    assert "unknown place" not in run.stderr
    assert (
        "<unknown>: remark: argument 0 of @f is on cuda:0/global: decided by the "
        "'vdev.on_device' hint at `%b = vdev.on_device %a to #vdev.device<\"cuda\", 0> "
        "{constrain_result} : tensor<4xf32>` (target and scope by default)\n"
        "  see current operation: func.func @f(%a: tensor<4xf32> {vdev.device = "
    ) in run.stderr


def test_an_error_outside_a_devplan_pass_keeps_xdsl_opts_traceback() -> None:
    """Only devplan errors are reworded: xDSL's own parse errors print as xDSL prints them."""
    run = _xdsl_opt("builtin.module { %x = \n", "-p", "plan-devices")
    assert run.returncode != 0
    assert "Traceback (most recent call last)" in run.stderr
    assert run.stderr.rstrip().endswith("operation name expected")


def test_python_callers_still_get_the_exception() -> None:
    module = devplan.parse(CONFLICT)
    with pytest.raises(LocatedError, match="conflicting placement"):
        devplan.apply(module, "plan-devices")
