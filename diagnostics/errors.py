"""User errors and messages placed in the source: `file:line:col: error: ...`.

Every user error devplan raises is a `DevplanError` whose text is the whole message a
tool prints; one tied to a place in IR is a `LocatedError`, worded as MLIR words its
diagnostics:

    file.mlir:12:3: error: 'device.copy' cannot copy memref<16xf32> to memref<8xf32>
      device.copy %h to %d : memref<16xf32> to memref<8xf32>
      ^

The caret line quotes the input, which the parser registers by name (`register_source`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException


class DevplanError(Exception):
    """A user error: its text is the whole message a tool prints."""


class LocatedError(DevplanError, DiagnosticException):
    """A user error tied to a place in IR (`file:line:col: error: ...`)."""


_sources: dict[str, str] = {}
"""Text of every input parsed in this process, by name, for caret lines."""


def register_source(name: str, text: str) -> None:
    """Remember `text` as the contents of `name` so diagnostics can quote it."""
    _sources[name] = text


def registered_source(name: str) -> str | None:
    """The text `register_source` remembered as `name` (None: none), for a process that
    quotes it too (a Ray actor compiling a kernel parsed here)."""
    return _sources.get(name)


def _source_line(filename: str, line: int) -> str | None:
    text = _sources.get(filename)
    if text is None:
        try:
            text = Path(filename).read_text()
        except (OSError, UnicodeDecodeError):
            return None
        _sources[filename] = text
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else None


def format_diagnostic(
    filename: str, line: int, col: int, message: str, width: int = 1, kind: str = "error"
) -> str:
    """`file:line:col: error: message`, then the source line and a caret under `col`."""
    text = f"{filename}:{line}:{col}: {kind}: {message}"
    source = _source_line(filename, line)
    if source is not None:
        width = max(1, min(width, len(source) - col + 1))
        text += f"\n{source}\n{' ' * (col - 1)}{'^' * width}"
    return text


def location_of(op: Operation) -> FileLineColLoc | None:
    """The op's own location, or that of its nearest located ancestor."""
    current: Operation | None = op
    while current is not None:
        if isinstance(current.location, FileLineColLoc):
            return current.location
        current = current.parent_op()
    return None


def op_text(op: Operation) -> str:
    """`op` as xDSL prints it, on one line: an op with regions up to its first `{`, then
    `...}`. What a diagnostic shows of an op that has no location (IR parsed by a parser
    that keeps none, e.g. plain xdsl-opt's, or built in Python)."""
    from io import StringIO

    from xdsl.printer import Printer

    stream = StringIO()
    Printer(stream=stream).print_op(op)
    lines = stream.getvalue().strip().splitlines()
    first = lines[0].strip() if lines else op.name
    return f"{first} ... }}" if len(lines) > 1 and first.endswith("{") else first


def diagnostic_at(op: Operation, message: str, kind: str = "error") -> str:
    """A diagnostic text placed at `op`; when it has no location, `<unknown>` and the op
    as printed, as MLIR's "see current operation"."""
    loc = location_of(op)
    if loc is None:
        return f"<unknown>: {kind}: {message}\n  see current operation: {op_text(op)}"
    return format_diagnostic(loc.filename.data, loc.line.data, loc.column.data, message, 1, kind)


def error_at(
    op: Operation, message: str, notes: Sequence[tuple[Operation, str]] = ()
) -> LocatedError:
    """A `LocatedError` whose message names `op`'s place; raise it.

    Each of `notes` is another place that takes part in the error (the other side of a
    conflict): it follows the error as `file:line:col: note: ...` with its caret line.
    """
    text = diagnostic_at(op, message)
    for where, note in notes:
        text += "\n" + diagnostic_at(where, note, kind="note")
    return LocatedError(text)


def exception_text(error: BaseException) -> str:
    """A Python exception raised inside xDSL, as the text of a diagnostic."""
    text = str(error).removeprefix("Operation does not verify: ").strip()
    return text or f"invalid ({type(error).__name__} in xDSL)"


def xdsl_failure(error: BaseException, what: str) -> str:
    """Why xDSL failed on user input, for a diagnostic about `what` ("'linalg.reduce'",
    "this attribute"). xDSL's diagnostics, and the plain `Exception`s and `ValueError`s its
    checks raise, say what is wrong; a Python error from inside one of its parsers or
    verifiers (an `IndexError` on a malformed op, `NotImplementedError` for what xDSL 0.74
    does not implement) says only where xDSL stopped, so the message says the input is
    what xDSL could not handle and names the exception."""
    text = str(error).removeprefix("Operation does not verify: ").strip()
    kind = type(error).__name__
    if text and (isinstance(error, DiagnosticException) or type(error) in (Exception, ValueError)):
        return f"{what} {text}"
    if isinstance(error, NotImplementedError):
        return f"{what} uses what xDSL 0.74 does not implement: {text or kind}"
    return f"{what} is malformed: xDSL failed on it with {kind}{': ' + text if text else ''}"
