"""The generic form of any level-1 linalg op: what the lowering and the cost model read.

`structure_of(op)` gives, for `linalg.generic`, every named op (through the op class's own
`get_indexing_maps()`/`get_iterator_types()`, the same methods xDSL's
`linalg-generalize-named-ops` reads), `linalg.transpose`, `linalg.broadcast` and
`linalg.reduce` (whose maps are built here from their `permutation`/`dimensions`):

* `maps`: one affine map an operand, inputs then outputs, over the op's loops;
* `iterators`: `parallel` or `reduction`, one a loop;
* `body`: the block computing one iteration (its arguments: one element an operand);
* `loop_bounds`: each loop's range, read off the static shape of an operand dimension
  indexed by that loop alone (None where that dimension is dynamic);
* `flops_per_iteration`: the body's arithmetic ops (every op but `linalg.yield`,
  `linalg.index` and constants; a cast counts, as it costs an instruction);
* `bytes_per_iteration`: the element bytes each iteration reads (every operand) and
  writes (the outputs).

It reads the IR only. The oracle (`reference/linalg.py`) does not use it: it reads the
maps from the ops itself, so the two are checked against each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any, cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType, ShapedType
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import BroadcastOp, IndexOp, ReduceOp, YieldOp
from xdsl.ir import Attribute, Block, Operation
from xdsl.ir.affine import AffineDimExpr, AffineMap

from .dtypes import int_width


@dataclass(frozen=True)
class LinalgStructure:
    """A structured op as loops, maps and a body (see the module docstring)."""

    maps: tuple[AffineMap, ...]
    iterators: tuple[IteratorType, ...]
    body: Block
    num_inputs: int
    loop_bounds: tuple[int | None, ...]
    flops_per_iteration: int
    bytes_per_iteration: int

    @property
    def iterations(self) -> int | None:
        """The number of points of the iteration space (None when a bound is dynamic)."""
        if any(b is None for b in self.loop_bounds):
            return None
        return prod(b for b in self.loop_bounds if b is not None)


def structure_of(op: Operation) -> LinalgStructure | None:
    """The generic form of `op`, or None when it is not a structured linalg op."""
    if isinstance(op, LinalgStructuredOperation):
        maps = tuple(m.data for m in op.get_indexing_maps().data)
        iterators = tuple(it.data for it in op.get_iterator_types().data)
        body, num_inputs = op.body.block, len(op.inputs)
    elif isinstance(op, ReduceOp | BroadcastOp):
        maps, iterators = _reduce_or_broadcast(op)
        body = op.region.block if isinstance(op, ReduceOp) else op.hidden_region.block
        num_inputs = 1
    else:
        return None
    operand_types = [o.type for o in op.operands]
    return LinalgStructure(
        maps=maps,
        iterators=iterators,
        body=body,
        num_inputs=num_inputs,
        loop_bounds=_loop_bounds(maps, operand_types),
        flops_per_iteration=sum(
            1 for o in body.ops if not isinstance(o, YieldOp | IndexOp | arith.ConstantOp)
        ),
        bytes_per_iteration=sum(_element_bytes(t) for t in operand_types)
        + sum(_element_bytes(t) for t in operand_types[num_inputs:]),
    )


def _reduce_or_broadcast(
    op: ReduceOp | BroadcastOp,
) -> tuple[tuple[AffineMap, ...], tuple[IteratorType, ...]]:
    """`linalg.reduce`: loops over the input, the `dimensions` reductions, the output
    indexed by the others. `linalg.broadcast`: loops over the output, the input indexed
    by the dimensions not in `dimensions` (the added ones)."""
    listed = {int(d) for d in op.dimensions.get_values()}
    outer = op.input.type if isinstance(op, ReduceOp) else op.init.type
    assert isinstance(outer, ShapedType)
    rank = len(outer.get_shape())
    full = AffineMap.identity(rank)
    kept = AffineMap(rank, 0, tuple(AffineDimExpr(d) for d in range(rank) if d not in listed))
    if isinstance(op, ReduceOp):
        iterators = tuple(
            IteratorType.REDUCTION if d in listed else IteratorType.PARALLEL for d in range(rank)
        )
        return (full, kept), iterators
    return (kept, full), (IteratorType.PARALLEL,) * rank


def _loop_bounds(
    maps: tuple[AffineMap, ...], operand_types: list[Attribute]
) -> tuple[int | None, ...]:
    num_loops = maps[0].num_dims if maps else 0
    bounds: list[int | None] = [None] * num_loops
    for map_, type_ in zip(maps, operand_types, strict=True):
        if not isinstance(type_, ShapedType):
            continue
        for expr, size in zip(map_.results, type_.get_shape(), strict=True):
            if isinstance(expr, AffineDimExpr) and size >= 0:
                bounds[expr.position] = size
    return tuple(bounds)


def _element_bytes(type_: Attribute) -> int:
    element: Attribute = (
        cast(Any, type_).get_element_type() if isinstance(type_, ShapedType) else type_
    )
    if isinstance(element, IndexType):
        return 8
    if isinstance(element, IntegerType):
        return max(1, (int_width(element) + 7) // 8)  # pyright: ignore[reportUnknownArgumentType]
    bitwidth = getattr(element, "bitwidth", 0)
    return max(1, int(bitwidth) // 8)


__all__ = ["LinalgStructure", "structure_of"]
