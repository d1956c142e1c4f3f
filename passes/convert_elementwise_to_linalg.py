"""`convert-elementwise-to-linalg`: elementwise `arith`/`math` ops on tensors become
`linalg.generic`s (MLIR's pass of the same name).

An `arith`/`math` op with a tensor result (other than `arith.constant`) computes its
scalar op at every index of the result. It becomes

    %init = tensor.empty(%d...) : tensor<...xR>          (dynamic sizes from tensor.dim)
    %r = linalg.generic {indexing_maps = [identity..., identity],
                         iterator_types = ["parallel", ...]}
           ins(%operands...) outs(%init) {
    ^bb0(%a: T, %b: T, %out: R):
      %x = <the op on scalars> %a, %b
      linalg.yield %x : R
    }

Tensor operands are read with the identity map; scalar operands (a select's `i1`
condition) pass as they are, with the map of no results. The new ops keep the op's
location and its `vdev.device`, so a planned module stays planned: the generic runs where
the op ran. The output's block argument is unused, so `%init` is never read
(lower-to-device allocates nothing for it).

Not handled (left as they are, for the pass that reads them to report): ops with several
results, and tensor operands whose rank differs from the result's.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, AffineMapAttr, IndexType, ModuleOp
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ..dialects.shaped_types import is_ranked_tensor
from ..dialects.vdev import DEVICE_ATTR
from ..upstream.tensor import EmptyOp


def is_elementwise_on_tensors(op: Operation) -> bool:
    """An `arith`/`math` op (not a constant) with one result, a ranked tensor, whose
    tensor operands have the result's rank."""
    if not op.name.startswith(("arith.", "math.")) or isinstance(op, arith.ConstantOp):
        return False
    if len(op.results) != 1 or not is_ranked_tensor(op.results[0].type):
        return False
    rank = len(op.results[0].type.get_shape())
    return all(len(t.get_shape()) == rank for t in op.operand_types if is_ranked_tensor(t))


def to_generic(op: Operation) -> list[Operation]:
    """The ops replacing elementwise `op`: its shape's index constants and dims, the
    `tensor.empty` it writes over, and the `linalg.generic` (last)."""
    result = op.results[0].type
    assert is_ranked_tensor(result)
    shape = result.get_shape()
    rank = len(shape)
    shaped = next(v for v in op.operands if is_ranked_tensor(v.type))
    made: list[Operation] = []
    sizes: list[SSAValue] = []
    for d, n in enumerate(shape):
        if n == DYNAMIC_INDEX:
            index = arith.ConstantOp.from_int_and_width(d, IndexType())
            dim = tensor.DimOp(shaped, index.result)
            made += [index, dim]
            sizes.append(dim.results[0])
    device = {k: v for k, v in op.attributes.items() if k == DEVICE_ATTR}
    init = EmptyOp(sizes, result)
    init.attributes.update(device)
    identity = AffineMapAttr(AffineMap.identity(rank))
    scalar = AffineMapAttr(AffineMap(rank, 0, ()))
    maps = [identity if is_ranked_tensor(v.type) else scalar for v in op.operands]
    body = Block(
        arg_types=[t.element_type if is_ranked_tensor(t) else t for t in op.operand_types]
        + [result.element_type]
    )
    scalar_op = op.create(
        operands=body.args[:-1],
        result_types=[result.element_type],
        properties=dict(op.properties),
        attributes={k: v for k, v in op.attributes.items() if k != DEVICE_ATTR},
    )
    body.add_ops([scalar_op, YieldOp(scalar_op.results[0])])
    generic = GenericOp(
        list(op.operands),
        [init.results[0]],
        Region(body),
        [*maps, identity],
        [IteratorTypeAttr.parallel()] * rank,
        [result],
    )
    generic.attributes.update(device)
    made += [init, generic]
    for new in made:
        new.location = op.location
    scalar_op.location = op.location
    return made


def replace_elementwise(op: Operation) -> GenericOp:
    """Replace elementwise `op` by its generic (`to_generic`), which is returned."""
    made = to_generic(op)
    Rewriter.insert_op(made, InsertPoint.before(op))
    generic = made[-1]
    assert isinstance(generic, GenericOp)
    for old, new in zip(op.results, generic.results, strict=True):
        new.name_hint = old.name_hint
    Rewriter.replace_op(op, [], generic.results)
    return generic


@dataclass(frozen=True)
class ConvertElementwiseToLinalgPass(ModulePass):
    """Elementwise `arith`/`math` ops on tensors become `linalg.generic`s (see the header)."""

    name = "convert-elementwise-to-linalg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for found in [o for o in op.walk() if is_elementwise_on_tensors(o)]:
            if not isinstance(found.parent_op(), GenericOp):  # a body's ops are scalar
                replace_elementwise(found)
