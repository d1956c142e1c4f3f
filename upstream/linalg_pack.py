"""`linalg.pack` and `linalg.unpack` as MLIR defines them (xDSL 0.74 has neither).

`linalg.pack` tiles a tensor: each source dimension `inner_dims_pos[i]` is split into
`ceil(n / inner_tiles[i])` tiles of `inner_tiles[i]` elements; the result holds the
outer dimensions (every source dimension, tiled ones counting tiles), permuted by
`outer_dims_perm`, then one dimension per tile, in `inner_dims_pos` order. Where the
last tile runs past the source, the result holds `padding_value`:

    result[o..., t...] = source[i] with i[d] = o[perm^-1(d)] * tile + t[k]  (d = pos[k])
                                       and i[d] = o[perm^-1(d)]             (d untiled)

`linalg.unpack` is its inverse: it writes every element of its destination from the
packed source (the padding is dropped). Tile sizes are constants or `index` values.

```mlir
%p = linalg.pack %a padding_value(%z : i32) outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [8, %t] into %d : tensor<7x16xi32> -> tensor<?x1x8x?xi32>
%u = linalg.unpack %p inner_dims_pos = [0, 1] inner_tiles = [8, 1] into %e : tensor<1x16x8x1xi32> -> tensor<7x16xi32>
```
"""

# ruff: noqa: E501  (IR examples in docstrings are long)

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    IndexType,
    TensorType,
    i64,
)
from xdsl.dialects.utils import parse_dynamic_index_list_without_types, print_dynamic_index_list
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


class _PackLike(IRDLOperation):
    """What `linalg.pack` and `linalg.unpack` share: the tiling and its syntax. (Each op
    declares its operands itself, in MLIR's order: source, dest[, padding_value], tiles.)"""

    outer_dims_perm = opt_prop_def(DenseArrayBase.constr(i64))
    inner_dims_pos = prop_def(DenseArrayBase.constr(i64))
    static_inner_tiles = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    @property
    def source(self) -> SSAValue:
        return self.operands[0]

    @property
    def dest(self) -> SSAValue:
        return self.operands[1]

    @property
    def inner_tiles(self) -> Sequence[SSAValue]:
        count = sum(1 for t in self.static_inner_tiles.get_values() if t == DYNAMIC_INDEX)
        return self.operands[len(self.operands) - count :] if count else ()

    def positions(self) -> list[int]:
        return list(self.inner_dims_pos.get_values())

    def permutation(self, rank: int) -> list[int]:
        """`outer_dims_perm`, or the identity when absent."""
        perm = self.outer_dims_perm
        return list(perm.get_values()) if perm is not None else list(range(rank))

    def tiles(self) -> list[int | SSAValue]:
        """Each inner tile: its size, or the `index` value holding it."""
        dynamic = iter(self.inner_tiles)
        return [
            next(dynamic) if t == DYNAMIC_INDEX else t for t in self.static_inner_tiles.get_values()
        ]

    def unpacked_type(self) -> TensorType[Attribute]:
        """The type of the tensor that is not packed (the pack's source, the unpack's dest)."""
        raise NotImplementedError

    def packed_type(self) -> TensorType[Attribute]:
        raise NotImplementedError

    def verify_(self) -> None:
        unpacked, packed = self.unpacked_type(), self.packed_type()
        rank = unpacked.get_num_dims()
        positions = self.positions()
        tiles = self.static_inner_tiles.get_values()
        if self.result.type != self.dest.type:
            raise VerifyException(
                f"result type {self.result.type} differs from its dest's {self.dest.type}"
            )
        if unpacked.element_type != packed.element_type:
            raise VerifyException("the packed and unpacked tensors have different element types")
        if len(tiles) != len(positions):
            raise VerifyException(f"{len(positions)} inner_dims_pos but {len(tiles)} inner_tiles")
        if len(set(positions)) != len(positions) or any(not 0 <= p < rank for p in positions):
            raise VerifyException(
                f"inner_dims_pos {positions} are not distinct dimensions below {rank}"
            )
        perm = self.permutation(rank)
        if sorted(perm) != list(range(rank)):
            raise VerifyException(
                f"outer_dims_perm {perm} is not a permutation of {rank} dimensions"
            )
        if any(t != DYNAMIC_INDEX and t <= 0 for t in tiles):
            raise VerifyException(f"inner_tiles {list(tiles)} must be positive")
        if packed.get_num_dims() != rank + len(positions):
            raise VerifyException(
                f"the packed tensor has rank {packed.get_num_dims()}, expected {rank + len(positions)}"
            )
        expected = packed_shape(unpacked.get_shape(), positions, list(tiles), perm)
        for d, (want, have) in enumerate(zip(expected, packed.get_shape(), strict=True)):
            if DYNAMIC_INDEX not in (want, have) and want != have:
                raise VerifyException(f"packed dimension {d} is {have}, expected {want}")

    @classmethod
    def _parse_tiling(
        cls, parser: Parser
    ) -> tuple[DenseArrayBase | None, DenseArrayBase, list[SSAValue], DenseArrayBase]:
        perm = None
        if parser.parse_optional_keyword("outer_dims_perm"):
            parser.parse_punctuation("=")
            perm = DenseArrayBase.from_list(i64, _int_list(parser))
        parser.parse_keyword("inner_dims_pos")
        parser.parse_punctuation("=")
        positions = DenseArrayBase.from_list(i64, _int_list(parser))
        parser.parse_keyword("inner_tiles")
        parser.parse_punctuation("=")
        at = parser.pos
        names, static = parse_dynamic_index_list_without_types(parser, dynamic_index=DYNAMIC_INDEX)
        tiles = parser.resolve_operands(names, [IndexType()] * len(names), at)
        return perm, positions, list(tiles), DenseArrayBase.from_list(i64, static)

    @staticmethod
    def _parse_into(
        parser: Parser, source: UnresolvedOperand
    ) -> tuple[SSAValue, SSAValue, dict[str, Attribute], Attribute]:
        """`into %dest {attrs} : source-type -> dest-type`, after the tiling: the
        resolved source and dest, the attributes and the dest's (the result's) type."""
        parser.parse_keyword("into")
        dest = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        parser.parse_punctuation("->")
        dest_type = parser.parse_type()
        return (
            parser.resolve_operand(source, source_type),
            parser.resolve_operand(dest, dest_type),
            attributes,
            dest_type,
        )

    def _print_tiling(self, printer: Printer) -> None:
        if self.outer_dims_perm is not None:
            printer.print_string(f" outer_dims_perm = {list(self.outer_dims_perm.get_values())}")
        printer.print_string(f" inner_dims_pos = {self.positions()} inner_tiles = ")
        print_dynamic_index_list(
            printer, DYNAMIC_INDEX, self.inner_tiles, self.static_inner_tiles.get_values()
        )
        printer.print_string(" into ")
        printer.print_ssa_value(self.dest)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.dest.type)


