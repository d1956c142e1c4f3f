"""Specialisation of callees (phase 2): a call whose context conflicts with its callee's
gets a clone of the callee for that context, across planning rounds."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.dialects.func import CallOp, FuncOp


@dataclass
class Pending:
    """A call whose context conflicts with its callee's: specialise the callee for it."""

    call: CallOp
    callee: FuncOp
    context: tuple[str, ...]
    """What the call places on each tensor argument and result, independently of the
    callee (`?` where it follows the callee): the key of the clone that serves it."""
    suffix: str


class NeedsSpecialisation(Exception):
    def __init__(self, pending: list[Pending]):
        self.pending = pending


class Specialiser:
    """Clones callees per context across planning rounds: one clone per (original
    function, context), named after the original (`@sq` -> `@sq_cuda0`, never
    `@sq_cuda0_cpu0`), reused when a later round meets the same context."""

    def __init__(self) -> None:
        self.made: dict[tuple[str, tuple[str, ...]], str] = {}
        self.original: dict[str, str] = {}

    def apply(self, module: ModuleOp, pending: list[Pending]) -> None:
        functions = {f.sym_name.data: f for f in module.body.block.ops if isinstance(f, FuncOp)}
        for item in pending:
            callee = item.callee.sym_name.data
            original = self.original.get(callee, callee)
            name = self.made.get((original, item.context))
            # A clone made for this context that the call already uses conflicts with it
            # now (an earlier call gave the clone another context): a new clone serves it.
            if name is None or name not in functions or name == callee:
                name = self._fresh_name(f"{original}_{item.suffix}", functions)
                clone = functions[original if original in functions else callee].clone()
                clone.sym_name = StringAttr(name)
                module.body.block.insert_op_after(clone, functions[callee])
                functions[name] = clone
                self.made[(original, item.context)] = name
                self.original[name] = original
            item.call.callee = SymbolRefAttr(name)

    @staticmethod
    def _fresh_name(base: str, taken: dict[str, FuncOp]) -> str:
        name, counter = base, 1
        while name in taken:
            name, counter = f"{base}_{counter}", counter + 1
        return name
