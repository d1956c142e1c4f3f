"""Source locations and one-line user diagnostics for devplan.

xDSL's parser leaves every op at `loc(unknown)` and reports verify errors without a
place. devplan stamps each parsed op with `loc("file":line:col)` and turns every user
error into a single message of the form

    file.mlir:12:3: error: 'device.copy' cannot copy memref<16xf32> to memref<8xf32>
      device.copy %h to %d : memref<16xf32> to memref<8xf32>
      ^

Errors raised from here are `DevplanError`s (or xDSL's `ParseError` and
`DiagnosticException`, whose text is already in this form), so tools print
`str(error)` and exit 1.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnregisteredAttr
from xdsl.ir import Data, Operation, ParametrizedAttribute
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Span


class DevplanError(Exception):
    """A user error: its text is the whole message a tool prints."""


class LocatedError(DevplanError, DiagnosticException):
    """A user error tied to a place in IR (`file:line:col: error: ...`)."""


_sources: dict[str, str] = {}
"""Text of every input parsed in this process, by name, for caret lines."""


def register_source(name: str, text: str) -> None:
    """Remember `text` as the contents of `name` so diagnostics can quote it."""
    _sources[name] = text


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


def diagnostic_at(op: Operation, message: str, kind: str = "error") -> str:
    """A diagnostic text placed at `op` (or `<unknown>` when it has no location)."""
    loc = location_of(op)
    if loc is None:
        return f"<unknown>: {kind}: {message}"
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


def format_parse_error(error: ParseError) -> str:
    """Re-render xDSL's `ParseError` as a one-line diagnostic with a caret line."""
    span = error.span
    where = span.get_location()
    context_start = span.input.get_start_of_line(span.start)
    context_end = span.input.get_end_of_line(span.start)
    source = span.input.content[context_start:context_end]
    if isinstance(source, bytes):
        source = source.decode("utf-8", "replace")
    col = span.start - context_start
    width = max(1, min(span.end, context_end) - span.start)
    return (
        f"{where.file}:{where.line}:{where.col}: error: {error.msg}\n"
        f"{source}\n{' ' * col}{'^' * width}"
    )


def _point_at_op_name(error: ParseError) -> Span[str] | Span[bytes]:
    """xDSL spans an unregistered op's error after its name; point at the name."""
    match = re.fullmatch(r"Operation (\S+) is not registered", error.msg)
    if match is None:
        return error.span
    span = error.span
    name = match.group(1)
    if isinstance(span.input.content, bytes):
        return span  # devplan parses text; byte inputs keep xDSL's span
    found = span.input.content.rfind(name, 0, span.end)
    if found < 0:
        return span
    return dataclasses.replace(span, start=found, end=found + len(name))


class LocatedParseError(ParseError):
    """A `ParseError` that prints as a devplan diagnostic (`file:line:col: error: ...`)."""

    def __str__(self) -> str:
        return format_parse_error(self)


class LocatingParser(Parser):
    """A `Parser` that gives each parsed op its `loc("file":line:col)`.

    It also turns verify failures of attributes built while parsing (which xDSL
    reports without a place) into `ParseError`s spanning the attribute's text.
    """

    line_offset: int = 0
    """Lines before this input in the original file (for `--split-input-file` chunks)."""

    def parse_operation(self) -> Operation:
        where = Span(self.pos, self.pos, self.lexer.input).get_location()
        op = super().parse_operation()
        if not isinstance(op.location, FileLineColLoc):
            op.location = FileLineColLoc(
                StringAttr(where.file),
                IntAttr(where.line + self.line_offset),
                IntAttr(int(where.col)),
            )
        return op

    def _parse_dialect_type_or_attribute_body(
        self,
        attr_name: str,
        is_type: bool,
        is_opaque: bool,
        starting_opaque_pos: int | None,
    ) -> UnregisteredAttr | ParametrizedAttribute | Data[Any]:
        start = self.pos
        try:
            return super()._parse_dialect_type_or_attribute_body(  # pyright: ignore[reportPrivateUsage]
                attr_name, is_type, is_opaque, starting_opaque_pos
            )
        except VerifyException as e:
            raise LocatedParseError(Span(start, self.pos, self.lexer.input), str(e)) from e

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except LocatedParseError:
            raise
        except ParseError as e:
            raise LocatedParseError(_point_at_op_name(e), e.msg) from None


ModuleVerifier = Callable[[Operation], None]
"""A dialect-level check of a whole module (e.g. its discardable attributes)."""

_module_verifiers: dict[str, ModuleVerifier] = {}


def register_module_verifier(name: str, verifier: ModuleVerifier) -> None:
    """Have `verify_located` also run `verifier(module)` after the op verifiers.

    For checks no single op owns, such as a dialect's discardable attributes (MLIR's
    `verifyOperationAttribute`); `verifier` raises a `LocatedError`. Registering
    the same `name` again replaces the earlier verifier.
    """
    _module_verifiers[name] = verifier


def _redefinition(table: Operation, message: str) -> LocatedError | None:
    """xDSL reports a duplicate symbol at the symbol table; when that is the implicit,
    unlocated top-level module, place it at the second definition instead."""
    match = re.fullmatch(r'Redefinition of symbol "(.*)"', message)
    if match is None or location_of(table) is not None or not table.regions:
        return None
    name = StringAttr(match.group(1))
    first: Operation | None = None
    for op in table.regions[0].blocks[0].ops:
        if op.get_attr_or_prop("sym_name") != name:
            continue
        if first is None:
            first = op
            continue
        loc = location_of(first)
        where = f" (first defined at line {loc.line.data})" if loc is not None else ""
        return error_at(op, f"'{op.name}' redefines symbol @{name.data}{where}")
    return None


def verify_located(module: Operation) -> None:
    """Verify `module` op by op; the first failure becomes a located diagnostic.

    Ops are verified outermost first without their nested ops, so a message points
    at the innermost op that is actually wrong rather than at the module. Then the
    registered module verifiers run.
    """
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException as e:
            if isinstance(e, LocatedError):
                raise
            message = str(e).removeprefix("Operation does not verify: ").strip()
            if (redefinition := _redefinition(op, message)) is not None:
                raise redefinition from e
            raise error_at(op, f"'{op.name}' {message}") from e
    for verifier in list(_module_verifiers.values()):
        verifier(module)


__all__ = [
    "DevplanError",
    "LocatedError",
    "LocatedParseError",
    "LocatingParser",
    "diagnostic_at",
    "error_at",
    "format_diagnostic",
    "format_parse_error",
    "location_of",
    "register_module_verifier",
    "register_source",
    "verify_located",
]