def _int_list(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(Parser.Delimiter.SQUARE, parser.parse_integer)


def packed_shape(
    shape: Sequence[int], positions: Sequence[int], tiles: Sequence[int], perm: Sequence[int]
) -> list[int]:
    """The packed shape of `shape` (DYNAMIC_INDEX where a size or its tile is dynamic)."""
    outer = list(shape)
    for d, t in zip(positions, tiles, strict=True):
        n = shape[d]
        outer[d] = DYNAMIC_INDEX if DYNAMIC_INDEX in (n, t) else -(-n // t)
    return [outer[p] for p in perm] + list(tiles)


@irdl_op_definition
class PackOp(_PackLike):
    """`linalg.pack`: the source tiled into the dest's layout (see the module header)."""

    name = "linalg.pack"

    source_ = operand_def(TensorType)
    dest_ = operand_def(TensorType)
    padding_value = opt_operand_def()
    inner_tiles_ = var_operand_def(IndexType)

    def unpacked_type(self) -> TensorType[Attribute]:
        return cast(TensorType[Attribute], self.source.type)

    def packed_type(self) -> TensorType[Attribute]:
        return cast(TensorType[Attribute], self.dest.type)

    @classmethod
    def parse(cls, parser: Parser) -> PackOp:
        source = parser.parse_unresolved_operand()
        padding: SSAValue | None = None
        if parser.parse_optional_keyword("padding_value"):
            parser.parse_punctuation("(")
            name = parser.parse_unresolved_operand()
            parser.parse_punctuation(":")
            padding = parser.resolve_operand(name, parser.parse_type())
            parser.parse_punctuation(")")
        perm, positions, tiles, static = cls._parse_tiling(parser)
        source_value, dest, attributes, dest_type = cls._parse_into(parser, source)
        return cls.build(
            operands=[source_value, dest, [padding] if padding is not None else [], tiles],
            result_types=[dest_type],
            properties=_properties(perm, positions, static),
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.source)
        if self.padding_value is not None:
            printer.print_string(" padding_value(")
            printer.print_ssa_value(self.padding_value)
            printer.print_string(" : ")
            printer.print_attribute(self.padding_value.type)
            printer.print_string(")")
        self._print_tiling(printer)

    def verify_(self) -> None:
        super().verify_()
        if (
            self.padding_value is not None
            and self.padding_value.type != self.unpacked_type().element_type
        ):
            raise VerifyException(
                f"padding_value of type {self.padding_value.type} in a pack of {self.unpacked_type().element_type}"
            )


@irdl_op_definition
class UnPackOp(_PackLike):
    """`linalg.unpack`: the packed source written back into the dest's layout, the
    padding dropped (see the module header)."""

    name = "linalg.unpack"

    source_ = operand_def(TensorType)
    dest_ = operand_def(TensorType)
    inner_tiles_ = var_operand_def(IndexType)

    def unpacked_type(self) -> TensorType[Attribute]:
        return cast(TensorType[Attribute], self.dest.type)

    def packed_type(self) -> TensorType[Attribute]:
        return cast(TensorType[Attribute], self.source.type)

    @classmethod
    def parse(cls, parser: Parser) -> UnPackOp:
        source = parser.parse_unresolved_operand()
        perm, positions, tiles, static = cls._parse_tiling(parser)
        source_value, dest, attributes, dest_type = cls._parse_into(parser, source)
        return cls.build(
            operands=[source_value, dest, tiles],
            result_types=[dest_type],
            properties=_properties(perm, positions, static),
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.source)
        self._print_tiling(printer)


def _properties(
    perm: DenseArrayBase | None, positions: DenseArrayBase, static: DenseArrayBase
) -> dict[str, Attribute]:
    properties: dict[str, Attribute] = {"inner_dims_pos": positions, "static_inner_tiles": static}
    if perm is not None:
        properties["outer_dims_perm"] = perm
    return properties
