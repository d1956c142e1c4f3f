"""`devplan-run`: run a devplan program and print its results (DESIGN §6).

```
devplan-run [FILE.mlir|-] [-e|--entry main] [--system sys.toml] [-p|--pipeline PASSES]
                      [--arg FILE.npy|VALUE ...] [--args FILE.npy|VALUE ...]
                      [--random-args SEED [--dynamic-size N[,N...]]]
                      [--kernel-backend numpy|numba|numba-cuda] [--stats]
                      [--trace t.json] [--strict] [--debug] [--print-full]
                      [--print-pipeline-ir] [--quiet|--progress] [--version]
```

The program comes from FILE, or from stdin when FILE is `-` or missing.

Arguments of the entry function come from `--arg` and `--args` (in order: a `.npy` file
for a memref, a number or `true`/`false` for a scalar) and, for the ones not given, from
`--random-args SEED` (made from the function's types; `--dynamic-size N[,N...]` sizes
the `?` dimensions, and what was drawn for them and for scalars is printed on stderr).
`--pipeline` runs passes first;
without it, a program holding `gpu` or `async` dialect ops is converted by `convert-gpu-to-device`.
A level-1 program (tensors) then runs through `default-pipeline` (plan-devices,
elide-copies, lower-to-device, elide-copies, classify-regions), and `--print-pipeline-ir`
prints the level-2 program that runs.

Every user error is one message (with `file:line:col` when it comes from IR) and exit
status 1; `--debug` shows the Python traceback instead.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.utils.exceptions import ParseError

from ..diagnostics import DevplanError, with_deep_stack
from ..diagnostics.progress import progress_to
from .console import (
    STDIN,
    PipelineOnce,
    UnbrokenHelpFormatter,
    VersionAction,
    add_feedback_arguments,
    finish,
    progress_sink,
    quiet_broken_pipe,
    report_interrupted,
    run_tool,
)


class _ArgumentParser(argparse.ArgumentParser):
    """Usage errors are user errors too: one message and exit status 1. Every negative
    number is a value, not an option: argparse takes `-1e5`, `-inf` and `-nan` for
    options (it knows only `-5` and `-0.5`), so `--arg -1e5` had no value."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        print(f"devplan-run: error: {message}", file=sys.stderr)
        sys.exit(1)


_NEGATIVE_NUMBER = re.compile(r"^-((\d+\.?\d*|\.\d+)(e[-+]?\d+)?|inf|infinity|nan)$", re.IGNORECASE)


def _parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(
        prog="devplan-run",
        description="Run a devplan program (level 1 through default-pipeline, or level 2) "
        "on the devplan executor.",
        formatter_class=UnbrokenHelpFormatter,
    )
    p.add_argument("file", nargs="?", help="the program (.mlir); '-' or none reads stdin")
    p.add_argument("-e", "--entry", default="main", help="function to run (default: main)")
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
        "-p",
        "--pipeline",
        "--pass-pipeline",
        dest="pipeline",
        action=PipelineOnce,
        metavar="PASSES",
        help="a pass pipeline to run on the program first: 'a,b{option=value}' (xdsl-opt) "
        "or 'builtin.module(a,b{option=value})' (mlir-opt)",
    )
    p.add_argument(
        "--random-args",
        type=_seed,
        metavar="SEED",
        help="make the arguments not given by --arg from the function's types; the sizes "
        "of `?` dimensions and the scalars drawn are printed on stderr",
    )
    p.add_argument(
        "--dynamic-size",
        type=_sizes,
        metavar="N[,N...]",
        help="with --random-args: the sizes of the `?` dimensions of the arguments, in "
        "order, the last repeating ('4' makes every `?` 4; '3,5' the first 3, the rest 5)",
    )
    p.add_argument(
        "--kernel-backend",
        default="numpy",
        choices=("numpy", "numba", "numba-cuda"),
        help="how kernels run (default: numpy); numba-cuda runs them on an NVIDIA GPU, or "
        "under Numba's CUDA simulator when NUMBA_ENABLE_CUDASIM=1",
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
    add_feedback_arguments(p)
    p.add_argument(
        "--version", action=VersionAction, tool="devplan-run", help="print the version and exit"
    )
    return p


def _seed(text: str) -> int:
    """A --random-args seed: a whole number 0 or more (argparse names the option)."""
    try:
        seed = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a seed (a whole number 0 or more), got {text!r}"
        ) from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"expected a seed 0 or more, got {seed}")
    return seed


