"""The Numba kernel backend: explicit loops over blocks and threads, compiled by `numba.njit`.

The kernel is translated once into Python source over scalars: a function `blocks(first,
last, ...)` that runs the blocks numbered `first` to `last - 1` (linear in z, y, x order)
and returns True at the first fault, and `run_par`, which runs chunks of consecutive blocks
in parallel with `prange`. Both are compiled with `numba.njit` at the first launch for the
argument types, and cached on disk (`kernel_cache.py`). Each block runs one of two paths:

* the **fast path**, without bounds checks and with unsigned indices so that LLVM
  vectorises the thread loop, when the block's value ranges prove every access in bounds
  and every guard uniform (`ranges.py` writes that test, evaluated once for a run of up
  to `RUN_BLOCKS` consecutive blocks along x, and per block when the run fails);
* the **checked path** otherwise: every access checked, faults reported exactly as the
  NumPy backend reports them. Faults other than bounds (division by zero, ...) are checked
  on both paths, so either path meets the same first fault.

Within a block, the shape of the code depends on the kernel:

* **No barrier, no shared memory**: three nested loops (block z, y, x) around the body —
  every thread runs to completion in turn.
* **Barriers or shared memory**: the body is cut at every
  barrier into *phases*, each a loop over the block's threads. An `scf.for`/`scf.if`
  holding a barrier becomes a block-level loop/branch around its own phases; its bounds
  or condition must be the same in every thread of the block (else the barrier is in
  divergent control flow: an error, as in the NumPy backend). A value used in a phase
  other than the one defining it lives in a per-thread array between phases, unless it is
  an index value of pure integer ops over ids, dims and constants: each phase computes
  that again, so that accesses stay affine in the thread x index. On the fast path, a
  thread-level `scf.for` that is a whole phase (after index values only), writes no
  memory and cannot fault runs *interchanged*, with the thread x loop inside it
  (`find_interchanges`): its body is then vectorised across a strip of a row of threads,
  each thread computing what it did before (ops the same in every thread, such as loads
  at block-uniform indices, run once per iteration, before the strip).

Large launches (`PARALLEL_THREADS`) of kernels whose blocks write disjoint elements
(`ranges.separating_axes`, and no written array overlapping another argument) run their
blocks in parallel, in chunks of consecutive blocks handed to whichever thread is free
(a thread the machine's other work delays does not hold the others back): each chunk of
blocks stops at its first fault, and the first faulting chunk's fault is the one a run
in order meets. After a fault, blocks that a run in order
would not have reached may have run: what a faulting launch leaves in its buffers is
unspecified.

New ops get a case in `NumbaSource.thread_op`/`scalar` (and, when their result is an
integer function of thread ids that bounds accesses, in `BlockRanges.interval`).

Integers are int64 in the generated code, wrapped to their width after every operation
(so `i32` wraps at 32 bits); the binary integer ops call `semantics`' compiled definitions
(`I_arith_addi(x, y, width)`, ...), which LLVM inlines. A fault (out-of-bounds access,
division by zero, ...) writes its site, the block and thread, and the index into an error
vector and returns; the launcher turns that into the same `KernelError` the NumPy backend
raises.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import numba  # pyright: ignore[reportMissingTypeStubs]
import numpy as np
from numba.core.errors import NumbaError  # pyright: ignore[reportMissingTypeStubs]
from xdsl.dialects import scf
from xdsl.dialects.builtin import Float16Type, MemRefType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from ...diagnostics import diagnostic_at
from ...dialects.kernel import AssertOp, PrintfOp
from .. import semantics
from . import device_io, kernel_cache, watchdog
from .atomics import atomic_cas
from .common import (
    BARRIER_MESSAGE,
    BIT_OPS,
    CMPF_PREDICATES,
    CMPI_PREDICATES,
    FLOAT_ARITH_OPS,
    I1_SIGNED_PREDICATES,
    STEP_MESSAGE,
    Kernel,
    KernelError,
    SourceWriter,
    constant_value,
    contains_barrier,
    dim_message,
    dtype_of,
    fptoi_message,
    int_width,
    is_float,
    narrow_format,
    predicate_of,
)
from .ranges import DIVISIONS, BlockRanges, constant_dim, separating_axes, stored_params

_njit: Callable[..., Any] = numba.njit  # pyright: ignore[reportUnknownMemberType]
_set_chunksize: Callable[[int], int] = numba.set_parallel_chunksize  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
_BACKEND_VERSION = hashlib.sha256(
    b"".join(p.read_bytes() for p in sorted(Path(__file__).parent.glob("*.py")))
    + Path(__file__).parent.with_name("semantics.py").read_bytes()
).hexdigest()[:16]
"""Changes with the source of the kernel backends and of `semantics`: part of the key of
cached kernels (which is the kernel's IR, not the code generated from it)."""

_JIT = "@njit(cache=CACHE, error_model='numpy', nogil=True)"
# Every function of a kernel is compiled with IEEE float division (inf, nan); integer
# division by zero is checked explicitly. Without the GIL, launches the scheduler runs at
# once really run at once, and the watchdog's timer thread runs while a kernel loops.

_FAULT, _OOB, _STOP = 1, 2, 3
_ERR_SIZE = 17  # kind, site, block xyz, thread xyz, up to 8 index/detail values, stop flag
_STOP_FLAG = 16
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


class NumbaSource(SourceWriter):
    """Generates the loop-nest Python source of one kernel."""

    def __init__(self, kernel: Kernel) -> None:
        namespace: dict[str, Any] = {"np": np, "semantics": semantics}
        namespace.update({name: globals()[name] for name in HELPERS})
        super().__init__(kernel, namespace)
        self.messages: dict[int, str] = {}
        """Fixed fault messages by site (sites whose message needs run-time values are absent)."""
        self.spilled: dict[SSAValue, str] = {}
        """Per-thread arrays holding values that cross phases (per-block kernels)."""
        self.phase_of: dict[Operation, int] = {}
        self.array_rows: dict[str, int] = {}
        self.sites: dict[Operation, int] = {}
        self.ranges = BlockRanges(kernel)
        self.fast = False
        """Whether the code being emitted is the fast path (no bounds checks)."""
        self.loop_tag = ""
        """The tag of index values computed in the current thread loop (`thread_loop`)."""
        self.pure: dict[SSAValue, bool] = {}
        """Memo of `recomputable`."""
        self.interchanged: set[Operation] = set()
        """Thread-level `scf.for`s that the fast path runs with the thread loop inside
        (see `find_interchanges`)."""
        self.defined_ops: list[str] = []
        """Ops whose `semantics` definition the kernel calls."""
        self.int_defined_ops: list[str] = []
        """Integer definitions of `semantics` the kernel calls."""

    # ------------------------------------------------------------ helpers

    def v(self, value: SSAValue) -> str:
        """The name of `value`; on the fast path, values the block's work defines get
        names of their own (`f` before the checked path's). A name assigned on both
        paths is one variable assigned twice, which Numba's SSA pass rewrites in every
        branch of the function: its compile time then grows with variables times
        branches (minutes for a kernel of a few hundred ops)."""
        name = super().v(value)
        if self.shared_by_paths(value):
            return name
        if self.loop_tag and self.recomputable(value):
            name += self.loop_tag
        return "f" + name if self.fast else name

    def thread_loop(self) -> None:
        """Start the body of a loop over the threads of a block (of a per-block kernel):
        `lin`, and a tag that the index values it computes again (`bring_in`) are named
        with, so that each is assigned once (see `v`)."""
        self.emit("lin = (tiz * by_ + tiy) * bx_ + tix")
        self.new_loop_tag()

    def new_loop_tag(self) -> None:
        self.loop_tag = self.fresh("_")

    def shared_by_paths(self, value: SSAValue) -> bool:
        """Whether `value` is defined before the paths part: a parameter, a constant
        (hoisted) or shared memory."""
        if isinstance(value, BlockArgument):
            return value.owner is self.kernel.func.body.block
        return value.owner.name in ("arith.constant", "kernel.alloc_shared")  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]

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

    def fault(self, site: int, kind: int = _FAULT, details: list[str] | None = None) -> None:
        """Emit: record a fault of this thread at `site`, then stop the kernel."""
        values = [str(kind), str(site), "bix", "biy", "biz", "tix", "tiy", "tiz"]
        values += details or []
        self.emit("(" + ", ".join(f"err[{i}]" for i in range(len(values))) + ") = (")
        self.emit("    " + ", ".join(values) + ",)")
        self.emit("return True")

    # ------------------------------------------------------------ structure

    def generate(self) -> str:
        """The source of `blocks(first, last, ...)`, which runs the blocks numbered `first`
        to `last - 1` in order (each on its fast path when the block's ranges allow it,
        else on its checked path) and returns True at the first fault, and of `run_par`,
        which runs chunks of consecutive blocks in parallel, one error vector a chunk."""
        kernel = self.kernel
        body = kernel.func.body.block
        if kernel.per_block:
            self.assign_phases(list(body.ops), [0])
            self.find_interchanges()
            self.find_spills(body)
        params = "".join(self.v(p) + ", " for p in kernel.params)
        dims = "gx, gy, gz, bx_, by_, bz_"
        self.lines.append(_JIT)
        self.lines.append(f"def blocks(first, last, {dims}, err, {params}):")
        self.emit("nthr = bx_ * by_ * bz_")
        for dt, count in self.array_rows.items():
            self.emit(f"t_{dt.removeprefix('np.')} = np.empty(({count}, nthr), {dt})")
        carried: Counter[str] = Counter()  # rows of c_<dtype>: the most any loop carries
        for loop in self.interchanged:
            carried |= Counter(self.dtype_name(r.type) for r in loop.results)
        for dt, count in carried.items():
            self.emit(f"c_{dt.removeprefix('np.')} = np.empty(({count}, {STRIP}), {dt})")
        self.shared_memory()
        self.hoist_constants(body)
        self.ranges.analyse()
        for op_name, ident in DIVISIONS.items():
            if any(ident in line for line in self.ranges.lines):
                self.int_defined(op_name)
        if self.ranges.possible:
            self.runs_of_blocks()
        else:
            self.emit("for b in range(first, last):")
            self.depth += 1
            self.block_ids()
            self.block_body()
            self.depth -= 1
        self.device_io_epilogue()
        self.emit("return False")
        self.lines += [
            "",
            "# Compiled with parallel=True at the first parallel launch (`compile_numba`).",
            f"def run_par({dims}, errs, {params}):",
            "    nblocks = gx * gy * gz",
            "    nchunks = errs.shape[0]",
            "    for chunk in prange(nchunks):",
            "        first = chunk * nblocks // nchunks",
            "        last = (chunk + 1) * nblocks // nchunks",
            f"        blocks(first, last, {dims}, errs[chunk], {params})",
        ]
        return "\n".join(self.lines) + "\n"

    def block_ids(self) -> None:
        """Emit the ids of block `b` (and zero its shared memory)."""
        self.emit("bix = b % gx")
        self.emit("biy = (b // gx) % gy")
        self.emit("biz = b // (gx * gy)")
        self.zero_shared_memory()

    def zero_shared_memory(self) -> None:
        for alloc in self.kernel.shared:
            self.emit(f"{self.v(alloc.result)}.fill(0)")

    def runs_of_blocks(self) -> None:
        """Emit the loop over blocks of a kernel with a fast path. The ranges are first
        evaluated over a *run* of up to `RUN_BLOCKS` consecutive blocks of one grid row
        (block x ids `bix_lo` to `bix_hi`): when the whole run is fast, its blocks run the
        fast path with one test for all. Else each block of the run is tested alone and
        runs the fast or the checked path. Blocks run in order either way."""
        self.emit("b = first")
        self.emit("alone = first  # blocks below `alone` are tested one by one")
        self.emit("while b < last:")
        self.depth += 1
        self.emit("bix = b % gx")
        self.emit("biy = (b // gx) % gy")
        self.emit("biz = b // (gx * gy)")
        self.emit(f"run = 1 if b < alone else min(gx - bix, last - b, {RUN_BLOCKS})")
        self.emit("bix_lo = bix")
        self.emit("bix_hi = bix + run - 1")
        for line in self.ranges.lines:
            self.emit(line)
        self.emit("if fast:")
        self.depth += 1
        self.emit("for bix in range(bix_lo, bix_hi + 1):")
        self.depth += 1
        self.zero_shared_memory()
        self.fast = True
        self.block_body()
        self.fast = False
        self.depth -= 1
        self.emit("b += run")
        self.emit("continue")
        self.depth -= 1
        self.emit("if run > 1:")
        self.emit("    alone = b + run")
        self.emit("    continue")
        self.zero_shared_memory()
        self.block_body()
        self.emit("b += 1")
        self.depth -= 1

    def shared_memory(self) -> None:
        """Emit the allocation of the kernel's shared memory (zeroed again per block)."""
        for alloc in self.kernel.shared:
            type_ = alloc.result.type
            assert isinstance(type_, MemRefType)
            shape = tuple(type_.get_shape())
            dt = self.dtype_name(type_.element_type)  # pyright: ignore[reportUnknownMemberType]
            if narrow_format(type_):
                dt = "np.uint16"  # f16 and bf16 memory holds bit patterns (see `load`)
            elif dt == "np.int64":
                dtype = dtype_of(type_.element_type)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
                assert dtype is not None
                dt = f"np.{dtype.name}"
            self.emit(f"{self.v(alloc.result)} = np.zeros({shape}, {dt})")

    def block_body(self) -> None:
        """Emit the work of one block (the fast or the checked path, after `self.fast`)."""
        kernel = self.kernel
        body = kernel.func.body.block
        if kernel.per_block:
            self.per_block_body()
            return
        for loop in ("tiz in range(bz_)", "tiy in range(by_)", "tix in range(bx_)"):
            self.emit(f"for {loop}:")
            self.depth += 1
        self.thread_ops(list(body.ops))
        self.emit("pass")  # a kernel whose body is only kernel.return
        self.depth -= 3

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
        if not _positive_constant(op.operands[2]):
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
        self.emit(f"if not atomic_cas(err, ({_STOP_FLAG},), 0, 0):")
        self.depth += 1
        self.emit(f"if {stopping}:")
        self.depth += 1
        self.fault(site, _STOP)
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
        self.fault(site, _OOB, idx)
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
                self.fault(site, _FAULT, [y, f"{x}.ndim"])
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
            (not flags and short in ("addi", "subi", "muli")) or _divides_safely(op)
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

    # ------------------------------------------------------------ per-block kernels

    def per_block_body(self) -> None:
        self.block_level(list(self.kernel.func.body.block.ops), [])

    def assign_phases(self, ops: list[Operation], counter: list[int]) -> None:
        """Number the phases: thread-level ops between two barriers share one."""
        for op in ops:
            if op.name == "kernel.barrier":
                counter[0] += 1
            elif contains_barrier(op):
                counter[0] += 1
                for region in op.regions:
                    for block in region.blocks:
                        self.assign_phases(list(block.ops), counter)
                        counter[0] += 1
            else:
                self.phase_of[op] = counter[0]

    def find_interchanges(self) -> None:
        """The thread-level `scf.for`s the fast path interchanges with the thread x loop
        (`for iv: for tix:` instead of `for tix: for iv:`), so that LLVM vectorises the
        loop body across the threads of a block row. Each is the whole work of its phase
        (an `scf.yield` of the enclosing region may follow), has a constant positive step
        and bounds that are the same in every thread, and a body that neither writes
        memory nor can fault on the fast path (`_LOOP_BODY_OPS`, no nested regions).
        With no store in the phase, every thread reads the same memory in either order
        and computes the same values in the same order: results are bitwise those of the
        thread-by-thread loop, and no fault can move. Index values computed before the
        loop in its phase (`leading_index_ops`) do not count: they neither touch memory
        nor fault, so they run in a thread loop of their own before the interchanged
        loop, as in a kernel that computes a thread's rows and column before its loop
        over k and stores after a barrier."""
        phases: dict[int, list[Operation]] = {}
        for op, number in self.phase_of.items():
            if op.name not in ("arith.constant", "kernel.return", "kernel.alloc_shared"):
                phases.setdefault(number, []).append(op)
        for work in phases.values():
            rest = work[len(self.leading_index_ops(work)) :]
            if not rest:
                continue
            loop = rest[0]
            if loop.name != "scf.for" or any(op.name != "scf.yield" for op in rest[1:]):
                continue
            lb, ub, step = loop.operands[:3]
            if not _positive_constant(step):
                continue
            if not all(self.block_uniform(bound) for bound in (lb, ub)):
                continue
            body = [op for op in loop.walk() if op is not loop]
            if all(_cannot_fault_on_the_fast_path(op) for op in body):
                self.interchanged.add(loop)

    def leading_index_ops(self, work: list[Operation]) -> list[Operation]:
        """The ops at the start of a phase's `work` that only compute index values
        (`recomputable`: pure, no memory, no fault)."""
        count = 0
        for op in work:
            if not op.results or not all(self.recomputable(r) for r in op.results):
                break
            count += 1
        return work[:count]

    def block_uniform(self, value: SSAValue) -> bool:
        """Whether `value` is the same in every thread of a block by construction."""
        seen = {value}
        stack = [value]  # a stack of its own: chains of ops can be thousands long
        while stack:
            current = stack.pop()
            if self.block_invariant(current):
                continue
            owner = current.owner
            if not isinstance(owner, Operation) or owner.name == "kernel.thread_id":
                return False
            if not self.recomputable(current):
                return False
            for operand in owner.operands:
                if operand not in seen:
                    seen.add(operand)
                    stack.append(operand)
        return True

    def interchange(self, loop: Operation) -> None:
        """Emit an interchanged loop (see `find_interchanges`): per strip of at most
        `STRIP` threads of a block row, the loop over `iv` outside the loop over the
        strip's threads. Loop-carried values live in `c_<dtype>` rows of `STRIP` columns,
        whose constant stride lets LLVM vectorise without comparing each row's address
        with each other's; the ops of the body that are the same in every thread (loads
        at block-uniform indices and arithmetic on them) run once per `iv`, before the
        thread loop. The results go to the loop's per-thread arrays."""
        lb, ub, step, *inits = loop.operands
        body = loop.regions[0].block
        ops, yielded = self.region_ops(body)
        carried = [self.carried_row(r) for r in loop.results]
        hoisted = self.uniform_ops(body, ops)
        per_thread = [op for op in ops if op not in hoisted]
        bounds: set[SSAValue] = set()
        self.new_loop_tag()  # the bounds computed again here are named for this loop
        for bound in (lb, ub):
            if bound not in bounds and self.recomputable(bound):
                self.recompute(bound, bounds)
        bounds_text = ", ".join(self.v(o) for o in (lb, ub, step))  # before a new tag
        for axis in ("tiz in range(bz_)", "tiy in range(by_)", f"tx0 in range(0, bx_, {STRIP})"):
            self.emit(f"for {axis}:")
            self.depth += 1

        def strip() -> None:
            self.emit(f"for j in range(min({STRIP}, bx_ - tx0)):")
            self.depth += 1
            self.emit("tix = tx0 + j")
            self.thread_loop()

        strip()
        self.bring_in_values(list(inits))
        for row, init in zip(carried, inits, strict=True):
            self.emit(f"{row} = {self.v(init)}")
        self.depth -= 1
        self.emit(f"for {self.v(body.args[0])} in range({bounds_text}):")
        self.depth += 1
        self.new_loop_tag()
        self.bring_in(hoisted)
        self.thread_ops(hoisted)
        strip()
        # The yield too: it may pass on a value of a hoisted op (named in the strip's
        # loop, see `v`) or one another phase keeps per thread.
        self.bring_in([*per_thread, *(op for op in body.ops if op.name == "scf.yield")])
        for arg, row in zip(body.args[1:], carried, strict=True):
            self.emit(f"{self.v(arg)} = {row}")
        self.thread_ops(per_thread)
        for row, value in zip(carried, yielded, strict=True):
            self.emit(f"{row} = {self.v(value)}")
        self.depth -= 2
        strip()
        for result, row in zip(loop.results, carried, strict=True):
            self.emit(f"{self.spilled[result]}[lin] = {row}")
        self.depth -= 4

    def carried_row(self, result: SSAValue) -> str:
        """The element of `c_<dtype>` an interchanged loop carries `result` in for thread
        `j` of a strip (rows are numbered per loop: loops never run at once)."""
        dt = self.dtype_name(result.type)
        loop = result.owner
        assert isinstance(loop, Operation)
        same: list[SSAValue] = [r for r in loop.results if self.dtype_name(r.type) == dt]
        row = same.index(result)
        return f"c_{dt.removeprefix('np.')}[{row}, j]"

    def uniform_ops(self, body: Block, ops: list[Operation]) -> list[Operation]:
        """The ops of an interchanged loop's body whose results are the same in every
        thread: their operands are the induction variable, block-uniform values from
        outside the loop, or results of such ops (loop-carried values never are)."""
        uniform: set[SSAValue] = {body.args[0]}
        found: list[Operation] = []
        for op in ops:
            if op.name == "kernel.thread_id" or not op.results:
                continue
            if all(o in uniform or self.outside_uniform(o, body) for o in op.operands):
                uniform.update(op.results)
                found.append(op)
        return found

    def outside_uniform(self, value: SSAValue, body: Block) -> bool:
        """Whether `value`, used in the loop `body`, is defined outside it and the same in
        every thread of the block."""
        if isinstance(value, BlockArgument) and value.block is body:
            return False
        owner = value.owner
        if isinstance(owner, Operation) and owner.parent_block() is body:
            return False
        return self.block_uniform(value)

    def phase_of_use(self, user: Operation) -> int:
        """The phase of the thread-level op containing `user`, -1 for block-level uses."""
        current: Operation | None = user
        while current is not None:
            if current in self.phase_of:
                return self.phase_of[current]
            current = current.parent_op()
        return -1

    def find_spills(self, body: Block) -> None:
        for op in body.walk():
            if op.name in ("arith.constant", "kernel.alloc_shared"):
                continue  # hoisted or allocated per block: visible to every phase
            top = op
            while top not in self.phase_of and top.parent_op() is not None:
                parent = top.parent_op()
                assert parent is not None
                if parent is self.kernel.func:
                    break
                top = parent
            block_level = op not in self.phase_of and contains_barrier(op)
            for result in op.results:
                uses = {self.phase_of_use(u.operation) for u in result.uses}
                here = -1 if block_level else self.phase_of.get(top, -1)
                crossing = uses - {here}
                if self.recomputable(result):
                    crossing &= {-1}  # other phases compute it again (see `bring_in`)
                if block_level or crossing or op in self.interchanged:
                    self.spill(result)
            if block_level:
                for region in op.regions:
                    for block in region.blocks:
                        for arg in block.args[1 if op.name == "scf.for" else 0 :]:
                            self.spill(arg)

    def spill(self, value: SSAValue) -> None:
        if value not in self.spilled:
            dt = self.dtype_name(value.type)
            row = self.array_rows.get(dt, 0)
            self.array_rows[dt] = row + 1
            self.spilled[value] = f"t_{dt.removeprefix('np.')}[{row}]"

    def block_level(self, ops: list[Operation], yield_to: list[str]) -> None:
        """Emit ops of a block-level region: phases cut at barriers, barrier-holding
        scf ops as block-level control flow; `yield_to` receives scf.yield operands."""
        phase: list[Operation] = []
        for op in ops:
            if op.name == "scf.yield":
                phase.append(op)
            elif op.name == "kernel.barrier" or contains_barrier(op):
                self.phase(phase, yield_to)
                phase = []
                if op.name == "scf.for":
                    self.block_for(op)
                elif op.name == "scf.if":
                    self.block_if(op)
            else:
                phase.append(op)
        self.phase(phase, yield_to)

    def phase(self, ops: list[Operation], yield_to: list[str]) -> None:
        work = [op for op in ops if op.name not in ("arith.constant", "kernel.return")]
        if not work or all(op.name == "kernel.alloc_shared" for op in work):
            return
        lead = self.leading_index_ops(work)
        rest = work[len(lead) :]
        if self.fast and rest and rest[0] in self.interchanged:
            if lead:  # their values, where another phase keeps them (else dead code)
                self.phase(lead, yield_to)
            self.interchange(rest[0])
            if rest[1:]:  # the region's scf.yield, reading the loop's results from their arrays
                self.phase(rest[1:], yield_to)
            return
        # Nested loops (not one over `lin` with divisions): the thread x loop is innermost.
        for loop in ("tiz in range(bz_)", "tiy in range(by_)", "tix in range(bx_)"):
            self.emit(f"for {loop}:")
            self.depth += 1
        self.thread_loop()
        self.bring_in(work)
        for op in work:
            if op.name == "scf.yield":
                temps = [self.fresh("y") for _ in op.operands]
                for temp, value in zip(temps, op.operands, strict=True):
                    self.emit(f"{temp} = {self.v(value)}")
                for target, temp in zip(yield_to, temps, strict=True):
                    self.emit(f"{target}[lin] = {temp}")
            else:
                self.thread_op(op)
        self.depth -= 3

    def bring_in(self, work: list[Operation]) -> None:
        """Emit, at the top of a thread loop running `work`, the values `work` uses from
        other phases (see `bring_in_values`)."""
        defined = {r for op in work for inner in op.walk() for r in inner.results}
        defined |= {
            a for op in work for inner in op.walk() for r in inner.regions for b in r.blocks
            for a in b.args
        }  # fmt: skip
        used = [o for op in work for inner in op.walk() for o in inner.operands]
        self.bring_in_values([o for o in used if o not in defined])

    def bring_in_values(self, values: list[SSAValue]) -> None:
        """Emit, in a thread loop, the `values` defined in other phases: index values
        computed again from thread and block ids (so that accesses stay affine in `tix`
        and loops vectorise), the others read from their per-thread arrays."""
        done: set[SSAValue] = set()
        for value in values:
            if value in done:
                continue
            if self.recomputable(value):
                self.recompute(value, done)
            elif value in self.spilled:
                self.emit(f"{self.v(value)} = {self.spilled[value]}[lin]")
                done.add(value)

    def recomputable(self, value: SSAValue) -> bool:
        """Whether `value` is an index value of pure ops (no fault, no memory) over thread
        and block ids, dims, constants, scalar parameters and block-level loop counters:
        any phase can compute it again instead of keeping it per thread."""
        # Operands before their users, with a stack of its own: chains of ops can be
        # thousands long.
        stack = [(value, False)]
        while stack:
            current, operands_done = stack.pop()
            if current in self.pure:
                continue
            owner = current.owner
            if not (
                isinstance(owner, Operation)
                and (owner.name in _RECOMPUTABLE or _divides_safely(owner))
                and not semantics.overflow_flags(owner)
                and (owner.name != "memref.dim" or constant_dim(owner) is not None)
            ):
                self.pure[current] = False
            elif not operands_done:
                stack.append((current, True))
                stack.extend((o, False) for o in owner.operands if o not in self.pure)
            else:
                self.pure[current] = all(
                    self.pure[o] or self.block_invariant(o) for o in owner.operands
                )
        return self.pure[value]

    def block_invariant(self, value: SSAValue) -> bool:
        """Constants, parameters and counters of block-level loops: the same name holds
        them in every phase."""
        owner = value.owner
        if isinstance(owner, Operation):
            return owner.name in ("arith.constant", "kernel.alloc_shared")
        if value in self.kernel.params:
            return True
        parent = owner.parent_op()
        return (
            parent is not None
            and parent.name == "scf.for"
            and isinstance(value, BlockArgument)
            and value.index == 0
            and contains_barrier(parent)
        )

    def recompute(self, value: SSAValue, done: set[SSAValue]) -> None:
        # Operands first, in order, with a stack of its own (chains can be thousands long).
        stack = [(value, False)]
        while stack:
            current, operands_done = stack.pop()
            if current in done:
                continue
            owner = current.owner
            assert isinstance(owner, Operation)
            if operands_done:
                self.scalar(owner)
                done.add(current)
                continue
            stack.append((current, True))
            stack.extend(
                (o, False)
                for o in reversed(owner.operands)
                if o not in done and self.recomputable(o)
            )

    def uniform(self, value: SSAValue, op: Operation) -> str:
        """A block-uniform read of `value` for block-level control flow; a value that
        differs between the threads of the block is the divergent-barrier fault."""
        spill = self.spilled.get(value)
        if spill is None:
            return self.v(value)
        name = self.fresh("u")
        self.emit(f"{name} = {spill}[0]")
        barrier = next(inner for inner in op.walk() if inner.name == "kernel.barrier")
        site = self.site(barrier)
        self.messages[site] = BARRIER_MESSAGE
        self.emit("for lin in range(nthr):")
        self.depth += 1
        self.emit(f"if {spill}[lin] != {name}:")
        self.depth += 1
        self.emit("tix = lin % bx_")
        self.emit("tiy = (lin // bx_) % by_")
        self.emit("tiz = lin // (bx_ * by_)")
        self.fault(site)
        self.depth -= 2
        return name

    def block_for(self, op: Operation) -> None:
        lb, ub, step = (self.uniform(o, op) for o in op.operands[:3])
        body = op.regions[0].block
        site = self.site(op)
        self.messages[site] = STEP_MESSAGE
        if not _positive_constant(op.operands[2]):
            self.emit(f"if {step} <= 0:")
            self.depth += 1
            self.emit("tix = tiy = tiz = 0")
            self.fault(site)
            self.depth -= 1
        carried = [self.spilled[a] for a in body.args[1:]]
        for array, init in zip(carried, op.operands[3:], strict=True):
            source = self.spilled.get(init)
            self.emit(f"{array}[:] = {source if source is not None else self.v(init)}")
        self.emit(f"for {self.v(body.args[0])} in range({lb}, {ub}, {step}):")
        self.depth += 1
        self.emit("pass")
        self.block_level(list(body.ops), carried)
        self.depth -= 1
        for result, array in zip(op.results, carried, strict=True):
            self.copy_out(result, array)

    def copy_out(self, result: SSAValue, array: str) -> None:
        target = self.spilled.get(result)
        if target is not None and target != array:
            self.emit(f"{target}[:] = {array}")

    def block_if(self, op: Operation) -> None:
        # The branch taken must be the same in every thread: check it against thread 0.
        cond = self.uniform(op.operands[0], op)
        targets = [self.spilled[r] for r in op.results]
        for block in self.branches(op, cond):
            self.block_level(list(block.ops), targets)


