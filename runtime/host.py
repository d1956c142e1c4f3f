"""Host code compiled to Python closures: `func`, `arith`, `math`, `scf`, `memref` and `cf.assert`.

The executor turns every function of a level-2 module into Python callables once,
before anything runs, so running a program never walks IR:

* Each SSA value of a function gets a *slot*, an index into a flat Python list (the
  function's *frame*); a call makes a fresh frame, so recursion works. Slot 0 holds
  the execution context (the state of one run), so compiled code is reentrant and a
  compiled program is reused by every run.
* Each op becomes a *step*, a closure `step(frame) -> None` that reads its operand
  slots and writes its result slots. A block is its list of steps; a region-holding
  op (`scf.for`, `scf.if`, `scf.while`, `scf.index_switch`) is one step whose closure
  runs the steps of its blocks.
* Op compilers live in a table keyed by op name (`HOST_OPS`); the executor adds the
  `device` ops to the same table, so host and device ops compile the same way.

Run-time values of host code:

* integers (`index`, `iN`) are Python ints in two's-complement signed form, wrapped
  to their width after every op (MLIR's arith semantics); `i1` is a Python bool;
* floats are NumPy scalars of their width (`np.float16/32/64`), so `f32` arithmetic
  rounds like `f32`; floating-point exceptions follow IEEE (no warnings);
* memrefs in host memory (no memory space) are NumPy arrays; memrefs in a device's
  memory are whatever the executor's `memory` hooks give (runtime buffers).

Nothing is clamped or wrapped silently: an index outside a memref, a division by
zero, a non-positive `scf.for` step, a float-to-integer conversion of NaN or of an
out-of-range value all raise a located `DevplanError`.
"""

from __future__ import annotations

import math
import operator
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from ..diagnostics import DevplanError, error_at
from . import semantics

Frame = list[Any]
"""A function activation: slot 0 holds the execution context (the run's state, shared
by every call), then one entry per SSA value."""

Step = Callable[[Frame], None]
"""One compiled op."""

Getter = Callable[[Frame], Any]
"""Reads one run-time value out of a frame."""


class Compiler(Protocol):
    """What an op compiler may ask of the compiler driving it."""

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

HOST_OPS: dict[str, OpCompiler] = {}
"""Op name -> compiler for every op the executor runs in host code."""


def _register(*names: str) -> Callable[[OpCompiler], OpCompiler]:
    def decorate(fn: OpCompiler) -> OpCompiler:
        for name in names:
            HOST_OPS[name] = fn
        return fn

    return decorate


# ---------------------------------------------------------------------------------------
# Scalar types


def numpy_dtype(type_: Attribute) -> np.dtype[Any]:
    """The NumPy dtype of an element or scalar type (`index` is `int64`, `i1` is `bool`)."""
    spelled = str(type_)
    if isinstance(type_, IndexType):
        return np.dtype(np.int64)
    if isinstance(type_, IntegerType):
        width = type_.bitwidth
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            signed = not spelled.startswith("ui")
            return np.dtype(f"{'i' if signed else 'u'}{width // 8}")
    if isinstance(type_, Float16Type):
        return np.dtype(np.float16)
    if isinstance(type_, BFloat16Type):
        return np.dtype(np.uint16)  # NumPy has no bf16: memory holds its bit pattern
    if isinstance(type_, Float32Type):
        return np.dtype(np.float32)
    if isinstance(type_, Float64Type):
        return np.dtype(np.float64)
    raise DevplanError(f"error: the executor does not support values of type {type_}")


def float_cast(type_: Attribute) -> Callable[[Any], Any]:
    """A value rounded (once) to float type `type_`, as host code holds it: a NumPy
    scalar of its width, bf16 as an f32 holding the bf16 value."""
    if isinstance(type_, BFloat16Type):
        return semantics.bf16_value
    return numpy_dtype(type_).type


def is_narrow(type_: Attribute) -> bool:
    """Whether float ops of `type_` are computed in f64 and rounded once (f16, bf16)."""
    return isinstance(type_, Float16Type | BFloat16Type)


def element_type(type_: Attribute) -> Attribute:
    """The element type of a memref type."""
    memref_type: Any = type_
    element: Attribute = memref_type.element_type
    return element


