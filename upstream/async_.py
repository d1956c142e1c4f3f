"""The parts of MLIR's `async` dialect that GPU host programs use, with MLIR's syntax.

`async.execute` starts a region that may run concurrently with the rest of the function
once its dependencies (tokens) are complete and its operands (async values) are
available; it returns a token for its completion and one `!async.value` for each value
its body yields. `async.await` blocks until a token completes or a value is available.
xDSL 0.74 has no `async` dialect; devplan defines these ops so that MLIR's programs
(e.g. the GPU integration test that forks and joins copies with `async.execute`) parse,
print back the same way, and run: `async-to-host` runs each body on the host in
program order, which is one of the orders the dependencies allow.

```mlir
%t0, %f0 = async.execute () -> !async.value<memref<?xi32>> {
  %b = gpu.alloc(%n) : memref<?xi32>
  async.yield %b : memref<?xi32>
}
%t1 = async.execute [%t0] (%f0 as %b : !async.value<memref<?xi32>>) {
  gpu.memcpy %b, %h : memref<?xi32>, memref<?xi32>
  async.yield
}
async.await %t1 : !async.token
```

Not defined: groups (`!async.group`, `async.create_group`, `async.add_to_group`,
`async.await_all`), `async.func`/`async.call`/`async.return` and the `async.runtime.*`
ops; they are unregistered ops to devplan, which says so where they are used.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import (
    Attribute,
    Dialect,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_result_def,
    param_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator
from xdsl.utils.exceptions import VerifyException


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """Completion of an `async.execute` region (`!async.token`)."""

    name = "async.token"


@irdl_attr_definition
class ValueType(ParametrizedAttribute, TypeAttribute):
    """A value an `async.execute` region makes available later (`!async.value<T>`)."""

    name = "async.value"

    value_type: Attribute = param_def()
    """The type of the value once it is available."""

    def __init__(self, value_type: Attribute):
        super().__init__(value_type)


def _print_attributes(printer: Printer, op: IRDLOperation, keyword: bool = False) -> None:
    printer.print_op_attributes(
        op.attributes, reserved_attr_names=("operandSegmentSizes",), print_keyword=keyword
    )


@irdl_op_definition
class ExecuteOp(IRDLOperation):
    """Runs its body once its dependencies are complete and its async operands are
    available; the body sees each operand's value as a block argument. Returns a token
    for its completion and an `!async.value` for each value the body yields.

    ```mlir
    %t, %v = async.execute [%t0] (%f as %x : !async.value<f32>) -> !async.value<f32> { ... }
    ```
    """

    name = "async.execute"

    dependencies = var_operand_def(TokenType)
    body_operands = var_operand_def(ValueType)
    token = result_def(TokenType)
    body_results = var_result_def(ValueType)
    body = region_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        dependencies: Sequence[SSAValue],
        body_operands: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        body: Region,
    ):
        super().__init__(
            operands=[dependencies, body_operands],
            result_types=[TokenType(), result_types],
            regions=[body],
        )

    @classmethod
    def parse(cls, parser: Parser) -> ExecuteOp:
        dependencies = (
            parser.parse_optional_comma_separated_list(
                parser.Delimiter.SQUARE,
                lambda: parser.resolve_operand(parser.parse_unresolved_operand(), TokenType()),
            )
            or []
        )
        operands: list[SSAValue] = []
        arguments: list[Parser.Argument] = []

        def parse_unwrapped() -> None:
            pos = parser.pos
            operand: UnresolvedOperand = parser.parse_unresolved_operand()
            parser.parse_keyword("as")
            argument = parser.parse_argument(expect_type=False)
            parser.parse_punctuation(":")
            type_ = parser.parse_type()
            if not isinstance(type_, ValueType):
                parser.raise_error(
                    f"an async.execute operand must be an !async.value, not {type_}",
                    pos,
                    parser.pos,
                )
            operands.append(parser.resolve_operand(operand, type_))
            arguments.append(argument.resolve(type_.value_type))

        parser.parse_optional_comma_separated_list(parser.Delimiter.PAREN, parse_unwrapped)
        result_types: Sequence[Attribute] = []
        if parser.parse_optional_punctuation("->") is not None:
            result_types = parser.parse_optional_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_type
            ) or [parser.parse_type()]
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region(arguments)
        op = cls(dependencies, operands, result_types, body)
        if attributes is not None:
            op.attributes.update(attributes.data)
        return op

    def print(self, printer: Printer) -> None:
        if self.dependencies:
            printer.print_string(" [")
            printer.print_list(self.dependencies, printer.print_ssa_value)
            printer.print_string("]")
        if self.body_operands:
            block = self.body.blocks.first
            printer.print_string(" (")
            for i, operand in enumerate(self.body_operands):
                if i:
                    printer.print_string(", ")
                printer.print_ssa_value(operand)
                if block is not None and i < len(block.args):
                    printer.print_string(" as ")
                    printer.print_ssa_value(block.args[i])
                printer.print_string(" : ")
                printer.print_attribute(operand.type)
            printer.print_string(")")
        results = [r.type for r in self.body_results]
        if results:
            printer.print_string(" -> ")
            if len(results) == 1:
                printer.print_attribute(results[0])
            else:
                printer.print_string("(")
                printer.print_list(results, printer.print_attribute)
                printer.print_string(")")
        _print_attributes(printer, self, keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    def verify_(self) -> None:
        block = self.body.blocks.first
        if block is None:
            raise VerifyException("async.execute has an empty body")
        unwrapped = [_unwrap(o.type) for o in self.body_operands]
        if [a.type for a in block.args] != unwrapped:
            raise VerifyException(
                "async.execute's body arguments must be its operands' values, of types "
                f"({', '.join(map(str, unwrapped))})"
            )
        for body_block in self.body.blocks:
            last = body_block.last_op
            if isinstance(last, YieldOp):
                yielded = [v.type for v in last.operands]
                expected = [_unwrap(r.type) for r in self.body_results]
                if yielded != expected:
                    raise VerifyException(
                        f"async.yield gives ({', '.join(map(str, yielded))}), but the "
                        f"async.execute returns ({', '.join(map(str, expected))})"
                    )


def _unwrap(type_: Attribute) -> Attribute:
    return type_.value_type if isinstance(type_, ValueType) else type_


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends an `async.execute` body, giving the values of its `!async.value` results.

    ```mlir
    async.yield %b : memref<?xi32>
    ```
    """

    name = "async.yield"

    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(ExecuteOp))

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[values])

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        pos = parser.pos
        names = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        )
        values: Sequence[SSAValue] = []
        if names:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            values = parser.resolve_operands(names, types, pos)
        op = cls(values)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        if self.values:
            printer.print_string(" ")
            printer.print_list(self.values, printer.print_ssa_value)
            printer.print_string(" : ")
            printer.print_list([v.type for v in self.values], printer.print_attribute)
        _print_attributes(printer, self)


