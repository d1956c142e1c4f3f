"""devplan's `scf` dialect: xDSL's, reading `scf.while` without loop-carried values.

MLIR writes a `scf.while` that carries no values as `scf.while : () -> () {...} do {...}`;
xDSL 0.74's parser requires the parenthesised list of initial values. `WhileOp`
subclasses xDSL's op and reads and writes both forms.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer

from .dialect import replacing


class WhileOp(scf.WhileOp):
    """`scf.while (%a = %init) : (i32) -> i32 {...} do {...}`; with no loop-carried
    values MLIR writes `scf.while : () -> () {...} do {...}`, which xDSL's parser
    rejects (it requires the parenthesised list)."""

    name = "scf.while"

    @classmethod
    def parse(cls, parser: Parser) -> WhileOp:
        pairs: list[tuple[Parser.UnresolvedArgument, UnresolvedOperand]] = []

        def parse_assignment() -> None:
            argument = parser.parse_argument(expect_type=False)
            parser.parse_punctuation("=")
            pairs.append((argument, parser.parse_unresolved_operand()))

        parser.parse_optional_comma_separated_list(parser.Delimiter.PAREN, parse_assignment)
        parser.parse_punctuation(":")
        pos = parser.pos
        function = parser.parse_function_type()
        inputs = function.inputs.data
        if len(pairs) != len(inputs):
            parser.raise_error(
                f"scf.while has {len(pairs)} initial value(s) but its type takes {len(inputs)}",
                pos,
                parser.pos,
            )
        arguments = [a.resolve(t) for (a, _), t in zip(pairs, inputs, strict=True)]
        inits = [parser.resolve_operand(o, t) for (_, o), t in zip(pairs, inputs, strict=True)]
        before = parser.parse_region(arguments)
        parser.parse_keyword("do")
        after = parser.parse_region()
        op = cls(inits, function.outputs.data, before, after)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        if attributes is not None:
            op.attributes.update(attributes.data)
        return op

    def print(self, printer: Printer) -> None:
        if self.arguments:
            printer.print_string(" (")
            pairs = zip(self.before_region.block.args, self.arguments, strict=True)
            for i, (argument, init) in enumerate(pairs):
                if i:
                    printer.print_string(", ")
                printer.print_ssa_value(argument)
                printer.print_string(" = ")
                printer.print_ssa_value(init)
            printer.print_string(")")
        printer.print_string(" : ")
        printer.print_operation_type(self)
        printer.print_string(" ")
        printer.print_region(self.before_region, print_entry_block_args=False)
        printer.print_string(" do ")
        printer.print_region(self.after_region)
        printer.print_op_attributes(self.attributes, print_keyword=True)


Scf = replacing(scf.Scf, [WhileOp])
"""xDSL's `scf` dialect reading `scf.while` without loop-carried values."""
