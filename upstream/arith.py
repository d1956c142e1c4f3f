"""devplan's `arith` dialect: xDSL's, with comparisons, `select` and casts elementwise on
tensors and vectors as in MLIR, and the two ops MLIR has that xDSL 0.74 lacks
(`arith.remf`, `arith.index_castui`).

xDSL 0.74 types `arith.cmpi`/`arith.cmpf` results as `i1` whatever the operands, requires
`arith.select`'s condition to be `i1`, and takes only scalars in the casts, so
`arith.cmpf olt, %a, %b : tensor<4xf32>` gets an `i1` result and
`arith.sitofp %a : tensor<4xi32> to tensor<4xf32>` fails verification. The ops below
replace those: their operands and results are "the scalar type, or a tensor or vector of
it", and they verify what MLIR does: a comparison's result is `i1` of its operands' shape,
a select's condition is `i1` or `i1` of the values' shape, a cast keeps the shape. On
scalars they behave as xDSL's do. The comparisons and `select` also keep their attribute
dictionary through print and parse (`arith.cmpf olt, %a, %b {attrs} : f32`), so a placed
op (`{vdev.device = ...}`, as plan-devices writes it) survives a round trip.

Each op subclasses xDSL's, so `isinstance(op, xdsl.dialects.arith.CmpfOp)` holds for it;
the contexts devplan builds load this dialect in place of xDSL's (`upstream.DIALECTS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Self, cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloatConstr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    VectorType,
    container_of,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    EqAttrConstraint,
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .dialect import replacing

_I1 = IntegerType(1)
_I1_LIKE = container_of(EqAttrConstraint(_I1))
_INTEGER = container_of(base(IntegerType))
_FLOAT = container_of(AnyFloatConstr)
_INTEGER_OR_INDEX = container_of(base(IntegerType) | base(IndexType))
_NO_FASTMATH = arith.FastMathFlagsAttr("none")


def _shape(type_: Attribute) -> tuple[int, ...] | None:
    """The shape of a tensor or vector type; None for a scalar."""
    if isinstance(type_, TensorType | VectorType):
        return tuple(cast(TensorType[Attribute], type_).get_shape())
    return None


def _container(type_: Attribute) -> str | None:
    """ "tensor" or "vector" for a shaped type; None for a scalar."""
    if isinstance(type_, TensorType):
        return "tensor"
    return "vector" if isinstance(type_, VectorType) else None


def _element(type_: Attribute) -> Attribute:
    if isinstance(type_, TensorType | VectorType):
        return cast(TensorType[Attribute], type_).element_type
    return type_


def _i1_like(type_: Attribute) -> Attribute:
    """`i1` of `type_`'s shape: `tensor<4x?xi1>` for `tensor<4x?xf32>`, `i1` for `f32`."""
    if isinstance(type_, TensorType):
        return TensorType(_I1, cast(TensorType[Attribute], type_).get_shape())
    if isinstance(type_, VectorType):
        return VectorType(_I1, cast(VectorType[Attribute], type_).get_shape())
    return _I1


# ---- comparisons ---------------------------------------------------------------------------


def _comparison_operands(
    operand1: SSAValue | Operation, operand2: SSAValue | Operation
) -> tuple[SSAValue, SSAValue]:
    lhs, rhs = SSAValue.get(operand1), SSAValue.get(operand2)
    if lhs.type != rhs.type:
        raise TypeError(
            f"Comparison operands must have same type, but provided {lhs.type} and {rhs.type}"
        )
    return lhs, rhs


def _predicate(arg: int | str, names: Sequence[str]) -> IntegerAttr:
    if isinstance(arg, str):
        if arg not in names:
            raise VerifyException(f"Unknown comparison mnemonic: {arg}")
        arg = list(names).index(arg)
    return IntegerAttr(arg, 64)


def _parse_comparison_operands(
    parser: Parser,
) -> tuple[str, UnresolvedOperand, UnresolvedOperand]:
    predicate = parser.parse_identifier()
    parser.parse_punctuation(",")
    lhs = parser.parse_unresolved_operand()
    parser.parse_punctuation(",")
    return predicate, lhs, parser.parse_unresolved_operand()


def _parse_comparison_type(
    parser: Parser, lhs: UnresolvedOperand, rhs: UnresolvedOperand
) -> tuple[dict[str, Attribute], SSAValue, SSAValue]:
    """`{attrs} : type` after the operands: the attributes and the resolved operands."""
    attributes = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    pos = parser.pos
    type_ = parser.parse_type()
    operands = parser.resolve_operands([lhs, rhs], [type_, type_], pos)
    return attributes, operands[0], operands[1]


