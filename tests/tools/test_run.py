"""`devplan-run`: exit codes, messages, outputs, --stats, --trace, --arg."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support import EXAMPLES

from devplan.tools.run import main

VECTOR_ADD = str(EXAMPLES / "vector_add.mlir")

SCALE = """func.func @main(%a: memref<3xf32>, %k: f32) -> memref<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %x = memref.load %a[%i] : memref<3xf32>
    %y = arith.mulf %x, %k : f32
    memref.store %y, %a[%i] : memref<3xf32>
  }
  func.return %a : memref<3xf32>
}
"""


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_random_args_run_prints_each_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli([VECTOR_ADD, "--random-args", "0"], capsys)
    assert (code, err) == (0, "")
    assert out.startswith("result 0: float32[1000]  (min ")
    assert "..." in out  # a short summary, not every value


AS_THE_PROGRAM = """
import atexit, json, runpy, sys
loaded = lambda: {
    "scipy": sorted(n for n in sys.modules if n.startswith("scipy")),
    "numba": "numba" in sys.modules,
    "numba's lowering registries": "numba.cpython.cmathimpl" in sys.modules,
}
atexit.register(lambda: print(json.dumps(loaded()), file=sys.stderr))
sys.argv = ["devplan-run", *sys.argv[1:]]
runpy.run_module("devplan.tools.run", run_name="__main__")
"""
"""devplan-run as its own process (argv from the command line), printing on stderr at exit
which SciPy modules it loaded, whether it loaded Numba, and whether Numba refreshed its
target context (which imports `numba.cpython.cmathimpl` with every other lowering registry).
The last line."""


def run_as_the_program(args: list[str]) -> tuple[str, dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", AS_THE_PROGRAM, *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(done.stderr.splitlines()[-1])


def test_a_numba_run_as_the_program_loads_no_scipy_and_prints_what_numpy_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The second run loads its kernels from the cache the first filled, without Numba's
    refresh of its target context (`SharedFunctionCache.load_overload`)."""
    args = [str(EXAMPLES / "mlp.mlir"), "--random-args", "0"]
    out, loaded = run_as_the_program([*args, "--kernel-backend", "numba"])
    assert (loaded["scipy"], loaded["numba"]) == ([], True)
    warm_out, warm = run_as_the_program([*args, "--kernel-backend", "numba"])
    assert warm == {"scipy": [], "numba": True, "numba's lowering registries": False}
    assert out == warm_out == run_cli(args, capsys)[1]


def test_a_numba_run_of_a_program_without_kernels_loads_no_numba(tmp_path: Path) -> None:
    program = tmp_path / "scale.mlir"
    program.write_text(SCALE)
    args = [str(program), "--random-args", "0", "--kernel-backend", "numba"]
    _, loaded = run_as_the_program(args)
    assert loaded == {"scipy": [], "numba": False, "numba's lowering registries": False}