def int_width(type_: Attribute) -> int:
    """Bit width of an integer-like type (`index` counts as 64)."""
    if isinstance(type_, IndexType):
        return 64
    if isinstance(type_, IntegerType):
        return type_.bitwidth
    raise DevplanError(f"error: expected an integer or index type, got {type_}")


def wrapper(type_: Attribute) -> Callable[[int], Any]:
    """Wraps a Python int to `type_`'s width in signed two's complement (i1 -> bool)."""
    width = int_width(type_)
    if width == 1:
        return lambda x: bool(x & 1)
    half, mask = 1 << (width - 1), (1 << width) - 1
    return lambda x: ((x + half) & mask) - half


def signed(x: Any) -> int:
    """The signed reading of an integer value (`i1` true is -1)."""
    return -1 if x is True else int(x)


def is_integer_like(type_: Attribute) -> bool:
    """Whether `type_` is `index` or an integer type."""
    return isinstance(type_, IndexType | IntegerType)


def _type_name(value: object) -> str:
    return type(value).__name__


def _is_bool(value: object) -> bool:
    return isinstance(value, bool | np.bool_)


def _is_number(value: object, floats: bool) -> bool:
    if _is_bool(value):
        return False
    if floats:
        return isinstance(value, int | float | np.integer | np.floating)
    return isinstance(value, int | np.integer)


def _input_range(type_: Attribute, width: int) -> tuple[int, int]:
    """The values (lowest, highest) a scalar input of integer-like `type_` may take: `i1`
    is 0 or 1, a signless integer (and `index`) its bits read as signed or unsigned,
    `si8` and `ui8` their own ranges (-1 is no ui8; 200 is no si8)."""
    if width == 1:
        return 0, 1
    if isinstance(type_, IntegerType):
        low, high = type_.value_range()
        return low, high - 1
    return -(1 << (width - 1)), (1 << width) - 1


def _is_finite(number: Any) -> bool:
    """Whether a Python or NumPy number is finite (every int is, even beyond a float)."""
    return isinstance(number, int | np.integer) or math.isfinite(number)


def _number_text(number: Any) -> str:
    """`number` as a message quotes it: an int of hundreds of digits by its first ones."""
    text = repr(number)
    digits = text.lstrip("-")
    if isinstance(number, int) and len(digits) > 24:
        text = f"{text[: len(text) - len(digits) + 6]}... (an integer of {len(digits)} digits)"
    return text


def from_python(type_: Attribute, value: object, what: str) -> Any:
    """A Python or NumPy scalar given by a user as a run-time value of `type_`."""
    got = f"got {_type_name(value)} {value!r}"
    number: Any = value
    if is_integer_like(type_):
        width = int_width(type_)
        if not (_is_number(value, floats=False) or (width == 1 and _is_bool(value))):
            raise DevplanError(f"error: {what} is {type_}, {got}")
        v = int(number)
        lo, hi = _input_range(type_, width)
        if not lo <= v <= hi:
            raise DevplanError(
                f"error: {what} is {type_}, and {v} does not fit in it (valid: {lo} to {hi})"
            )
        return wrapper(type_)(v)
    if isinstance(type_, AnyFloat):
        if not _is_number(value, floats=True):
            raise DevplanError(f"error: {what} is {type_}, {got}")
        try:
            with np.errstate(over="ignore"):
                converted = float_cast(type_)(number)
        except OverflowError:  # an int beyond every float (10**400)
            converted = math.inf
        if _is_finite(number) and not math.isfinite(converted):
            # A finite value beyond the type's range would silently become infinity.
            raise DevplanError(
                f"error: {what} is {type_}, and {_number_text(number)} does not fit in it"
            )
        return converted
    raise DevplanError(f"error: {what} has type {type_}, which the executor cannot pass in")


def to_numpy_scalar(type_: Attribute, value: Any) -> np.generic:
    """A run-time scalar as the NumPy scalar of its type (how results are returned)."""
    if isinstance(type_, BFloat16Type):
        return np.float32(value)  # a bf16 scalar is returned as the f32 of its value
    dtype = numpy_dtype(type_)
    if dtype.kind == "u":
        return dtype.type(int(value) & ((1 << (dtype.itemsize * 8)) - 1))
    return dtype.type(value)


# ---------------------------------------------------------------------------------------
# Functions


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