def _print_comparison_operands(
    op: arith.CmpiOp | arith.CmpfOp, printer: Printer, names: Sequence[str]
) -> None:
    printer.print_string(f" {names[op.predicate.value.data]}, ")
    printer.print_operand(op.lhs)
    printer.print_string(", ")
    printer.print_operand(op.rhs)


def _print_comparison_type(op: arith.CmpiOp | arith.CmpfOp, printer: Printer) -> None:
    printer.print_op_attributes(op.attributes)
    printer.print_string(" : ")
    printer.print_attribute(op.lhs.type)


def _verify_comparison(op: arith.CmpiOp | arith.CmpfOp, names: Sequence[str]) -> None:
    predicate = op.predicate.value.data
    if not 0 <= predicate < len(names):
        raise VerifyException(
            f"has predicate {predicate}, which names no comparison (valid: 0 to "
            f"{len(names) - 1}, {', '.join(names)})"
        )
    if op.lhs.type != op.rhs.type:
        raise VerifyException(
            f"compares {op.lhs.type} with {op.rhs.type}: the operands must have the same type"
        )
    if op.result.type != _i1_like(op.lhs.type):
        raise VerifyException(
            f"on {op.lhs.type} gives {_i1_like(op.lhs.type)}, not {op.result.type}"
        )


@irdl_op_definition
class CmpiOp(arith.CmpiOp):
    """Compares integers, or tensors or vectors of them elementwise; the result is `i1`
    of the operands' shape.

    ```mlir
    %less = arith.cmpi slt, %a, %b : tensor<4xi32>
    ```
    """

    name = "arith.cmpi"

    predicate = prop_def(IntegerAttr)
    lhs = operand_def(arith.signlessIntegerLike)
    rhs = operand_def(arith.signlessIntegerLike)
    result = result_def(_I1_LIKE)

    def __init__(
        self, operand1: Operation | SSAValue, operand2: Operation | SSAValue, arg: int | str
    ):
        lhs, rhs = _comparison_operands(operand1, operand2)
        IRDLOperation.__init__(
            self,
            operands=[lhs, rhs],
            result_types=[_i1_like(lhs.type)],
            properties={"predicate": _predicate(arg, arith.CMPI_COMPARISON_OPERATIONS)},
        )

    @classmethod
    def parse(cls, parser: Parser) -> CmpiOp:
        predicate, lhs, rhs = _parse_comparison_operands(parser)
        attributes, lhs_value, rhs_value = _parse_comparison_type(parser, lhs, rhs)
        op = cls(lhs_value, rhs_value, predicate)
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        _print_comparison_operands(self, printer, arith.CMPI_COMPARISON_OPERATIONS)
        _print_comparison_type(self, printer)

    def verify_(self) -> None:
        _verify_comparison(self, arith.CMPI_COMPARISON_OPERATIONS)


@irdl_op_definition
class CmpfOp(arith.CmpfOp):
    """Compares floats, or tensors or vectors of them elementwise; the result is `i1` of
    the operands' shape.

    ```mlir
    %less = arith.cmpf olt, %a, %b : tensor<4xf32>
    ```
    """

    name = "arith.cmpf"

    predicate = prop_def(IntegerAttr)
    lhs = operand_def(arith.floatingPointLike)
    rhs = operand_def(arith.floatingPointLike)
    fastmath = prop_def(arith.FastMathFlagsAttr, default_value=_NO_FASTMATH)
    result = result_def(_I1_LIKE)

    def __init__(
        self,
        operand1: SSAValue | Operation,
        operand2: SSAValue | Operation,
        arg: int | str,
        fastmath: arith.FastMathFlagsAttr = _NO_FASTMATH,
    ):
        lhs, rhs = _comparison_operands(operand1, operand2)
        IRDLOperation.__init__(
            self,
            operands=[lhs, rhs],
            result_types=[_i1_like(lhs.type)],
            properties={
                "predicate": _predicate(arg, arith.CMPF_COMPARISON_OPERATIONS),
                "fastmath": fastmath,
            },
        )

    @classmethod
    def parse(cls, parser: Parser) -> CmpfOp:
        predicate, lhs, rhs = _parse_comparison_operands(parser)
        fastmath = _NO_FASTMATH
        if parser.parse_optional_keyword("fastmath"):
            fastmath = arith.FastMathFlagsAttr(arith.FastMathFlagsAttr.parse_parameter(parser))
        attributes, lhs_value, rhs_value = _parse_comparison_type(parser, lhs, rhs)
        op = cls(lhs_value, rhs_value, predicate, fastmath)
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        _print_comparison_operands(self, printer, arith.CMPF_COMPARISON_OPERATIONS)
        if self.fastmath != _NO_FASTMATH:
            printer.print_string(" fastmath")
            self.fastmath.print_parameter(printer)
        _print_comparison_type(self, printer)

    def verify_(self) -> None:
        _verify_comparison(self, arith.CMPF_COMPARISON_OPERATIONS)


