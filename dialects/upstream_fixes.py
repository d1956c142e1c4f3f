"""Fixes to xDSL 0.74 ops that devplan's IR relies on (installed by the vdev dialect).

* `tensor.empty` drops its attribute dictionary when printed and rejects one when
  parsed, so a placed `tensor.empty` (`{vdev.device = ...}`, as plan-devices writes it)
  did not survive a print/parse round trip. MLIR's syntax is
  `tensor.empty(%n) {attrs} : tensor<?xf32>`; these versions read and write that.
"""

from __future__ import annotations

from xdsl.dialects import tensor
from xdsl.dialects.builtin import IndexType
from xdsl.parser import Parser
from xdsl.printer import Printer


def _print_empty(self: tensor.EmptyOp, printer: Printer) -> None:
    printer.print_string("(")
    printer.print_list(self.dynamic_sizes, printer.print_ssa_value)
    printer.print_string(")")
    printer.print_op_attributes(self.attributes)
    printer.print_string(" : ")
    printer.print_attribute(self.tensor.type)


def _parse_empty(cls: type[tensor.EmptyOp], parser: Parser) -> tensor.EmptyOp:
    pos = parser.pos
    names = parser.parse_comma_separated_list(
        Parser.Delimiter.PAREN, parser.parse_unresolved_operand
    )
    sizes = parser.resolve_operands(names, [IndexType()] * len(names), pos)
    attributes = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    op = cls(sizes, parser.parse_attribute())
    op.attributes |= attributes
    return op


def install() -> None:
    """Give the xDSL ops above MLIR's syntax (idempotent; the vdev dialect calls it)."""
    tensor.EmptyOp.print = _print_empty  # pyright: ignore[reportAttributeAccessIssue]
    tensor.EmptyOp.parse = classmethod(_parse_empty)  # pyright: ignore[reportAttributeAccessIssue]