@_register("func.call")
def _call(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, func.CallOp)
    callee = c.call_target(op, op.callee.string_value())
    if not callee.op.body.blocks:
        from .runner_utils import compile_runner_call

        return compile_runner_call(c, op)
    args = tuple(c.slot(v) for v in op.arguments)
    results = tuple(c.slot(v) for v in op.res)

    def run(f: Frame) -> None:
        depth = getattr(_calls, "depth", 0) + 1
        if depth > MAX_CALL_DEPTH:
            raise error_at(
                op,
                f"'func.call' of @{callee.name} nests calls deeper than {MAX_CALL_DEPTH} "
                "(unbounded recursion?)",
            )
        _calls.depth = depth
        try:
            assign(f, results, callee(f[0], [f[a] for a in args]))
        finally:
            _calls.depth = depth - 1

    return run


def machine_memory() -> int | None:
    """Bytes of physical memory of this machine (None when the OS does not say).

    Host memory beyond it cannot be given: NumPy would map it lazily and the process
    would be killed when it is touched, so allocations check against it first."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


MAX_CALL_DEPTH = 5000
"""How deeply host code may nest `func.call`s (recursion included) before a run fails
with a located error rather than exhausting Python's stack."""
_calls = threading.local()
"""`depth`: the calls active right now on this thread."""


# ---------------------------------------------------------------------------------------
# arith


@_register("arith.constant")
def _constant(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, arith.ConstantOp)
    value = op.value
    r = c.slot(op.result)
    if isinstance(value, IntegerAttr):
        v: Any = wrapper(value.type)(value.value.data)
    elif isinstance(value, FloatAttr):
        v = float_cast(value.type)(value.value.data)
    else:
        raise error_at(op, f"'arith.constant' of {value} is not supported in host code")

    def run(f: Frame) -> None:
        f[r] = v

    return run


def _binary(c: Compiler, op: Operation, fn: Callable[[Any, Any], Any]) -> Step:
    a, b, r = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.results[0])

    def run(f: Frame) -> None:
        f[r] = fn(f[a], f[b])

    return run


def _unary(c: Compiler, op: Operation, fn: Callable[[Any], Any]) -> Step:
    a, r = c.slot(op.operands[0]), c.slot(op.results[0])

    def run(f: Frame) -> None:
        f[r] = fn(f[a])

    return run


def _integer(c: Compiler, op: Operation) -> Step:
    """A binary integer op: `semantics`' compiled definition (the one every path calls),
    after its `int_fault` check when the op has undefined behaviour. Host integers are
    Python ints in signed form already; i1 (a bool) enters as 0 or -1."""
    short = op.name.split(".")[1]
    fn = semantics.int_scalar(op.name)
    type_ = op.results[0].type
    width = int_width(type_)
    a, b, r = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.results[0])
    flags = semantics.flag_bits(semantics.overflow_flags(op))
    faults = short in semantics.FAULTING_OPS and (flags or short not in ("addi", "subi", "muli"))
    fault, code = _fault_check(short)
    if width == 1:

        def run_i1(f: Frame) -> None:
            x, y = -int(f[a]), -int(f[b])
            if faults:
                _raise_fault(op, short, type_, fault(code, flags, x, y, 1), x, y)
            f[r] = fn(x, y, 1) != 0

        return run_i1
    if not faults:

        def run(f: Frame) -> None:
            f[r] = fn(f[a], f[b], width)

        return run

    def run_checked(f: Frame) -> None:
        x, y = f[a], f[b]
        kind = fault(code, flags, x, y, width)
        if kind:
            _raise_fault(op, short, type_, kind, x, y)
        f[r] = fn(x, y, width)

    return run_checked


def _fault_check(short: str) -> tuple[Callable[..., int], int]:
    """`semantics`' compiled `int_fault` and `short`'s number for it (-1 for none)."""
    code = semantics.fault_code(short) if short in semantics.FAULTING_OPS else -1
    return semantics.int_scalar("int_fault"), code


def _raise_fault(op: Operation, short: str, type_: Attribute, kind: int, x: int, y: int) -> None:
    """Raise the located error of fault `kind` (from `int_fault`; 0: none), with the
    operands that caused it."""
    if not kind:
        return
    width = int_width(type_)
    if kind == semantics.DIVIDES_BY_ZERO:
        raise error_at(op, f"'{op.name}' divides {x} by zero")
    if kind == semantics.SHIFT_TOO_WIDE:
        amount = y & ((1 << width) - 1)
        raise error_at(op, f"'{op.name}' shifts a {type_} value by {amount} bits")
    message = semantics.fault_message(kind, short, width)
    if kind == semantics.QUOTIENT_OVERFLOWS:
        raise error_at(op, message)
    raise error_at(op, f"{message} ({short} of {x} and {y})")