def _sizes(text: str) -> list[int]:
    """--dynamic-size: whole numbers 0 or more, separated by commas."""
    sizes: list[int] = []
    for part in text.split(","):
        if not re.fullmatch(r"\s*\d+\s*", part):
            raise argparse.ArgumentTypeError(
                f"expected sizes (whole numbers 0 or more, separated by commas), got {text!r}"
            )
        sizes.append(int(part))
    return sizes


def _scalar_literal(text: str) -> bool | int | float:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        raise ValueError(
            f"--arg '{text}' is neither a .npy file nor a number or true/false"
        ) from None
    if math.isinf(number) and "inf" not in lowered:
        raise ValueError(f"--arg '{text}' is out of range for a float (write 'inf' for infinity)")
    return number


def _load_arg(text: str) -> Any:
    if text.endswith(".npy"):
        try:
            return np.load(text, allow_pickle=False)
        except EOFError:
            raise ValueError(f"--arg '{text}' is not a readable .npy file: it is empty") from None
        except (OSError, ValueError) as e:
            if isinstance(e, FileNotFoundError):
                raise
            raise ValueError(f"--arg '{text}' is not a readable .npy file: {e}") from None
    return _scalar_literal(text)


def drawn_lines(
    function: Any, types: Sequence[Any], inputs: Sequence[Any], given: int
) -> list[str]:
    """What --random-args drew that the types do not fix, one line each: the shape of an
    argument with `?` dimensions, the value of a scalar."""
    from ..analysis.dtypes import numpy_dtype

    lines: list[str] = []
    for i in range(given, len(types)):
        arg = function.body.block.args[i]
        name = f"%{arg.name_hint}" if arg.name_hint else f"argument {i}"
        shape = getattr(types[i], "shape", None)
        value = inputs[i]
        if shape is None:
            with contextlib.suppress(DevplanError):  # bf16: no NumPy type; the f64 drawn
                value = numpy_dtype(types[i]).type(value)  # as the type holds it
            lines.append(f"random-args: {name} : {types[i]} = {value!s}")
        elif any(d.data < 0 for d in shape):
            sizes = "x".join(str(n) for n in np.shape(value))
            lines.append(f"random-args: {name} : {types[i]} is {sizes}")
    return lines


def format_output(index: int, value: Any, full: bool, bf16: bool = False) -> str:
    """One line (or block) describing an output: dtype, shape, summary and values. A
    `bf16` array (NumPy has no bf16: its bit patterns, uint16) is shown by its values."""
    array = np.asarray(value)
    dtype = str(array.dtype)
    if bf16 and array.dtype == np.uint16:
        array, dtype = (array.astype(np.uint32) << 16).view(np.float32), "bf16"
    kind = f"{dtype}[{'x'.join(map(str, array.shape))}]" if array.ndim else dtype
    if array.ndim == 0:
        return f"result {index}: {kind} = {array.item()!r}"
    summary = ""
    if array.size and array.dtype.kind in "iufb":
        numbers = array.astype(np.float64)
        summary = f"  (min {numbers.min():.6g}, max {numbers.max():.6g}, mean {numbers.mean():.6g})"
    if full:
        return f"result {index}: {kind}{summary}\n{_every_value(array)}"
    values = np.array2string(array, separator=", ", threshold=12, edgeitems=3)
    return f"result {index}: {kind}{summary}\n{values}"


