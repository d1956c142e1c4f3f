"""Pieces of MLIR's custom assembly that devplan's versions of several upstream ops share."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer


def parse_operands(parser: Parser, delimiter: Parser.Delimiter) -> list[UnresolvedOperand]:
    """A delimited, comma-separated list of operands (`[%i, %j]`)."""
    return parser.parse_comma_separated_list(delimiter, parser.parse_unresolved_operand)


def print_attributes(printer: Printer, op: Operation, reserved: Sequence[str] = ()) -> None:
    """`op`'s attribute dictionary, less the attributes its syntax writes elsewhere
    (`reserved`) and the operand segment sizes that the syntax implies."""
    printer.print_op_attributes(
        op.attributes, reserved_attr_names=(*reserved, "operandSegmentSizes")
    )
