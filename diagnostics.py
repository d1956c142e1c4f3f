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

import bisect
import dataclasses
import functools
import math
import os
import queue
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar
from weakref import WeakKeyDictionary

from xdsl.context import Context
from xdsl.dialects.builtin import (
    AnyFloat,
    CallSiteLoc,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    ModuleOp,
    NameLoc,
    RankedStructure,
    StringAttr,
    UnregisteredAttr,
)
from xdsl.ir import Attribute, Block, BlockArgument, Data, Operation, ParametrizedAttribute
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Input, Position, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken, MLIRTokenKind


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


INDEX_RANGE = (-(1 << 63), 1 << 64)
"""Values an `index` literal may spell (64 bits, read as signed or unsigned), as
[low, high); MLIR's own range for a 64-bit signless integer."""


def literal_range_error(value: int | float, type_: Attribute) -> str | None:
    """Why the literal `value` cannot be of `type_` (None when it can).

    Integers must fit the type's bits read as signed or unsigned (`-128` to `255` for
    `i8`, 64 bits for `index`), and a float is no integer. (Float literals are checked
    where they are parsed: a decimal literal that became infinite overflowed its type,
    while a hexadecimal bit pattern may spell infinity.)
    """
    if isinstance(type_, IntegerType | IndexType):
        if isinstance(value, float):
            return f"float literal {value!r} is not valid for integer type {type_}"
        low, high = INDEX_RANGE if isinstance(type_, IndexType) else type_.value_range()
        if not low <= value < high:
            return (
                f"integer literal {value} is out of range for {type_} (valid: {low} to {high - 1})"
            )
    return None


def _float_overflow(literal: str, type_: object) -> str:
    return f"float literal {literal.strip()} is out of range for {type_} (it would be infinite)"


_EXPLICIT_LOCATIONS: WeakKeyDictionary[Operation, LocationAttr] = WeakKeyDictionary()
"""Call-site and name locations written in the source (`loc(callsite(...))`), which the
parser replaces by the op's file:line:col; kept for what reports them (assertions)."""


def explicit_location(op: Operation) -> LocationAttr | None:
    """The call-site or name location `op` was written with, if any."""
    return _EXPLICIT_LOCATIONS.get(op)


class _LinearStringLexer(MLIRLexer):
    """xDSL's lexer with string literals lexed in time linear in their length.

    xDSL 0.74 matches a string literal with a regular expression that nests `+` inside
    `*`; on a literal with no closing quote (a truncated file, a newline or a bad escape
    inside it) the regex engine tries every way of splitting the text, exponential in
    its length (a 150-byte unclosed literal takes minutes). The possessive quantifiers
    here never give back what they matched, and a literal that does not close is
    reported at the place it stops.
    """

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')
    _string_body_regex = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+')

    def _lex_string_literal(self, start_pos: Position) -> MLIRToken:
        content = self.input.content
        body = self._string_body_regex.match(content, start_pos)
        assert body is not None  # the opening quote always matches
        stop = body.end()
        if stop >= len(content) or content[stop:] == "\\":
            raise ParseError(
                Span(start_pos, start_pos + 1, self.input),
                "string literal is not closed before the end of the input",
            )
        if content[stop] == "\\":
            raise ParseError(
                Span(stop, stop + 1, self.input),
                "invalid escape sequence in string literal"
                ' (valid: \\n, \\t, \\\\, \\" and two hex digits)',
            )
        if content[stop] != '"':
            raise ParseError(
                Span(start_pos, start_pos + 1, self.input),
                "string literal is not closed before the end of the line",
            )
        return super()._lex_string_literal(start_pos)


_OP_NAME_AFTER_RESULTS = re.compile(
    r"(?:%[\w.$-]+(?::\d+)?\s*(?:,\s*%[\w.$-]+(?::\d+)?\s*)*=\s*)?([A-Za-z_][\w.$-]*)"
)
"""The op name of a custom-form op, after its result list."""


