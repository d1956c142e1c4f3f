"""`devplan-opt` (and what devplan-run shares with it) as a user runs them: the console
scripts in a subprocess, stdin, exit statuses, what goes to stdout and to stderr; and,
run in-process, how often devplan-opt verifies the program."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import EXAMPLES, ROOT, TESTS

import devplan

BIN = Path(sys.executable).parent
OPT = str(BIN / "devplan-opt")
RUN = str(BIN / "devplan-run")
SLOW_TOOL = str(TESTS / "tools" / "slow_tool.py")
MLP = EXAMPLES / "mlp.mlir"

HOST_FUNCTION = "func.func @f() {\n  func.return\n}\n"


def tool(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), input=stdin, capture_output=True, text=True, timeout=120, cwd=ROOT
    )


@pytest.mark.parametrize("name", ["-", None])
def test_dash_or_no_file_reads_stdin(name: str | None) -> None:
    done = tool(OPT, *([name] if name else []), stdin=HOST_FUNCTION)
    assert (done.returncode, done.stderr) == (0, "")
    assert "func.func @f()" in done.stdout


def test_stdin_errors_are_located_at_stdin() -> None:
    done = tool(OPT, "-", stdin="func.func @f() {\n  %x = arith.bogus : i32\n}\n")
    assert done.returncode == 1
    assert done.stderr.startswith("<stdin>:2:8: error: Operation arith.bogus is not registered")
    assert "Traceback" not in done.stderr


def test_pass_pipeline_takes_mlir_and_xdsl_forms_alike() -> None:
    mlir = tool(OPT, str(MLP), "--pass-pipeline=builtin.module(plan-devices,elide-copies)")
    xdsl = tool(OPT, str(MLP), "--pass-pipeline", "plan-devices,elide-copies")
    short = tool(OPT, str(MLP), "-p", "plan-devices,elide-copies")
    assert mlir.returncode == xdsl.returncode == short.returncode == 0
    assert mlir.stdout == xdsl.stdout == short.stdout
    assert "vdev.device_copy" in mlir.stdout


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("func.func(plan-devices)", "anchored on 'func.func': devplan runs module passes"),
        ("builtin.module(func.func(canonicalize))", "nests 'func.func(...)'"),
        ("builtin.module(plan-devices", "has no closing ')'"),
        ("builtin.module(plan-devices) x", "unexpected 'x' after 'builtin.module(...)'"),
    ],
)
def test_pass_pipeline_anchors_devplan_cannot_run_are_errors(pipeline: str, message: str) -> None:
    done = tool(OPT, str(MLP), "--pass-pipeline", pipeline)
    assert done.returncode == 1
    assert message in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("program", [OPT, RUN])
def test_pipeline_given_twice_is_a_usage_error(program: str) -> None:
    done = tool(program, str(MLP), "-p", "plan-devices", "--pass-pipeline", "elide-copies")
    assert done.returncode == 1
    assert "the pass pipeline is already given; give it once" in done.stderr


def test_timing_and_ir_between_passes_go_to_stderr_and_stdout_pipes_on() -> None:
    done = tool(
        OPT,
        str(MLP),
        "-p",
        "plan-devices,elide-copies{stats=true}",
        "--time-passes",
        "--print-between-passes",
        "--print-op-generic",
    )
    assert done.returncode == 0
    assert "pass 'plan-devices' took " in done.stderr
    assert "// -----// IR Dump After plan-devices //----- //" in done.stderr
    assert '"func.func"() <{' in done.stderr  # the IR between passes honours the printing flags
    assert "elide-copies: removed" in done.stderr  # a remark
    assert "took" not in done.stdout
    assert "IR Dump" not in done.stdout
    again = tool(OPT, stdin=done.stdout)  # `devplan-opt ... --time-passes | devplan-opt`
    assert (again.returncode, again.stderr) == (0, "")


def test_list_passes_describes_each_devplan_pass_and_names_xdsls() -> None:
    done = tool(OPT, "--list-passes")
    assert done.returncode == 0
    blocks = done.stdout.split("\n\n")
    plan = next(b for b in blocks if b.startswith("plan-devices: "))
    assert plan.splitlines()[0] == (
        "plan-devices: Places every tensor value, argument and result of a level-1 program."
    )
    assert '  strategy: str = "default"' in plan.splitlines()
    assert "  explain: bool = false" in plan.splitlines()
    assert blocks[-1].startswith("xDSL's passes")
    assert "canonicalize," in blocks[-1]


def test_help_never_breaks_a_name() -> None:
    done = tool(OPT, "--help")
    assert done.returncode == 0
    assert "--list-passes" in done.stdout
    for line in done.stdout.splitlines():
        assert not line.rstrip().endswith("-") or line.strip().startswith("-"), line


@pytest.mark.parametrize(("program", "name"), [(OPT, "devplan-opt"), (RUN, "devplan-run")])
def test_version_comes_from_the_installed_distribution(program: str, name: str) -> None:
    from importlib.metadata import version

    done = tool(program, "--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"{name} {version('devplan')} (xdsl {version('xdsl')})"


def test_run_reads_stdin_and_takes_e_for_entry() -> None:
    done = tool(RUN, "-e", "main", "--random-args", "0", stdin=MLP.read_text())
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("result 0: float32[32x10]")
    missing = tool(RUN, "-", "-e", "nope", "--random-args", "0", stdin=MLP.read_text())
    assert missing.returncode == 1
    assert "no function @nope to run" in missing.stderr


VERIFIED = """// expected-remark@below {{@f is host}}
func.func @f() {
  func.return
}
"""


def test_verify_diagnostics_all_met_is_exit_0() -> None:
    done = tool(OPT, "--verify-diagnostics", "-p", "classify-regions{explain=true}", stdin=VERIFIED)
    assert (done.returncode, done.stderr) == (0, "")
    assert 'device.region = "host"' in done.stdout


def test_verify_diagnostics_missing_is_exit_1_saying_what_was_expected() -> None:
    done = tool(OPT, "--verify-diagnostics", stdin=VERIFIED)  # no pass: no remark
    assert done.returncode == 1
    assert done.stderr.startswith(
        '<stdin>:1:4: error: expected remark "@f is host" at line 2 was not produced'
    )


def test_verify_diagnostics_unexpected_is_exit_1_saying_what_came() -> None:
    done = tool(
        OPT, "--verify-diagnostics", "-p", "classify-regions{explain=true}", stdin=HOST_FUNCTION
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        "<stdin>:1:1: error: unexpected remark: @f is host: it does no device work"
    )


def slow(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, SLOW_TOOL, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(TESTS)},
        # A child inherits an ignored SIGINT (Python then installs no KeyboardInterrupt
        # handler): a test process that ran Ray or another tool that ignores it would make
        # Ctrl-C a no-op in the tool. The tool is started as a shell starts it.
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_pass_over_a_second_prints_one_progress_line() -> None:
    done = tool(
        sys.executable, SLOW_TOOL, "opt", str(MLP), "-p", "test-sleep{seconds=1.6}", "--progress"
    )
    assert done.returncode == 0
    assert done.stderr == "devplan-opt: running pass 'test-sleep'...\n"


def test_a_short_pass_prints_no_progress() -> None:
    done = tool(
        sys.executable, SLOW_TOOL, "opt", str(MLP), "-p", "test-sleep{seconds=0.2}", "--progress"
    )
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize("flags", [[], ["--quiet"]])
def test_progress_is_off_without_a_terminal_or_with_quiet(flags: list[str]) -> None:
    done = tool(sys.executable, SLOW_TOOL, "opt", str(MLP), "-p", "test-sleep{seconds=1.6}", *flags)
    assert (done.returncode, done.stderr) == (0, "")


def test_quiet_and_progress_together_are_a_usage_error() -> None:
    done = tool(OPT, str(MLP), "--quiet", "--progress")
    assert done.returncode == 1
    assert "not allowed with argument" in done.stderr


@pytest.mark.parametrize(("which", "name"), [("opt", "devplan-opt"), ("run", "devplan-run")])
def test_ctrl_c_is_exit_130_with_one_line(which: str, name: str) -> None:
    args = [str(MLP), "--progress", "-p", "test-sleep{seconds=60.0}"]
    if which == "run":
        args += ["--random-args", "0"]
    process = slow(which, *args)
    assert process.stderr is not None
    # The progress line says the pass is running: interrupt it there.
    assert process.stderr.readline() == f"{name}: running pass 'test-sleep'...\n"
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert time.monotonic() - started < 10
    assert process.returncode == 130
    assert err == f"{name}: interrupted\n"
    assert out == ""


def wall_seconds(text: str) -> float:
    """Seconds of a time the report prints (`1.211 s`, `720.7 us`)."""
    value, unit = text.split()
    return float(value) * {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[unit]


def test_a_kernel_compile_over_a_second_prints_its_line_and_stats_keep_it_apart() -> None:
    done = tool(
        sys.executable, SLOW_TOOL, "run", "--compile-seconds", "1.2",
        str(EXAMPLES / "vector_add.mlir"), "--random-args", "0", "--progress", "--stats",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == "devplan-run: compiling kernel @add for cuda:0 (numpy)...\n"
    lines = done.stdout.splitlines()
    compiling = next(line for line in lines if line.startswith("compiling: wall time "))
    assert wall_seconds(compiling.split("wall time ")[1].split(" (")[0]) >= 1.2
    cuda0 = next(line for line in lines if line.startswith("cuda:0 ")).split()
    assert wall_seconds(" ".join(cuda0[-5:-3])) < 1.0  # kernel (wall)


def test_default_pipeline_output_is_verified_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """default-pipeline verifies what it produced; devplan-opt, which verifies after every
    pass, does not verify it again (for mlp.mlir that would cost as much as lowering)."""
    from devplan.passes import default_pipeline
    from devplan.tools import opt

    checked: list[int] = []

    def counting(module: Any, verifiers: Any = ()) -> None:
        checked.append(sum(1 for _ in module.walk()))
        verify(module, verifiers)

    verify = opt.verify_located
    monkeypatch.setattr(opt, "verify_located", counting)
    monkeypatch.setattr(default_pipeline, "verify_located", counting)
    assert opt.main([str(MLP), "-p", "default-pipeline"]) == 0
    assert "device.launch" in capsys.readouterr().out
    source_ops = sum(1 for _ in devplan.parse(str(MLP)).walk())
    lowered_ops = max(checked)
    assert lowered_ops > 3 * source_ops  # (the input, then the lowered program, once)
    assert sorted(checked) == [source_ops, lowered_ops]