_FAULT_KINDS: dict[str, tuple[int, ...]] = {
    **{op: (semantics.DIVIDES_BY_ZERO, semantics.QUOTIENT_OVERFLOWS) for op in semantics.DIVISIONS},
    **{op: (semantics.SHIFT_TOO_WIDE,) for op in semantics.SHIFTS},
}
"""The kinds of undefined behaviour `semantics.int_fault` finds per op (and, with flags,
the overflows)."""
for _op in ("addi", "subi", "muli", "shli"):
    _FAULT_KINDS[_op] = (*_FAULT_KINDS.get(_op, ()), semantics.NSW_OVERFLOW, semantics.NUW_OVERFLOW)

STRIP = 256
"""Threads of a block row an interchanged loop runs at once (see `interchange`)."""

_RECOMPUTABLE = frozenset({
    "kernel.thread_id", "kernel.block_id", "kernel.block_dim", "kernel.grid_dim",
    "arith.addi", "arith.subi", "arith.muli", "arith.maxsi", "arith.minsi",
    "arith.andi", "arith.ori", "arith.xori", "arith.cmpi", "arith.select",
    "arith.index_cast", "arith.extsi", "arith.extui", "arith.trunci", "memref.dim",
})  # fmt: skip
"""Integer ops that never fault nor touch memory (`memref.dim` only with a constant
dimension; `addi`/`subi`/`muli` only without `nsw`/`nuw`, which can fault): their
results can be computed again in any phase (`recomputable`)."""