class LocatingParser(Parser):
    """A `Parser` that gives each parsed op its `loc("file":line:col)`.

    It also turns verify failures of attributes built while parsing (which xDSL
    reports without a place, or as a bare Python exception) into `ParseError`s spanning
    the attribute's or op's text, checks that literals fit their types (xDSL wraps an
    out-of-range `index` and turns an overflowing float into infinity), and reads an
    input with nothing but comments as an empty module, as MLIR does.
    """

    line_offset: int = 0
    """Lines before this input in the original file (for `--split-input-file` chunks)."""

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<unknown>") -> None:
        text = input.decode("utf-8") if isinstance(input, bytes) else input
        super().__init__(ctx, "", name)
        # The lexer reads the first token at once: swap in the linear one before that.
        try:
            self._parser_state = ParserState(_LinearStringLexer(Input(text, name)))
        except ParseError as e:  # in the first token: it printed in xDSL's own form
            raise LocatedParseError(e.span, _unexpected_character(e.msg)) from None

    def _error(self, start: int, message: str) -> LocatedParseError:
        end = max(self.pos, start + 1)
        return LocatedParseError(Span(start, end, self.lexer.input), message)

    def _text_from(self, start: int) -> str:
        return self.lexer.input.content[start : self.pos]

    _line_starts: list[int] | None = None

    def _line_and_column(self, pos: int) -> tuple[int, int]:
        """1-based line and column of `pos` (xDSL counts the newlines before it on every
        call, quadratic in the size of the input; this indexes them once)."""
        starts = self._line_starts
        if starts is None:
            content = self.lexer.input.content
            starts = [0]
            at = content.find("\n")
            while at >= 0:
                starts.append(at + 1)
                at = content.find("\n", at + 1)
            self._line_starts = starts
        line = bisect.bisect_right(starts, pos)
        return line, pos - starts[line - 1] + 1

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            op = super().parse_operation()
        except ParseError as e:
            if e.msg.startswith("Operation builtin.unregistered does not have a custom format"):
                raise self._unregistered_in_custom_form(start) from None
            raise
        except RecursionError:
            # Unwinding has freed some stack: say where, or let an outer op try.
            raise self._error(
                start, "this op is nested too deeply for devplan (regions or attributes)"
            ) from None
        except Exception as e:  # xDSL's op parsers may fail with any Python exception
            raise self._error(start, _exception_text(e)) from e
        if isinstance(op.location, CallSiteLoc | NameLoc):
            _EXPLICIT_LOCATIONS[op] = op.location
        if not isinstance(op.location, FileLineColLoc):
            line, column = self._line_and_column(start)
            op.location = FileLineColLoc(
                StringAttr(self.lexer.input.name),
                IntAttr(line + self.line_offset),
                IntAttr(column),
            )
        return op

    def _unregistered_in_custom_form(self, start: int) -> LocatedParseError:
        """xDSL says "Operation builtin.unregistered does not have a custom format" for
        an unknown op written in custom form (with --allow-unregistered-dialect): name
        the op, and say how it can be written."""
        content = self.lexer.input.content
        named = _OP_NAME_AFTER_RESULTS.match(content, start)
        name = named.group(1) if named else "this op"
        at = named.start(1) if named else start
        error = LocatedParseError(
            Span(at, at + len(name), self.lexer.input),
            f"'{name}' is not an op devplan knows, so it can only be read in generic form "
            f'("{name}"(...) : (...) -> (...))',
        )
        return error

    def parse_optional_builtin_int_or_float_attr(self) -> IntegerAttr | FloatAttr | None:
        start = self.pos
        try:
            attr = super().parse_optional_builtin_int_or_float_attr()
        except ParseError as e:
            if e.msg.startswith("Floating point value is not valid"):
                literal, _, type_ = (t.strip() for t in self._text_from(start).partition(":"))
                raise self._error(
                    start, f"float literal {literal} is not valid for integer type {type_}"
                ) from None
            raise
        except (VerifyException, OverflowError, ValueError) as e:
            literal, _, type_ = self._text_from(start).partition(":")
            number, type_ = literal.strip(), type_.strip()
            if not type_ and re.fullmatch(r"[-+]?(?:0x[0-9a-fA-F]+|\d+)", number):
                type_ = "i64"  # an integer literal without a type is an i64
            if re.fullmatch(r"[su]?i\d+|index", type_) is None:
                raise self._error(start, _float_overflow(number, type_)) from e
            problem = f"integer literal {number} is out of range for {type_}"
            width = re.fullmatch(r"i(\d+)", type_)
            if width is not None:  # signless: the bits read as signed or unsigned
                bits = int(width.group(1))
                problem += f" (valid: {-(1 << (bits - 1))} to {(1 << bits) - 1})"
            raise self._error(start, problem) from e
        if isinstance(attr, IntegerAttr):
            problem = literal_range_error(attr.value.data, attr.type)
            if problem is not None:
                raise self._error(start, problem)
        elif isinstance(attr, FloatAttr) and not math.isfinite(attr.value.data):
            literal = self._text_from(start).partition(":")[0]
            if "0x" not in literal.lower():
                raise self._error(start, _float_overflow(literal, attr.type))
        return attr

    def parse_dense_int_or_fp_elements_attr(
        self, type: RankedStructure[Any] | None
    ) -> DenseIntOrFPElementsAttr:
        start = self.pos
        try:
            attr = super().parse_dense_int_or_fp_elements_attr(type)
        except ParseError:
            raise
        except (VerifyException, OverflowError, ValueError) as e:
            raise self._error(start, f"dense literal out of range: {_exception_text(e)}") from e
        except MemoryError:  # it read "invalid (MemoryError in xDSL)"
            raise self._error(
                start,
                "dense literal too large for host memory: xDSL holds each of its elements "
                "(a splat's too)",
            ) from None
        element = attr.get_element_type()
        if isinstance(element, AnyFloat) and "0x" not in self._text_from(start).lower():
            values: Any = attr.get_values()
            if not all(math.isfinite(v) for v in values):
                raise self._error(
                    start, f"dense literal out of range: a value would be infinite in {element}"
                )
        return attr

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
        if self._current_token.kind == MLIRTokenKind.EOF:
            return ModuleOp([])  # only whitespace and comments: an empty module
        try:
            return super().parse_module(allow_implicit_module)
        except LocatedParseError:
            raise
        except ParseError as e:
            raise LocatedParseError(_point_at_op_name(e), _unexpected_character(e.msg)) from None


