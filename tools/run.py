"""`devplan-run`: run a devplan program and print its results (DESIGN §6).

```
devplan-run FILE.mlir [--entry main] [--system sys.toml] [--pipeline PASSES]
                      [--arg FILE.npy|VALUE ...] [--args FILE.npy|VALUE ...]
                      [--random-args SEED] [--kernel-backend numpy|numba] [--stats]
                      [--trace t.json] [--strict] [--debug] [--print-full]
                      [--print-pipeline-ir]
```

Arguments of the entry function come from `--arg` and `--args` (in order: a `.npy` file
for a memref, a number or `true`/`false` for a scalar) and, for the ones not given, from
`--random-args SEED` (made from the function's types). `--pipeline` runs passes first;
a level-1 program (tensors) then runs through `default-pipeline` (plan-devices,
lower-to-device, classify-regions), and `--print-pipeline-ir` prints the level-2 program
that runs.

Every user error is one message (with `file:line:col` when it comes from IR) and exit
status 1; `--debug` shows the Python traceback instead.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .opt import user_error_text


class _ArgumentParser(argparse.ArgumentParser):
    """Usage errors are user errors too: one message and exit status 1."""

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        print(f"devplan-run: error: {message}", file=sys.stderr)
        sys.exit(1)


def _parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(
        prog="devplan-run",
        description="Run a devplan program (level 1 through default-pipeline, or level 2) "
        "on the devplan executor.",
    )
    p.add_argument("file", help="the program (.mlir)")
    p.add_argument("--entry", default="main", help="function to run (default: main)")
    p.add_argument(
        "--system", help="system description (TOML); default: one CPU and two simulated GPUs"
    )
    p.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="FILE.npy|VALUE",
        help="an argument of the entry function, in order: a .npy file for a memref, "
        "a number or true/false for a scalar (repeatable)",
    )
    p.add_argument(
        "--args",
        nargs="+",
        default=[],
        metavar="FILE.npy|VALUE",
        help="several arguments at once (after those given by --arg)",
    )
    p.add_argument(
        "--pipeline",
        metavar="PASSES",
        help="an xdsl-opt pass pipeline to run on the program first (e.g. 'canonicalize')",
    )
    p.add_argument(
        "--random-args",
        type=int,
        metavar="SEED",
        help="make the arguments not given by --arg from the function's types",
    )
    p.add_argument(
        "--kernel-backend",
        default="numpy",
        choices=("numpy", "numba"),
        help="how kernels run (default: numpy)",
    )
    p.add_argument("--stats", action="store_true", help="print the run's report")
    p.add_argument("--trace", metavar="FILE", help="write a Chrome trace (JSON) of the run")
    p.add_argument("--strict", action="store_true", help="make leaks at exit an error")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
    p.add_argument("--print-full", action="store_true", help="print every value of the outputs")
    p.add_argument(
        "--print-pipeline-ir",
        action="store_true",
        help="print the program that runs (a level-1 program after default-pipeline) first",
    )
    return p


def _scalar_literal(text: str) -> bool | int | float:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ValueError(
            f"--arg '{text}' is neither a .npy file nor a number or true/false"
        ) from None


def _load_arg(text: str) -> Any:
    if text.endswith(".npy"):
        try:
            return np.load(text, allow_pickle=False)
        except (OSError, ValueError) as e:
            if isinstance(e, FileNotFoundError):
                raise
            raise ValueError(f"--arg '{text}' is not a readable .npy file: {e}") from None
    return _scalar_literal(text)


def format_output(index: int, value: Any, full: bool) -> str:
    """One line (or block) describing an output: dtype, shape, summary and values."""
    array = np.asarray(value)
    kind = f"{array.dtype}[{'x'.join(map(str, array.shape))}]" if array.ndim else str(array.dtype)
    if array.ndim == 0:
        return f"result {index}: {kind} = {array.item()!r}"
    summary = ""
    if array.size and array.dtype.kind in "iufb":
        numbers = array.astype(np.float64)
        summary = f"  (min {numbers.min():.6g}, max {numbers.max():.6g}, mean {numbers.mean():.6g})"
    options: dict[str, Any] = (
        {"threshold": sys.maxsize} if full else {"threshold": 12, "edgeitems": 3}
    )
    values = np.array2string(array, separator=", ", **options)
    return f"result {index}: {kind}{summary}\n{values}"


def run(args: argparse.Namespace) -> int:
    from .. import apply, parse
    from ..diagnostics import DevplanError
    from ..runtime.executor import (
        compile_program,
        execute,
        find_entry,
        random_inputs,
        signature,
    )

    module = parse(Path(args.file))
    if args.pipeline:
        apply(module, args.pipeline)
    # Level 1 is lowered here (once); unsupported IR is reported before any input is read.
    program = compile_program(module, args.kernel_backend)
    if args.print_pipeline_ir:
        print(program.module)
    given = [_load_arg(a) for a in [*args.arg, *args.args]]
    inputs: list[Any] = given
    if args.random_args is not None:
        inputs = random_inputs(program.module, args.entry, args.random_args, given=given)
    else:
        function = find_entry(program.module, args.entry)
        expected = len(function.function_type.inputs.data)
        if len(given) != expected:
            raise DevplanError(
                f"error: {signature(function)} takes {expected} argument(s), got {len(given)} "
                "from --arg; pass each with --arg FILE.npy|VALUE, or use --random-args SEED"
            )
    result = execute(
        module,
        inputs,
        entry=args.entry,
        system=args.system,
        kernel_backend=args.kernel_backend,
        strict=args.strict,
    )
    for i, value in enumerate(result.outputs):
        print(format_output(i, value, args.print_full))
    if args.stats:
        print(result.report.format())
    if args.trace:
        result.report.write_chrome_trace(args.trace)
    if result.leaks:
        print(
            f"warning: {len(result.leaks)} device buffer(s) leaked (never freed): "
            + "; ".join(b.describe() for b in result.leaks)
            + " (--strict makes this an error)",
            file=sys.stderr,
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return run(args)
    except Exception as e:
        text = user_error_text(e)
        if args.debug:
            raise
        if text is None:
            print(
                f"devplan-run: internal error: {type(e).__name__}: {e} "
                "(rerun with --debug for a traceback)",
                file=sys.stderr,
            )
            return 2
        print(text, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