def _every_value(array: np.ndarray[Any, Any]) -> str:
    """Every element, in nested brackets, each printed as NumPy prints that scalar
    (shortest text that reads back the same value); linear in the size, unlike
    `np.array2string` with no threshold, which aligns columns and is quadratic."""
    width = int(np.get_printoptions()["linewidth"])
    words = [str(x) for x in array.reshape(-1)]
    if array.ndim == 0:
        return words[0]
    row = array.shape[-1]
    lines: list[str] = []
    for start in range(0, len(words), max(row, 1)):
        position = np.unravel_index(start, array.shape) if array.size else (0,) * array.ndim
        opened = _count_leading_zeros(position[:-1]) + 1
        line = " " * (array.ndim - opened) + "[" * opened
        pieces = words[start : start + row]
        for i, word in enumerate(pieces):
            text = word + (", " if i + 1 < len(pieces) else "")
            if len(line) + len(text.rstrip()) > width and not line.endswith("["):
                lines.append(line.rstrip())
                line = " " * array.ndim
            line += text
        closed = _count_trailing_last(position[:-1], array.shape[:-1]) + 1
        lines.append(line + "]" * closed + ("," if closed < array.ndim else ""))
    if not array.size:
        return "[" * array.ndim + "]" * array.ndim
    return "\n".join(lines)


def _count_leading_zeros(position: Sequence[Any]) -> int:
    """How many brackets open before a row: one per trailing index that is 0."""
    count = 0
    for i in reversed(position):
        if int(i) != 0:
            break
        count += 1
    return count


def _count_trailing_last(position: Sequence[Any], shape: Sequence[int]) -> int:
    """How many brackets close after a row: one per trailing index at its last value."""
    count = 0
    for i, n in zip(reversed(position), reversed(shape), strict=True):
        if int(i) != n - 1:
            break
        count += 1
    return count


def _parse_stdin() -> Any:
    """The program on stdin, verified, its diagnostics naming `<stdin>`."""
    from .. import MODULE_VERIFIERS, context
    from ..diagnostics import (
        DevplanError,
        LocatingParser,
        register_source,
        verify_located,
    )

    text = sys.stdin.buffer.read().decode("utf-8", "replace")
    register_source(STDIN, text)
    try:
        module = LocatingParser(context(), text, STDIN).parse_module()
    except ParseError as e:
        raise DevplanError(str(e)) from None
    verify_located(module, MODULE_VERIFIERS)
    return module


def _inputs(args: argparse.Namespace, module: Any) -> list[Any]:
    """The entry's arguments: --arg/--args, then --random-args for the rest (printing
    the dynamic sizes and scalars it drew on stderr)."""
    from ..runtime.executor import find_entry, random_inputs, signature, source_type

    given = [_load_arg(a) for a in [*args.arg, *args.args]]
    function = find_entry(module, args.entry)
    if args.dynamic_size is not None and args.random_args is None:
        raise DevplanError(
            "error: --dynamic-size sizes the arguments --random-args makes; add --random-args SEED"
        )
    if args.random_args is None:
        expected = len(function.function_type.inputs.data)
        if len(given) != expected:
            raise DevplanError(
                f"error: {signature(function)} takes {expected} argument(s), got {len(given)} "
                "from --arg; pass each with --arg FILE.npy|VALUE, or use --random-args SEED"
            )
        return given
    inputs = random_inputs(
        module,
        args.entry,
        args.random_args,
        given=given,
        system=args.system,
        dynamic_sizes=args.dynamic_size or (),
    )
    for line in drawn_lines(function, source_type(function).inputs.data, inputs, len(given)):
        print(line, file=sys.stderr)
    return inputs


