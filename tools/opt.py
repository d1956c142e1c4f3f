"""`devplan-opt`: xDSL's opt driver with every devplan dialect and pass.

On top of `xdsl-opt` it gives parsed ops their source locations, verifies with
located diagnostics, and turns every user error (bad IR, unknown pass or option,
missing file) into one message and exit status 1; `--debug` shows tracebacks.
It follows mlir-opt's conventions: `-` or no file reads stdin; `--pass-pipeline` takes
`builtin.module(a,b{x=1})` as well as xdsl-opt's `a,b{x=1}`; the IR is the only thing on
stdout (diagnostics, remarks, `--time-passes`, `--print-between-passes` and progress
lines go to stderr); `--verify-diagnostics` checks `expected-error` annotations
(`diagnostics/expected.py`); Ctrl-C is exit status 130.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import textwrap
import time
from collections.abc import Sequence
from io import BytesIO
from typing import IO, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from .. import MODULE_VERIFIERS
from ..diagnostics import (
    DevplanError,
    LocatedError,
    LocatingParser,
    register_source,
    remarks_to,
    verify_located,
    with_deep_stack,
)
from ..diagnostics.expected import check_diagnostics, expected_diagnostics, produced_diagnostics
from ..diagnostics.progress import progress_to
from ..passes.pipeline import build_pipeline, pass_option_fields, verified_by_itself
from ..passes.registry import PASSES
from .console import (
    STDIN,
    PipelineOnce,
    UnbrokenHelpFormatter,
    add_feedback_arguments,
    finish,
    not_utf8,
    progress_sink,
    quiet_broken_pipe,
    report_interrupted,
    run_tool,
    version_line,
)


class DevplanOptMain(xDSLOptMain):
    """`xDSLOptMain` with source locations and located verification."""

    version_format = version_line("devplan-opt")
    _line_offset: int = 0

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="devplan modular optimizer driver", args=args)

    def register_all_dialects(self) -> None:
        # devplan's context: its versions of upstream dialects in place of xDSL's (upstream/).
        from .. import context

        self.ctx = context()

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            name = self.get_input_name()
            try:
                text = io.read().decode("utf-8")
            except UnicodeDecodeError as e:
                raise DevplanError(f"error: {name}: {not_utf8(e)}") from None
            parser = LocatingParser(self.ctx, text, name)
            parser.line_offset = self._line_offset
            return parser.parse_module(not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir

    def get_input_name(self) -> str:
        return self.args.input_file or STDIN

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        if self.args.input_file is not None:
            return super().get_input_stream()
        # Read whole, so that diagnostics in any chunk can quote its lines.
        data = sys.stdin.buffer.read()
        register_source(STDIN, data.decode("utf-8", "replace"))
        return BytesIO(data), "mlir"

    def prepare_input(self) -> tuple[list[tuple[IO[bytes], int]], str]:
        if self.args.input_file is not None:
            # Chunks of --split-input-file quote lines of the whole file in diagnostics.
            with open(self.args.input_file, "rb") as f:
                register_source(self.get_input_name(), f.read().decode("utf-8", "replace"))
        return super().prepare_input()

    def prepare_output(self) -> IO[str]:
        try:
            return super().prepare_output()
        except OSError as e:  # it was reported as "cannot read" the output file
            raise DevplanError(
                f"error: cannot write '{self.args.output_file}': {e.strerror or e}"
            ) from None

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def setup_pipeline(self) -> None:
        if self.args.input_file == "-":
            self.args.input_file = None  # mlir-opt's name for stdin
        # The pipeline calls back before the first pass and after every pass (also when
        # it is empty); verify there, with locations, instead of xDSL's unlocated
        # module.verify(); what is reported about the run goes to stderr.
        self.pipeline = build_pipeline(self.args.passes, self.available_passes, self._between)
        self._pass_started = time.perf_counter()

    def _between(
        self, previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
    ) -> None:
        if previous is not None and self.args.time_passes:
            elapsed = time.perf_counter() - self._pass_started
            print(f"pass '{previous.name}' took {elapsed * 1e3:.3f} ms", file=sys.stderr)
        if not self.args.disable_verify and not verified_by_itself(previous):
            try:
                verify_located(module, MODULE_VERIFIERS)
            except LocatedError as e:
                if previous is None:
                    raise
                raise LocatedError(f"{e} (IR produced by pass '{previous.name}')") from e
        if previous is not None and following is not None and self.args.print_between_passes:
            print(f"// -----// IR Dump After {previous.name} //----- //", file=sys.stderr)
            Printer(
                stream=sys.stderr,
                print_generic_format=self.args.print_op_generic,
                print_properties_as_attributes=self.args.print_no_properties,
                print_debuginfo=self.args.print_debuginfo,
            ).print_op(module)
            print("\n", file=sys.stderr, flush=True)
        self._pass_started = time.perf_counter()

    def run(self) -> None:
        if self.args.list_passes:
            print(list_passes(self.available_passes))
            return
        if self.args.shrink:
            super().run()
            return
        # As mlir-opt does: every chunk runs; a chunk's error is reported (stderr) and the
        # next chunk runs; the exit status is 1 when any chunk failed.
        chunks, file_extension = self.prepare_input()
        output = self.prepare_output()
        failed = False
        try:
            for i, (chunk, offset) in enumerate(chunks):
                try:
                    if i > 0:
                        output.write("// -----\n")
                    if self.args.verify_diagnostics:
                        failed |= not self._run_verifying(chunk, file_extension, offset, output)
                    else:
                        failed |= not self._run_chunk(chunk, file_extension, offset, output)
                    output.flush()
                finally:
                    chunk.close()
        finally:
            if output is not sys.stdout:
                output.close()
        if failed:
            raise SystemExit(1)

    def _run_chunk(self, chunk: IO[bytes], extension: str, offset: int, output: IO[str]) -> bool:
        """Parse, transform and print one chunk; report its error; whether it succeeded."""
        try:
            module = self.parse_chunk(chunk, extension, offset)
            if module is not None:
                self.apply_passes(module)
                output.write(self.output_resulting_program(module))
            return True
        except (ParseError, DiagnosticException, DevplanError) as e:
            output.flush()
            print(chunk_error_text(e, offset), file=sys.stderr)
            # xDSL's --parsing-diagnostics: a parse error is reported, not a failure.
            return isinstance(e, ParseError) and self.args.parsing_diagnostics

    def _run_verifying(
        self, chunk: IO[bytes], extension: str, offset: int, output: IO[str]
    ) -> bool:
        """`--verify-diagnostics` for one chunk: run it collecting every diagnostic, then
        check them against the chunk's `expected-*` annotations; whether all matched."""
        name = self.get_input_name()
        text = chunk.read().decode("utf-8", "replace")
        expected, failures = expected_diagnostics(name, text, offset)
        reported: list[str] = []
        with remarks_to(reported.append):
            try:
                module = self.parse_chunk(BytesIO(text.encode()), extension, offset)
                if module is not None:
                    self.apply_passes(module)
                    output.write(self.output_resulting_program(module))
            except (ParseError, DiagnosticException, DevplanError) as e:
                reported.append(chunk_error_text(e, offset))
        produced = [d for message in reported for d in produced_diagnostics(message)]
        failures += check_diagnostics(name, expected, produced)
        if failures:
            output.flush()
            print("\n".join(failures), file=sys.stderr)
        return not failures

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.formatter_class = UnbrokenHelpFormatter
        # xDSL's input, -t and -p are re-declared below, with help that fits devplan.
        arg_parser._optionals.conflict_handler = "resolve"  # pyright: ignore[reportPrivateUsage]
        for action in arg_parser._actions:  # pyright: ignore[reportPrivateUsage]
            if action.dest == "input_file":
                action.help = "the input (.mlir); '-' or none reads stdin"
        arg_parser.add_argument(
            "-t",
            "--target",
            default="mlir",
            help=f"what to print: {', '.join(self.available_targets)} (default: mlir)",
        )
        arg_parser.add_argument(
            "-p",
            "--passes",
            "--pass-pipeline",
            dest="passes",
            action=PipelineOnce,
            default="",
            metavar="PIPELINE",
            help="the passes to run: 'a,b{option=value}' (xdsl-opt) or "
            "'builtin.module(a,b{option=value})' (mlir-opt); --list-passes lists them",
        )
        arg_parser.add_argument(
            "--list-passes",
            action="store_true",
            help="list devplan's passes with their options, then xDSL's, and exit",
        )
        arg_parser.add_argument(
            "--print-between-passes",
            action="store_true",
            help="print the IR after each pass but the last to stderr",
        )
        arg_parser.add_argument(
            "--time-passes", action="store_true", help="print each pass's time to stderr"
        )
        arg_parser.add_argument(
            "--verify-diagnostics",
            action="store_true",
            help="check the diagnostics against the input's 'expected-error@+1 {{text}}' "
            "(-warning, -remark, -note) annotations, as mlir-opt does; exit 1 when one is "
            "missing or unexpected",
        )
        arg_parser.add_argument(
            "--parsing-diagnostics",
            action="store_true",
            help="report a parse error on stderr and exit 0 (xdsl-opt's option)",
        )
        add_feedback_arguments(arg_parser)
        arg_parser.add_argument(
            "--debug", action="store_true", help="show Python tracebacks for errors"
        )


