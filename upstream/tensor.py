"""devplan's `tensor` dialect: xDSL's, with `tensor.empty` keeping its attributes.

xDSL 0.74 drops the attribute dictionary of `tensor.empty` when printing and rejects one
when parsing, so a placed `tensor.empty` (`{vdev.device = ...}`, as plan-devices writes it)
would not survive a print/parse round trip. `EmptyOp` reads and writes MLIR's syntax,
`tensor.empty(%n) {attrs} : tensor<?xf32>`; it subclasses xDSL's op, so
`isinstance(op, xdsl.dialects.tensor.EmptyOp)` holds for it.
"""

from __future__ import annotations

from xdsl.dialects import tensor
from xdsl.dialects.builtin import IndexType
from xdsl.parser import Parser
from xdsl.printer import Printer

from .dialect import replacing


class EmptyOp(tensor.EmptyOp):
    """A tensor of the given shape whose contents are unspecified; one index operand per
    dynamic dimension.

    ```mlir
    %e = tensor.empty(%n) {vdev.device = #vdev.device<"cuda", 0>} : tensor<?xf32>
    ```
    """

    name = "tensor.empty"

    @classmethod
    def parse(cls, parser: Parser) -> EmptyOp:
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

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_list(self.dynamic_sizes, printer.print_ssa_value)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.tensor.type)


Tensor = replacing(tensor.Tensor, [EmptyOp])
"""xDSL's `tensor` dialect with `tensor.empty` keeping its attributes."""
