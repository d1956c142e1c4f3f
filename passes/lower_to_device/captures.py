"""Values a `linalg.generic`'s body uses from outside it, made the op's own.

MLIR lets a generic's body use any value that dominates the op (a constant, a scalar
argument of the function); the kernels a generic becomes see only their operands. Before
lowering, each such value is brought in:

* a scalar `arith.constant` is cloned at the top of the body (it costs nothing there);
* any other scalar (an argument, a value computed on the host) becomes one more input of
  the op, read through the map `(d0, ...) -> ()` as `linalg.fill` reads its value, with a
  block argument of its type in front of the outputs' arguments;
* a captured tensor is left, and the kernel builder refuses it with a located error.

The op keeps its results, location and attributes; nothing changes for a body that
captures nothing.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, ShapedType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation, SSAValue, Use
from xdsl.ir.affine import AffineMap
from xdsl.rewriter import InsertPoint, Rewriter


def _captured(op: GenericOp) -> list[SSAValue]:
    """The values from outside used in `op`'s body, in order of first use."""
    found: dict[SSAValue, None] = {}
    for inner in op.body.walk():
        for value in inner.operands:
            if not op.body.is_ancestor(value.owner):
                found.setdefault(value)
    return list(found)


def _is_scalar_constant(value: SSAValue) -> bool:
    owner = value.owner
    return isinstance(owner, arith.ConstantOp) and not isinstance(value.type, ShapedType)


def take_captures(op: GenericOp) -> GenericOp:
    """`op`, or the generic replacing it, whose body uses nothing scalar from outside."""
    captured = [v for v in _captured(op) if not isinstance(v.type, ShapedType)]
    if not captured:
        return op
    block = op.body.block
    first = block.first_op

    def inside(use: Use) -> bool:
        return op.body.is_ancestor(use.operation)

    for value in [v for v in captured if _is_scalar_constant(v)]:
        owner = value.owner
        assert isinstance(owner, Operation)
        clone = owner.clone()
        if first is None:
            Rewriter.insert_op(clone, InsertPoint.at_end(block))
        else:
            Rewriter.insert_op(clone, InsertPoint.before(first))
        value.replace_uses_with_if(clone.results[0], inside)
    scalars = [v for v in captured if not _is_scalar_constant(v)]
    if not scalars:
        return op
    loops = len(op.iterator_types)
    position = len(op.inputs)
    for offset, value in enumerate(scalars):
        argument = block.insert_arg(value.type, position + offset)
        value.replace_uses_with_if(argument, inside)
    maps = list(op.indexing_maps.data)
    read = AffineMapAttr(AffineMap(loops, 0, ()))
    maps[position:position] = [read] * len(scalars)
    body = op.detach_region(op.body)
    generic = GenericOp(
        [*op.inputs, *scalars],
        list(op.outputs),
        body,
        ArrayAttr(maps),
        op.iterator_types,
        [r.type for r in op.results],
        op.doc,
        op.library_call,
    )
    generic.location = op.location
    generic.attributes.update(op.attributes)
    for old, new in zip(op.results, generic.results, strict=True):
        new.name_hint = old.name_hint
    Rewriter.replace_op(op, generic)
    return generic