def _unexpected_character(message: str) -> str:
    """xDSL's "Unexpected character: X", with X named by its code point when it is not
    visible (a byte order mark, a NUL, a non-breaking space printed as nothing)."""
    match = re.fullmatch(r"Unexpected character: (.)", message, re.DOTALL)
    if match is None or (match.group(1).isascii() and match.group(1).isprintable()):
        return message
    code = ord(match.group(1))
    hint = " (a byte order mark: save the file without it)" if code == 0xFEFF else ""
    return f"Unexpected character U+{code:04X}{hint}"


def _exception_text(error: BaseException) -> str:
    """A Python exception raised inside xDSL, as the text of a diagnostic."""
    text = str(error).removeprefix("Operation does not verify: ").strip()
    return text or f"invalid ({type(error).__name__} in xDSL)"


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


def _preorder(root: Operation) -> Iterator[Operation]:
    """`root` and every op nested in it, outermost first, as `walk()` orders them but
    with an explicit stack: a walk of generators costs time in the depth of nesting for
    every op it yields, and a Python frame per level."""
    stack = [root]
    while stack:
        op = stack.pop()
        yield op
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                stack.extend(reversed(list(block.ops)))


def verify_located(module: Operation) -> None:
    """Verify `module` op by op; the first failure becomes a located diagnostic.

    Ops are verified outermost first without their nested ops, so a message points
    at the innermost op that is actually wrong rather than at the module. Then the
    registered module verifiers run.
    """
    order: dict[Operation, int] = {}
    for op in _preorder(module):
        _check_dominance(op, order)
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException as e:
            if isinstance(e, LocatedError):
                raise
            message = str(e).removeprefix("Operation does not verify: ").strip()
            if (redefinition := _redefinition(op, message)) is not None:
                raise redefinition from e
            raise error_at(op, f"'{op.name}' {message}") from e
        except RecursionError:
            raise
        except Exception as e:  # some xDSL verifiers raise bare Python exceptions
            raise error_at(op, f"'{op.name}' {_exception_text(e)}") from e
    for verifier in list(_module_verifiers.values()):
        verifier(module)


