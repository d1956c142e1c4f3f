"""devplan's `vector` dialect: xDSL's, with `vector.print` in MLIR's custom syntax.

xDSL 0.74 reads `vector.print` only in generic form; GPU test programs as MLIR writes
them print with `vector.print %v : vector<2xf32>`. `PrintOp` subclasses xDSL's op.
"""

from __future__ import annotations

from xdsl.dialects import vector
from xdsl.parser import Parser
from xdsl.printer import Printer

from .dialect import replacing
from .syntax import print_attributes


class PrintOp(vector.PrintOp):
    """`vector.print %v : vector<2xf32>`"""

    name = "vector.print"

    @classmethod
    def parse(cls, parser: Parser) -> PrintOp:
        source = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls.build(operands=[parser.resolve_operand(source, parser.parse_type())])
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.source)
        print_attributes(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)


Vector = replacing(vector.Vector, [PrintOp])
"""xDSL's `vector` dialect with `vector.print` in custom syntax."""
