"""The work of a level-1 op: what the launch it becomes computes and moves (`Work`).

`op_work(op)` is what the cost model charges an op (`system/cost.py`'s roofline turns it
into time) for `plan-devices{strategy=cost}`, and what `lower-to-device` records on the
launch it makes (`device.work`), so the executor's report charges the kernel the same.

* A structured linalg op (`linalg.generic` and every named op, through its generic form,
  `linalg_structure.structure_of`): its iteration space, the product of its loop extents,
  times its body's scalar op count, where a transcendental function (`math.exp`,
  `math.tanh`, `math.sqrt`, ...) counts `TRANSCENDENTAL_FLOPS`: a GPU's special-function
  units issue a quarter as fast as its FMA units, and a CPU evaluates one as a short
  polynomial. Ops on `index` values (address arithmetic after `linalg.index`), constants
  and `linalg.yield` count nothing; a cast counts one. Bytes: each operand's footprint
  once, the elements its map reaches over the iteration space (a dimension indexed by
  `d0 * 2 + d4` reaches `2 * (extent(d0) - 1) + extent(d4)` elements, at most the
  dimension's size), read for every input and for each output whose body reads it, and
  written for every output (compulsory traffic, as a tiled kernel moves it). A scalar
  operand is a kernel argument and moves nothing.
* Elementwise `arith`/`math` on tensors: one op per element (a transcendental its
  weight); every tensor operand read once and the result written once.
* `tensor.empty`, dense constants and ops that only route values (`scf.*`, `func.call`,
  `vdev.*`), and anything else: no launch, no work (a call's or loop's body ops are
  counted as ops of their own; a loop body once, not per iteration).

Loop extents come from the operands' static shapes; a dynamic dimension takes
`dynamic_size` when one is given, else the work is unknown (None).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.dialects.linalg.ops import IndexOp, YieldOp
from xdsl.ir import Block, Operation
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

from ..system.cost import NO_WORK, Work, element_bytes, shaped, static_shape
from .linalg_structure import LinalgStructure, structure_of

TRANSCENDENTAL_FLOPS = 4
"""What one transcendental function counts, in flops (see the module docstring)."""

TRANSCENDENTAL = frozenset(
    {
        "math.exp",
        "math.exp2",
        "math.expm1",
        "math.log",
        "math.log2",
        "math.log10",
        "math.log1p",
        "math.tanh",
        "math.sinh",
        "math.cosh",
        "math.erf",
        "math.erfc",
        "math.sin",
        "math.cos",
        "math.tan",
        "math.asin",
        "math.acos",
        "math.atan",
        "math.atan2",
        "math.powf",
        "math.fpowi",
        "math.sqrt",
        "math.rsqrt",
        "math.cbrt",
    }
)

_NO_LAUNCH = frozenset(
    {"tensor.empty", "arith.constant", "scf.if", "scf.for", "scf.yield", "func.call"}
)


def op_flops(op: Operation) -> int:
    """What one scalar op of a body counts (see the module docstring)."""
    if isinstance(op, YieldOp | IndexOp) or op.name == "arith.constant":
        return 0
    if op.results and all(isinstance(r.type, IndexType) for r in op.results):
        return 0
    return TRANSCENDENTAL_FLOPS if op.name in TRANSCENDENTAL else 1


def body_flops(body: Block) -> int:
    """The flops of one iteration of a structured op's body."""
    return sum(op_flops(op) for op in body.walk())


def op_work(op: Operation, dynamic_size: int | None = None) -> Work | None:
    """The work of the launch a level-1 op becomes (`NO_WORK` without a launch); None
    when a dynamic dimension makes it unknown and no `dynamic_size` is assumed."""
    name = op.name
    if name in _NO_LAUNCH or name.startswith("vdev.") or not op.results:
        return NO_WORK
    structure = structure_of(op)
    if structure is not None:
        return _structured_work(op, structure, dynamic_size)
    if not name.startswith(("arith.", "math.")):
        return NO_WORK
    result = shaped(op.results[0].type)
    if result is None:
        return NO_WORK
    shape = static_shape(result[0], dynamic_size)
    if shape is None:
        return None
    elements = math.prod(shape)
    tensors = [v for v in op.operands if isinstance(v.type, TensorType)]
    size = element_bytes(result[1])
    return Work(elements * op_flops(op), (len(tensors) + 1) * elements * size)


def _structured_work(
    op: Operation, structure: LinalgStructure, dynamic_size: int | None
) -> Work | None:
    shapes: list[list[int] | None] = []
    for operand in op.operands:
        info = shaped(operand.type)
        if info is None:
            shapes.append(None)
            continue
        shape = static_shape(info[0], dynamic_size)
        if shape is None:
            return None
        shapes.append(shape)
    extents = _loop_extents(structure.maps, shapes)
    if extents is None:
        return None
    flops = math.prod(extents) * body_flops(structure.body)
    outputs_read = {
        index
        for index, arg in enumerate(structure.body.args)
        if index >= structure.num_inputs and arg.uses
    }
    nbytes = 0
    for index, (operand, map_, shape) in enumerate(
        zip(op.operands, structure.maps, shapes, strict=True)
    ):
        info = shaped(operand.type)
        if shape is None or info is None:
            continue
        footprint = math.prod(_reach(map_, extents, shape)) * element_bytes(info[1])
        is_output = index >= structure.num_inputs
        nbytes += footprint * ((index in outputs_read) + 1 if is_output else 1)
    return Work(flops, nbytes)


def _loop_extents(
    maps: Sequence[AffineMap], shapes: Sequence[Sequence[int] | None]
) -> list[int] | None:
    """Each loop's extent, from an operand dimension indexed by that loop alone; None
    when some loop has none."""
    count = maps[0].num_dims if maps else 0
    extents: list[int | None] = [None] * count
    for map_, shape in zip(maps, shapes, strict=True):
        if shape is None:
            continue
        for expr, size in zip(map_.results, shape, strict=True):
            if isinstance(expr, AffineDimExpr):
                extents[expr.position] = size
    if any(e is None for e in extents):
        return None
    return [e for e in extents if e is not None]


def _reach(map_: AffineMap, extents: Sequence[int], shape: Sequence[int]) -> list[int]:
    """Per operand dimension, how many of its elements the map reaches over the loops."""
    reached: list[int] = []
    for expr, size in zip(map_.results, shape, strict=True):
        span = _span(expr, extents)
        reached.append(size if span is None else min(size, span[1] - span[0] + 1))
    return reached


def _span(expr: AffineExpr, extents: Sequence[int]) -> tuple[int, int] | None:
    """The least and greatest value of `expr` over the loops (None: not an affine sum
    with constant coefficients, so the whole dimension counts)."""
    if isinstance(expr, AffineDimExpr):
        return 0, max(0, extents[expr.position] - 1)
    if isinstance(expr, AffineConstantExpr):
        return expr.value, expr.value
    if isinstance(expr, AffineBinaryOpExpr):
        lhs, rhs = _span(expr.lhs, extents), _span(expr.rhs, extents)
        if lhs is None or rhs is None:
            return None
        if expr.kind == AffineBinaryOpKind.Add:
            return lhs[0] + rhs[0], lhs[1] + rhs[1]
        if expr.kind == AffineBinaryOpKind.Mul:
            corners = [a * b for a in lhs for b in rhs]
            return min(corners), max(corners)
    return None


__all__ = ["TRANSCENDENTAL", "TRANSCENDENTAL_FLOPS", "body_flops", "op_flops", "op_work"]