for _name in semantics.INT_BINARY_DEFS:
    HOST_OPS[_name] = _integer


def _float_op(c: Compiler, op: Operation) -> Step:
    """A float op of `semantics.FLOAT_OPS`, computed by the definition every path shares;
    f16 through f64, rounded once (see `semantics`)."""
    fn = semantics.numpy_ufunc(op.name)
    type_ = op.results[0].type
    cast = float_cast(type_)
    slots = tuple(c.slot(v) for v in op.operands)
    r = c.slot(op.results[0])
    if isinstance(type_, BFloat16Type) or (is_narrow(type_) and op.name in semantics.DEFINED_OPS):

        def run_narrow(f: Frame) -> None:
            f[r] = cast(fn(*(np.float64(f[s]) for s in slots)))

        return run_narrow

    def run(f: Frame) -> None:
        f[r] = cast(fn(*(f[s] for s in slots)))

    return run


for _name in semantics.FLOAT_OPS:
    HOST_OPS[_name] = _float_op


@_register("math.absi")
def _absi(c: Compiler, op: Operation) -> Step:
    wrap = wrapper(op.results[0].type)
    return _unary(c, op, lambda x: wrap(abs(signed(x))))


_CMPI: dict[int, tuple[Callable[[Any, Any], bool], bool]] = {
    0: (operator.eq, False),
    1: (operator.ne, False),
    2: (operator.lt, False),
    3: (operator.le, False),
    4: (operator.gt, False),
    5: (operator.ge, False),
    6: (operator.lt, True),
    7: (operator.le, True),
    8: (operator.gt, True),
    9: (operator.ge, True),
}


@_register("arith.cmpi")
def _cmpi(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, arith.CmpiOp)
    compare, unsigned = _CMPI[op.predicate.value.data]
    mask = (1 << int_width(op.lhs.type)) - 1
    if unsigned:
        return _binary(c, op, lambda x, y: compare(int(x) & mask, int(y) & mask))
    return _binary(c, op, lambda x, y: compare(signed(x), signed(y)))