def list_passes(available: dict[str, Any]) -> str:
    """devplan's passes, one block each (name, description, options), then xDSL's names."""
    blocks: list[str] = []
    for name, factory in PASSES.items():
        pass_class = factory()
        lines = [f"{name}: {summary(pass_class.__doc__)}"]
        for option, type_, default in pass_option_fields(pass_class):
            lines.append(f"  {option}: {type_} = {default}")
        if len(lines) == 1:
            lines.append("  (no options)")
        blocks.append("\n".join(lines))
    others = ", ".join(sorted(n for n in available if n not in PASSES))
    blocks.append(
        "xDSL's passes (options: see xdsl-opt):\n"
        + textwrap.fill(
            others,
            88,
            initial_indent="  ",
            subsequent_indent="  ",
            break_on_hyphens=False,
            break_long_words=False,
        )
    )
    return "\n\n".join(blocks)


def summary(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    if not doc:
        return "(no description)"
    return " ".join(doc.strip().split("\n\n", 1)[0].split())


def chunk_error_text(error: BaseException, offset: int) -> str:
    """The message of a chunk's error; a ParseError's lines counted from the file's start."""
    if isinstance(error, ParseError):
        error.span = dataclasses.replace(error.span, line_offset=offset)
    return str(error)


def main(argv: Sequence[str] | None = None) -> int:
    return run_tool(_main, argv)


def _main(argv: Sequence[str] | None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        tool = DevplanOptMain(args=args)
        sink = progress_sink("devplan-opt", tool.args.quiet, tool.args.progress)
        with progress_to(sink):
            with_deep_stack(tool.run)()
    except KeyboardInterrupt:
        return report_interrupted("devplan-opt")
    except SystemExit as e:
        # argparse's usage errors exit with 2; they are user errors (1) here.
        return 1 if e.code == 2 else (e.code if isinstance(e.code, int) else 1)
    except BrokenPipeError:
        return quiet_broken_pipe()
    except (Exception, ArgSpecParseError) as e:
        if debug:
            raise
        return finish("devplan-opt", e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
