"""The `target` dialect: how to compile for a device (TVM's `Target`).

SKELETON — to be completed by the target-dialect work (kinds, tags, validation).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DictionaryAttr, NoneAttr, StringAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


class TargetError(ValueError):
    """A bad target: unknown kind, attribute, type, host, tag or malformed text."""


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """`#target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm">>`."""

    name = "target.target"

    kind: StringAttr
    config: DictionaryAttr
    host: Attribute

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            kind = parser.parse_str_literal("target kind")
            config: Attribute = DictionaryAttr({})
            host: Attribute = NoneAttr()
            while parser.parse_optional_punctuation(",") is not None:
                if parser.parse_optional_keyword("host") is not None:
                    parser.parse_punctuation("=")
                    host = parser.parse_attribute()
                else:
                    config = parser.parse_attribute()
        return (StringAttr(kind), config, host)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.kind.data)
            if self.config.data:
                printer.print_string(", ")
                printer.print_attribute(self.config)
            if isinstance(self.host, TargetAttr):
                printer.print_string(", host = ")
                printer.print_attribute(self.host)

    def verify(self) -> None:
        if not isinstance(self.host, TargetAttr | NoneAttr):
            raise VerifyException("host must be a #target.target")


Target = TargetAttr

TargetDialect = Dialect("target", [], [TargetAttr])