# ---- select --------------------------------------------------------------------------------


@irdl_op_definition
class SelectOp(arith.SelectOp):
    """Picks `%a` where the condition holds, else `%b`; a shaped condition picks
    elementwise and has the values' shape.

    ```mlir
    %m = arith.select %less, %a, %b : tensor<4xi1>, tensor<4xf32>
    ```
    """

    name = "arith.select"

    _T: ClassVar = VarConstraint("_T", AnyAttr())
    cond = operand_def(_I1_LIKE)
    lhs = operand_def(_T)
    rhs = operand_def(_T)
    result = result_def(_T)

    assembly_format = None

    @classmethod
    def parse(cls, parser: Parser) -> SelectOp:
        names = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            names.append(parser.parse_unresolved_operand())
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        types = [parser.parse_type()]
        if parser.parse_optional_punctuation(","):
            types.append(parser.parse_type())
        cond_type, type_ = (_I1, types[0]) if len(types) == 1 else (types[0], types[1])
        op = cls(*parser.resolve_operands(names, [cond_type, type_, type_], pos))
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list((self.cond, self.lhs, self.rhs), printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        if self.cond.type != _I1:
            printer.print_attribute(self.cond.type)
            printer.print_string(", ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        cond = _shape(self.cond.type)
        if cond is not None and cond != _shape(self.result.type):
            raise VerifyException(
                f"condition {self.cond.type} does not have the shape of its values "
                f"({self.result.type})"
            )


# ---- casts ---------------------------------------------------------------------------------

_WIDTH_CHANGE = {"arith.trunci": -1, "arith.extsi": 1, "arith.extui": 1}
"""Integer casts that must narrow (-1) or widen (1) the bit width."""


class _ElementwiseCast(IRDLOperation):
    """What every cast below shares: MLIR's syntax, `arith.sitofp %i {attrs} : tensor<4xi32>
    to tensor<4xf32>`, and the check that a cast keeps the shape."""

    assembly_format = None

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        source = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        parser.parse_keyword("to")
        op = cls.build(
            operands=[parser.resolve_operand(source, source_type)],
            result_types=[parser.parse_type()],
        )
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.operands[0])
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.operands[0].type)
        printer.print_string(" to ")
        printer.print_attribute(self.results[0].type)

    def verify_(self) -> None:
        source, target = self.operands[0].type, self.results[0].type
        if _shape(source) != _shape(target) or _container(source) != _container(target):
            raise VerifyException(f"casts {source} to {target}: a cast keeps the shape")
        width = _WIDTH_CHANGE.get(self.name)
        into, out = _element(source), _element(target)
        if width is not None:
            a, b = cast(IntegerType, into).bitwidth, cast(IntegerType, out).bitwidth
            if (b - a) * width <= 0:
                size = "smaller" if width < 0 else "larger"
                raise VerifyException(
                    f"Destination bit-width must be {size} than the input bit-width"
                )
        if self.name in ("arith.index_cast", "arith.index_castui") and not (
            isinstance(into, IndexType) ^ isinstance(out, IndexType)
        ):
            raise VerifyException(
                f"operand type '{source}' and result type '{target}' are cast incompatible "
                "(exactly one of them must be index-like)"
            )


@irdl_op_definition
class SIToFPOp(_ElementwiseCast, arith.SIToFPOp):
    """Signed integers to floats, elementwise: `arith.sitofp %i : tensor<4xi32> to
    tensor<4xf32>`."""

    name = "arith.sitofp"
    input = operand_def(_INTEGER)
    result = result_def(_FLOAT)


@irdl_op_definition
class UIToFPOp(_ElementwiseCast, arith.UIToFPOp):
    """Unsigned integers to floats, elementwise: `arith.uitofp %i : tensor<4xi32> to
    tensor<4xf32>`."""

    name = "arith.uitofp"
    input = operand_def(_INTEGER)
    result = result_def(_FLOAT)