_LOOP_BODY_OPS = frozenset({
    "memref.load", "scf.yield", "arith.constant", "arith.cmpf", "arith.select",
    "arith.sitofp", "arith.uitofp", "arith.extf", "arith.truncf",
    *FLOAT_ARITH_OPS, *_RECOMPUTABLE,
})  # fmt: skip
"""Ops an interchanged loop body may hold: on the fast path none of them faults or
writes memory (loads are proven in bounds there)."""


def _divides_safely(op: Operation) -> bool:
    """Whether `op` is an integer division or remainder by a constant that it cannot
    fault on: not 0, and not -1 for a signed one (whose quotient may overflow)."""
    short = op.name.removeprefix("arith.")
    if short not in semantics.DIVISIONS or op.name != f"arith.{short}":
        return False
    divisor = op.operands[1].owner
    if not (isinstance(divisor, Operation) and divisor.name == "arith.constant"):
        return False
    value = constant_value(divisor)
    signed = -1 if value is True else int(value)  # i1 in signed form: true is -1
    return signed != 0 and (signed != -1 or short.endswith("ui"))


def _cannot_fault_on_the_fast_path(op: Operation) -> bool:
    """Whether `op` may sit in an interchanged loop's body (no memory written, no fault on
    the fast path, where loads are proven in bounds; no nested region)."""
    if op.name not in _LOOP_BODY_OPS or op.regions or semantics.overflow_flags(op):
        return False
    return op.name != "memref.dim" or constant_dim(op) is not None