def _ordered(fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda x, y: not (math.isnan(x) or math.isnan(y)) and fn(x, y)


def _unordered(fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda x, y: math.isnan(x) or math.isnan(y) or fn(x, y)


_CMPF: dict[int, Callable[[Any, Any], bool]] = {
    0: lambda x, y: False,
    1: _ordered(operator.eq),
    2: _ordered(operator.gt),
    3: _ordered(operator.ge),
    4: _ordered(operator.lt),
    5: _ordered(operator.le),
    6: _ordered(operator.ne),
    7: lambda x, y: not (math.isnan(x) or math.isnan(y)),
    8: _unordered(operator.eq),
    9: _unordered(operator.gt),
    10: _unordered(operator.ge),
    11: _unordered(operator.lt),
    12: _unordered(operator.le),
    13: _unordered(operator.ne),
    14: lambda x, y: math.isnan(x) or math.isnan(y),
    15: lambda x, y: True,
}


@_register("arith.cmpf")
def _cmpf(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, arith.CmpfOp)
    compare = _CMPF[op.predicate.value.data]
    return _binary(c, op, lambda x, y: bool(compare(x, y)))


@_register("arith.select")
def _select(c: Compiler, op: Operation) -> Step:
    cond, a, b, r = (c.slot(v) for v in (*op.operands, op.results[0]))

    def run(f: Frame) -> None:
        f[r] = f[a] if f[cond] else f[b]

    return run


@_register("arith.index_cast", "arith.extsi", "arith.trunci")
def _int_cast(c: Compiler, op: Operation) -> Step:
    wrap = wrapper(op.results[0].type)
    return _unary(c, op, lambda x: wrap(signed(x)))


@_register("arith.extui", "arith.index_castui")
def _unsigned_int_cast(c: Compiler, op: Operation) -> Step:
    wrap = wrapper(op.results[0].type)
    mask = (1 << int_width(op.operands[0].type)) - 1
    return _unary(c, op, lambda x: wrap(int(x) & mask))


@_register("arith.sitofp", "arith.uitofp")
def _int_to_float(c: Compiler, op: Operation) -> Step:
    mask = (1 << int_width(op.operands[0].type)) - 1
    read: Callable[[Any], int] = (lambda x: int(x) & mask) if op.name.endswith("uitofp") else signed
    type_ = op.results[0].type
    if isinstance(type_, BFloat16Type):
        f32 = np.dtype(np.float32)
        return _unary(c, op, lambda x: semantics.int_to_float(read(x), f32, precision=8))
    dtype = numpy_dtype(type_)
    return _unary(c, op, lambda x: semantics.int_to_float(read(x), dtype))


@_register("arith.fptosi", "arith.fptoui")
def _float_to_int(c: Compiler, op: Operation) -> Step:
    type_ = op.results[0].type
    width, wrap = int_width(type_), wrapper(type_)
    unsigned = op.name.endswith("fptoui")
    lo, hi = (0, (1 << width) - 1) if unsigned else (-(1 << (width - 1)), (1 << (width - 1)) - 1)

    def convert(value: Any) -> int | bool:
        x = float(value)
        if not math.isfinite(x) or not lo <= math.trunc(x) <= hi:
            message = semantics.fptoi_message(op.name.split(".")[1], width)
            raise error_at(op, f"{message} ({x} to {type_})")
        return wrap(math.trunc(x))

    return _unary(c, op, convert)


@_register("arith.extf", "arith.truncf")
def _float_cast(c: Compiler, op: Operation) -> Step:
    cast = float_cast(op.results[0].type)
    if isinstance(op.results[0].type, BFloat16Type):
        return _unary(c, op, lambda x: cast(np.float64(x)))
    return _unary(c, op, cast)


@_register("arith.bitcast")
def _bitcast(c: Compiler, op: Operation) -> Step:
    """The same bits read as another type of the same width (through NumPy's `view`)."""
    src, dst = op.operands[0].type, op.results[0].type
    if isinstance(src, BFloat16Type) or isinstance(dst, BFloat16Type):
        return _bitcast_bf16(c, op)
    src_dtype, dst_dtype = numpy_dtype(src), numpy_dtype(dst)
    if src_dtype.itemsize != dst_dtype.itemsize or src_dtype.kind == "b":
        raise error_at(op, f"'arith.bitcast' from {src} to {dst} is not supported in host code")
    if src_dtype.kind == "u":
        src_dtype = np.dtype(f"i{src_dtype.itemsize}")
    as_int = is_integer_like(dst)
    wrap = wrapper(dst) if as_int else None

    def convert(x: Any) -> Any:
        bits = np.array(x if src_dtype.kind == "f" else signed(x), dtype=src_dtype)
        out = bits.view(dst_dtype)[()]
        return wrap(int(out)) if wrap is not None else out

    return _unary(c, op, convert)


def _bitcast_bf16(c: Compiler, op: Operation) -> Step:
    src, dst = op.operands[0].type, op.results[0].type
    if isinstance(src, BFloat16Type) and isinstance(dst, BFloat16Type):
        return _unary(c, op, lambda x: x)
    if isinstance(src, BFloat16Type):
        if isinstance(dst, Float16Type):
            return _unary(c, op, lambda x: semantics.bf16_bits_of_value(x).view(np.float16))
        wrap = wrapper(dst)
        return _unary(c, op, lambda x: wrap(int(semantics.bf16_bits_of_value(x))))
    if isinstance(src, Float16Type):
        return _unary(c, op, lambda x: semantics.bf16_value_of_bits(np.float16(x).view(np.uint16)))
    return _unary(c, op, lambda x: semantics.bf16_value_of_bits(int(x) & 0xFFFF))


@_register("arith.mulsi_extended", "arith.mului_extended")
def _mul_extended(c: Compiler, op: Operation) -> Step:
    """The low and high halves of the double-width product."""
    type_ = op.results[0].type
    width, wrap = int_width(type_), wrapper(type_)
    mask = (1 << width) - 1
    read: Callable[[Any], int] = (
        signed if op.name == "arith.mulsi_extended" else (lambda x: int(x) & mask)
    )
    a, b = c.slot(op.operands[0]), c.slot(op.operands[1])
    low, high = c.slot(op.results[0]), c.slot(op.results[1])

    def run(f: Frame) -> None:
        product = read(f[a]) * read(f[b])
        f[low], f[high] = wrap(product), wrap(product >> width)

    return run


@_register("arith.addui_extended")
def _add_extended(c: Compiler, op: Operation) -> Step:
    """The wrapped sum and whether the unsigned sum overflowed (an i1)."""
    type_ = op.results[0].type
    mask = (1 << int_width(type_)) - 1
    wrap = wrapper(type_)
    a, b = c.slot(op.operands[0]), c.slot(op.operands[1])
    total, carry = c.slot(op.results[0]), c.slot(op.results[1])

    def run(f: Frame) -> None:
        s = (int(f[a]) & mask) + (int(f[b]) & mask)
        f[total], f[carry] = wrap(s), s > mask

    return run


def _count_bits(kind: str) -> OpCompiler:
    def compile_(c: Compiler, op: Operation) -> Step:
        type_ = op.results[0].type
        width, wrap = int_width(type_), wrapper(type_)
        mask = (1 << width) - 1

        def count(x: Any) -> int | bool:
            u = int(x) & mask
            if kind == "ctpop":
                return wrap(u.bit_count())
            if kind == "ctlz":
                return wrap(width - u.bit_length())
            return wrap(width if u == 0 else (u & -u).bit_length() - 1)

        return _unary(c, op, count)

    return compile_


for _kind in ("ctlz", "cttz", "ctpop"):
    HOST_OPS[f"math.{_kind}"] = _count_bits(_kind)


@_register("math.ipowi")
def _ipowi(c: Compiler, op: Operation) -> Step:
    """Signed integer power, wrapped; a negative exponent gives 1 / x**-n truncated
    (1, -1 or 0), and raising 0 to a negative power divides by zero: an error."""
    type_ = op.results[0].type
    width, wrap = int_width(type_), wrapper(type_)
    a, b, r = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.results[0])

    def run(f: Frame) -> None:
        x, n = signed(f[a]), signed(f[b])
        if n >= 0:
            f[r] = wrap(pow(x, n, 1 << width) if width > 1 else x**n)
        elif x == 0:
            raise error_at(op, f"{semantics.IPOWI_ZERO_MESSAGE} (0 to the power {n})")
        else:
            f[r] = wrap(1 if x == 1 else (-1 if n % 2 else 1) if x == -1 else 0)

    return run


@_register("math.fpowi")
def _fpowi(c: Compiler, op: Operation) -> Step:
    """`powf` of the base and the exponent converted to the base's type (`sitofp`)."""
    type_ = op.results[0].type
    bf16 = isinstance(type_, BFloat16Type)
    dtype = np.dtype(np.float32) if bf16 else numpy_dtype(type_)
    cast = float_cast(type_)
    fn = semantics.ufunc("math.powf")
    wide = is_narrow(type_)
    a, b, r = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.results[0])

    def run(f: Frame) -> None:
        n = semantics.int_to_float(signed(f[b]), dtype, precision=8 if bf16 else None)
        x = f[a]
        f[r] = cast(fn(np.float64(x), np.float64(n)) if wide else fn(x, n))

    return run


