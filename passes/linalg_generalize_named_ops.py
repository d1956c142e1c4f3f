"""`generalize-named-linalg-ops`: named linalg ops become the `linalg.generic` they stand for
(xDSL's `linalg-generalize-named-ops`, keeping locations and placements, and verified).

A named structured op (`linalg.matmul`, `linalg.fill`, a convolution, a pooling, one of
devplan's own classes for ops xDSL lacks) says its loops through `get_indexing_maps()`,
`get_iterator_types()` and its (hidden) body region: the generic takes the same inputs,
outputs, maps, iterators and a copy of the body, the op's location and its discardable
attributes (`vdev.device`: a planned module stays planned). The generic is verified where
it is made, so a named op whose maps do not fit its operands is a located error naming
the op, not a failure further down.

`linalg.broadcast` and `linalg.reduce` give no maps in xDSL 0.74; theirs are MLIR's: a
broadcast loops over its output, reading the input at the output's dimensions other than
`dimensions` (the ones it adds); a reduce loops over its input, `dimensions` are reduction
loops, and the init (and result) is indexed by the other ones. A reduce's body (input
element, accumulator) is already a generic's body; a broadcast's yields its input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from xdsl.context import Context
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, ModuleOp, ShapedType
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import BroadcastOp, GenericOp, ReduceOp
from xdsl.ir import Attribute, Operation
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from ..diagnostics import error_at


def is_named_structured(op: Operation) -> bool:
    """A linalg op other than `linalg.generic` that gives its maps, iterators and body
    (or is a broadcast or reduce, whose maps are known)."""
    if isinstance(op, BroadcastOp | ReduceOp):
        return True
    return (
        op.name.startswith("linalg.")
        and not isinstance(op, GenericOp)
        and all(hasattr(op, a) for a in ("get_indexing_maps", "get_iterator_types", "body"))
        and all(hasattr(op, a) for a in ("inputs", "outputs"))
    )


def generalize(op: Operation) -> GenericOp:
    """The `linalg.generic` computing what named op `op` computes (verified)."""
    named: Any = op
    if isinstance(op, BroadcastOp | ReduceOp):
        inputs, outputs = [op.input], [op.init]
        maps, iterators = _broadcast_or_reduce_loops(op)
        body = (op.hidden_region if isinstance(op, BroadcastOp) else op.region).clone()
    else:
        inputs, outputs = list(named.inputs), list(named.outputs)
        maps, iterators = named.get_indexing_maps(), named.get_iterator_types()
        body = named.body.clone()
    generic = GenericOp(inputs, outputs, body, maps, iterators, [r.type for r in op.results])
    generic.location = op.location
    generic.attributes.update(op.attributes)
    for inner in generic.body.walk():
        inner.location = op.location
    try:
        generic.verify()
    except VerifyException as e:
        raise error_at(op, f"'{op.name}' has no valid generic form: {e}") from None
    return generic


def _broadcast_or_reduce_loops(
    op: BroadcastOp | ReduceOp,
) -> tuple[ArrayAttr[AffineMapAttr], ArrayAttr[Attribute]]:
    """MLIR's maps and iterators of a broadcast or reduce (see the header)."""
    looped = op.init if isinstance(op, BroadcastOp) else op.input
    rank = cast(ShapedType, looped.type).get_num_dims()
    named = set(op.dimensions.get_values())
    if not named <= set(range(rank)):
        raise error_at(op, f"'{op.name}' dimensions {sorted(named)} are not all below {rank}")
    kept = AffineMap(rank, 0, tuple(AffineDimExpr(d) for d in range(rank) if d not in named))
    full = AffineMap.identity(rank)
    if isinstance(op, BroadcastOp):
        maps, iterators = [kept, full], [IteratorTypeAttr.parallel()] * rank
    else:
        maps = [full, kept]
        iterators = [
            IteratorTypeAttr.reduction() if d in named else IteratorTypeAttr.parallel()
            for d in range(rank)
        ]
    return ArrayAttr(AffineMapAttr(m) for m in maps), ArrayAttr[Attribute](iterators)


def replace_named(op: Operation) -> GenericOp:
    """Replace named op `op` by its generic (`generalize`), which is returned."""
    generic = generalize(op)
    for old, new in zip(op.results, generic.results, strict=True):
        new.name_hint = old.name_hint
    Rewriter.replace_op(op, generic)
    return generic


@dataclass(frozen=True)
class LinalgGeneralizeNamedOpsPass(ModulePass):
    """Named linalg ops become `linalg.generic`s (see the header)."""

    name = "generalize-named-linalg-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for found in [o for o in op.walk() if is_named_structured(o)]:
            replace_named(found)
