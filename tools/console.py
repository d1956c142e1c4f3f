"""What devplan-opt and devplan-run share as command-line tools: the version line, help
that never breaks a name, where progress goes, Ctrl-C, and the message and exit status of
an error. Nothing here imports xDSL's opt driver, so devplan-run starts without it."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from ..diagnostics import DevplanError
from ..diagnostics.progress import ProgressSink

INTERRUPTED = 130
"""Exit status after Ctrl-C, as shells report a process ended by SIGINT (128 + 2)."""


def run_tool(tool_main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None) -> int:
    """`tool_main(argv)`, with the collector tuned for a process that ends when it returns.

    Run as the program (`argv` is None: its console script, `python -m`), a tool's objects
    mostly live until it exits: the op classes xDSL builds when a dialect loads, the IR,
    the compiled program. Python's default thresholds (700, 10, 10) scan them over and
    over while they are made (`devplan-run examples/mlp.mlir` spent about a tenth of its
    CPU time there), so the young generation waits for 100 000 new objects; and once
    `tool_main` returns every object is frozen (`gc.freeze`), so that finalization does not
    scan them all for cycles again (0.3 s of CPU, a third of that run, with the numpy
    backend; 0.6 s with numba). Called with an argument list (tests, embedding), a tool
    leaves the collector as it was."""
    if argv is not None:
        return tool_main(argv)
    thresholds = gc.get_threshold()
    gc.set_threshold(100_000, 50, 50)
    try:
        return tool_main(argv)
    finally:
        gc.freeze()
        gc.set_threshold(*thresholds)


def version_line(tool: str) -> str:
    """`devplan-opt 0.1.0 (xdsl 0.74.0)`: the installed distributions' versions, the
    one source of devplan's version."""
    # importlib.metadata costs every run start-up time that only --version needs.
    from importlib.metadata import PackageNotFoundError, version

    try:
        devplan = version("devplan")
    except PackageNotFoundError:  # run from a tree that was never installed
        devplan = "unknown"
    return f"{tool} {devplan} (xdsl {version('xdsl')})"


class VersionAction(argparse.Action):
    """`--version`: print `version_line(tool)` and exit, reading the installed versions
    only then (argparse's own action wants the text when the parser is built)."""

    def __init__(self, option_strings: list[str], dest: str, tool: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)
        self.tool = tool

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        print(version_line(self.tool))
        parser.exit()


class UnbrokenHelpFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped only at spaces: `plan-devices` is never cut at its hyphen."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        text = " ".join(text.split())
        return textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)


def add_feedback_arguments(parser: argparse.ArgumentParser) -> None:
    """`--quiet` and `--progress` (one or the other), which decide whether progress lines
    are printed."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quiet", action="store_true", help="print no progress lines for long work")
    group.add_argument(
        "--progress",
        action="store_true",
        help="print a progress line for work that runs longer than a second even when "
        "stderr is not a terminal (by default only a terminal gets them)",
    )


def progress_sink(tool: str, quiet: bool, forced: bool) -> ProgressSink | None:
    """Where the tool sends progress lines: stderr when it is a terminal or `--progress`
    asks, never with `--quiet`."""
    if quiet or not (forced or sys.stderr.isatty()):
        return None

    def print_line(text: str) -> None:
        print(f"{tool}: {text}...", file=sys.stderr, flush=True)

    return print_line


def report_interrupted(tool: str) -> int:
    """Ctrl-C: one line on stderr, exit status 130, no traceback."""
    sys.stdout.flush()
    print(f"{tool}: interrupted", file=sys.stderr, flush=True)
    return INTERRUPTED


class PipelineOnce(argparse.Action):
    """The options naming a pass pipeline (`-p`, `--pass-pipeline`, ...) name one: giving
    it twice is an error rather than the last one silently winning."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if getattr(namespace, self.dest, None):
            parser.error(f"{option_string}: the pass pipeline is already given; give it once")
        setattr(namespace, self.dest, values)


STDIN = "<stdin>"
"""The input's name in diagnostics when it comes from stdin (as mlir-opt names it)."""


def not_utf8(error: UnicodeDecodeError) -> str:
    """What to say about input that is not UTF-8 text."""
    return f"the input is not UTF-8 text (byte {error.start} is {error.object[error.start]:#04x})"


def user_error_text(error: BaseException) -> str | None:
    """The message to print for a user error, or None when `error` is a bug."""
    if isinstance(error, ParseError | DiagnosticException | DevplanError):
        return str(error)
    if isinstance(error, ArgSpecParseError):
        return f"error: {error}"
    if isinstance(error, FileNotFoundError | IsADirectoryError | PermissionError):
        return f"error: cannot read '{error.filename}': {error.strerror}"
    if isinstance(error, UnicodeDecodeError):
        return f"error: {not_utf8(error)}"
    if isinstance(error, MemoryError):
        return "error: out of host memory (the input needs more than this machine can allocate)"
    if isinstance(error, ValueError):
        return f"error: {error}"
    return None


def finish(tool: str, error: BaseException) -> int:
    """Print the message for `error` and return the exit status (1 user error, 2 bug)."""
    text = user_error_text(error)
    if text is None:
        print(
            f"{tool}: internal error: {type(error).__name__}: {error}\n"
            f"This is a bug in devplan; please report it with the input "
            "(rerun with --debug for the traceback).",
            file=sys.stderr,
        )
        return 2
    print(text, file=sys.stderr)
    return 1


def quiet_broken_pipe() -> int:
    """The reader of stdout went away (`| head`): stop quietly, as Unix tools do."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError):
        os.dup2(devnull, sys.stdout.fileno())
    return 0