def numba_without_blas_check() -> None:
    """Load Numba's NumPy support (`numba.np.arraymath`) with SciPy hidden, so that its
    check for a BLAS finds none; devplan-run does this in its own process before the Numba
    backend runs a program's kernels (Numba is not imported for a program without any).

    That module is loaded when the first kernel compiles or comes from the cache, and it
    imports `scipy.linalg` then only to learn whether `np.correlate` and `np.convolve` may
    call BLAS (without, they loop; `np.dot` and `np.linalg` import SciPy themselves when
    compiled): some 0.17 s of CPU, over a tenth of a warm `--kernel-backend numba` run.
    devplan's kernels call neither. Embedders (`devplan.execute`) keep Numba as it is:
    their own Numba code may use those functions, and this changes how they round."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    hidden = "scipy.linalg" if "scipy" in sys.modules else "scipy"
    sys.modules[hidden] = None  # pyright: ignore[reportArgumentType]  (import fails)
    try:
        importlib.import_module("numba.np.arraymath")
    except ImportError:
        pass  # a Numba that needs SciPy there: it is imported as usual when a kernel runs
    finally:
        del sys.modules[hidden]


def _holds_a_kernel(module: Any) -> bool:
    """Whether `module` (a level-2 program) has a `kernel.func`, which a Numba backend
    compiles, importing Numba."""
    return any(op.name == "kernel.func" for op in module.walk())


def run(args: argparse.Namespace, own_process: bool = False) -> int:
    """Run the program `args` name; `own_process` when devplan-run is the program (its
    console script, `python -m`), not a call from Python."""
    from xdsl.dialects.builtin import BFloat16Type

    from .. import apply, parse
    from ..execution import compile_program, execute
    from ..runtime.executor import find_entry, source_type

    module = parse(Path(args.file)) if args.file not in (None, "-") else _parse_stdin()
    if args.pipeline:
        apply(module, args.pipeline)
    elif any(op.name.startswith(("gpu.", "async.")) for op in module.walk()):
        # A program in MLIR's gpu (and async) dialect: convert it as
        # `--pipeline convert-gpu-to-device`.
        apply(module, "convert-gpu-to-device")
    # Level 1 is lowered here (once); unsupported IR is reported before any input is read.
    program = compile_program(module, args.kernel_backend)
    if own_process and args.kernel_backend == "numba" and _holds_a_kernel(program.module):
        numba_without_blas_check()
    if args.print_pipeline_ir:
        print(program.module)
    inputs = _inputs(args, program.module)
    result = execute(
        module,
        inputs,
        entry=args.entry,
        system=args.system,
        kernel_backend=args.kernel_backend,
        strict=args.strict,
    )
    results = source_type(find_entry(program.module, args.entry)).outputs.data
    for i, (value, type_) in enumerate(zip(result.outputs, results, strict=True)):
        element = getattr(type_, "element_type", type_)
        print(format_output(i, value, args.print_full, isinstance(element, BFloat16Type)))
    if args.stats:
        print(result.report.format())
    if args.trace:
        try:
            result.report.write_chrome_trace(args.trace)
        except OSError as e:
            raise DevplanError(
                f"error: cannot write the trace to '{args.trace}': {e.strerror or e}"
            ) from None
    if result.leaks:
        print(
            f"warning: {len(result.leaks)} device buffer(s) leaked (never freed): "
            + "; ".join(b.describe() for b in result.leaks)
            + " (--strict makes this an error)",
            file=sys.stderr,
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_tool(_main, argv)


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = _parser().parse_args(argv)
    except KeyboardInterrupt:
        return report_interrupted("devplan-run")
    try:
        with progress_to(progress_sink("devplan-run", args.quiet, args.progress)):
            return with_deep_stack(run)(args, argv is None)
    except KeyboardInterrupt:
        return report_interrupted("devplan-run")
    except BrokenPipeError:
        return quiet_broken_pipe()
    except Exception as e:
        sys.stdout.flush()  # what the program printed comes before the error (2>&1)
        if args.debug:
            raise
        return finish("devplan-run", e)


if __name__ == "__main__":
    sys.exit(main())
