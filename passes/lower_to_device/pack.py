"""Phase 0 of lower-to-device for `linalg.pack` and `linalg.unpack`: each becomes the
level-1 ops MLIR's `lower_pack` and `lower_unpack` give, on the op's device.

    pack:   tensor.pad (to whole tiles, with padding_value; none when no tile runs
            past the source) -> tensor.expand_shape (each tiled dimension d into
            [ceil(n / t), t]) -> a transpose generic into the dest's layout
    unpack: a transpose generic out of the packed layout -> tensor.collapse_shape
            (each [tiles, t] back into one dimension) -> tensor.extract_slice of the
            dest's sizes (the padding dropped)

Sizes that are not static (a dynamic dimension, a tile given as an `index` value) are
computed on the host with `arith` on `index` values and `tensor.dim`. Every tensor op
made carries the pack's `vdev.device`, so the module stays planned. A pack without
`padding_value` whose tiles do not divide the source is caught where the expand_shape
runs (its element count differs: a located run-time error).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    ArrayAttr,
    IndexType,
    IntegerAttr,
    TensorType,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.rewriter import InsertPoint, Rewriter

from ...dialects.vdev import DEVICE_ATTR
from ...upstream.linalg_pack import PackOp, UnPackOp
from ...upstream.tensor import PadOp

Size = int | SSAValue
"""A size known when lowering (int) or computed on the host (an `index` value)."""


class _Builder:
    """Inserts ops before the pack or unpack, placing tensor ops on its device."""

    def __init__(self, op: Operation) -> None:
        self.op = op
        self.device = op.attributes.get(DEVICE_ATTR)

    def add(self, new: Operation) -> Operation:
        new.location = self.op.location
        if self.device is not None and any(isinstance(r.type, TensorType) for r in new.results):
            new.attributes[DEVICE_ATTR] = self.device
        Rewriter.insert_op(new, InsertPoint.before(self.op))
        return new

    def value(self, n: Size) -> SSAValue:
        if isinstance(n, SSAValue):
            return n
        return self.add(arith.ConstantOp(IntegerAttr(n, IndexType()))).results[0]

    def dim(self, source: SSAValue, d: int) -> Size:
        n = _shape(source)[d]
        if n != DYNAMIC_INDEX:
            return n
        return self.add(tensor.DimOp(source, self.value(d))).results[0]

    def ceil_div(self, n: Size, t: Size) -> Size:
        if isinstance(n, int) and isinstance(t, int):
            return -(-n // t)
        top = self.add(arith.AddiOp(self.value(n), self.value(t))).results[0]
        top = self.add(arith.SubiOp(top, self.value(1))).results[0]
        return self.add(arith.DivUIOp(top, self.value(t))).results[0]

    def mul(self, a: Size, b: Size) -> Size:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        return self.add(arith.MuliOp(self.value(a), self.value(b))).results[0]

    def sub(self, a: Size, b: Size) -> Size:
        if isinstance(a, int) and isinstance(b, int):
            return a - b
        return self.add(arith.SubiOp(self.value(a), self.value(b))).results[0]


def _shape(value: SSAValue) -> Sequence[int]:
    type_ = value.type
    assert isinstance(type_, TensorType)
    return type_.get_shape()


def _static(sizes: Sequence[Size]) -> list[int]:
    return [n if isinstance(n, int) else DYNAMIC_INDEX for n in sizes]


def _dynamic(sizes: Sequence[Size]) -> list[SSAValue]:
    return [n for n in sizes if isinstance(n, SSAValue)]


def _groups(
    rank: int, tiled: set[int]
) -> tuple[ArrayAttr[ArrayAttr[IntegerAttr]], list[int], list[int]]:
    """The reassociation between the unpacked rank and the expanded one (each tiled
    dimension two), and where each dimension's outer and inner parts sit in the latter."""
    groups: list[list[int]] = []
    outer: list[int] = []
    inner: list[int] = [-1] * rank
    at = 0
    for d in range(rank):
        outer.append(at)
        if d in tiled:
            inner[d] = at + 1
            groups.append([at, at + 1])
            at += 2
        else:
            groups.append([at])
            at += 1
    attr = ArrayAttr(ArrayAttr(IntegerAttr(i, 64) for i in g) for g in groups)
    return attr, outer, inner


def _transpose(b: _Builder, source: SSAValue, init: SSAValue, reads: Sequence[int]) -> SSAValue:
    """A generic over `init`'s dimensions d_j copying `source` read at index
    (d_reads[0], d_reads[1], ...)."""
    rank = len(reads)
    element = _element(source)
    body = Region(Block(arg_types=[element, element]))
    body.block.add_op(YieldOp(body.block.args[0]))
    maps = [
        AffineMapAttr(AffineMap(rank, 0, tuple(AffineDimExpr(r) for r in reads))),
        AffineMapAttr(AffineMap.identity(rank)),
    ]
    generic = GenericOp(
        [source], [init], body, maps, [IteratorTypeAttr.parallel()] * rank, [init.type]
    )
    return b.add(generic).results[0]


