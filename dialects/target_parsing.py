"""Target text forms: TVM's JSON config, its legacy CLI string, and the parameters of
`#target.target<...>` in IR.

`load_json` reads a JSON config into a dict; `legacy_options` reads the words after the
kind in a CLI string such as `cuda -arch=sm_80 --host='llvm -mcpu=skylake'` (TVM <= v0.23
`FromRawString`) into attribute values of the types the kind declares; `IRTargetReader`
reads `"kind-or-tag" [, {attrs}] [, host = target | none]` keeping where each word is,
and `print_key`/`print_value` write attribute entries back. Building the target from what
they read is `TargetAttr`'s (in `target.py`), which hands these readers its own class or
`parse` where a target is nested in the text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NoReturn, cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    BytesAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from .target_kinds import (
    BOOL,
    INT,
    MAX_HOST_DEPTH,
    STR,
    TARGET_ARRAY,
    TYPE_WORDS,
    TargetError,
    TargetKind,
    TargetValue,
    describe,
    unknown_attribute_error,
)
from .target_registry import INHERIT, Inherit


def load_json(text: str) -> Mapping[str, object]:
    """A target's JSON config as a dict, or a `TargetError` saying what is malformed."""
    try:
        data = cast(object, json.loads(text))
    except json.JSONDecodeError as e:
        raise TargetError(
            f"malformed target JSON: {e.msg} at line {e.lineno} column {e.colno}"
        ) from None
    except RecursionError:  # json reads nested objects recursively
        raise TargetError(
            f"malformed target JSON: nested too deeply (a target's host chain is at most "
            f"{MAX_HOST_DEPTH} targets deep)"
        ) from None
    if not isinstance(data, dict):
        raise TargetError(f"a target JSON config must be an object, got {describe(data)}")
    return cast(dict[str, object], data)


def split_outside_quotes(text: str, separator: Callable[[str], bool]) -> list[str]:
    """Split `text` where `separator` holds outside quotes; quotes stay in the parts."""
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if quote is not None:
            quote = None if char == quote else quote
            current.append(char)
        elif char in "'\"":
            quote = char
            current.append(char)
        elif separator(char):
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    if quote is not None:
        raise TargetError(f"mismatched quote ({quote}) in '{text}'")
    parts.append("".join(current))
    return parts


def _unquote(text: str) -> str:
    """Interpret quotes and backslash escapes: `'cortex a72'` -> `cortex a72`."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        if quote is not None and char == quote:
            quote = None
        elif quote is None and char in "'\"":
            quote = char
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _legacy_scalar(key: str, type_name: str, value: str) -> int | bool:
    """TVM reads ints and bools with `istringstream`; devplan rejects trailing junk."""
    if type_name == BOOL:
        lowered = value.lower()
        if lowered in ("1", "true"):
            return True
        if lowered in ("0", "false"):
            return False
        raise TargetError(f"option '-{key}' expects a boolean (true, false, 1 or 0), got '{value}'")
    if not re.fullmatch(r"[+-]?[0-9]+", value):
        raise TargetError(f"option '-{key}' expects an integer, got '{value}'")
    return int(value)


def _legacy_value(
    kind: TargetKind, key: str, value: str | None, read_target: Callable[[str], object]
) -> object:
    """A legacy option's text as a value of the type the kind declares for it."""
    if key == "host":
        if value is None:
            raise TargetError("option '--host' needs a value, e.g. --host=llvm")
        return _unquote(value)
    if key == "tag":
        raise TargetError("option '-tag' is not supported: write the tag name instead")
    spec = kind.spec(key)
    if spec is None:
        raise unknown_attribute_error(kind, key)
    if value is None:
        if spec.type != BOOL:
            raise TargetError(
                f"option '-{key}' needs a value ({TYPE_WORDS[spec.type]}), e.g. -{key}=..."
            )
        return True
    if spec.type in (BOOL, INT):
        return _legacy_scalar(key, spec.type, value)
    if spec.type == STR:
        return _unquote(value)
    items = [_unquote(item) for item in split_outside_quotes(value, lambda c: c == ",")]
    if spec.type == TARGET_ARRAY:
        return [read_target(item) for item in items]
    return items


def legacy_options(
    kind: TargetKind, words: list[str], read_target: Callable[[str], object]
) -> dict[str, object]:
    """TVM <= v0.23 `FromRawString` rules for the words after the kind.

    `read_target` reads each element of an `Array<Target>` option; `--host` stays text
    for the caller to read.
    """
    options: dict[str, object] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            raise TargetError(f"option '{word}' must start with '-', as in '-{word}'")
        body = word.lstrip("-")
        if not body or body.startswith("="):
            raise TargetError(f"'{word}' is not an option: an option is -name or -name=value")
        value: str | None
        if "=" in body:
            key, value = body.split("=", 1)
            if value == "":
                raise TargetError(f"option '-{key}' has an empty value")
        elif i + 1 < len(words) and not words[i + 1].startswith("-"):
            key, value = body, words[i + 1]
            i += 1
        else:
            key, value = body, None
        if key in options:
            raise TargetError(f"option '-{key}' appears more than once")
        options[key] = _legacy_value(kind, key, value, read_target)
        i += 1
    return options


