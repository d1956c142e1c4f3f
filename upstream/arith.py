"""Fixes to xDSL 0.74 ops that devplan's IR relies on (installed by the vdev dialect).

* `tensor.empty` drops its attribute dictionary when printed and rejects one when
  parsed, so a placed `tensor.empty` (`{vdev.device = ...}`, as plan-devices writes it)
  did not survive a print/parse round trip. MLIR's syntax is
  `tensor.empty(%n) {attrs} : tensor<?xf32>`; these versions read and write that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from xdsl.dialects import arith, tensor
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
from xdsl.irdl import AttrConstraint, EqAttrConstraint, IRDLOperation, OperandDef, ResultDef, base
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


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


# ---------------------------------------------------------------------------------------
# arith on tensors: comparisons, select and casts, elementwise as in MLIR.
#
# xDSL 0.74 types `arith.cmpi`/`arith.cmpf` results as `i1` whatever the operands,
# requires `arith.select`'s condition to be `i1`, and takes only scalars in the casts,
# so `arith.cmpf olt, %a, %b : tensor<4xf32>` got an `i1` result and
# `arith.sitofp %a : tensor<4xi32> to tensor<4xf32>` failed verification. The versions
# below widen those constraints to "the scalar type, or a tensor or vector of it", and
# verify what MLIR does: a comparison's result is `i1` of its operands' shape, a
# select's condition is `i1` or `i1` of the values' shape, a cast keeps the shape. On
# scalars they behave as before. The comparisons also keep their attribute dictionary
# (`arith.cmpf olt, %a, %b {attrs} : f32`), which xDSL dropped when printing and could
# not parse, so a placed comparison survives a round trip.


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


_I1 = IntegerType(1)


def _widen_operand(cls: type[IRDLOperation], name: str, constraint: AttrConstraint) -> None:
    definition = cls.get_irdl_definition()
    definition.operands = [
        (n, OperandDef(constraint) if n == name else d) for n, d in definition.operands
    ]


def _widen_result(cls: type[IRDLOperation], name: str, constraint: AttrConstraint) -> None:
    definition = cls.get_irdl_definition()
    definition.results = [
        (n, ResultDef(constraint) if n == name else d) for n, d in definition.results
    ]


def _init_comparison(
    names: Sequence[str],
) -> Callable[..., None]:
    def init(
        self: IRDLOperation,
        operand1: SSAValue | Operation,
        operand2: SSAValue | Operation,
        arg: int | str,
        fastmath: arith.FastMathFlagsAttr | None = None,
    ) -> None:
        lhs, rhs = SSAValue.get(operand1), SSAValue.get(operand2)
        if lhs.type != rhs.type:
            raise TypeError(
                f"Comparison operands must have same type, but provided {lhs.type} and {rhs.type}"
            )
        if isinstance(arg, str):
            if arg not in names:
                raise VerifyException(f"Unknown comparison mnemonic: {arg}")
            arg = list(names).index(arg)
        properties: dict[str, Attribute] = {"predicate": IntegerAttr(arg, 64)}
        if isinstance(self, arith.CmpfOp):
            properties["fastmath"] = fastmath or arith.FastMathFlagsAttr("none")
        IRDLOperation.__init__(
            self,
            operands=[lhs, rhs],
            result_types=[_i1_like(lhs.type)],
            properties=properties,
        )

    return init


def _parse_comparison(cls: type[IRDLOperation], parser: Parser) -> IRDLOperation:
    arg = parser.parse_identifier()
    parser.parse_punctuation(",")
    lhs = parser.parse_unresolved_operand()
    parser.parse_punctuation(",")
    rhs = parser.parse_unresolved_operand()
    fastmath = None
    if cls is arith.CmpfOp and parser.parse_optional_keyword("fastmath"):
        fastmath = arith.FastMathFlagsAttr(arith.FastMathFlagsAttr.parse_parameter(parser))
    attributes = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    pos = parser.pos
    type_ = parser.parse_type()
    operands = parser.resolve_operands([lhs, rhs], [type_, type_], pos)
    op: IRDLOperation = (
        arith.CmpfOp(operands[0], operands[1], arg, fastmath or arith.FastMathFlagsAttr("none"))
        if cls is arith.CmpfOp
        else arith.CmpiOp(operands[0], operands[1], arg)
    )
    op.attributes |= attributes
    return op


def _print_comparison(self: arith.CmpiOp | arith.CmpfOp, printer: Printer) -> None:
    names = (
        arith.CMPF_COMPARISON_OPERATIONS
        if isinstance(self, arith.CmpfOp)
        else arith.CMPI_COMPARISON_OPERATIONS
    )
    printer.print_string(f" {names[self.predicate.value.data]}, ")
    printer.print_operand(self.lhs)
    printer.print_string(", ")
    printer.print_operand(self.rhs)
    if isinstance(self, arith.CmpfOp) and self.fastmath != arith.FastMathFlagsAttr("none"):
        printer.print_string(" fastmath")
        self.fastmath.print_parameter(printer)
    printer.print_op_attributes(self.attributes)
    printer.print_string(" : ")
    printer.print_attribute(self.lhs.type)


def _verify_comparison(self: arith.CmpiOp | arith.CmpfOp) -> None:
    self.get_irdl_definition().verify(self)
    if self.lhs.type != self.rhs.type:
        raise VerifyException(
            f"compares {self.lhs.type} with {self.rhs.type}: the operands must have the same type"
        )
    if self.result.type != _i1_like(self.lhs.type):
        raise VerifyException(
            f"on {self.lhs.type} gives {_i1_like(self.lhs.type)}, not {self.result.type}"
        )


def _verify_select(self: arith.SelectOp) -> None:
    self.get_irdl_definition().verify(self)
    cond = _shape(self.cond.type)
    if cond is not None and cond != _shape(self.result.type):
        raise VerifyException(
            f"condition {self.cond.type} does not have the shape of its values ({self.result.type})"
        )


def _parse_select(cls: type[arith.SelectOp], parser: Parser) -> arith.SelectOp:
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


def _print_select(self: arith.SelectOp, printer: Printer) -> None:
    printer.print_string(" ")
    printer.print_list((self.cond, self.lhs, self.rhs), printer.print_operand)
    printer.print_op_attributes(self.attributes)
    printer.print_string(" : ")
    if self.cond.type != _I1:
        printer.print_attribute(self.cond.type)
        printer.print_string(", ")
    printer.print_attribute(self.result.type)


def _verify_cast(self: IRDLOperation) -> None:
    self.get_irdl_definition().verify(self)
    source, target = self.operands[0].type, self.results[0].type
    if _shape(source) != _shape(target) or _container(source) != _container(target):
        raise VerifyException(f"casts {source} to {target}: a cast keeps the shape")
    width = {"arith.trunci": -1, "arith.extsi": 1, "arith.extui": 1}.get(self.name)
    into, out = _element(source), _element(target)
    if width is not None:
        a, b = cast(IntegerType, into).bitwidth, cast(IntegerType, out).bitwidth
        if (b - a) * width <= 0:
            size = "smaller" if width < 0 else "larger"
            raise VerifyException(f"Destination bit-width must be {size} than the input bit-width")
    if self.name == "arith.index_cast" and not (
        isinstance(into, IndexType) ^ isinstance(out, IndexType)
    ):
        raise VerifyException(
            f"operand type '{source}' and result type '{target}' are cast incompatible "
            "(exactly one of them must be index-like)"
        )


_INTEGER = container_of(base(IntegerType))
_FLOAT = container_of(AnyFloatConstr)
_INTEGER_OR_INDEX = container_of(base(IntegerType) | base(IndexType))
_CAST_TYPES: dict[type[IRDLOperation], tuple[AttrConstraint, AttrConstraint]] = {
    arith.SIToFPOp: (_INTEGER, _FLOAT),
    arith.UIToFPOp: (_INTEGER, _FLOAT),
    arith.FPToSIOp: (_FLOAT, _INTEGER),
    arith.FPToUIOp: (_FLOAT, _INTEGER),
    arith.ExtFOp: (_FLOAT, _FLOAT),
    arith.TruncFOp: (_FLOAT, _FLOAT),
    arith.ExtSIOp: (_INTEGER, _INTEGER),
    arith.ExtUIOp: (_INTEGER, _INTEGER),
    arith.TruncIOp: (_INTEGER, _INTEGER),
    arith.IndexCastOp: (_INTEGER_OR_INDEX, _INTEGER_OR_INDEX),
}


def _install_elementwise_arith() -> None:
    i1_like = container_of(EqAttrConstraint(_I1))
    for cls, names in (
        (arith.CmpiOp, arith.CMPI_COMPARISON_OPERATIONS),
        (arith.CmpfOp, arith.CMPF_COMPARISON_OPERATIONS),
    ):
        _widen_result(cls, "result", i1_like)
        cls.__init__ = _init_comparison(names)  # pyright: ignore[reportAttributeAccessIssue]
        cls.parse = classmethod(_parse_comparison)  # pyright: ignore[reportAttributeAccessIssue]
        cls.print = _print_comparison  # pyright: ignore[reportAttributeAccessIssue]
        cls.verify_ = _verify_comparison  # pyright: ignore[reportAttributeAccessIssue]
    _widen_operand(arith.SelectOp, "cond", i1_like)
    arith.SelectOp.verify_ = _verify_select  # pyright: ignore[reportAttributeAccessIssue]
    arith.SelectOp.parse = classmethod(_parse_select)  # pyright: ignore[reportAttributeAccessIssue]
    arith.SelectOp.print = _print_select  # pyright: ignore[reportAttributeAccessIssue]
    for cls, (source, target) in _CAST_TYPES.items():
        _widen_operand(cls, "input", source)
        _widen_result(cls, "result", target)
        cls.verify_ = _verify_cast  # pyright: ignore[reportAttributeAccessIssue]


def install() -> None:
    """Give the xDSL ops above MLIR's syntax (idempotent; the vdev dialect calls it)."""
    tensor.EmptyOp.print = _print_empty  # pyright: ignore[reportAttributeAccessIssue]
    tensor.EmptyOp.parse = classmethod(_parse_empty)  # pyright: ignore[reportAttributeAccessIssue]
    _install_elementwise_arith()