def test_print_full_prints_every_value(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli([VECTOR_ADD, "--random-args", "0", "--print-full"], capsys)
    assert code == 0
    assert "..." not in out
    assert out.split("\n", 1)[1].count(",") == 999


def test_arg_files_and_scalar_literals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "scale.mlir"
    program.write_text(SCALE)
    np.save(tmp_path / "a.npy", np.array([1, 2, 3], np.float32))
    code, out, err = run_cli(
        [str(program), "--arg", str(tmp_path / "a.npy"), "--arg", "2.5"], capsys
    )
    assert (code, err) == (0, "")
    assert out.splitlines()[1] == "[2.5, 5. , 7.5]"


def test_stats_prints_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli([VECTOR_ADD, "--random-args", "0", "--stats"], capsys)
    assert code == 0
    assert "cost-model time" in out
    assert "cpu:0<->cuda:0   3       11.7 KiB" in out
    assert "leaked buffers: none" in out


def test_trace_is_chrome_trace_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "t.json"
    code, _, _ = run_cli(
        [str(EXAMPLES / "async_overlap.mlir"), "--random-args", "0", "--trace", str(trace)], capsys
    )
    assert code == 0
    events = json.loads(trace.read_text())["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    assert {e["cat"] for e in complete} == {"copy", "kernel"}
    assert all({"name", "ts", "dur", "pid", "tid"} <= e.keys() for e in complete)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    tracks = {names[(e["pid"], e["tid"])] for e in complete}
    assert tracks == {"copy cpu:0->cuda:0", "copy cuda:0->cpu:0", "cuda:0/s2"}


def test_missing_file_is_one_message_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["no/such.mlir"], capsys)
    assert (code, out) == (1, "")
    assert err == "error: cannot read 'no/such.mlir': No such file or directory\n"


def test_missing_arguments_say_how_to_give_them(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli([VECTOR_ADD], capsys)
    assert code == 1
    assert err == (
        "error: @main(memref<1000xf32>, memref<1000xf32>) -> memref<1000xf32> takes 2 "
        "argument(s), got 0 from --arg; pass each with --arg FILE.npy|VALUE, or use "
        "--random-args SEED\n"
    )


def test_arg_that_is_neither_a_file_nor_a_literal_is_an_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run_cli([VECTOR_ADD, "--arg", "abc"], capsys)
    assert (code, err) == (
        1,
        "error: --arg 'abc' is neither a .npy file nor a number or true/false\n",
    )


def test_wrong_npy_shape_names_the_argument(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(tmp_path / "a.npy", np.ones(3, np.float32))
    code, _, err = run_cli(
        [VECTOR_ADD, "--arg", str(tmp_path / "a.npy"), "--random-args", "1"], capsys
    )
    assert code == 1
    assert err == (
        "error: argument 0 %a of @main(memref<1000xf32>, memref<1000xf32>) -> memref<1000xf32> "
        "is memref<1000xf32> and needs shape 1000, got 3 of float32\n"
    )


def test_unknown_option_is_a_usage_error_with_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([VECTOR_ADD, "--bogus"])
    assert info.value.code == 1
    assert "devplan-run: error: unrecognized arguments: --bogus" in capsys.readouterr().err


def test_run_time_error_is_located_and_has_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "free.mlir"
    program.write_text(
        "func.func @main() {\n"
        '  %d = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0>>\n'
        '  device.free %d : memref<4xf32, #vdev.device<"cuda", 0>>\n'
        '  device.free %d : memref<4xf32, #vdev.device<"cuda", 0>>\n'
        "  func.return\n"
        "}\n"
    )
    code, _, err = run_cli([str(program)], capsys)
    assert code == 1
    assert err.startswith(f"{program}:4:3: error: 'device.free' double free")
    assert "Traceback" not in err


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no/such\.mlir"):  # the original exception
        main(["no/such.mlir", "--debug"])


def test_leak_is_a_warning_and_strict_makes_it_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "leak.mlir"
    program.write_text(
        "func.func @main() {\n"
        '  %d = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0>>\n'
        "  func.return\n"
        "}\n"
    )
    code, _, err = run_cli([str(program)], capsys)
    assert code == 0
    assert err.startswith("warning: 1 device buffer(s) leaked (never freed): buffer %d at ")
    code, _, err = run_cli([str(program), "--strict"], capsys)
    assert code == 1
    assert err.startswith("error: 1 device buffer(s) leaked at the end of @main")


def test_system_file_is_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    system = tmp_path / "tiny.toml"
    system.write_text(
        '[[device]]\ntype = "cpu"\nid = 0\ntarget = { kind = "llvm" }\napi = "cpu"\n'
        'scopes = { global = "1 GiB" }\n\n'
        '[[device]]\ntype = "cuda"\nid = 0\ntarget = { kind = "cuda" }\napi = "simulated"\n'
        'scopes = { global = "4 KiB" }\n\n'
        '[[link]]\nbetween = ["cpu:0", "cuda:0"]\nbandwidth = "1 GB/s"\nlatency = "1 us"\n'
    )
    code, _, err = run_cli([VECTOR_ADD, "--random-args", "0", "--system", str(system)], capsys)
    assert code == 1
    assert "out of device memory on cuda:0 scope 'global'" in err.splitlines()[0]


def test_args_takes_several_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "scale.mlir"
    program.write_text(SCALE)
    np.save(tmp_path / "a.npy", np.array([1, 2, 3], np.float32))
    code, out, _ = run_cli([str(program), "--args", str(tmp_path / "a.npy"), "2"], capsys)
    assert code == 0
    assert out.splitlines()[1] == "[2., 4., 6.]"


@pytest.mark.parametrize(
    ("value", "line"),
    [("-1e1", "[-10., -20., -30.]"), ("-inf", "[-inf, -inf, -inf]"), ("-.5", "[-0.5, -1. , -1.5]")],
)
def test_negative_numbers_of_every_form_are_values_not_options(
    value: str, line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse knows only `-5` and `-0.5` for negative numbers: `--arg -1e1` and
    `--args a.npy -inf` had no value ("expected one argument")."""
    program = tmp_path / "scale.mlir"
    program.write_text(SCALE)
    np.save(tmp_path / "a.npy", np.array([1, 2, 3], np.float32))
    for args in (
        ["--arg", str(tmp_path / "a.npy"), "--arg", value],
        ["--args", str(tmp_path / "a.npy"), value],
    ):
        code, out, err = run_cli([str(program), *args], capsys)
        assert (code, err) == (0, "")
        assert out.splitlines()[1] == line
    with pytest.raises(SystemExit) as info:  # an option-like word is still no value
        main([str(program), "--arg", str(tmp_path / "a.npy"), "--arg", "-x"])
    assert info.value.code == 1
    assert capsys.readouterr().err.endswith(
        "devplan-run: error: argument --arg: expected one argument\n"
    )


def test_pipeline_runs_before_the_program(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "scale.mlir"
    program.write_text(SCALE)
    code, _, err = run_cli(
        [str(program), "--pipeline", "no-such-pass", "--random-args", "0"], capsys
    )
    assert code == 1
    assert err.startswith("error: unknown pass 'no-such-pass'")
    code, out, _ = run_cli(
        [str(program), "--pipeline", "canonicalize", "--random-args", "0"], capsys
    )
    assert code == 0
    assert out.startswith("result 0: float32[3]")


def test_random_args_for_a_device_the_system_lacks_is_located_at_the_function(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "absent.mlir"
    program.write_text(
        "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %b = arith.addf %a, %a : tensor<4xf32>\n"
        '  %c = vdev.on_device %b to #vdev.device<"cuda", 7> : tensor<4xf32>\n'
        "  func.return %c : tensor<4xf32>\n"
        "}\n"
    )
    code, _, err = run_cli([str(program), "--random-args", "0"], capsys)
    assert code == 1
    assert err.startswith(f"{program}:1:1: error: argument 0 %a of @main(")
    assert "no device 'cuda:7' in system <default system> (devices: cpu:0, cuda:0, cuda:1)" in err
    assert err.count("error:") == 1
    assert "Traceback" not in err


def test_a_bf16_result_is_printed_by_its_values_not_its_bit_patterns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "bf16.mlir"
    program.write_text(
        "func.func @main() -> tensor<2xbf16> {\n"
        "  %k = arith.constant dense<[1.5, -0.25]> : tensor<2xbf16>\n"
        '  %c = vdev.on_device %k to #vdev.device<"cuda", 0> : tensor<2xbf16>\n'
        "  func.return %c : tensor<2xbf16>\n"
        "}\n"
    )
    code, out, _ = run_cli([str(program)], capsys)
    assert code == 0
    assert out.splitlines() == [  # was uint16[2] (min 48768, max 16320, ...) [16320, 48768]
        "result 0: bf16[2]  (min -0.25, max 1.5, mean 0.625)",
        "[ 1.5 , -0.25]",
    ]


DYNAMIC = """func.func @main(%a: tensor<?x5xf32>, %b: tensor<?x5xf32>, %n: index, %x: f32)
    -> (tensor<?x5xf32>, index, f32) {
  %c = arith.addf %a, %b : tensor<?x5xf32>
  func.return %c, %n, %x : tensor<?x5xf32>, index, f32
}
"""


def test_dynamic_size_sizes_each_question_mark_and_what_was_drawn_is_printed_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "dynamic.mlir"
    program.write_text(DYNAMIC)
    code, out, err = run_cli([str(program), "--random-args", "3", "--dynamic-size", "2"], capsys)
    assert code == 0, err
    lines = err.splitlines()
    assert lines[:2] == [
        "random-args: %a : tensor<?x5xf32> is 2x5",
        "random-args: %b : tensor<?x5xf32> is 2x5",
    ]
    n = lines[2].removeprefix("random-args: %n : index = ")
    x = lines[3].removeprefix("random-args: %x : f32 = ")
    assert len(lines) == 4
    assert 1 <= int(n) <= 16
    assert out.startswith("result 0: float32[2x5]")
    assert f"result 1: int64 = {n}\n" in out  # the values drawn are the values run
    assert np.float32(x) == np.float32(out.split("result 2: float32 = ")[1])


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--random-args", "3", "--dynamic-size", "2,3"],
            "dynamic.mlir:3:3: error: assertion failed: 'arith.addf' on tensors of different "
            "shapes: dimension 0 of operand 1 differs from dimension 0 of operand 0",
        ),
        (
            ["--random-args", "3"],
            "error: argument 0 %a of @main(tensor<?x5xf32>, tensor<?x5xf32>, index, f32) -> "
            "(tensor<?x5xf32>, index, f32) has a dynamic shape (tensor<?x5xf32>); give the sizes "
            "of its `?` dimensions with --dynamic-size N (or pass it with --arg FILE.npy)",
        ),
        (["--dynamic-size", "2"], "error: --dynamic-size sizes the arguments --random-args makes"),
    ],
)
def test_dynamic_sizes_that_differ_or_are_missing_are_one_error(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "dynamic.mlir"
    program.write_text(DYNAMIC)
    code, _, err = run_cli([str(program), *flags], capsys)
    assert code == 1
    assert message in err
    assert "Traceback" not in err
