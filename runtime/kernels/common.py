"""What both kernel backends share: the supported op set, type mapping, naming and errors.

A backend turns a `kernel.func` into Python source once (`Kernel` below holds what it
needs to know about the function) and runs that source on every launch. Errors found
while compiling (an op no backend supports) and while running (out-of-bounds access,
integer division by zero, a barrier in divergent code) are `KernelError`s placed at the
op, naming the kernel, the block and thread, and the buffer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    MemRefType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue

from ...analysis.dtypes import dtype_of
from ...analysis.dtypes import integer_width as int_width
from ...diagnostics import LocatedError, diagnostic_at
from ...dialects.kernel import SUPPORTED_OPS, AllocSharedOp, BarrierOp, KernelFuncOp
from .. import scalar_ops


class KernelError(LocatedError):
    """An error in a kernel: an unsupported op, or a run-time fault such as an
    out-of-bounds access, placed at the op (`file:line:col: error: ...`)."""


INT_BINARY_OPS = (
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.divsi",
    "arith.divui",
    "arith.remsi",
    "arith.remui",
    "arith.ceildivsi",
    "arith.ceildivui",
    "arith.floordivsi",
    "arith.andi",
    "arith.ori",
    "arith.xori",
    "arith.shli",
    "arith.shrsi",
    "arith.shrui",
    "arith.maxsi",
    "arith.minsi",
    "arith.maxui",
    "arith.minui",
)
FLOAT_ARITH_OPS = tuple(sorted(scalar_ops.FLOAT_OPS))
"""Float arithmetic: computed by `semantics`' definitions on every path."""
CAST_OPS = (
    "arith.index_cast",
    "arith.index_castui",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.sitofp",
    "arith.uitofp",
    "arith.fptosi",
    "arith.fptoui",
    "arith.extf",
    "arith.truncf",
)
BIT_OPS = (
    "arith.bitcast",
    "arith.mulsi_extended",
    "arith.mului_extended",
    "arith.addui_extended",
    "math.ctlz",
    "math.cttz",
    "math.ctpop",
    "math.ipowi",
    "math.fpowi",
)
"""Bit-level and power ops (`semantics` defines the integer ones)."""
OTHER_OPS = (
    "arith.constant",
    "arith.cmpi",
    "arith.cmpf",
    "arith.select",
    "math.absi",
    "memref.load",
    "memref.store",
    "memref.dim",
    "memref.atomic_rmw",
    "scf.for",
    "scf.if",
    "scf.while",
    "scf.condition",
    "scf.yield",
    "scf.while",
    "scf.condition",
    "scf.index_switch",
    "kernel.thread_id",
    "kernel.block_id",
    "kernel.block_dim",
    "kernel.grid_dim",
    "kernel.barrier",
    "kernel.alloc_shared",
    "kernel.return",
    "kernel.printf",
    "kernel.assert",
)
I1_SIGNED_PREDICATES = {"slt": "ugt", "sle": "uge", "sgt": "ult", "sge": "ule"}
"""A signed comparison of i1 values is the reversed unsigned one (true is -1 signed)."""

CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF_PREDICATES = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip


def value_dtype(type_: Attribute) -> np.dtype[np.generic] | None:
    """The NumPy dtype of values of a scalar type in the NumPy backend: as `dtype_of`, but
    a bf16 value is an f32 (which holds every bf16 value exactly)."""
    if isinstance(type_, BFloat16Type):
        return np.dtype(np.float32)
    return dtype_of(type_)


def narrow_format(type_: Attribute) -> str | None:
    """ "f16" or "bf16" for those types (and memrefs of them), else None: their float ops
    are computed in f64 and rounded once (see `semantics`)."""
    if isinstance(type_, MemRefType):
        type_ = type_.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if isinstance(type_, Float16Type):
        return "f16"
    if isinstance(type_, BFloat16Type):
        return "bf16"
    return None


def is_float(type_: Attribute) -> bool:
    return isinstance(type_, Float16Type | BFloat16Type | Float32Type | Float64Type)


def wrap_int(value: int, width: int) -> int | bool:
    """`value` reduced to a signed `width`-bit integer (two's complement), as hardware does."""
    if width == 1:
        return bool(value & 1)
    half = 1 << (width - 1)
    return ((value + half) & ((half << 1) - 1)) - half


def predicate_of(op: Operation, names: Sequence[str]) -> str:
    """The comparison predicate of an `arith.cmpi`/`arith.cmpf` as its keyword."""
    attr = op.properties["predicate"]
    return names[int(attr.value.data)]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownArgumentType, reportUnknownMemberType]