def _positive_constant(value: SSAValue) -> bool:
    owner = value.owner
    return (
        isinstance(owner, Operation)
        and owner.name == "arith.constant"
        and constant_value(owner) > 0
    )


def _float_literal(value: float) -> str:
    """A float as Python source Numba compiles (NaN and infinities have no literal)."""
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(value)


def _is_f16(type_: Any) -> bool:
    """f16 memory is passed to compiled code as its uint16 bit patterns (a view)."""
    if isinstance(type_, MemRefType):
        type_ = type_.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return isinstance(type_, Float16Type)


RUN_BLOCKS = 64
"""The most consecutive blocks whose fast path one evaluation of the ranges decides."""

PARALLEL_THREADS = 1 << 16
"""Launches of at least this many threads run their blocks in parallel (`prange`), when the
kernel's blocks are free of races (see `ranges.separating_axes`)."""

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


def compile_numba(kernel: Kernel) -> tuple[Callable[..., None], str]:  # noqa: C901
    """A run(grid, block, args) launcher of `kernel` compiled with Numba, and its source.

    The functions are loaded from the on-disk kernel cache (`kernel_cache`) when it is
    usable, so that a process running a kernel compiled before loads it instead of
    compiling it; else they are compiled in memory.
    """
    # printf and assert call back into Python objects made for this compilation: such a
    # kernel is compiled in memory (the cache holds only self-contained modules) and runs
    # its blocks in order (its output and failures follow the order of threads).
    calls_back = any(isinstance(op, PrintfOp | AssertOp) for op in kernel.func.walk())
    try:  # generating the source and compiling it as Python both walk the kernel's IR
        namespace, source, messages = _namespace(kernel, calls_back)
    except RecursionError as e:
        raise _cannot_compile(kernel, _TOO_LARGE) from e
    jitted: Callable[..., bool] = namespace["blocks"]
    jitted_par = _compiled_at_first_call(namespace["run_par"], namespace["CACHE"])
    loops = kernel.has_while
    axes = None if calls_back or loops else separating_axes(kernel)
    own_errors = loops or kernel.has_atomics
    """Whether each run needs its own error vector: launches of a kernel with atomics
    may run at once (see `streams.Scheduler`), and a loop polls the vector's stop flag."""
    written = [i for i, p in enumerate(kernel.params) if p in stored_params(kernel)]

    def parallel(grid: tuple[int, int, int], block: tuple[int, int, int], args: list[Any]) -> int:
        """How many chunks of blocks to run in parallel (0: run the blocks in order)."""
        blocks = grid[0] * grid[1] * grid[2]
        if axes is None or blocks < 2 or blocks * block[0] * block[1] * block[2] < PARALLEL_THREADS:
            return 0
        if any(size > 1 and axis not in axes for axis, size in zip("xyz", grid, strict=True)):
            return 0
        threads = numba.get_num_threads()
        if threads < 2 or _aliased(written, args):
            return 0
        return min(blocks, 4 * threads)

    no_fault = np.zeros(_ERR_SIZE, dtype=np.int64)
    """The error vector of launches in order (reset after a fault)."""
    f16_params = [i for i, p in enumerate(kernel.params) if _is_f16(p.type)]
    """Parameters in f16 memory: the kernel reads and writes their bit patterns."""

    def run(grid: tuple[int, int, int], block: tuple[int, int, int], args: list[Any]) -> None:
        if f16_params:
            args = list(args)
            for i in f16_params:
                args[i] = args[i].view(np.uint16)
        chunks = parallel(grid, block, args) if axes is not None else 0
        try:
            if chunks:
                errs = np.zeros((chunks, _ERR_SIZE), dtype=np.int64)
                # One chunk at a time to whichever thread is free: a thread the machine's
                # other work delays does not hold the others back.
                previous = _set_chunksize(1)
                try:
                    jitted_par(*grid, *block, errs, *args)
                finally:
                    _set_chunksize(previous)
                # Chunks hold consecutive blocks, each stopped at its first fault: the
                # first faulting chunk holds the fault a run of the blocks in order meets.
                faulted = np.flatnonzero(errs[:, 0])
                err = errs[faulted[0]] if faulted.size else errs[0]
            elif loops:
                err = np.zeros(_ERR_SIZE, dtype=np.int64)
                with watchdog.watching() as watch:
                    watch.attach(err, _STOP_FLAG)
                    jitted(0, grid[0] * grid[1] * grid[2], *grid, *block, err, *args)
                if err[0] == _STOP:
                    raise watch.error(kernel, int(err[1]), err[2:5].tolist(), err[5:8].tolist())
            else:
                err = np.zeros(_ERR_SIZE, dtype=np.int64) if own_errors else no_fault
                jitted(0, grid[0] * grid[1] * grid[2], *grid, *block, err, *args)
        except NumbaError as e:  # a gap in this backend, reported at the kernel
            raise _cannot_compile(kernel, str(e).splitlines()[0]) from e
        except RecursionError as e:  # Numba's passes recurse along chains of branches
            raise _cannot_compile(kernel, _TOO_LARGE) from e
        if err[0]:
            fault = err.copy()
            err[:] = 0
            raise _fault_error(kernel, messages, fault, args)

    return run, source


