"""The per-thread code of the Numba backends: Python source for each op of a kernel.

`NumbaOps` writes what one thread does for each op, as Python over scalars that Numba
compiles: a case per op (`thread_op`, then `scalar` for the arithmetic, comparisons and
casts), with the fault checks the NumPy backend makes. The loops around that code differ
per backend: `NumbaSource` (`numba_source.py`) writes the CPU's loops over blocks, threads
and phases, `CudaSource` (`cuda_backend.py`) one CUDA thread. One concept, the op
emitter, which reads best whole: the file is long because the op set is.

Integers are int64 in the generated code, wrapped to their width after every operation
(so `i32` wraps at 32 bits); the binary integer ops call `semantics`' compiled definitions
(`I_arith_addi(x, y, width)`, ...), which LLVM inlines. A fault (out-of-bounds access,
division by zero, ...) writes its kind, site, the block and thread, and the index into an
error vector (`ERR_SIZE` slots) and returns; the launcher turns that into the same
`KernelError` the NumPy backend raises.

New ops get a case in `NumbaOps.thread_op`/`scalar` (and, when their result is an integer
function of thread ids that bounds accesses, in `BlockRanges.interval`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numba  # pyright: ignore[reportMissingTypeStubs]
import numpy as np
from xdsl.dialects import scf
from xdsl.ir import Block, Operation, SSAValue

from ...dialects.kernel import AssertOp, PrintfOp
from .. import numba_cache, semantics
from . import device_io
from .atomics import atomic_cas
from .common import (
    BIT_OPS,
    CMPF_PREDICATES,
    CMPI_PREDICATES,
    I1_SIGNED_PREDICATES,
    STEP_MESSAGE,
    Kernel,
    SourceWriter,
    constant_value,
    dtype_of,
    fptoi_message,
    int_width,
    is_float,
    narrow_format,
    positive_constant,
    predicate_of,
)
from .index_values import divides_safely
from .ranges import BlockRanges, constant_dim

FAULT, OUT_OF_BOUNDS, STOPPED = 1, 2, 3
"""The kinds of fault in slot 0 of the error vector: a fault with a message, an access
out of bounds, a kernel the watchdog stopped."""
ERR_SIZE = 17  # kind, site, block xyz, thread xyz, up to 8 index/detail values, stop flag
STOP_FLAG = 16
"""The slot of the error vector the watchdog raises (`watchdog.Watch.attach`)."""

_EXACT_FLOAT = {
    "arith.addf": "{0} + {1}",
    "arith.subf": "{0} - {1}",
    "arith.mulf": "{0} * {1}",
    "arith.divf": "{0} / {1}",
    "arith.remf": "np.fmod({0}, {1})",
    "arith.negf": "-{0}",
    "math.absf": "abs({0})",
    "math.sqrt": "np.sqrt({0})",
    "math.floor": "np.floor({0})",
    "math.ceil": "np.ceil({0})",
    "math.trunc": "np.trunc({0})",
    "math.roundeven": "np.rint({0})",
}
"""Exactly rounded float ops, written inline (the other float ops call `semantics`)."""
_CMPF = {
    "false": "False",
    "true": "True",
    "oeq": "{0} == {1}",
    "ogt": "{0} > {1}",
    "oge": "{0} >= {1}",
    "olt": "{0} < {1}",
    "ole": "{0} <= {1}",
    "one": "({0} < {1} or {0} > {1})",
    "ord": "({0} == {0} and {1} == {1})",
    "ueq": "not ({0} < {1} or {0} > {1})",
    "ugt": "not ({0} <= {1})",
    "uge": "not ({0} < {1})",
    "ult": "not ({0} >= {1})",
    "ule": "not ({0} > {1})",
    "une": "{0} != {1}",
    "uno": "({0} != {0} or {1} != {1})",
}
_CMPI = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _wrap(expr: str, width: int) -> str:
    """`expr` (an int64 expression) reduced to a signed `width`-bit value."""
    if width >= 64:
        return f"({expr})"
    if width == 1:
        return f"(({expr}) & 1 != 0)"
    half = 1 << (width - 1)
    return f"(((({expr}) + {half}) & {(half << 1) - 1}) - {half})"


def _unsigned(expr: str, width: int) -> str:
    """An expression ordering like the unsigned reading of `expr` (for comparisons)."""
    if width >= 64:
        return f"(({expr}) ^ -9223372036854775808)"
    return f"(({expr}) & {(1 << width) - 1})"


class NumbaOps(SourceWriter):
    """Writes the per-thread code of one kernel's ops (see the module docstring)."""

    def __init__(self, kernel: Kernel) -> None:
        namespace: dict[str, Any] = {"np": np, "semantics": semantics, "record_fault": record_fault}
        namespace.update({name: globals()[name] for name in HELPERS})
        super().__init__(kernel, namespace)
        self.messages: dict[int, str] = {}
        """Fixed fault messages by site (sites whose message needs run-time values are absent)."""
        self.spilled: dict[SSAValue, str] = {}
        """Per-thread arrays holding values that cross phases (per-block kernels)."""
        self.sites: dict[Operation, int] = {}
        self.ranges = BlockRanges(kernel)
        self.fast = False
        """Whether the code being emitted is the fast path (no bounds checks)."""
        self.defined_ops: list[str] = []
        """Ops whose `semantics` definition the kernel calls."""
        self.int_defined_ops: list[str] = []
        """Integer definitions of `semantics` the kernel calls."""

    # ------------------------------------------------------------ helpers

    def dtype_name(self, type_: Any) -> str:
        """The type of a scalar of `type_` in generated code: int64 for integers, f64 for
        f16 (a value of the format, see `semantics`), else the type itself."""
        dtype = dtype_of(type_)
        assert dtype is not None
        if narrow_format(type_):
            return "np.float64"
        if dtype.kind == "i":
            return "np.int64"
        return f"np.{dtype.name}"

    def defined(self, name: str) -> str:
        """The generated name of `semantics.scalar(name)` (bound in the namespace and in
        the cached module's header)."""
        ident = "S_" + name.replace(".", "_")
        if ident not in self.namespace:
            self.namespace[ident] = semantics.scalar(name)
            self.defined_ops.append(name)
        return ident

    def site(self, op: Operation) -> int:
        """The fault site of `op` (one per op: both paths of a block report it alike)."""
        site = self.sites.get(op)
        if site is None:
            site = self.sites[op] = self.kernel.site(op)
        return site

    def fault(self, site: int, kind: int = FAULT, details: list[str] | None = None) -> None:
        """Emit: record a fault of this thread at `site`, then stop the kernel."""
        values = [str(kind), str(site), "bix", "biy", "biz", "tix", "tiy", "tiz"]
        values += details or []
        self.emit(f"return record_fault(err, ({', '.join(values)}))")

    def hoist_constants(self, block: Block) -> None:
        for op in block.walk():
            if op.name == "arith.constant":
                type_ = op.results[0].type
                value = constant_value(op)
                name = self.v(op.results[0])
                if is_float(type_):
                    dtype = dtype_of(type_)
                    assert dtype is not None
                    if narrow_format(type_) == "bf16":
                        literal = _float_literal(float(semantics.bf16_value(value)))
                    else:
                        literal = _float_literal(float(dtype.type(value)))
                    self.emit(f"{name} = {self.dtype_name(type_)}({literal})")
                else:
                    self.emit(f"{name} = {value!r}")

    # ------------------------------------------------------------ per-thread code

    def thread_ops(self, ops: list[Operation]) -> None:
        for op in ops:
            self.thread_op(op)

    def thread_op(self, op: Operation) -> None:
        name = op.name
        if name in ("arith.constant", "kernel.return", "kernel.alloc_shared"):
            return
        if name in ("kernel.printf", "kernel.assert"):
            self.device_io(op)
            return
        if name == "memref.atomic_rmw":
            self.atomic_rmw(op)
            return
        if name in ("scf.yield", "scf.condition"):
            raise AssertionError(f"{name} is emitted by its parent")  # pragma: no cover
        emit = {
            "scf.if": self.thread_if,
            "scf.for": self.thread_for,
            "scf.while": self.thread_while,
            "scf.index_switch": self.thread_index_switch,
            "memref.load": self.load,
            "memref.store": self.store,
        }.get(name, self.scalar)
        emit(op)
        for result in op.results:
            spill = self.spilled.get(result)
            if spill is not None:
                self.emit(f"{spill}[lin] = {self.v(result)}")

    # ------------------------------------------------------------ printf and assert

    def device_io(self, op: Operation) -> None:
        """`kernel.printf` / `kernel.assert` call back into Python (`numba.objmode`):
        threads run one after another, so a thread prints all its lines before the next.
        A failing assertion is recorded and its thread stops (the next thread runs); in
        a kernel cut into phases (barriers), or nested in a loop or branch, the launch
        stops at the first failing thread instead. The launch fails after the loops."""
        site = self.kernel.site(op)
        args = [self.v(o) for o in op.operands]
        self.namespace["numba"] = numba
        if isinstance(op, PrintfOp):
            try:
                fmt, conversions = device_io.python_format(op.format.data)
            except ValueError as e:
                raise self.error(op, f"'kernel.printf' format: {e}") from None
            if len(conversions) != len(op.args):
                raise self.error(
                    op,
                    f"'kernel.printf' format has {len(conversions)} conversion(s) for "
                    f"{len(op.args)} argument(s)",
                )
            printer = f"_printf{site}"
            self.namespace[printer] = _printer(fmt, conversions)
            self.emit("with numba.objmode():")
            self.emit(f"    {printer}({', '.join(args)})")
            return
        assert isinstance(op, AssertOp)
        failures = self.namespace.setdefault("_assert_failures", [])
        recorder = f"_assert{site}"
        self.namespace[recorder] = _recorder(failures, op.origin.data, op.message.data)
        self.namespace["_assert_report"] = _reporter(failures, op, self.kernel.name)
        top_level = not self.kernel.per_block and op.parent_op() is self.kernel.func
        self.emit(f"if not {args[0]}:")
        self.depth += 1
        self.emit("with numba.objmode():")
        self.emit(f"    {recorder}(bix, biy, biz, tix, tiy, tiz)")
        if top_level:
            self.emit("continue")
        else:
            self.emit("with numba.objmode():")
            self.emit("    _assert_report()")
            self.emit("return False")
        self.depth -= 1

    def atomic_rmw(self, op: Operation) -> None:
        """`memref.atomic_rmw`: read, combine (through `device_io.atomic_combine`'s rules)
        and swap in with a hardware compare-and-swap (`atomics.atomic_cas`), again until
        no other thread wrote the element in between: blocks running in parallel and
        launches running at once update it atomically."""
        value, mem, *idx = (self.v(o) for o in op.operands)
        if narrow_format(op.operands[0].type):
            raise self.error(
                op, "'memref.atomic_rmw' on f16 or bf16 is not supported by the numba backend"
            )
        self.check_index(op, mem, idx, op.operands[1])
        self.namespace["atomic_cas"] = atomic_cas
        kind = device_io.atomic_kind(op)
        index = ", ".join(idx) if idx else "()"
        old = self.v(op.results[0])
        raw = self.fresh("raw")
        width = int_width(op.results[0].type)
        combined = {
            "addf": f"{old} + {value}",
            "addi": f"{old} + {value}",
            "mulf": f"{old} * {value}",
            "muli": f"{old} * {value}",
            "assign": value,
            "maxs": f"max({old}, {value})",
            "mins": f"min({old}, {value})",
            "ori": f"{old} | {value}",
            "andi": f"{old} & {value}",
            "maxnumf": f"{self.defined('arith.maxnumf')}({old}, {value})",
            "minnumf": f"{self.defined('arith.minnumf')}({old}, {value})",
            "maximumf": f"{self.defined('arith.maximumf')}({old}, {value})",
            "minimumf": f"{self.defined('arith.minimumf')}({old}, {value})",
        }.get(kind)
        if combined is None:
            raise self.error(
                op, f"'memref.atomic_rmw {kind}' is not supported by the numba backend"
            )
        if width is not None and width > 1:
            combined = _wrap(combined, width)
        self.emit("while True:")
        self.depth += 1
        self.emit(f"{raw} = {mem}[{index}]")
        self.emit(f"{old} = np.int64({raw})" if width not in (None, 1) else f"{old} = {raw}")
        at = f"({index}{',' if len(idx) == 1 else ''})"
        self.emit(f"if atomic_cas({mem}, {at}, {raw}, {combined}):")
        self.emit("    break")
        self.depth -= 1

    @property
    def calls_back(self) -> bool:
        """Whether the generated code calls back into Python (`kernel.printf`/`assert`)."""
        return "numba" in self.namespace

    def device_io_epilogue(self) -> None:
        if "_assert_report" in self.namespace:
            self.emit("with numba.objmode():")
            self.emit("    _assert_report()")

    def region_ops(self, block: Block) -> tuple[list[Operation], list[SSAValue]]:
        ops = list(block.ops)
        last = ops[-1] if ops else None
        if last is not None and last.name == "scf.yield":
            return ops[:-1], list(last.operands)
        return ops, []

    def branches(self, op: Operation, cond: str) -> Iterator[Block]:
        """Emit `if cond:` and, for a non-empty else region, `else:`; yields each branch's
        block while the emitted lines are indented into that branch."""
        self.emit(f"if {cond}:")
        for i, region in enumerate(op.regions):
            if i == 1:
                if not region.blocks or not region.block.ops:
                    break
                self.emit("else:")
            self.depth += 1
            self.emit("pass")
            yield region.block
            self.depth -= 1

    def thread_if(self, op: Operation) -> None:
        for result in op.results:
            self.emit(f"{self.v(result)} = {self.zero(result.type)}")
        cond = self.v(op.operands[0])
        if self.fast and op in self.ranges.guards:
            cond = self.ranges.guards[op]  # uniform in this block: one branch for all
        for block in self.branches(op, cond):
            ops, yielded = self.region_ops(block)
            self.thread_ops(ops)
            for result, value in zip(op.results, yielded, strict=True):
                self.emit(f"{self.v(result)} = {self.v(value)}")

    def thread_for(self, op: Operation) -> None:
        lb, ub, step, *inits = (self.v(o) for o in op.operands)
        body = op.regions[0].block
        site = self.site(op)
        self.messages[site] = STEP_MESSAGE
        if not positive_constant(op.operands[2]):
            self.emit(f"if {step} <= 0:")
            self.depth += 1
            self.fault(site)
            self.depth -= 1
        for result, init in zip(op.results, inits, strict=True):
            self.emit(f"{self.v(result)} = {init}")
        iv = self.v(body.args[0])
        self.emit(f"for {iv} in range({lb}, {ub}, {step}):")
        self.depth += 1
        for arg, result in zip(body.args[1:], op.results, strict=True):
            self.emit(f"{self.v(arg)} = {self.v(result)}")
        ops, yielded = self.region_ops(body)
        self.thread_ops(ops)
        for result, value in zip(op.results, yielded, strict=True):
            self.emit(f"{self.v(result)} = {self.v(value)}")
        self.depth -= 1

    def thread_while(self, op: Operation) -> None:
        """`scf.while` as a Python `while True` whose exit is the `scf.condition`: each
        thread loops as often as its own condition says. Before each run of the body, the
        thread reads the watchdog's flag (`watchdog.py`): raised, it stops the kernel at
        the loop."""
        self.namespace["atomic_cas"] = atomic_cas
        site = self.site(op)
        before, after = op.regions[0].block, op.regions[1].block
        for result in op.results:
            self.emit(f"{self.v(result)} = {self.zero(result.type)}")
        for arg, init in zip(before.args, op.operands, strict=True):
            self.emit(f"{self.v(arg)} = {self.v(init)}")
        stopping = self.fresh("stopping")
        self.emit(f"{stopping} = False")
        self.emit("while True:")
        self.depth += 1
        ops = list(before.ops)
        condition = ops.pop()
        assert condition.name == "scf.condition"
        self.thread_ops(ops)
        cond, *forwarded = condition.operands
        for result, value in zip(op.results, forwarded, strict=True):
            self.emit(f"{self.v(result)} = {self.v(value)}")
        self.emit(f"if not {self.v(cond)}:")
        self.emit("    break")
        # Polled when the loop goes round again; the loop stops only if it still goes
        # round once it has seen the flag: it then has seen every write the launch that
        # faulted made before its fault, so whether it leaves (and meets faults of its
        # own) does not depend on how the launches interleave.
        self.emit(f"if not atomic_cas(err, ({STOP_FLAG},), 0, 0):")
        self.depth += 1
        self.emit(f"if {stopping}:")
        self.depth += 1
        self.fault(site, STOPPED)
        self.depth -= 1
        self.emit(f"{stopping} = True")
        self.depth -= 1
        for arg, result in zip(after.args, op.results, strict=True):
            self.emit(f"{self.v(arg)} = {self.v(result)}")
        ops, yielded = self.region_ops(after)
        self.thread_ops(ops)
        temps = [self.fresh("y") for _ in yielded]
        for temp, value in zip(temps, yielded, strict=True):
            self.emit(f"{temp} = {self.v(value)}")
        for arg, temp in zip(before.args, temps, strict=True):
            self.emit(f"{self.v(arg)} = {temp}")
        self.depth -= 1

    def thread_index_switch(self, op: Operation) -> None:
        """`scf.index_switch` as an `if`/`elif` chain over the case values."""
        assert isinstance(op, scf.IndexSwitchOp)
        for result in op.results:
            self.emit(f"{self.v(result)} = {self.zero(result.type)}")
        x = self.v(op.arg)
        cases = [int(c) for c in op.cases.get_values()]
        regions = [*op.case_regions, op.default_region]
        for k, region in enumerate(regions):
            if k == len(cases):
                self.emit("else:" if cases else "if True:")
            else:
                self.emit(f"{'elif' if k else 'if'} {x} == {cases[k]}:")
            self.depth += 1
            self.emit("pass")
            ops, yielded = self.region_ops(region.block)
            self.thread_ops(ops)
            for result, value in zip(op.results, yielded, strict=True):
                self.emit(f"{self.v(result)} = {self.v(value)}")
            self.depth -= 1

    def zero(self, type_: Any) -> str:
        if int_width(type_) == 1:
            return "False"
        return f"{self.dtype_name(type_)}(0)"

    def check_index(self, op: Operation, mem: str, idx: list[str], buffer: SSAValue) -> None:
        site = self.site(op)
        if not idx or self.fast:
            return
        # `|`, not `or`: each `or` is a branch, and Numba's SSA and liveness passes grow
        # with branches times variables (see `v`).
        cond = " | ".join(f"({i} < 0) | ({i} >= {mem}.shape[{d}])" for d, i in enumerate(idx))
        self.emit(f"if {cond}:")
        self.depth += 1
        self.fault(site, OUT_OF_BOUNDS, idx)
        self.depth -= 1

    def index(self, idx: list[str]) -> str:
        """The subscript of an access. On the fast path, where every index is known to be
        in bounds, indices are unsigned: Numba then does not wrap negative indices around,
        and the loop stays simple enough for LLVM to vectorise."""
        if not idx:
            return "()"
        if self.fast:
            return ", ".join(f"np.uint64({i})" for i in idx)
        return ", ".join(idx)

    def load(self, op: Operation) -> None:
        mem, *idx = (self.v(o) for o in op.operands)
        self.check_index(op, mem, idx, op.operands[0])
        index = self.index(idx)
        value = f"{mem}[{index}]"
        if int_width(op.results[0].type) not in (None, 1):
            value = f"np.int64({value})"
        elif narrow_format(op.results[0].type):
            value = f"semantics.{narrow_format(op.results[0].type)}_from_bits({value})"
        self.emit(f"{self.v(op.results[0])} = {value}")

    def store(self, op: Operation) -> None:
        value, mem, *idx = (self.v(o) for o in op.operands)
        self.check_index(op, mem, idx, op.operands[1])
        index = self.index(idx)
        fmt = narrow_format(op.operands[0].type)
        if fmt:
            value = f"semantics.{fmt}_to_bits({value})"
        self.emit(f"{mem}[{index}] = {value}")

    def scalar(self, op: Operation) -> None:
        name = op.name
        short = name.split(".", 1)[1]
        args = [self.v(o) for o in op.operands]
        result = self.v(op.results[0]) if op.results else ""
        rtype = op.results[0].type if op.results else None
        width = int_width(op.operands[0].type) if op.operands else None
        if name in semantics.FLOAT_OPS:
            self.emit(f"{result} = {self.float_op(op, args)}")
            return
        if name in BIT_OPS:
            self.bit_op(op, args)
            return
        if name == "kernel.barrier":
            return  # phases are cut at barriers (per-block kernels only)
        if name.startswith("kernel."):
            axis = "xyz".index(op.dim)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownArgumentType, reportUnknownMemberType]
            which = {"thread_id": "ti", "block_id": "bi", "block_dim": "b", "grid_dim": "g"}[short]
            suffix = "_" if short == "block_dim" else ""
            self.emit(f"{result} = {which}{'xyz'[axis]}{suffix}")
            return
        resolved = self.ranges.resolved.get(op) if self.fast else None
        if resolved is not None:  # a clamp the fast path's ranges prove does not bite
            self.emit(f"{result} = {self.v(resolved)}")
            return
        self.emit(f"{result} = {self.int_or_cast(op, short, args, width or 64, rtype)}")

    def float_op(self, op: Operation, args: list[str]) -> str:
        """A float op: inline when exactly rounded, else a call of `semantics`' compiled
        definition; f16 (held in f64) rounded once to the format."""
        template = _EXACT_FLOAT.get(op.name)
        name = op.name
        if name == "math.fma" and narrow_format(op.results[0].type) == "bf16":
            name = "fma_bf16"  # rounded to odd in f64 first (see semantics)
        if template is not None:
            expr = template.format(*args)
        else:
            expr = f"{self.defined(name)}({', '.join(args)})"
        return self.as_float(expr, op.results[0].type)

    def int_defined(self, name: str) -> str:
        """The generated name of `semantics.int_scalar(name)`."""
        ident = "I_" + name.replace(".", "_")
        if ident not in self.namespace:
            self.namespace[ident] = semantics.int_scalar(name)
            self.int_defined_ops.append(name)
        return ident

    def bit_op(self, op: Operation, args: list[str]) -> None:
        """Bit-level and power ops: the integer ones through `semantics`' definitions."""
        name = op.name
        width = int_width(op.operands[0].type) or 64
        res = [self.v(r) for r in op.results]
        x = args[0]
        y = args[1] if len(args) > 1 else ""
        if name == "arith.bitcast":
            self.emit(f"{res[0]} = {self.bitcast(x, op.operands[0].type, op.results[0].type)}")
        elif name in ("arith.mulsi_extended", "arith.mului_extended"):
            signed = name == "arith.mulsi_extended"
            if width == 1:
                self.emit(f"{res[0]} = {x} and {y}")
                self.emit(f"{res[1]} = False")  # the 2-bit product of i1s fits its low bit
                return
            self.emit(f"{res[0]} = {self.int_defined('arith.muli')}({x}, {y}, {width})")
            high = f"{self.int_defined('mul_high')}({x}, {y}, {width}, {signed})"
            self.emit(f"{res[1]} = {high}")
        elif name == "arith.addui_extended":
            if width == 1:
                self.emit(f"{res[0]} = {x} != {y}")
                self.emit(f"{res[1]} = {x} and {y}")
                return
            self.emit(f"{res[0]} = {self.int_defined('arith.addi')}({x}, {y}, {width})")
            self.emit(f"{res[1]} = {self.int_defined('add_carry')}({x}, {y}, {width}) != 0")
        elif name == "math.fpowi":
            ftype = op.results[0].type
            exponent = self.as_float(y, ftype)
            power = f"{self.defined('math.powf')}({x}, {exponent})"
            self.emit(f"{res[0]} = {self.as_float(power, ftype)}")
        else:
            if name == "math.ipowi":
                if width == 1:  # i1 operands read as signed: true is -1
                    args = [f"(0 - {a})" for a in args]
                    x, y = args
                self.check(op, f"{x} == 0 and {y} < 0", semantics.IPOWI_ZERO_MESSAGE)
            value = f"{self.int_defined(name)}({', '.join(args)}, {width})"
            self.emit(f"{res[0]} = {_wrap(value, 1) if width == 1 else value}")

    def bitcast(self, x: str, src: Any, dst: Any) -> str:
        """`arith.bitcast` of the generated value `x` from type `src` to `dst`."""
        sd, dd = dtype_of(src), dtype_of(dst)
        assert sd is not None
        assert dd is not None
        sf, df = narrow_format(src), narrow_format(dst)
        if sf and df:
            return x if sf == df else f"semantics.{df}_from_bits(semantics.{sf}_to_bits({x}))"
        if sf:
            return _wrap(f"np.int64(semantics.{sf}_to_bits({x}))", 16)
        if df:
            return f"semantics.{df}_from_bits(np.uint16({x} & 0xFFFF))"
        if sd.kind == dd.kind or (sd.kind in "ib" and dd.kind in "ib"):
            return x
        if sd.kind == "f":
            return f"np.int64(semantics.bitcast({x}, np.{dd.name}(0)))"
        return f"semantics.bitcast(np.{sd.name}({x}), np.{dd.name}(0))"

    def as_float(self, expr: str, type_: Any) -> str:
        """`expr` as a value of float type `type_` (rounded once when narrow)."""
        fmt = narrow_format(type_)
        if fmt:
            return f"semantics.round_{fmt}(np.float64({expr}))"
        return f"{self.dtype_name(type_)}({expr})"

    def check(self, op: Operation, condition: str, message: str) -> None:
        """Emit: fault with `message` at `op` when `condition` holds."""
        site = self.kernel.site(op)
        self.messages[site] = message
        self.emit(f"if {condition}:")
        self.depth += 1
        self.fault(site)
        self.depth -= 1

    def int_or_cast(  # noqa: C901
        self, op: Operation, short: str, args: list[str], width: int, rtype: Any
    ) -> str:
        x = args[0]
        y = args[1] if len(args) > 1 else ""
        dst = int_width(rtype) if rtype is not None else None
        if op.name in semantics.INT_BINARY_DEFS:
            return self.integer(op, short, x, y, width)
        match short:
            case "cmpi":
                pred = predicate_of(op, CMPI_PREDICATES)
                if width == 1:
                    pred = I1_SIGNED_PREDICATES.get(pred, pred)
                key = pred if pred in ("eq", "ne") else pred[1:]
                if pred[0] == "u":
                    x, y = _unsigned(x, width), _unsigned(y, width)
                return f"({x} {_CMPI[key]} {y})"
            case "cmpf":
                return "(" + _CMPF[predicate_of(op, CMPF_PREDICATES)].format(x, y) + ")"
            case "select":
                return f"({y} if {x} else {args[2]})"
            case "absi":
                return _wrap(f"abs({x})", width)
            case "index_cast" | "extsi" | "trunci":
                if width == 1:
                    return f"(-1 if {x} else 0)"
                return _wrap(x, dst or 64)
            case "extui" | "index_castui":
                if width == 1:
                    return f"(1 if {x} else 0)" if dst != 1 else x
                value = f"{x} & {(1 << width) - 1}" if width < 64 else x
                return _wrap(value, dst or 64)
            case "sitofp" | "uitofp":
                if width == 1:
                    value = f"(1 if {x} else 0)" if short == "uitofp" else f"(-1 if {x} else 0)"
                elif short == "uitofp" and width < 64:
                    value = f"({x} & {(1 << width) - 1})"
                elif short == "uitofp":
                    value = f"np.uint64({x})"
                else:
                    value = x
                if (
                    rtype is not None and narrow_format(rtype) == "bf16"
                ):  # an f64 first would round twice
                    unsigned = short == "uitofp" and width == 64
                    return f"semantics.int_round(np.int64({value}), 8, {unsigned})"
                return self.as_float(value, rtype)
            case "fptosi" | "fptoui":
                assert dst is not None
                unsigned = short == "fptoui"
                lo, hi = (0.0, 2.0**dst) if unsigned else (-(2.0 ** (dst - 1)), 2.0 ** (dst - 1))
                t = self.fresh("tr")
                self.emit(f"{t} = np.trunc(np.float64({x}))")
                self.check(op, f"not ({t} >= {lo!r} and {t} < {hi!r})", fptoi_message(short, dst))
                if dst == 1:
                    return f"({t} != 0)"
                if unsigned and dst == 64:
                    return f"np.int64(np.uint64({t}))"
                return _wrap(f"np.int64({t})", dst) if unsigned else f"np.int64({t})"
            case "extf" | "truncf":
                return self.as_float(x, rtype)
            case "dim" if constant_dim(op) is not None:
                return f"{x}.shape[{constant_dim(op)}]"
            case "dim":
                site = self.site(op)
                self.emit(f"if {y} < 0 or {y} >= {x}.ndim:")
                self.depth += 1
                self.fault(site, FAULT, [y, f"{x}.ndim"])
                self.depth -= 1
                return f"{x}.shape[{y}]"
            case _:  # pragma: no cover - Kernel rejects unsupported ops first
                raise self.error(op, f"'{op.name}' is not supported")

    def integer(self, op: Operation, short: str, x: str, y: str, width: int) -> str:
        """A binary integer op: `semantics`' definition, after its `int_fault` check when
        the op has undefined behaviour (each fault kind the op can have is one site)."""
        if width == 1:  # i1 in signed form: true is -1
            x, y = f"(-np.int64({x}))", f"(-np.int64({y}))"
        flags = semantics.flag_bits(semantics.overflow_flags(op))
        if short in semantics.FAULTING_OPS and not (
            (not flags and short in ("addi", "subi", "muli")) or divides_safely(op)
        ):
            kind = self.fresh("ub")
            code = semantics.fault_code(short)
            fault = self.int_defined("int_fault")
            self.emit(f"{kind} = {fault}({code}, {flags}, {x}, {y}, {width})")
            self.emit(f"if {kind} != 0:")
            self.depth += 1
            for k in _FAULT_KINDS[short]:
                if k in (semantics.NSW_OVERFLOW, semantics.NUW_OVERFLOW) and not flags:
                    continue
                self.check(op, f"{kind} == {k}", semantics.fault_message(k, short, width))
            self.depth -= 1
        value = f"{self.int_defined(op.name)}({x}, {y}, {width})"
        return f"({value} != 0)" if width == 1 else value


