"""`generalize-named-linalg-ops`: named linalg ops become the `linalg.generic` they stand for
(xDSL's `linalg-generalize-named-ops`, keeping locations and placements, and verified).

A named structured op (`linalg.matmul`, `linalg.fill`, a convolution, a pooling, one of
devplan's own classes for ops xDSL lacks) says its loops through `get_indexing_maps()`,
`get_iterator_types()` and its (hidden) body region: the generic takes the same inputs,
outputs, maps, iterators and a copy of the body, the op's location and its discardable
attributes (`vdev.device`: a planned module stays planned). The generic is verified where
it is made, so a named op whose maps do not fit its operands is a located error naming
the op, not a failure further down.

Not handled (left as they are, for the pass that reads them to report): ops without maps
(`linalg.broadcast`, `linalg.reduce` in xDSL 0.74).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from ..diagnostics import error_at


def is_named_structured(op: Operation) -> bool:
    """A linalg op other than `linalg.generic` that gives its maps, iterators and body."""
    return (
        op.name.startswith("linalg.")
        and not isinstance(op, GenericOp)
        and all(hasattr(op, a) for a in ("get_indexing_maps", "get_iterator_types", "body"))
        and all(hasattr(op, a) for a in ("inputs", "outputs"))
    )


def generalize(op: Operation) -> GenericOp:
    """The `linalg.generic` computing what named op `op` computes (verified)."""
    named: Any = op
    generic = GenericOp(
        list(named.inputs),
        list(named.outputs),
        named.body.clone(),
        named.get_indexing_maps(),
        named.get_iterator_types(),
        [r.type for r in op.results],
    )
    generic.location = op.location
    generic.attributes.update(op.attributes)
    for inner in generic.body.walk():
        inner.location = op.location
    try:
        generic.verify()
    except VerifyException as e:
        raise error_at(op, f"'{op.name}' has no valid generic form: {e}") from None
    return generic


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
