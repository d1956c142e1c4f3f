"""`devplan-opt`: xDSL's opt driver with every devplan dialect and pass.

On top of `xdsl-opt` it gives parsed ops their source locations, verifies with
located diagnostics, and turns every user error (bad IR, unknown pass or option,
missing file) into one message and exit status 1; `--debug` shows tracebacks.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from .. import MODULE_VERIFIERS, __version__
from ..diagnostics import (
    DevplanError,
    LocatedError,
    LocatingParser,
    register_source,
    verify_located,
    with_deep_stack,
)
from ..passes.pipeline import build_pipeline


class DevplanOptMain(xDSLOptMain):
    """`xDSLOptMain` with source locations and located verification."""

    version_format = f"devplan-opt {__version__} (xdsl {{xdsl_version}})"
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
            if self.args.input_file is None and self._line_offset == 0:
                register_source(name, text)
            parser = LocatingParser(self.ctx, text, name)
            parser.line_offset = self._line_offset
            return parser.parse_module(not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir

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
        build_pipeline(self.args.passes, self.available_passes)  # clear errors first
        super().setup_pipeline()
        xdsl_callback = self.pipeline.callback
        verify = not self.args.disable_verify
        # The pipeline calls back before the first pass and after every pass (also when
        # it is empty); verify there once, with locations, instead of xDSL's unlocated
        # module.verify() (the flag is read only by xDSL's callback from here on).
        self.args.disable_verify = True

        def verify_then_continue(
            previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
        ) -> None:
            if verify:
                try:
                    verify_located(module, MODULE_VERIFIERS)
                except LocatedError as e:
                    if previous is None:
                        raise
                    raise LocatedError(f"{e} (IR produced by pass '{previous.name}')") from e
            if xdsl_callback is not None:
                xdsl_callback(previous, module, following)

        self.pipeline = dataclasses.replace(self.pipeline, callback=verify_then_continue)

    def run(self) -> None:
        if not self.args.split_input_file or (
            self.args.verify_diagnostics or self.args.parsing_diagnostics
        ):
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
                    module = self.parse_chunk(chunk, file_extension, offset)
                    if module is not None:
                        self.apply_passes(module)
                        output.write(self.output_resulting_program(module))
                    output.flush()
                except (ParseError, DiagnosticException, DevplanError) as e:
                    if isinstance(e, ParseError):
                        e.span = dataclasses.replace(e.span, line_offset=offset)
                    output.flush()
                    print(user_error_text(e), file=sys.stderr)
                    failed = True
                finally:
                    chunk.close()
        finally:
            if output is not sys.stdout:
                output.close()
        if failed:
            raise SystemExit(1)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--debug", action="store_true", help="show Python tracebacks for errors"
        )


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


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        with_deep_stack(DevplanOptMain(args=args).run)()
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