def _element(value: SSAValue) -> Attribute:
    return cast(TensorType[Attribute], value.type).element_type


def decompose_pack(op: PackOp) -> None:
    b = _Builder(op)
    source = op.source
    rank = len(_shape(source))
    positions, perm = op.positions(), op.permutation(rank)
    tile_of: dict[int, Size] = dict(zip(positions, op.tiles(), strict=True))
    sizes = [b.dim(source, d) for d in range(rank)]
    outer = {d: b.ceil_div(sizes[d], t) for d, t in tile_of.items()}
    padded = [b.mul(outer[d], tile_of[d]) if d in tile_of else sizes[d] for d in range(rank)]
    high = [b.sub(p, n) for p, n in zip(padded, sizes, strict=True)]
    if op.padding_value is not None and any(h != 0 for h in high):
        body = Region(Block(arg_types=[IndexType()] * rank))
        body.block.add_op(tensor.YieldOp(op.padding_value))
        pad = PadOp(
            source, [], _dynamic(high), body, [0] * rank, _static(high),
            TensorType(_element(source), _static(padded)),
        )  # fmt: skip
        source = b.add(pad).results[0]
    reassociation, outer_at, inner_at = _groups(rank, set(tile_of))
    expanded: list[Size] = []
    for d in range(rank):
        expanded += [outer[d], tile_of[d]] if d in tile_of else [padded[d]]
    expand = tensor.ExpandShapeOp(
        source, _dynamic(expanded), reassociation, _static(expanded),
        TensorType(_element(source), _static(expanded)),
    )  # fmt: skip
    expanded_value = b.add(expand).results[0]
    # dest dim j < rank: the outer part of source dim perm[j]; dest dim rank + i: the
    # inner part of positions[i]. The generic over the dest reads the expanded tensor
    # at the dest's dimension holding each expanded dimension.
    holder = [0] * len(expanded)
    for j, d in enumerate(perm):
        holder[outer_at[d]] = j
    for i, d in enumerate(positions):
        holder[inner_at[d]] = rank + i
    result = _transpose(b, expanded_value, op.dest, holder)
    _replace(op, result)


def decompose_unpack(op: UnPackOp) -> None:
    b = _Builder(op)
    packed, dest = op.source, op.dest
    rank = len(_shape(dest))
    positions, perm = op.positions(), op.permutation(rank)
    tile_of: dict[int, Size] = dict(zip(positions, op.tiles(), strict=True))
    reassociation, outer_at, inner_at = _groups(rank, set(tile_of))
    count = rank + len(positions)
    where = [0] * count  # the packed dimension each expanded dimension comes from
    for j, d in enumerate(perm):
        where[outer_at[d]] = j
    for i, d in enumerate(positions):
        where[inner_at[d]] = rank + i
    sizes: list[Size] = [b.dim(packed, j) for j in where]
    for d, t in tile_of.items():
        if isinstance(t, int) and not isinstance(sizes[inner_at[d]], int):
            sizes[inner_at[d]] = t  # a static tile in a dynamic packed dimension
    element = _element(packed)
    empty = b.add(tensor.EmptyOp(_dynamic(sizes), TensorType(element, _static(sizes))))
    # The generic over the expanded layout reads the packed tensor at packed index j
    # from the expanded dimension it holds.
    reads = [0] * count
    for m, j in enumerate(where):
        reads[j] = m
    moved = _transpose(b, packed, empty.results[0], reads)
    padded: list[Size] = []
    for d in range(rank):
        outer = sizes[outer_at[d]]
        padded.append(b.mul(outer, sizes[inner_at[d]]) if d in tile_of else outer)
    collapse = tensor.CollapseShapeOp(
        operands=[moved], properties={"reassociation": reassociation},
        result_types=[TensorType(element, _static(padded))],
    )  # fmt: skip
    collapsed = b.add(collapse).results[0]
    wanted = [b.dim(dest, d) for d in range(rank)]
    slice_ = tensor.ExtractSliceOp(collapsed, [0] * rank, wanted, [1] * rank, dest.type)
    _replace(op, b.add(slice_).results[0])


def _replace(op: Operation, value: SSAValue) -> None:
    value.name_hint = op.results[0].name_hint
    op.results[0].replace_all_uses_with(value)
    op.detach()
    op.erase()


def decompose_packs(root: Operation) -> None:
    """Every `linalg.pack` and `linalg.unpack` under `root` decomposed (the header)."""
    for found in [o for o in root.walk() if isinstance(o, PackOp | UnPackOp)]:
        if isinstance(found, PackOp):
            decompose_pack(found)
        else:
            decompose_unpack(found)
