"""Transform schedules (MLIR's `transform` dialect) read and set aside.

MLIR's tests carry a schedule beside their payload: `transform.named_sequence
@__transform_main` in a `module attributes {transform.with_named_sequence}`, or the older
`transform.sequence failures(propagate) { ^bb0(%arg: !pdl.operation): ... }`. A schedule
tiles or vectorises the payload; it does not change what the payload computes. devplan
does not apply schedules: `LocatingParser` reads each one as a balanced sequence of MLIR
tokens (brackets matched by kind, every statement of its body an op of the `transform`
dialect, a `%value` list before `=`, a block label or a closing brace), keeps it as an
`IgnoredScheduleOp` while the module is parsed, and `drop_schedules` then removes it
(and the module that only held schedules) with a remark at its place. The ops inside a
schedule are not verified: no devplan pass reads them.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp, StringAttr
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def

from .remarks import emit_remark

SCHEDULE_MODULE_ATTR = "transform.with_named_sequence"
"""The unit attribute of a module that holds named transform sequences."""


@irdl_op_definition
class IgnoredScheduleOp(IRDLOperation):
    """A transform op read as text while a module is parsed; removed by `drop_schedules`
    before the module is returned, so no pass or printer ever sees one."""

    name = "devplan.ignored_transform_schedule"

    op_name = prop_def(StringAttr)
    """The name of the top-level transform op (`transform.named_sequence`)."""

    symbol = prop_def(StringAttr)
    """Its symbol (`@__transform_main`), or the empty string."""


def drop_schedules(module: ModuleOp) -> None:
    """Remove every `IgnoredScheduleOp` of `module`, each with a remark at its place, and
    the nested modules left empty that were marked `transform.with_named_sequence`."""
    for op in [o for o in module.walk() if isinstance(o, IgnoredScheduleOp)]:
        emit_remark(_remark(op))
        parent = op.parent_op()
        op.detach()
        op.erase()
        if (
            isinstance(parent, ModuleOp)
            and parent is not module
            and SCHEDULE_MODULE_ATTR in parent.attributes
            and not list(parent.ops)
        ):
            parent.detach()
            parent.erase()


def _remark(op: IgnoredScheduleOp) -> str:
    where = ""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        where = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: "
    what = op.op_name.data + (f" @{op.symbol.data}" if op.symbol.data else "")
    return (
        f"{where}remark: the transform schedule '{what}' is not applied: devplan runs the "
        "payload as written (a schedule changes how it is tiled or vectorised, not what "
        "it computes)"
    )


def is_schedule_op(name: str) -> bool:
    """Whether an op named `name` is read as part of a transform schedule."""
    return name.startswith("transform.")