def constant_value(op: Operation) -> int | float | bool:
    """The Python value of an `arith.constant` of a scalar type."""
    attr = op.properties["value"]
    type_ = op.results[0].type
    raw = attr.value.data  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
    width = int_width(type_)
    if width is not None:
        return wrap_int(int(raw), width)  # pyright: ignore[reportUnknownArgumentType]
    return float(raw)  # pyright: ignore[reportUnknownArgumentType]


def positive_constant(value: SSAValue) -> bool:
    """Whether `value` is an `arith.constant` greater than 0 (an `scf.for` step that needs
    no check)."""
    owner = value.owner
    return (
        isinstance(owner, Operation)
        and owner.name == "arith.constant"
        and constant_value(owner) > 0
    )


@dataclass
class Kernel:
    """A `kernel.func` prepared for code generation: checked, named, summarised."""

    func: KernelFuncOp
    name: str = ""
    names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    has_barrier: bool = False
    has_while: bool = False
    """Whether it holds an `scf.while` (a loop that may not end: see `watchdog.py`)."""
    has_atomics: bool = False
    shared: list[AllocSharedOp] = field(default_factory=list[AllocSharedOp])
    sites: list[Operation] = field(default_factory=list[Operation])
    """Ops that can fault at run time, indexed by the site number generated code passes."""

    def __post_init__(self) -> None:
        self.name = self.func.sym_name.data
        for op in self.func.body.walk():
            check_supported(self, op)
            if isinstance(op, BarrierOp):
                self.has_barrier = True
            elif op.name == "scf.while":
                self.has_while = True
            elif op.name == "memref.atomic_rmw":
                self.has_atomics = True
            elif isinstance(op, AllocSharedOp):
                self.shared.append(op)

    @property
    def per_block(self) -> bool:
        """Whether blocks must run one at a time (barriers or shared memory)."""
        return self.has_barrier or bool(self.shared)

    @property
    def params(self) -> tuple[SSAValue, ...]:
        return tuple(self.func.body.block.args)

    def name_of(self, value: SSAValue) -> str:
        """A Python identifier for an SSA value (stable within this kernel)."""
        name = self.names.get(value)
        if name is None:
            hint = value.name_hint or ""
            safe = "".join(c if c.isalnum() else "_" for c in hint)
            name = f"v{len(self.names)}_{safe}" if safe else f"v{len(self.names)}"
            self.names[value] = name
        return name

    def site(self, op: Operation) -> int:
        """The number of `op` among the ops that can report run-time errors."""
        self.sites.append(op)
        return len(self.sites) - 1

    def buffer_name(self, value: SSAValue) -> str:
        """How an error names a memref: `argument 2 (%c)` or `shared memory %s`."""
        hint = f"%{value.name_hint}" if value.name_hint else "an unnamed value"
        if isinstance(value, BlockArgument):
            return f"argument {value.index} ({hint})"
        return f"shared memory {hint}"

    def error(
        self,
        site: int,
        message: str,
        block: Sequence[int] | None = None,
        thread: Sequence[int] | None = None,
    ) -> KernelError:
        """A `KernelError` at site `site`, saying which thread faulted."""
        text = f"in kernel @{self.name}: {message}"
        if block is not None and thread is not None:
            text += f" (block {tuple(block)}, thread {tuple(thread)})"
        return KernelError(diagnostic_at(self.sites[site], text))

    def oob_error(
        self,
        site: int,
        buffer: SSAValue,
        index: Sequence[int],
        shape: Sequence[int],
        block: Sequence[int],
        thread: Sequence[int],
    ) -> KernelError:
        """The out-of-bounds message both backends give."""
        op = self.sites[site]
        verb = "load from" if op.name == "memref.load" else "store to"
        return self.error(
            site,
            f"out-of-bounds {verb} {self.buffer_name(buffer)}: index "
            f"[{', '.join(map(str, index))}] is outside shape "
            f"({', '.join(map(str, shape))})",
            block,
            thread,
        )


def check_supported(kernel: Kernel, op: Operation) -> None:
    """Raise a located `KernelError` when `op` cannot be compiled."""
    if op is kernel.func:
        return
    if op.name in ("scf.while", "scf.index_switch") and contains_barrier(op):
        raise KernelError(
            diagnostic_at(
                op,
                f"in kernel @{kernel.name}: a 'kernel.barrier' inside '{op.name}' is not "
                "supported by the kernel backends (every thread of a block would have to "
                "take the same number of iterations or the same case); move the barrier "
                "out, or write the loop as 'scf.for'",
            )
        )
    if op.regions:
        check_nesting(kernel, op)
    if op.name not in SUPPORTED_OPS:
        raise KernelError(
            diagnostic_at(
                op,
                f"in kernel @{kernel.name}: '{op.name}' is not supported by the kernel "
                f"backends; supported ops: {', '.join(sorted(SUPPORTED_OPS))}",
            )
        )
    for value in (*op.operands, *op.results):
        type_ = value.type
        if isinstance(type_, MemRefType):
            type_ = type_.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if dtype_of(type_) is None:  # pyright: ignore[reportUnknownArgumentType]
            raise KernelError(
                diagnostic_at(
                    op,
                    f"in kernel @{kernel.name}: values of type {type_} are not supported "
                    "by the kernel backends (index, i1, i8, i16, i32, i64, f16, bf16, f32, f64)",
                )
            )