# ---------------------------------------------------------------------------------------
# scf


@_register("scf.for")
def _for(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, scf.ForOp)
    lb, ub, st = c.slot(op.lb), c.slot(op.ub), c.slot(op.step)
    block = op.body.block
    iv = c.slot(block.args[0])
    carried = tuple(c.slot(a) for a in block.args[1:])
    inits = tuple(c.slot(v) for v in op.iter_args)
    results = tuple(c.slot(v) for v in op.res)
    yields = terminator_slots(c, op.body)
    body = c.compile_block(block)

    if not carried:

        def run_plain(f: Frame) -> None:
            step = f[st]
            if step <= 0:
                raise error_at(op, f"'scf.for' step must be positive, got {step}")
            for i in range(f[lb], f[ub], step):
                f[iv] = i
                body(f)

        return run_plain

    def run(f: Frame) -> None:
        step = f[st]
        if step <= 0:
            raise error_at(op, f"'scf.for' step must be positive, got {step}")
        move(f, inits, carried)
        for i in range(f[lb], f[ub], step):
            f[iv] = i
            body(f)
            move(f, yields, carried)
        move(f, carried, results)

    return run


@_register("cf.assert")
def _assert(c: Compiler, op: Operation) -> Step:
    """MLIR's `cf.assert`: a false condition ends the run with the op's message, at the op
    (lower-to-device checks with it that dynamic shapes agree)."""
    cond = c.slot(op.operands[0])
    message = op.properties["msg"]
    assert isinstance(message, StringAttr)
    text = message.data

    def run(f: Frame) -> None:
        if not f[cond]:
            raise error_at(op, f"assertion failed: {text}")

    return run


