"""Verification with located diagnostics: `verify_located`.

xDSL reports a verify error without a place, or as a bare Python exception; here each op
is verified on its own, outermost first, and the first failure becomes a `LocatedError`
at the op that is wrong. Operands must dominate their uses. Checks no single op owns
(a dialect's discardable attributes, MLIR's `verifyOperationAttribute`) are module
verifiers, which the caller passes: `verify_located(module, verifiers)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, BlockArgument, Operation
from xdsl.utils.exceptions import DiagnosticException

from .errors import LocatedError, error_at, location_of, xdsl_failure

ModuleVerifier = Callable[[Operation], None]
"""A check of a whole module that no single op owns (e.g. a dialect's discardable
attributes); it raises a `LocatedError` at the offending op."""


def _redefinition(table: Operation, message: str) -> LocatedError | None:
    """xDSL reports a duplicate symbol at the symbol table; when that is the implicit,
    unlocated top-level module, place it at the second definition instead."""
    match = re.fullmatch(r'Redefinition of symbol "(.*)"', message)
    if match is None or location_of(table) is not None or not table.regions:
        return None
    name = StringAttr(match.group(1))
    first: Operation | None = None
    for op in table.regions[0].blocks[0].ops:
        if op.get_attr_or_prop("sym_name") != name:
            continue
        if first is None:
            first = op
            continue
        loc = location_of(first)
        where = f" (first defined at line {loc.line.data})" if loc is not None else ""
        return error_at(op, f"'{op.name}' redefines symbol @{name.data}{where}")
    return None


def _preorder(root: Operation) -> Iterator[Operation]:
    """`root` and every op nested in it, outermost first, as `walk()` orders them but
    with an explicit stack: a walk of generators costs time in the depth of nesting for
    every op it yields, and a Python frame per level."""
    stack = [root]
    while stack:
        op = stack.pop()
        yield op
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                stack.extend(reversed(list(block.ops)))


def verify_located(module: Operation, verifiers: Iterable[ModuleVerifier] = ()) -> None:
    """Verify `module` op by op; the first failure becomes a located diagnostic.

    Ops are verified outermost first without their nested ops, so a message points
    at the innermost op that is actually wrong rather than at the module. Then each of
    `verifiers` checks the whole module, in order.
    """
    order: dict[Operation, int] = {}
    for op in _preorder(module):
        _check_dominance(op, order)
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException as e:
            if isinstance(e, LocatedError):
                raise
            message = str(e).removeprefix("Operation does not verify: ").strip()
            if (redefinition := _redefinition(op, message)) is not None:
                raise redefinition from e
            raise error_at(op, f"'{op.name}' {message}") from e
        except RecursionError:
            raise
        except Exception as e:  # some xDSL verifiers raise bare Python exceptions
            raise error_at(op, xdsl_failure(e, f"'{op.name}'")) from e
    for verifier in verifiers:
        verifier(module)


_GRAPH_REGIONS = ("builtin.module", "kernel.module")
"""Ops whose body is a graph region: its ops are not ordered."""


def _check_dominance(op: Operation, order: dict[Operation, int]) -> None:
    """Each operand of `op` must be defined before it: earlier in its block or in an
    enclosing block, or a block argument of one (MLIR's dominance for regions of one
    block; uses across the blocks of a multi-block region are left to the CFG and not
    checked). `order` memoises the position of ops in their blocks."""
    for i, value in enumerate(op.operands):
        defining: Operation | None = None
        if isinstance(value, BlockArgument):
            block = value.block
        elif isinstance(owner := value.owner, Operation):
            defining, block = owner, owner.parent_block()
        else:
            continue
        if block is None:
            continue
        user: Operation | None = op
        while user is not None and user.parent_block() is not block:
            user = user.parent_op()
        if user is None:
            region = block.parent
            if region is not None and len(region.blocks) > 1 and _inside(op, region.blocks):
                continue  # another block of the same multi-block region
            where = "in a region" if defining is None else "inside a region"
            raise error_at(
                op,
                f"'{op.name}' operand #{i} does not dominate this use: it is defined "
                f"{where} that does not contain this op",
                [(defining, "operand defined here")] if defining is not None else [],
            )
        if defining is None:
            continue
        parent = block.parent_op()
        if parent is not None and parent.name in _GRAPH_REGIONS:
            continue
        if defining is user or _position(defining, order) > _position(user, order):
            raise error_at(
                op,
                f"'{op.name}' operand #{i} does not dominate this use: it is defined after it",
                [(defining, "operand defined here")],
            )


def _inside(op: Operation, blocks: Iterable[Block]) -> bool:
    targets = set(blocks)
    current: Operation | None = op
    while current is not None:
        if current.parent_block() in targets:
            return True
        current = current.parent_op()
    return False


def _position(op: Operation, order: dict[Operation, int]) -> int:
    found = order.get(op)
    if found is None:
        block = op.parent_block()
        assert block is not None
        for index, other in enumerate(block.ops):
            order[other] = index
        found = order[op]
    return found
