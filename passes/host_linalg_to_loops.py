"""`host-linalg-to-loops`: linalg ops on memrefs in host code become loops the host runs.

MLIR's buffer form of linalg (`linalg.fill`, `linalg.matmul`, the convolutions, generics
over memrefs, as MLIR's `test-conv-*-call.mlir` tests write them) runs on the host
device: each such op becomes its generic form (`generalize-named-linalg-ops`), then
perfect `scf.for` nests with `memref.load`/`memref.store` and a copy of the body (xDSL's
`convert-linalg-to-loops`), loads at the maps' indices through `affine.apply` where a
map is not a projection. The loops run in host code op by op, so this is MLIR's
reference semantics (reductions summed in loop order), not a fast path: level-1 programs
(tensors) run their linalg ops as generated kernels instead.

Runs before the executor on every level-2 program (`devplan.execute`); ops on tensors
are left alone. Not handled: linalg ops with tensor results (a located error).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.transforms.convert_linalg_to_loops import LowerLinalgStructuredOpPattern

from ..diagnostics import error_at
from .linalg_generalize_named_ops import is_named_structured, replace_named


def _on_buffers(op: Operation) -> bool:
    return op.name.startswith("linalg.") and not op.results and op.parent_op() is not None


def lower_generic(generic: GenericOp) -> None:
    """Replace `generic` (on memrefs) by its loop nest."""
    if generic.results:
        raise error_at(generic, f"'{generic.name}' with tensor results is not run on the host")
    block, after = generic.parent_block(), generic.next_op
    assert block is not None  # _on_buffers: inside a function
    before = generic.prev_op
    rewriter = PatternRewriter(generic)
    LowerLinalgStructuredOpPattern().match_and_rewrite(generic, rewriter)
    made = before.next_op if before is not None else block.first_op
    while made is not None and made is not after:
        for inner in made.walk():
            inner.location = generic.location  # run-time errors point at the linalg op
        made = made.next_op


@dataclass(frozen=True)
class HostLinalgToLoopsPass(ModulePass):
    """Linalg ops on memrefs become loops (see the module header)."""

    name = "host-linalg-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for found in [o for o in op.walk() if _on_buffers(o) and is_named_structured(o)]:
            replace_named(found)
        for found in [o for o in op.walk() if isinstance(o, GenericOp) and not o.results]:
            lower_generic(found)