@irdl_op_definition
class FPToSIOp(_ElementwiseCast, arith.FPToSIOp):
    """Floats to signed integers, elementwise: `arith.fptosi %x : tensor<4xf32> to
    tensor<4xi32>`."""

    name = "arith.fptosi"
    input = operand_def(_FLOAT)
    result = result_def(_INTEGER)


@irdl_op_definition
class FPToUIOp(_ElementwiseCast, arith.FPToUIOp):
    """Floats to unsigned integers, elementwise: `arith.fptoui %x : tensor<4xf32> to
    tensor<4xi32>`."""

    name = "arith.fptoui"
    input = operand_def(_FLOAT)
    result = result_def(_INTEGER)


@irdl_op_definition
class ExtFOp(_ElementwiseCast, arith.ExtFOp):
    """Widens floats, elementwise: `arith.extf %x : tensor<4xf32> to tensor<4xf64>`."""

    name = "arith.extf"
    input = operand_def(_FLOAT)
    result = result_def(_FLOAT)


@irdl_op_definition
class TruncFOp(_ElementwiseCast, arith.TruncFOp):
    """Narrows floats, elementwise: `arith.truncf %x : tensor<4xf64> to tensor<4xf32>`."""

    name = "arith.truncf"
    input = operand_def(_FLOAT)
    result = result_def(_FLOAT)


@irdl_op_definition
class ExtSIOp(_ElementwiseCast, arith.ExtSIOp):
    """Sign-extends integers, elementwise: `arith.extsi %i : tensor<4xi32> to
    tensor<4xi64>`."""

    name = "arith.extsi"
    input = operand_def(_INTEGER)
    result = result_def(_INTEGER)


@irdl_op_definition
class ExtUIOp(_ElementwiseCast, arith.ExtUIOp):
    """Zero-extends integers, elementwise: `arith.extui %i : tensor<4xi8> to
    tensor<4xi32>`."""

    name = "arith.extui"
    input = operand_def(_INTEGER)
    result = result_def(_INTEGER)


@irdl_op_definition
class TruncIOp(_ElementwiseCast, arith.TruncIOp):
    """Truncates integers, elementwise: `arith.trunci %i : tensor<4xi32> to
    tensor<4xi8>`."""

    name = "arith.trunci"
    input = operand_def(_INTEGER)
    result = result_def(_INTEGER)


@irdl_op_definition
class IndexCastOp(_ElementwiseCast, arith.IndexCastOp):
    """Between `index` and integers, elementwise: `arith.index_cast %i : tensor<4xi32> to
    tensor<4xindex>`."""

    name = "arith.index_cast"
    input = operand_def(_INTEGER_OR_INDEX)
    result = result_def(_INTEGER_OR_INDEX)


@irdl_op_definition
class IndexCastUIOp(_ElementwiseCast):
    """Between `index` and integers as unsigned values, elementwise: a narrower result
    keeps the low bits, a wider one is zero-extended (`index_cast` sign-extends).

    ```mlir
    %n = arith.index_castui %i : i32 to index
    ```
    """

    name = "arith.index_castui"
    input = operand_def(_INTEGER_OR_INDEX)
    result = result_def(_INTEGER_OR_INDEX)
    traits = traits_def(Pure())


# ---- ops xDSL lacks ------------------------------------------------------------------------


@irdl_op_definition
class RemFOp(arith.FloatingPointLikeBinaryOperation):
    """The floating-point remainder of dividing `%a` by `%b`, as C's `fmod`: exactly
    `a - trunc(a / b) * b`, with the sign of `a`; NaN when `a` is infinite or `b` is zero,
    `a` when `b` is infinite. Elementwise on tensors and vectors.

    ```mlir
    %r = arith.remf %a, %b : f32
    ```
    """

    name = "arith.remf"
    traits = traits_def(Pure())


_ELEMENTWISE: list[type[Operation]] = [
    CmpiOp, CmpfOp, SelectOp, SIToFPOp, UIToFPOp, FPToSIOp, FPToUIOp, ExtFOp, TruncFOp,
    ExtSIOp, ExtUIOp, TruncIOp, IndexCastOp, IndexCastUIOp, RemFOp,
]  # fmt: skip


Arith = replacing(arith.Arith, _ELEMENTWISE)
"""xDSL's `arith` dialect with the comparisons, `select`, casts and added ops above."""