_FAULT_KINDS: dict[str, tuple[int, ...]] = {
    **{op: (semantics.DIVIDES_BY_ZERO, semantics.QUOTIENT_OVERFLOWS) for op in semantics.DIVISIONS},
    **{op: (semantics.SHIFT_TOO_WIDE,) for op in semantics.SHIFTS},
}
"""The kinds of undefined behaviour `semantics.int_fault` finds per op (and, with flags,
the overflows)."""
for _op in ("addi", "subi", "muli", "shli"):
    _FAULT_KINDS[_op] = (*_FAULT_KINDS.get(_op, ()), semantics.NSW_OVERFLOW, semantics.NUW_OVERFLOW)


def _float_literal(value: float) -> str:
    """A float as Python source Numba compiles (NaN and infinities have no literal)."""
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(value)


@numba_cache.njit(by_type=True, nogil=True)
def record_fault(err: Any, values: Any) -> bool:
    """Write a fault's `values` (kind, site, block, thread, details) into the error vector
    `err`; True, which the faulting thread returns. One call a fault site, compiled once
    per number of values: storing them one by one at every site made a kernel of many
    checks seconds slower to compile."""
    for i in range(len(values)):
        err[i] = values[i]
    return True


HELPERS: tuple[str, ...] = ()
"""Functions of this module generated kernels call (the integer ops are `semantics`')."""


def _printer(fmt: str, conversions: list[str]) -> Callable[..., None]:
    def print_(*values: Any) -> None:
        device_io.print_one(fmt, conversions, values)

    return print_


def _recorder(failures: list[str], origin: str, message: str) -> Callable[..., None]:
    def record(bx: int, by: int, bz: int, tx: int, ty: int, tz: int) -> None:
        failures.append(device_io.assertion_line(origin, message, (bx, by, bz), (tx, ty, tz)))

    return record


def _reporter(failures: list[str], op: Operation, kernel: str) -> Callable[[], None]:
    def report() -> None:
        if failures:
            lines = list(failures)
            failures.clear()
            raise device_io.assertion_error(op, kernel, lines)

    return report
