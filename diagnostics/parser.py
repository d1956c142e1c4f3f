"""`LocatingParser`: xDSL's parser, with a source location on every op and parse errors
worded as located diagnostics.

xDSL's parser leaves every op at `loc(unknown)`; this one stamps each parsed op with
`loc("file":line:col)`, so later errors can point at it. Its errors are
`LocatedParseError`s, which print as `file:line:col: error: ...` with a caret line.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import re
from collections.abc import Callable
from typing import Any, TypeVar
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
from xdsl.ir import Attribute, Data, Operation, ParametrizedAttribute, TypeAttribute
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineExpr,
    AffineMap,
    AffineSet,
)
from xdsl.parser import Parser
from xdsl.parser.affine_parser import AffineParser
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRToken, MLIRTokenKind

from .errors import exception_text, xdsl_failure
from .lexer import LinearStringLexer
from .transform_schedule import IgnoredScheduleOp, drop_schedules, is_schedule_op


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


class SemiAffineParser(AffineParser):
    """xDSL's affine parser, also reading semi-affine expressions (MLIR's `d0 * s0`,
    `(d1 - d0) ceildiv s0`, `floordiv`, `mod` by a symbol), which xDSL 0.74's expression
    operators refuse: such an expression is built as it is written, unsimplified."""

    def _create_binop_expr(self, lhs: AffineExpr, rhs: AffineExpr, binop: MLIRToken) -> AffineExpr:
        try:
            return super()._create_binop_expr(lhs, rhs, binop)  # pyright: ignore[reportPrivateUsage]
        except NotImplementedError:
            kind = _SEMI_AFFINE.get(binop.text)
            if kind is None:
                raise
            return AffineBinaryOpExpr(kind, lhs, rhs)


_SEMI_AFFINE = {
    "*": AffineBinaryOpKind.Mul,
    "ceildiv": AffineBinaryOpKind.CeilDiv,
    "floordiv": AffineBinaryOpKind.FloorDiv,
    "mod": AffineBinaryOpKind.Mod,
}


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


_OP_NAME_AFTER_RESULTS = re.compile(
    r"(?:%[\w.$-]+(?::\d+)?\s*(?:,\s*%[\w.$-]+(?::\d+)?\s*)*=\s*)?\"?([A-Za-z_][\w.$-]*)"
)
"""The op name of an op (custom or generic form), after its result list."""


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
            self._parser_state = ParserState(LinearStringLexer(Input(text, name)))
        except ParseError as e:  # in the first token: reword it as devplan words errors
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
        named = _OP_NAME_AFTER_RESULTS.match(self.lexer.input.content, start)
        if named is not None and is_schedule_op(named.group(1)):
            return self._read_schedule(start, named.group(1))
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
            raise self._error(start, xdsl_failure(e, self._op_name_at(start))) from e
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

    def _read_schedule(self, start: int, name: str) -> Operation:
        """Read a transform op (its regions included) as balanced tokens: it ends where,
        outside brackets, a token on a later line starts another statement (a `%value`,
        an op name, a block label) or closes the enclosing region (module header)."""
        closing = {
            MLIRTokenKind.L_PAREN: MLIRTokenKind.R_PAREN,
            MLIRTokenKind.L_SQUARE: MLIRTokenKind.R_SQUARE,
            MLIRTokenKind.L_BRACE: MLIRTokenKind.R_BRACE,
            MLIRTokenKind.LESS: MLIRTokenKind.GREATER,
        }
        starts_statement = (
            MLIRTokenKind.PERCENT_IDENT, MLIRTokenKind.CARET_IDENT, MLIRTokenKind.BARE_IDENT,
            MLIRTokenKind.STRING_LIT,
        )  # fmt: skip
        open_brackets: list[tuple[MLIRTokenKind, int]] = []
        symbol = ""
        last_line = self._line_and_column(start)[0]
        seen_name = False
        while True:
            token = self._current_token
            kind = token.kind
            line = self._line_and_column(token.span.start)[0]
            if kind == MLIRTokenKind.EOF:
                if open_brackets:
                    opened, at = open_brackets[-1]
                    raise self._error(at, f"'{name}': this '{opened.value}' is never closed")
                break
            ends = kind == MLIRTokenKind.R_BRACE or (line > last_line and kind in starts_statement)
            if ends and seen_name and not open_brackets:
                break
            if kind in closing:
                open_brackets.append((kind, token.span.start))
            elif kind in closing.values():
                if not open_brackets or closing[open_brackets[-1][0]] != kind:
                    raise self._error(
                        token.span.start, f"'{name}': unbalanced '{token.text}' in the schedule"
                    )
                open_brackets.pop()
            elif kind == MLIRTokenKind.BARE_IDENT and token.text == name:
                seen_name = True
            elif kind == MLIRTokenKind.AT_IDENT and not symbol and not open_brackets:
                symbol = token.text[1:]
            last_line = self._line_and_column(token.span.end - 1)[0]
            self._consume_token()
        line, column = self._line_and_column(start)
        op = IgnoredScheduleOp.create(
            properties={"op_name": StringAttr(name), "symbol": StringAttr(symbol)}
        )
        op.location = FileLineColLoc(
            StringAttr(self.lexer.input.name), IntAttr(line + self.line_offset), IntAttr(column)
        )
        return op

    def _op_name_at(self, start: int) -> str:
        """The op written at `start`, quoted (`'linalg.matmul'`), or "this op"."""
        named = _OP_NAME_AFTER_RESULTS.match(self.lexer.input.content, start)
        return f"'{named.group(1)}'" if named else "this op"

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

    def parse_optional_attribute(self) -> Attribute | None:
        return self._located(super().parse_optional_attribute, "this attribute")

    def parse_optional_type(self) -> TypeAttribute | None:
        return self._located(super().parse_optional_type, "this type")

    def parse_affine_map(self) -> AffineMap:
        return self._located(
            SemiAffineParser(self._parser_state).parse_affine_map, "this affine map"
        )

    def parse_affine_set(self) -> AffineSet:
        return self._located(super().parse_affine_set, "this affine set")

    def _located(self, parse: Callable[[], _Parsed], what: str) -> _Parsed:
        """Run `parse`; a Python exception it raises (xDSL's parsers and attribute
        constructors raise NotImplementedError for semi-affine maps, ValueError,
        IndexError, ... on some inputs) becomes a parse error spanning the text read.
        The innermost attribute or type that failed is the one named."""
        start = self.pos
        try:
            return parse()
        except (ParseError, RecursionError, MemoryError):
            raise
        except Exception as e:
            raise self._error(start, xdsl_failure(e, what)) from e

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
            raise self._error(start, f"dense literal out of range: {exception_text(e)}") from e
        except MemoryError:  # name the literal, not only the lack of memory
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
            module = super().parse_module(allow_implicit_module)
            drop_schedules(module)
            return module
        except LocatedParseError:
            raise
        except ParseError as e:
            raise LocatedParseError(_point_at_op_name(e), _unexpected_character(e.msg)) from None


_Parsed = TypeVar("_Parsed")


def _unexpected_character(message: str) -> str:
    """xDSL's "Unexpected character: X", with X named by its code point when it is not
    visible (a byte order mark, a NUL, a non-breaking space printed as nothing)."""
    match = re.fullmatch(r"Unexpected character: (.)", message, re.DOTALL)
    if match is None or (match.group(1).isascii() and match.group(1).isprintable()):
        return message
    code = ord(match.group(1))
    hint = " (a byte order mark: save the file without it)" if code == 0xFEFF else ""
    return f"Unexpected character U+{code:04X}{hint}"
