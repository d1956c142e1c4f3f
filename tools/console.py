"""What devplan-opt and devplan-run share as command-line tools: the version line, help
that never breaks a name, where progress goes, and Ctrl-C."""

from __future__ import annotations

import argparse
import sys
import textwrap
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from ..diagnostics.progress import ProgressSink

INTERRUPTED = 130
"""Exit status after Ctrl-C, as shells report a process ended by SIGINT (128 + 2)."""


def version_line(tool: str) -> str:
    """`devplan-opt 0.1.0 (xdsl 0.74.0)`: the installed distributions' versions, the
    one source of devplan's version."""
    try:
        devplan = version("devplan")
    except PackageNotFoundError:  # run from a tree that was never installed
        devplan = "unknown"
    return f"{tool} {devplan} (xdsl {version('xdsl')})"


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