def _namespace(kernel: Kernel, calls_back: bool) -> tuple[dict[str, Any], str, dict[int, str]]:
    """The namespace of the kernel's module (from the on-disk cache, else generated and
    compiled in memory), its source and its fixed fault messages."""
    namespace = None if calls_back else _load_cached(kernel)
    if namespace is not None:
        ops = list(kernel.func.walk())  # the fault sites (when generated in another process)
        kernel.sites[:] = [ops[i] for i in namespace["SITES"]]
        return namespace, Path(namespace["__file__"]).read_text(), namespace["MESSAGES"]
    gen = NumbaSource(kernel)
    source = gen.generate()
    namespace = gen.namespace | {"njit": _njit, "prange": numba.prange, "CACHE": False}
    exec(compile(source, f"<kernel @{kernel.name} (numba)>", "exec"), namespace)
    return namespace, source, gen.messages


_TOO_LARGE = "it is too large for Numba's compiler (maximum recursion depth exceeded)"


def _cannot_compile(kernel: Kernel, why: str) -> KernelError:
    return KernelError(
        diagnostic_at(
            kernel.func,
            f"in kernel @{kernel.name}: numba cannot compile this kernel "
            f"(use the numpy backend): {why}",
        )
    )


def _compiled_at_first_call(run_par: Callable[..., None], cache: bool) -> Callable[..., None]:
    """`run_par` compiled with `parallel=True` when first called: a process that never
    launches the kernel in parallel does not pay for its dispatcher (nor loads its code)."""
    jitted: list[Callable[..., None]] = []

    def call(*args: Any) -> None:
        if not jitted:
            jitted.append(
                _njit(cache=cache, error_model="numpy", parallel=True, nogil=True)(run_par)
            )
        jitted[0](*args)

    return call