MAX_LOOP_DEPTH = 12
"""The most `scf.for`/`scf.while` loops nested in one another a kernel may hold. Both
CPU backends write each as a Python loop, inside up to six loops and blocks of their own
(over blocks, threads, a compare-and-swap retry, a call back into Python), and Python's
compiler refuses a function nesting more than 20 blocks."""

MAX_REGION_DEPTH = 64
"""The most ops with regions (`scf.if`, `scf.for`, ...) nested in one another a kernel may
hold. Both CPU backends indent the generated Python once or twice per region, inside up to
a dozen levels of their own, and Python's tokenizer refuses more than 100 levels."""


def check_nesting(kernel: Kernel, op: Operation) -> None:
    """Raise a located `KernelError` when `op` (an op with regions) is nested deeper than
    the generated Python can be."""
    loops = regions = 0
    current: Operation | None = op
    while current is not None and current is not kernel.func:
        regions += 1
        loops += current.name in ("scf.for", "scf.while")
        current = current.parent_op()
    if op.name in ("scf.for", "scf.while") and loops > MAX_LOOP_DEPTH:
        what, most = f"{loops - 1} loops", f"loops nested at most {MAX_LOOP_DEPTH} deep"
        why = "each is a loop of the generated Python, which nests at most 20 blocks"
    elif regions > MAX_REGION_DEPTH:
        what, most = f"{regions - 1} ops with regions", f"at most {MAX_REGION_DEPTH} nested"
        why = "each is an indented block of the generated Python, which indents at most 100 levels"
    else:
        return
    raise KernelError(
        diagnostic_at(
            op,
            f"in kernel @{kernel.name}: '{op.name}' is nested in {what}; the kernel "
            f"backends run {most} ({why})",
        )
    )


def walk_ops(block: Block) -> Iterator[Operation]:
    """Every op in `block`, nested ones included, in program order."""
    for op in block.ops:
        yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from walk_ops(inner)


def contains_barrier(op: Operation) -> bool:
    return any(isinstance(inner, BarrierOp) for inner in op.walk())


def load_may_alias_later_store(load: Operation) -> bool:
    """Whether a store could run between `load` and the last use of its result.

    The NumPy backend may then not return a view into the buffer: the value read must
    not change when the buffer does. Uses outside the load's block (through `scf.yield`)
    are treated as unsafe.
    """
    block = load.parent_block()
    if block is None:
        return True
    result = load.results[0]
    if not result.uses:
        return False
    last = load
    for use in result.uses:
        user: Operation | None = use.operation
        if use.operation.name in ("scf.yield", "scf.condition"):
            return True
        while user is not None and user.parent_block() is not block:
            user = user.parent_op()
        if user is None:
            return True
        if block.get_operation_index(user) > block.get_operation_index(last):
            last = user
    op = load.next_op
    while op is not None:
        if any(inner.name == "memref.store" for inner in op.walk()):
            return True
        if op is last:
            return False
        op = op.next_op
    return False


class SourceWriter:
    """The bookkeeping both backends' source generators share: the emitted lines at the
    current indentation, the namespace the source runs in, fresh names and errors."""

    def __init__(self, kernel: Kernel, namespace: dict[str, Any]) -> None:
        self.kernel = kernel
        self.lines: list[str] = []
        self.namespace = namespace
        self.depth = 1
        self.counter = 0

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def v(self, value: SSAValue) -> str:
        return self.kernel.name_of(value)

    def error(self, op: Operation, message: str) -> KernelError:
        return KernelError(diagnostic_at(op, f"in kernel @{self.kernel.name}: {message}"))


# Fault messages, worded once so both backends say the same thing.


def fptoi_message(op: str, width: int) -> str:
    return scalar_ops.fptoi_message(op, width)


def dim_message(d: int, rank: int) -> str:
    return f"'memref.dim' asks for dimension {d} of a rank-{rank} memref"


STEP_MESSAGE = "'scf.for' has a step that is not positive"
BARRIER_MESSAGE = (
    "'kernel.barrier' is in divergent control flow: this thread of the block does not "
    "reach it (every thread of a block must take the same path to a barrier)"
)
