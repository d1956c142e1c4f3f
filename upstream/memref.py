"""devplan's `memref` dialect: xDSL's, with `memref.cast` and `memref.atomic_rmw` in MLIR's
custom syntax.

xDSL 0.74 reads and writes these two ops only in generic form, and GPU programs as MLIR
prints them use the custom form (`memref.cast %a : memref<4xf32> to memref<?xf32>`,
`memref.atomic_rmw addf %v, %m[%i] : (f32, memref<4xf32>) -> f32`). The ops below
subclass xDSL's, so passes written against xDSL's classes see them too; generic form
keeps working.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.parser import Parser
from xdsl.printer import Printer

from .dialect import replacing
from .syntax import parse_operands, print_attributes


class CastOp(memref.CastOp):
    """`%b = memref.cast %a : memref<4xf32> to memref<?xf32>`"""

    name = "memref.cast"

    @classmethod
    def parse(cls, parser: Parser) -> CastOp:
        source = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        parser.parse_keyword("to")
        dest_type = parser.parse_type()
        op = cls.build(
            operands=[parser.resolve_operand(source, source_type)], result_types=[dest_type]
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.source)
        print_attributes(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" to ")
        printer.print_attribute(self.dest.type)


ATOMIC_RMW_KINDS = (
    "addf", "addi", "assign", "maximumf", "maxs", "maxu", "minimumf", "mins", "minu",
    "mulf", "muli", "ori", "andi", "maxnumf", "minnumf",
)  # fmt: skip
"""MLIR's `AtomicRMWKind` words, in the order of their integer values."""


class AtomicRMWOp(memref.AtomicRMWOp):
    """`%old = memref.atomic_rmw addi %v, %m[%i] : (i32, memref<4xi32>) -> i32`"""

    name = "memref.atomic_rmw"

    @classmethod
    def parse(cls, parser: Parser) -> AtomicRMWOp:
        kind = parser.parse_keyword_in(ATOMIC_RMW_KINDS)  # type: ignore[arg-type]
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        buffer = parser.parse_unresolved_operand()
        indices = parse_operands(parser, parser.Delimiter.SQUARE)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        function = parser.parse_function_type()
        if len(function.inputs) != 2 or len(function.outputs) != 1:
            parser.raise_error("memref.atomic_rmw's type is (T, memref<...xT>) -> T")
        value_type, buffer_type = function.inputs.data
        op = cls.build(
            operands=[
                parser.resolve_operand(value, value_type),
                parser.resolve_operand(buffer, buffer_type),
                [parser.resolve_operand(i, IndexType()) for i in indices],
            ],
            result_types=[function.outputs.data[0]],
            properties={"kind": IntegerAttr(ATOMIC_RMW_KINDS.index(kind), 64)},
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {ATOMIC_RMW_KINDS[self.kind.value.data]} ")
        printer.print_ssa_value(self.value)
        printer.print_string(", ")
        printer.print_ssa_value(self.memref)
        printer.print_string("[")
        printer.print_list(self.indices, printer.print_ssa_value)
        printer.print_string("]")
        print_attributes(printer, self)
        printer.print_string(" : (")
        printer.print_list([self.value.type, self.memref.type], printer.print_attribute)
        printer.print_string(") -> ")
        printer.print_attribute(self.result.type)


MemRef = replacing(memref.MemRef, [CastOp, AtomicRMWOp])
"""xDSL's `memref` dialect with `memref.cast` and `memref.atomic_rmw` in custom syntax."""