@_register("scf.if")
def _if(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, scf.IfOp)
    cond = c.slot(op.cond)
    results = tuple(c.slot(v) for v in op.output)
    then = c.compile_block(op.true_region.block)
    then_yields = terminator_slots(c, op.true_region)
    has_else = bool(op.false_region.blocks)
    orelse = c.compile_block(op.false_region.block) if has_else else None
    else_yields = terminator_slots(c, op.false_region) if has_else else ()

    def run(f: Frame) -> None:
        if f[cond]:
            then(f)
            yields = then_yields
        elif orelse is not None:
            orelse(f)
            yields = else_yields
        else:
            return
        move(f, yields, results)

    return run


@_register("scf.while")
def _while(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, scf.WhileOp)
    before, after = op.before_region.block, op.after_region.block
    before_args = tuple(c.slot(a) for a in before.args)
    after_args = tuple(c.slot(a) for a in after.args)
    inits = tuple(c.slot(v) for v in op.arguments)
    results = tuple(c.slot(v) for v in op.res)
    condition = before.last_op
    assert isinstance(condition, scf.ConditionOp)
    cond = c.slot(condition.condition)
    forwarded = tuple(c.slot(v) for v in condition.args)
    yields = terminator_slots(c, op.after_region)
    run_before, run_after = c.compile_block(before), c.compile_block(after)

    def run(f: Frame) -> None:
        move(f, inits, before_args)
        while True:
            run_before(f)
            if not f[cond]:
                break
            move(f, forwarded, after_args)
            run_after(f)
            move(f, yields, before_args)
        move(f, forwarded, results)

    return run


@_register("scf.index_switch")
def _index_switch(c: Compiler, op: Operation) -> Step:
    """The region of the case equal to the index (the default region for none)."""
    assert isinstance(op, scf.IndexSwitchOp)
    results = tuple(c.slot(v) for v in op.output)
    arg = c.slot(op.arg)
    default = (c.compile_block(op.default_region.block), terminator_slots(c, op.default_region))
    cases = {
        int(value): (c.compile_block(region.block), terminator_slots(c, region))
        for value, region in zip(op.cases.get_values(), op.case_regions, strict=True)
    }

    def run(f: Frame) -> None:
        body, yields = cases.get(f[arg], default)
        body(f)
        move(f, yields, results)

    return run


# ---------------------------------------------------------------------------------------
# memref on host memory


def shape_with(
    op: Operation, type_: MemRefType, dynamic: Sequence[int]
) -> Callable[[Frame], tuple[int, ...]]:
    """The concrete shape of an allocation of `type_` whose `?` sizes are in `dynamic` slots."""
    static = [d.data for d in type_.shape]
    positions = [i for i, d in enumerate(static) if d < 0]
    if len(positions) != len(dynamic):
        raise error_at(op, f"'{op.name}' needs {len(positions)} dynamic sizes for {type_}")
    if not positions:
        fixed = tuple(static)
        return lambda f: fixed

    def shape(f: Frame) -> tuple[int, ...]:
        dims = list(static)
        for i, s in zip(positions, dynamic, strict=True):
            n = f[s]
            if n < 0:
                raise error_at(op, f"'{op.name}' of {type_} with negative size {n}")
            dims[i] = n
        return tuple(dims)

    return shape


@_register("memref.alloc", "memref.alloca")
def _alloc(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, memref.AllocOp | memref.AllocaOp)
    type_ = op.memref.type
    assert isinstance(type_, MemRefType)
    if not isinstance(type_.memory_space, NoneAttr):
        raise error_at(
            op,
            f"'{op.name}' allocates {type_} in device memory; "
            "use 'device.alloc' for memory of a device",
        )
    shape = shape_with(op, type_, [c.slot(v) for v in op.dynamic_sizes])
    dtype = numpy_dtype(type_.element_type)
    r = c.slot(op.memref)

    def run(f: Frame) -> None:
        dims = shape(f)
        nbytes = math.prod(dims) * dtype.itemsize
        capacity: int | None = getattr(f[0], "host_capacity", None)
        if capacity is not None and nbytes > capacity:
            raise error_at(
                op,
                f"allocating {type_} needs {nbytes} bytes: out of host memory "
                f"(the host holds {capacity} bytes)",
            )
        try:
            f[r] = np.zeros(dims, dtype)
        except MemoryError:
            raise error_at(
                op, f"allocating {type_} needs {nbytes} bytes: out of host memory"
            ) from None

    return run


