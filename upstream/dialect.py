"""How devplan builds its version of an upstream dialect: xDSL's dialect of that name, with
devplan's op classes in place of xDSL's of the same op name and the ops and attributes
xDSL lacks added."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Attribute, Dialect, Operation


def replacing(
    base: Dialect, ops: Sequence[type[Operation]], attributes: Sequence[type[Attribute]] = ()
) -> Dialect:
    """`base` with each op of `ops` replacing the op of its name, or added when `base`
    has none, and with `attributes` added."""
    by_name = {op.name: op for op in base.operations}
    by_name.update({op.name: op for op in ops})
    return Dialect(base.name, list(by_name.values()), [*base.attributes, *attributes])