@irdl_op_definition
class AwaitOp(IRDLOperation):
    """Blocks until a token completes, or until an async value is available and then
    returns it.

    ```mlir
    %v = async.await %f : !async.value<f32>
    ```
    """

    name = "async.await"

    operand = operand_def(TokenType | ValueType)
    result = opt_result_def()

    def __init__(self, operand: SSAValue):
        type_ = operand.type
        super().__init__(
            operands=[operand],
            result_types=[[type_.value_type] if isinstance(type_, ValueType) else []],
        )

    @classmethod
    def parse(cls, parser: Parser) -> AwaitOp:
        operand = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        pos = parser.pos
        type_ = parser.parse_type()
        if not isinstance(type_, TokenType | ValueType):
            parser.raise_error(
                f"async.await takes an !async.token or an !async.value, not {type_}",
                pos,
                parser.pos,
            )
        op = cls(parser.resolve_operand(operand, type_))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.operand)
        printer.print_string(" : ")
        printer.print_attribute(self.operand.type)
        _print_attributes(printer, self)

    def verify_(self) -> None:
        type_ = self.operand.type
        expected = [type_.value_type] if isinstance(type_, ValueType) else []
        if [r.type for r in self.results] != expected:
            raise VerifyException(
                f"async.await of {type_} returns ({', '.join(map(str, expected))})"
            )


Async = Dialect("async", [ExecuteOp, YieldOp, AwaitOp], [TokenType, ValueType])