def _aliased(written: list[int], args: list[Any]) -> bool:
    """Whether an array the kernel writes may share memory with another array argument."""
    for i in written:
        for j, other in enumerate(args):
            if j == i or not isinstance(other, np.ndarray):
                continue
            if np.may_share_memory(args[i], cast(np.ndarray[Any, Any], other)):
                return True
    return False


def _load_cached(kernel: Kernel) -> dict[str, Any] | None:
    """The namespace of the kernel's module in the on-disk cache, found by the kernel's IR
    (the module is generated and written on first use: its source, the fault messages by
    site as `MESSAGES`, and as `SITES` each fault site's op by its place in the kernel's
    walk), or None when the cache directory cannot be written."""

    def module_text() -> str:
        gen = NumbaSource(kernel)
        source = gen.generate()
        walk_order = {op: i for i, op in enumerate(kernel.func.walk())}
        header = (
            "import numpy as np\n"
            "from numba import njit, prange\n"
            "from devplan.runtime import semantics\n"
            "from devplan.runtime.kernels.atomics import atomic_cas\n"
            + "".join(f"from devplan.runtime.kernels.numba_backend import {h}\n" for h in HELPERS)
            + "".join(
                f"S_{name.replace('.', '_')} = semantics.scalar({name!r})\n"
                for name in gen.defined_ops
            )
            + "".join(
                f"I_{name.replace('.', '_')} = semantics.int_scalar({name!r})\n"
                for name in gen.int_defined_ops
            )
            + "CACHE = True\n"
            + f"MESSAGES = {gen.messages!r}\n"
            + f"SITES = {[walk_order[op] for op in kernel.sites]!r}\n\n"
        )
        return header + source

    key = f"RUN_BLOCKS = {RUN_BLOCKS}\n{kernel.func}"
    return kernel_cache.load_module(module_text, _BACKEND_VERSION, key=key)


def _fault_error(
    kernel: Kernel, messages: dict[int, str], err: np.ndarray[Any, Any], args: list[Any]
) -> KernelError:
    site = int(err[1])
    block = [int(e) for e in err[2:5]]
    thread = [int(e) for e in err[5:8]]
    op = kernel.sites[site]
    if int(err[0]) == _OOB:
        buffer: SSAValue = op.operands[0 if op.name == "memref.load" else 1]
        shape = _shape_of(kernel, buffer, args)
        index = [int(e) for e in err[8 : 8 + len(shape)]]
        return kernel.oob_error(site, buffer, index, shape, block, thread)
    message = messages.get(site) or dim_message(int(err[8]), int(err[9]))
    return kernel.error(site, message, block, thread)


def _shape_of(kernel: Kernel, buffer: SSAValue, args: list[Any]) -> tuple[int, ...]:
    if buffer in kernel.params:
        return tuple(args[kernel.params.index(buffer)].shape)
    type_ = buffer.type
    assert isinstance(type_, MemRefType)
    return tuple(type_.get_shape())