def value_from_ir(attr: Attribute) -> object:
    """The Python value of an IR attribute value (the attribute itself when foreign)."""
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, BytesAttr):
        # xDSL prints non-ASCII string characters as byte escapes and reads them back
        # as bytes: UTF-8 text is still a string.
        try:
            return attr.data.decode("utf-8")
        except UnicodeDecodeError:
            return attr
    if isinstance(attr, IntegerAttr):
        integer = cast(IntegerAttr[IntegerType], attr)
        value = integer.value.data
        return bool(value) if integer.type == i1 else value
    if isinstance(attr, FloatAttr):
        return cast(FloatAttr, attr).value.data
    if isinstance(attr, ArrayAttr):
        return [value_from_ir(item) for item in cast(ArrayAttr[Attribute], attr).data]
    return attr


def value_to_ir(value: TargetValue) -> Attribute:
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, str):
        return StringAttr(value)
    return ArrayAttr(StringAttr(v) if isinstance(v, str) else v for v in value)


_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")


def print_key(printer: Printer, key: str) -> None:
    if _BARE_KEY.fullmatch(key):
        printer.print_string(key)
    else:
        printer.print_string_literal(key)


def print_value(printer: Printer, value: TargetValue) -> None:
    if isinstance(value, bool):
        printer.print_string("true" if value else "false")
    elif isinstance(value, int):
        printer.print_string(str(value))
    elif isinstance(value, str):
        printer.print_string_literal(value)
    else:
        printer.print_string("[")
        for i, item in enumerate(value):
            if i:
                printer.print_string(", ")
            if isinstance(item, str):
                printer.print_string_literal(item)
            else:
                printer.print_attribute(item)
        printer.print_string("]")


@dataclass(frozen=True)
class TargetText:
    """What `#target.target<...>` says: the kind or tag, the attributes, the host."""

    name: str
    given: dict[str, object]
    host: Attribute | Inherit | None
    """The host target, None for `host = none`, `INHERIT` when no host is written."""


class IRTargetReader:
    """Reads `"kind-or-tag" [, {attrs}] [, host = target | none]` keeping word spans.

    `target_type` is the class a host must be (`TargetAttr`, defined above this module).
    """

    def __init__(self, parser: AttrParser, target_type: type[Attribute]):
        self.parser = parser
        self.target_type = target_type
        self.spans: dict[str, tuple[int, int]] = {}

    def end_of(self, start: int) -> int:
        """End of the text parsed since `start`, without trailing whitespace."""
        text = self.parser.lexer.input.content[start : self.parser.pos]
        return start + len(text.rstrip())

    def read(self) -> TargetText:
        parser = self.parser
        start = parser.pos
        name = parser.parse_optional_str_literal()
        if name is None:
            parser.raise_error(
                'expected the target kind or tag as a string, e.g. #target.target<"cuda">'
            )
        self.spans["kind"] = self.spans["tag"] = (start, self.end_of(start))
        given: dict[str, object] = {}
        host: Attribute | Inherit | None = INHERIT
        while parser.parse_optional_punctuation(",") is not None:
            start = parser.pos
            if parser.parse_optional_keyword("host") is not None:
                if not isinstance(host, Inherit):
                    parser.raise_error("'host' is given twice", start, self.end_of(start))
                parser.parse_punctuation("=")
                host = self.read_host()
            elif parser.parse_optional_punctuation("{") is not None:
                if given:
                    parser.raise_error("attributes are given twice", start, start + 1)
                given = self.read_attrs()
            else:
                parser.raise_error("expected an attribute dictionary '{...}' or 'host = ...'")
        return TargetText(name, given, host)

    def read_host(self) -> Attribute | None:
        parser = self.parser
        start = parser.pos
        host: Attribute | None = None
        if parser.parse_optional_keyword("none") is None:
            attr = parser.parse_attribute()
            if not isinstance(attr, self.target_type):
                parser.raise_error(
                    f"a host must be a #target.target<...> or none, got {attr}",
                    start,
                    self.end_of(start),
                )
            host = attr
        self.spans["host"] = (start, self.end_of(start))
        return host

    def read_attrs(self) -> dict[str, object]:
        parser = self.parser
        given: dict[str, object] = {}
        if parser.parse_optional_punctuation("}") is not None:
            return given
        while True:
            start = parser.pos
            key = parser.parse_optional_identifier_or_str_literal()
            if key is None:
                parser.raise_error("expected an attribute name")
            key_span = (start, self.end_of(start))
            if key in given:
                parser.raise_error(f"attribute '{key}' is given twice", *key_span)
            if key in ("kind", "tag", "host"):
                parser.raise_error(_misplaced_entry_message(key), *key_span)
            parser.parse_punctuation("=")
            value_start = parser.pos
            given[key] = value_from_ir(parser.parse_attribute())
            self.spans[key] = (value_start, self.end_of(value_start))
            self.spans[f"{key}:name"] = key_span
            if parser.parse_optional_punctuation(",") is None:
                parser.parse_punctuation("}")
                return given

    def raise_at(self, error: TargetError) -> NoReturn:
        """Report `error` at the word it is about (the kind or tag when not written)."""
        field_name = error.field or "kind"
        span = self.spans.get(f"{field_name}:name" if error.at_name else field_name)
        self.parser.raise_error(str(error), *(span or self.spans["kind"]))


def _misplaced_entry_message(key: str) -> str:
    if key == "host":
        return "'host' is written after the attributes: #target.target<\"cuda\", {...}, host = ...>"
    return f"'{key}' is the first parameter of a target, e.g. #target.target<\"cuda\">"