_GRAPH_REGIONS = ("builtin.module", "kernel.module")
"""Ops whose body is a graph region: its ops are not ordered."""


def _check_dominance(op: Operation, order: dict[Operation, int]) -> None:
    """Each operand of `op` must be defined before it: earlier in its block or in an
    enclosing block, or a block argument of one (MLIR's dominance for regions of one
    block; uses across the blocks of a multi-block region are left to the CFG and not
    checked). `order` memoises the position of ops in their blocks."""
    for i, value in enumerate(op.operands):
        defining: Operation | None = None
        if isinstance(value, BlockArgument):
            block = value.block
        elif isinstance(owner := value.owner, Operation):
            defining, block = owner, owner.parent_block()
        else:
            continue
        if block is None:
            continue
        user: Operation | None = op
        while user is not None and user.parent_block() is not block:
            user = user.parent_op()
        if user is None:
            region = block.parent
            if region is not None and len(region.blocks) > 1 and _inside(op, region.blocks):
                continue  # another block of the same multi-block region
            where = "in a region" if defining is None else "inside a region"
            raise error_at(
                op,
                f"'{op.name}' operand #{i} does not dominate this use: it is defined "
                f"{where} that does not contain this op",
                [(defining, "operand defined here")] if defining is not None else [],
            )
        if defining is None:
            continue
        parent = block.parent_op()
        if parent is not None and parent.name in _GRAPH_REGIONS:
            continue
        if defining is user or _position(defining, order) > _position(user, order):
            raise error_at(
                op,
                f"'{op.name}' operand #{i} does not dominate this use: it is defined after it",
                [(defining, "operand defined here")],
            )


def _inside(op: Operation, blocks: Iterable[Block]) -> bool:
    targets = set(blocks)
    current: Operation | None = op
    while current is not None:
        if current.parent_block() in targets:
            return True
        current = current.parent_op()
    return False


def _position(op: Operation, order: dict[Operation, int]) -> int:
    found = order.get(op)
    if found is None:
        block = op.parent_block()
        assert block is not None
        for index, other in enumerate(block.ops):
            order[other] = index
        found = order[op]
    return found


# --- arguments of the Python API ----------------------------------------------------------


def describe_value(value: object) -> str:
    """`NoneType None`, `int 5`, `str 'abc'` (shortened): what a caller passed."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def check_argument(
    function: str,
    parameter: str,
    value: object,
    expected: type | tuple[type, ...],
    description: str,
    error: Callable[[str], Exception] | None = None,
) -> None:
    """Raise `error` (default: `DevplanError` with an `error: ` prefix) naming
    `function`'s `parameter` when `value` is not an instance of `expected`."""
    if isinstance(value, expected):
        return
    message = f"{function}: {parameter} must be {description}, got {describe_value(value)}"
    raise error(message) if error is not None else DevplanError(f"error: {message}")


# --- deep inputs ----------------------------------------------------------------------------

RECURSION_LIMIT = 60_000
"""Python frames devplan's entry points may use: about 400 nested regions in IR, or
5000 nested host calls at run time, fit well within it."""
_STACK_BYTES = 1 << 30
"""Stack of the threads entry points run on (address space; only what is used is
touched), so that RECURSION_LIMIT frames fit."""

_P = ParamSpec("_P")
_R = TypeVar("_R")
_Job = tuple[Callable[[], Any], "queue.SimpleQueue[tuple[bool, Any]]"]

_deep = threading.local()
"""`active` is set on the deep-stack workers: a wrapped call made there runs in place."""
_deep_calls: list[int] = []
"""The recursion limit before the first active deep call, then one entry per active call
(calls from several threads share the raised limit until the last one ends)."""
_deep_calls_lock = threading.Lock()