def _memref_access(
    c: Compiler, op: memref.LoadOp | memref.StoreOp, write: bool
) -> tuple[Getter, Callable[[Frame, np.ndarray[Any, Any]], tuple[int, ...]]]:
    """For a host `memref.load`/`store`: the getter of the array it reaches and the check
    giving its index in bounds (the error names the memref type)."""
    memory = c.host_memory(op, op.memref, write=write)
    what = f"{op.memref.type}"
    indices = tuple(c.slot(v) for v in op.indices)

    def check(f: Frame, array: np.ndarray[Any, Any]) -> tuple[int, ...]:
        index = tuple(f[i] for i in indices)
        for i, n in zip(index, array.shape, strict=True):
            if not 0 <= i < n:
                raise error_at(
                    op,
                    f"'{op.name}' index [{', '.join(map(str, index))}] is out of bounds "
                    f"for {what} of shape {'x'.join(map(str, array.shape)) or 'scalar'}",
                )
        return index

    return memory, check


@_register("memref.load")
def _load(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, memref.LoadOp)
    memory, check = _memref_access(c, op, write=False)
    element = element_type(op.memref.type)
    convert: Callable[[Any], Any] = (
        (lambda x: wrapper(element)(int(x))) if is_integer_like(element) else (lambda x: x)
    )
    if isinstance(element, BFloat16Type):
        convert = semantics.bf16_value_of_bits
    r = c.slot(op.res)

    def run(f: Frame) -> None:
        array = memory(f)
        f[r] = convert(array[check(f, array)])

    return run


@_register("memref.store")
def _store(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, memref.StoreOp)
    memory, check = _memref_access(c, op, write=True)
    value = c.slot(op.value)
    element = element_type(op.memref.type)
    dtype = numpy_dtype(element)
    unsigned_mask = (1 << (dtype.itemsize * 8)) - 1 if dtype.kind == "u" else None
    if isinstance(element, BFloat16Type):

        def run_bf16(f: Frame) -> None:
            array = memory(f)
            array[check(f, array)] = semantics.bf16_bits_of_value(f[value])

        return run_bf16

    def run(f: Frame) -> None:
        array = memory(f)
        v = f[value]
        array[check(f, array)] = v if unsigned_mask is None else int(v) & unsigned_mask

    return run


@_register("memref.dim")
def _dim(c: Compiler, op: Operation) -> Step:
    assert isinstance(op, memref.DimOp)
    source, index, r = c.slot(op.source), c.slot(op.index), c.slot(op.result)
    type_ = op.source.type
    rank = type_.get_num_dims() if isinstance(type_, MemRefType) else 0

    def run(f: Frame) -> None:
        i = f[index]
        if not 0 <= i < rank:
            raise error_at(op, f"'memref.dim' index {i} is out of range for rank {rank}")
        f[r] = int(f[source].shape[i])

    return run


@_register("memref.cast", "memref.memory_space_cast")
def _cast(c: Compiler, op: Operation) -> Step:
    """The same memory seen through another type; static sizes are checked, not assumed."""
    source, r = c.slot(op.operands[0]), c.slot(op.results[0])
    target = op.results[0].type
    if not isinstance(target, MemRefType):  # unranked: any shape

        def view(f: Frame) -> None:
            f[r] = f[source]

        return view
    static = [d.data for d in target.shape]

    def run(f: Frame) -> None:
        value = f[source]
        shape = tuple(value.shape)
        if any(d >= 0 and d != n for d, n in zip(static, shape, strict=True)):
            raise error_at(
                op,
                f"'{op.name}' to {target} of memory of shape {'x'.join(map(str, shape))}",
            )
        f[r] = value

    return run


__all__ = [
    "HOST_OPS",
    "CompiledFunction",
    "Compiler",
    "Frame",
    "Getter",
    "Step",
    "from_python",
    "int_width",
    "numpy_dtype",
    "run_steps",
    "shape_with",
    "signed",
    "to_numpy_scalar",
    "wrapper",
]
