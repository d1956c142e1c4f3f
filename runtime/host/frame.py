"""The machinery host code compiles to: frames of slots, steps, compiled functions, and the
`Compiler` interface an op compiler asks for slots, blocks, memory and callees.

A *frame* is a function activation, a flat list: slot 0 holds the execution context (the
state of one run, shared by every call), then one entry per SSA value. A *step* is one
compiled op, a closure reading its operand slots and writing its result slots. An op
compiler (`OpCompiler`) turns an op into its step once, before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from xdsl.dialects import func
from xdsl.ir import Block, Operation, Region, SSAValue

from ...diagnostics import error_at

Frame = list[Any]
"""A function activation: slot 0 holds the execution context (the run's state, shared
by every call), then one entry per SSA value."""

Step = Callable[[Frame], None]
"""One compiled op."""

Getter = Callable[[Frame], Any]
"""Reads one run-time value out of a frame."""


class Compiler(Protocol):
    """What an op compiler may ask of the compiler driving it."""

    kernel_backend: str
    """The kernel backend the program runs its kernels with (host code computes with the
    same definitions: `numpy_semantics` for "numpy")."""

    def slot(self, value: SSAValue) -> int:
        """The frame index of `value` in the function being compiled."""
        ...

    def compile_block(self, block: Block) -> Step:
        """The block's ops (without its terminator) as one step."""
        ...

    def host_memory(self, op: Operation, value: SSAValue, write: bool) -> Getter:
        """A getter giving the NumPy array behind memref `value` for host code `op`.

        It raises a located error when the host cannot see that memory (device
        memory, freed memory).
        """
        ...

    def call_target(self, op: Operation, name: str) -> CompiledFunction:
        """The compiled function `name` (possibly not yet filled in: recursion)."""
        ...


OpCompiler = Callable[[Compiler, Operation], Step]
"""Compiles one op of host code to its step."""


@dataclass(eq=False)
class CompiledFunction:
    """A `func.func` compiled to closures: `fn(args) -> results` (run-time values)."""

    name: str
    op: func.FuncOp
    nslots: int = 0
    arg_slots: tuple[int, ...] = ()
    body: Step | None = None
    result_slots: tuple[int, ...] = ()
    slots: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])

    def __call__(self, context: object, args: Sequence[Any]) -> tuple[Any, ...]:
        """Run the function in a fresh frame whose slot 0 holds `context`."""
        body = self.body
        if body is None:
            raise error_at(self.op, f"function @{self.name} is a declaration without a body")
        frame: Frame = [None] * self.nslots
        frame[0] = context
        for slot, value in zip(self.arg_slots, args, strict=True):
            frame[slot] = value
        body(frame)
        return tuple(frame[s] for s in self.result_slots)


def assign(f: Frame, slots: Sequence[int], values: Iterable[Any]) -> None:
    """Store `values` into `slots` of `f`, one each, in order."""
    for s, v in zip(slots, values, strict=True):
        f[s] = v


def move(f: Frame, sources: Sequence[int], targets: Sequence[int]) -> None:
    """Copy the values in slots `sources` to slots `targets` as one parallel assignment
    (all are read before any is written: a loop's yields may name its carried values)."""
    assign(f, targets, [f[s] for s in sources])


def run_steps(steps: Sequence[Step]) -> Step:
    """One step running `steps` in order (specialised for short blocks)."""
    steps = tuple(steps)
    if not steps:
        return lambda f: None
    if len(steps) == 1:
        return steps[0]

    def run(f: Frame) -> None:
        for s in steps:
            s(f)

    return run


def terminator_slots(c: Compiler, region: Region) -> tuple[int, ...]:
    """Slots of the values the region's single block yields (its terminator's operands)."""
    block = region.block
    last = block.last_op
    if last is None:
        return ()
    return tuple(c.slot(v) for v in last.operands)


def binary(c: Compiler, op: Operation, fn: Callable[[Any, Any], Any]) -> Step:
    """The step of a binary op computing `fn` of its operands' values."""
    a, b, r = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.results[0])

    def run(f: Frame) -> None:
        f[r] = fn(f[a], f[b])

    return run


def unary(c: Compiler, op: Operation, fn: Callable[[Any], Any]) -> Step:
    """The step of a unary op computing `fn` of its operand's value."""
    a, r = c.slot(op.operands[0]), c.slot(op.results[0])

    def run(f: Frame) -> None:
        f[r] = fn(f[a])

    return run


__all__ = [
    "CompiledFunction",
    "Compiler",
    "Frame",
    "Getter",
    "OpCompiler",
    "Step",
    "assign",
    "binary",
    "move",
    "run_steps",
    "terminator_slots",
    "unary",
]
