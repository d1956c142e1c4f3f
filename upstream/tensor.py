"""devplan's `tensor` dialect: xDSL's, with `tensor.empty` keeping its attributes,
`tensor.reshape` and `tensor.pad` verified as MLIR verifies them, and `tensor.expand_shape`
also read without `output_shape` (MLIR's older syntax).

xDSL 0.74 drops the attribute dictionary of `tensor.empty` when printing and rejects one
when parsing, so a placed `tensor.empty` (`{vdev.device = ...}`, as plan-devices writes it)
would not survive a print/parse round trip. `EmptyOp` reads and writes MLIR's syntax,
`tensor.empty(%n) {attrs} : tensor<?xf32>`; it subclasses xDSL's op, so
`isinstance(op, xdsl.dialects.tensor.EmptyOp)` holds for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

from xdsl.dialects import tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, IndexType, IntegerAttr, TensorType
from xdsl.dialects.utils import parse_dynamic_index_list_without_types
from xdsl.ir import Attribute
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

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


class ReshapeOp(tensor.ReshapeOp):
    """The source's elements, in row-major order, under the shape its 1-D shape operand
    holds; the element counts must agree (checked here when both types are static).

    ```mlir
    %r = tensor.reshape %x(%shape) : (tensor<?x4xf32>, tensor<1xindex>) -> tensor<?xf32>
    ```

    xDSL 0.74 multiplies dynamic sizes as -1, so it rejects `tensor<?x4xf32>` to
    `tensor<?xf32>`, which MLIR accepts.
    """

    name = "tensor.reshape"

    def verify_(self) -> None:
        source = cast(TensorType[Attribute], self.source.type)
        shape = cast(TensorType[Attribute], self.shape.type).get_shape()
        result = self.result.type
        if source.element_type != result.element_type:
            raise VerifyException(
                "element types of source and result tensor types should be the same"
            )
        if len(shape) != 1:
            raise VerifyException("shape tensor must have a rank one")
        sizes = result.get_shape()
        if shape[0] != DYNAMIC_INDEX and shape[0] != len(sizes):
            raise VerifyException("length of shape operand differs from the result's tensor rank")
        static = [*source.get_shape(), *sizes]
        if DYNAMIC_INDEX not in static and math.prod(source.get_shape()) != math.prod(sizes):
            raise VerifyException(
                "source and result tensor should have the same number of elements"
            )


class PadOp(tensor.PadOp):
    """The source with `low[d]` and `high[d]` elements added before and after it in each
    dimension d, each added element the value the region yields.

    ```mlir
    %p = tensor.pad %x low[%c0, %n] high[1, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %v : f32
    } : tensor<2x?xf32> to tensor<3x?xf32>
    ```

    MLIR's verifier: a result dimension must equal the size the source and the pads give
    when all three are static; when one of them is dynamic the result may still name a
    static size (checked at run time). xDSL 0.74 requires a dynamic result dimension
    exactly where a pad is an SSA value, so it rejects `low[%c0]` into a static size.
    """

    name = "tensor.pad"

    def verify_(self) -> None:
        source = cast(TensorType[Attribute], self.source.type).get_shape()
        low, high = self.static_low.get_values(), self.static_high.get_values()
        if not len(low) == len(high) == len(source):
            raise VerifyException(
                f"needs one low and one high pad per dimension of its source ({len(source)}), "
                f"has {len(low)} and {len(high)}"
            )
        result = self.result.type.get_shape()
        if len(result) != len(source):
            raise VerifyException(
                f"result rank {len(result)} differs from source rank {len(source)}"
            )
        for d, (n, a, b, r) in enumerate(zip(source, low, high, result, strict=True)):
            if DYNAMIC_INDEX not in (n, a, b) and r != n + a + b:
                raise VerifyException(
                    f"result dimension {d} is {'?' if r == DYNAMIC_INDEX else r}, but the "
                    f"source and pads give {n + a + b}"
                )
        if len(self.region.block.args) != len(source):
            raise VerifyException(
                f"its region needs one index argument per dimension ({len(source)}), has "
                f"{len(self.region.block.args)}"
            )


class ExpandShapeOp(tensor.ExpandShapeOp):
    """The source with each dimension split into a group of dimensions (its
    `reassociation`), the sizes given by `output_shape`.

    ```mlir
    %e = tensor.expand_shape %x [[0, 1]] output_shape [2, %n] : tensor<?xf32> into tensor<2x?xf32>
    %f = tensor.expand_shape %x [[0, 1]] : tensor<?xf32> into tensor<2x?xf32>
    ```

    The second line is the syntax MLIR had before `output_shape` (and files written then
    use): each group may have one dynamic size, the source's size divided by the group's
    static ones (`inferred_output_shape`). Such an op prints as it was written.
    """

    name = "tensor.expand_shape"

    def is_inferred(self) -> bool:
        """Whether the op was written without `output_shape` (its dynamic sizes follow
        from the source's)."""
        dynamic = sum(1 for n in self.static_output_shape.get_values() if n == DYNAMIC_INDEX)
        return dynamic > 0 and not self.dynamic_output_shape

    @classmethod
    def parse(cls, parser: Parser) -> ExpandShapeOp:
        src = parser.parse_unresolved_operand()
        reassociation = cast(ArrayAttr[ArrayAttr[IntegerAttr]], parser.parse_attribute())
        names: list[UnresolvedOperand] = []
        static: Sequence[int] | None = None
        if parser.parse_optional_characters("output_shape") is not None:
            found, static = parse_dynamic_index_list_without_types(
                parser, dynamic_index=DYNAMIC_INDEX
            )
            names = list(found)
        at = parser.pos
        dynamic = parser.resolve_operands(names, [IndexType()] * len(names), at)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        src_type = parser.parse_type()
        parser.parse_characters("into")
        result_type = cast(TensorType[Attribute], parser.parse_type())
        if static is None:
            static = list(result_type.get_shape())
        return cls(
            parser.resolve_operand(src, src_type), dynamic, reassociation, static,
            result_type, attributes,
        )  # fmt: skip

    def print(self, printer: Printer) -> None:
        if not self.is_inferred():
            super().print(printer)
            return
        printer.print_string(" ")
        printer.print_ssa_value(self.src)
        printer.print_string(" ")
        printer.print_attribute(self.reassociation)
        printer.print_op_attributes(attributes=self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(" into ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        super().verify_()
        if not self.is_inferred():
            return
        shape = self.static_output_shape.get_values()
        for i, group in enumerate(self.reassociation.data):
            dynamic = [
                int(d.value.data) for d in group.data if shape[d.value.data] == DYNAMIC_INDEX
            ]
            if len(dynamic) > 1:
                raise VerifyException(
                    f"group {i} has dynamic sizes at {dynamic}: without output_shape a group "
                    "may have one (the source's size divided by the group's static sizes)"
                )


Tensor = replacing(tensor.Tensor, [EmptyOp, ReshapeOp, PadOp, ExpandShapeOp])
"""xDSL's `tensor` dialect with `tensor.empty` keeping its attributes, MLIR's
`tensor.reshape` and `tensor.pad` verifiers, and `tensor.expand_shape` in both of
MLIR's syntaxes."""