class _DeepWorker:
    """A long-lived daemon thread with a `_STACK_BYTES` stack that runs entry-point calls.

    Starting a thread with a big stack costs about as much as a small `devplan.execute`
    (the stack is mapped and unmapped each time), so workers are kept: a call takes an
    idle worker from `_idle` (or starts one), hands it the call and blocks until the
    answer comes back. A worker goes back to `_idle` when its call has ended, so calls
    from several user threads at once run on as many workers, each in parallel with the
    others as far as the GIL lets them, and the pool never holds more workers than calls
    were ever active at once.
    """

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        previous = threading.stack_size(_STACK_BYTES)
        try:
            thread = threading.Thread(target=self._serve, name="devplan deep stack", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)

    def _serve(self) -> None:
        _deep.active = True
        while True:
            call, answer = self.jobs.get()
            try:
                outcome: tuple[bool, Any] = (True, call())
            except BaseException as e:  # handed to the caller's thread
                outcome = (False, e)
            del call
            _idle.append(self)  # before answering: the caller's next call may reuse it
            answer.put(outcome)
            del outcome


_idle: list[_DeepWorker] = []
"""Workers waiting for a call (list.append and list.pop are atomic)."""
_idle_lock = threading.Lock()
"""Serialises starting a worker (`threading.stack_size` is process-wide)."""


def _forget_workers_after_fork() -> None:
    """In a forked child: the workers were threads of the parent and do not exist here;
    calls start new ones. The locks may have been held by threads that are gone."""
    global _idle_lock, _deep_calls_lock
    _idle.clear()
    _idle_lock = threading.Lock()
    _deep_calls_lock = threading.Lock()
    if _deep_calls and not getattr(_deep, "active", False):
        # No call is active on the thread that forked: none will end in the child.
        sys.setrecursionlimit(_deep_calls[0])
        _deep_calls.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers_after_fork)


def _run_deep(call: Callable[[], _R]) -> _R:
    """`call()` on an idle deep-stack worker, under the raised recursion limit."""
    try:
        worker = _idle.pop()
    except IndexError:
        with _idle_lock:
            worker = _DeepWorker()
    answer: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
    with _deep_calls_lock:
        if not _deep_calls:
            _deep_calls.append(sys.getrecursionlimit())
            sys.setrecursionlimit(max(_deep_calls[0], RECURSION_LIMIT))
        _deep_calls.append(0)
    try:
        worker.jobs.put((call, answer))
        ok, value = answer.get()
    finally:
        with _deep_calls_lock:
            _deep_calls.pop()
            if len(_deep_calls) == 1:  # the last one: restore the caller's limit
                sys.setrecursionlimit(_deep_calls.pop())
    if ok:
        return value
    if isinstance(value, RecursionError):
        raise DevplanError(
            "error: the input is nested too deeply for devplan (more than "
            f"{RECURSION_LIMIT} Python frames: deeper regions, attributes or calls "
            "than it can follow)"
        ) from value
    raise value


def with_deep_stack(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run `fn` on a thread with a large stack and a high recursion limit.

    xDSL parses, verifies and prints nested IR recursively, and the executor runs
    `func.call` recursively, so deep but valid inputs need more than Python's default
    1000 frames (and than the main thread's C stack). Calls run on long-lived worker
    threads with big stacks (`_DeepWorker`), one per call active at once; beyond
    `RECURSION_LIMIT` the `RecursionError` becomes a `DevplanError` saying the input is
    nested too deeply. Nested calls of wrapped functions (from code running on a
    worker) run in place, on the worker.
    """

    @functools.wraps(fn)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if getattr(_deep, "active", False):
            return fn(*args, **kwargs)
        return _run_deep(functools.partial(fn, *args, **kwargs))

    return run


__all__ = [
    "DevplanError",
    "LocatedError",
    "LocatedParseError",
    "LocatingParser",
    "check_argument",
    "describe_value",
    "diagnostic_at",
    "error_at",
    "format_diagnostic",
    "format_parse_error",
    "location_of",
    "register_module_verifier",
    "register_source",
    "verify_located",
    "with_deep_stack",
]
