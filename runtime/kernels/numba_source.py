"""The loops of the Numba CPU backend: Python source of `blocks(first, last, ...)`.

`NumbaSource` writes, around the per-thread code of `NumbaOps` (`numba_ops.py`), the loops
that run the blocks numbered `first` to `last - 1` (linear in z, y, x order) and return
True at the first fault, and `run_par`, which runs chunks of consecutive blocks in
parallel with `prange`. Each block runs one of two paths:

* the **fast path**, without bounds checks and with unsigned indices so that LLVM
  vectorises the thread loop, when the block's value ranges prove every access in bounds
  and every guard uniform (`ranges.py` writes that test, evaluated once for a run of up
  to `RUN_BLOCKS` consecutive blocks, whole grid rows or part of one, then row by row
  and block by block when a run fails);
* the **checked path** otherwise: every access checked, faults reported exactly as the
  NumPy backend reports them. Faults other than bounds (division by zero, ...) are checked
  on both paths, so either path meets the same first fault.

The two paths are two functions (`NumbaSource.split`): `blocks_fast` runs blocks on the
fast path and returns at the first that is not fast, `blocks_checked` runs blocks on the
checked path and returns at the next fast run; a launch calls them in turn. The checked
path, some 30 % of a kernel's compile time, is compiled only for a launch that needs it
(a fault, a partial last block, an access the ranges cannot bound). Kernels that call
back into Python (printf, assert) keep one `blocks`.

Within a block, the shape of the code depends on the kernel:

* **No barrier, no shared memory**: three nested loops (block z, y, x) around the body —
  every thread runs to completion in turn.
* **Barriers or shared memory**: the body is cut at every
  barrier into *phases* (`phases.py`), each a loop over the block's threads. An
  `scf.for`/`scf.if` holding a barrier becomes a block-level loop/branch around its own
  phases; its bounds or condition must be the same in every thread of the block (else
  the barrier is in divergent control flow: an error, as in the NumPy backend). A value
  used in a phase other than the one defining it lives in a per-thread array between
  phases, unless it is an index value of pure integer ops over ids, dims and constants
  (`index_values.py`): each phase computes that again, so that accesses stay affine in
  the thread x index. On the fast path, a thread-level `scf.for` that is a whole phase
  (after index values only), writes no memory and cannot fault runs *interchanged*, with
  the thread x loop inside it (`Phases.find_interchanges`): its body is then vectorised
  across a strip of a row of threads, each thread computing what it computes in the
  thread-by-thread loop (ops the same in every thread, such as loads at block-uniform
  indices, run once per iteration, before the strip).
"""

from __future__ import annotations

from collections import Counter

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import BlockArgument, Operation, SSAValue

from .common import (
    BARRIER_MESSAGE,
    STEP_MESSAGE,
    Kernel,
    contains_barrier,
    dtype_of,
    narrow_format,
    positive_constant,
)
from .index_values import IndexValues
from .jam import LANES, JamPlan, plan
from .numba_ops import NumbaOps
from .phases import Phases
from .ranges import DIVISIONS, stored_params

_JIT = "@njit(cache=CACHE, error_model='numpy', nogil=True)"
# Every function of a kernel is compiled with IEEE float division (inf, nan); integer
# division by zero is checked explicitly. Without the GIL, launches the scheduler runs at
# once really run at once, and the watchdog's timer thread runs while a kernel loops.

STRIP = 1024
"""Threads of a block row an interchanged loop runs at once (see `interchange`)."""

RUN_BLOCKS = 64
"""The most consecutive blocks whose fast path one evaluation of the ranges decides."""


class NumbaSource(NumbaOps):
    """Generates the loop-nest Python source of one kernel."""

    depth: int

    def __init__(self, kernel: Kernel) -> None:
        super().__init__(kernel)
        self.array_rows: dict[str, int] = {}
        """Rows of each `t_<dtype>` per-thread array (values kept between phases)."""
        self.loop_tag = ""
        """The tag of index values computed in the current thread loop (`thread_loop`)."""
        self.values = IndexValues(kernel)
        self.interchanged: set[Operation] = set()
        """Thread-level `scf.for`s that the fast path runs with the thread loop inside
        (see `Phases.find_interchanges`)."""
        self.jam: JamPlan | None = None
        """How the fast path runs `LANES` threads at once (`jam.py`), when it does."""
        self.lane = ""
        """The suffix of the names of the lane being emitted in a jammed group."""
        self.shared_ivs: set[SSAValue] = set()
        """Induction variables of jammed loops: one for every lane."""
        self.paths: dict[str, tuple[int, int, str]] = {}
        """Where the fast and the checked path of `blocks` start and end (in `lines`),
        and the indentation of their first lines: `split` makes a function of each."""

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
        if self.loop_tag and self.values.recomputable(value):
            name += self.loop_tag
        if self.lane and value not in self.shared_ivs:
            name += self.lane
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

    # ------------------------------------------------------------ structure

    def generate(self) -> str:
        """The source of `blocks(first, last, ...)`, which runs the blocks numbered `first`
        to `last - 1` in order (each on its fast path when the block's ranges allow it,
        else on its checked path) and returns True at the first fault, and of `run_par`,
        which runs chunks of consecutive blocks in parallel, one error vector a chunk."""
        kernel = self.kernel
        body = kernel.func.body.block
        if kernel.per_block:
            phases = Phases(kernel, self.values)
            self.interchanged = phases.interchanged
            for value in phases.kept:
                self.spill(value)
        params = "".join(self.v(p) + ", " for p in kernel.params)
        dims = "gx, gy, gz, bx_, by_, bz_"
        start = len(self.lines)
        self.lines.append(_JIT)
        self.lines.append(f"def blocks(first, last, {dims}, err, {params}):")
        self.emit("nthr = bx_ * by_ * bz_")
        self.jam = None if self.calls_back else plan(kernel, self.values)
        if self.jam is not None:
            self.jam_check()
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
        run_chunk = f"blocks(first, last, {dims}, errs[chunk], {params})\n"
        run_chunk += "        stops[chunk] = last"
        if len(self.paths) == 2:
            self.lines[start:] = self.split(self.lines[start:], start)
            run_chunk = f"stops[chunk] = blocks_fast(first, last, {dims}, errs[chunk], {params})"
        self.lines += [
            "",
            "# Compiled with parallel=True at the first parallel launch (`compile_numba`).",
            f"def run_par({dims}, errs, stops, {params}):",
            "    nblocks = gx * gy * gz",
            "    nchunks = errs.shape[0]",
            "    for chunk in prange(nchunks):",
            "        first = chunk * nblocks // nchunks",
            "        last = (chunk + 1) * nblocks // nchunks",
            f"        {run_chunk}",
        ]
        return "\n".join(self.lines) + "\n"

    def split(self, lines: list[str], start: int) -> list[str]:
        """`blocks_fast` and `blocks_checked`, made of the `lines` of `blocks` (from line
        `start`), each with one of its paths. Where `blocks` would run the other path,
        `blocks_fast` returns the block it stopped at (a block that is not fast), and
        `blocks_checked` the block it stopped at (the start of a fast run, after
        `first`: each call runs at least one block). Both return `last` when done."""
        assert lines[1].startswith("def blocks(")
        assert lines[-1].strip() == "return False"
        functions: list[str] = []
        for name, other, stop in (
            ("blocks_fast", "checked", ["return b"]),
            ("blocks_checked", "fast", ["if b > first:", "    return b"]),
        ):
            begin, end, indent = self.paths[other]
            begin, end = begin - start, end - start
            functions += [
                lines[0],
                lines[1].replace("def blocks(", f"def {name}(", 1),
                *lines[2:begin],
                *(indent + line for line in stop),
                *lines[end:-1],
                lines[-1].replace("return False", "return last"),
                "",
            ]
        return functions[:-1]

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
        evaluated over a *run* of up to `RUN_BLOCKS` consecutive blocks: whole grid rows
        (block y ids `biy_lo` to `biy_hi`, every x id) when the run starts a row and a
        row has at most `RUN_BLOCKS` blocks, else blocks of one grid row (block x ids
        `bix_lo` to `bix_hi`). When the whole run is fast, its blocks run the fast path
        with one test for all (for a grid of a few blocks along x, the test would else
        cost about as much as a block's work). A run of rows that is not fast is tested
        again row by row, and a run of one row that is not fast block by block, each
        block then running the fast or the checked path. Blocks run in order either way."""
        self.emit("b = first")
        self.emit("alone = first  # blocks below `alone` are tested one by one")
        self.emit("one_row = first  # runs below `one_row` stay within one grid row")
        self.emit("while b < last:")
        self.depth += 1
        self.emit("bix = b % gx")
        self.emit("biy = (b // gx) % gy")
        self.emit("biz = b // (gx * gy)")
        self.emit(f"run = 1 if b < alone else min(gx - bix, last - b, {RUN_BLOCKS})")
        self.emit("rows = 1")
        self.emit("if (b >= one_row) & (bix == 0) & (run == gx):")
        self.emit(f"    rows = max(1, min(gy - biy, (last - b) // gx, {RUN_BLOCKS} // gx))")
        self.emit("bix_lo = bix")
        self.emit("bix_hi = bix + run - 1")
        self.emit("biy_lo = biy")
        self.emit("biy_hi = biy + rows - 1")
        for line in self.ranges.lines:
            self.emit(line)
        self.emit("if fast:")
        self.depth += 1
        fast = len(self.lines), "    " * self.depth
        self.emit("for biy in range(biy_lo, biy_hi + 1):")
        self.emit("    for bix in range(bix_lo, bix_hi + 1):")
        self.depth += 2
        self.zero_shared_memory()
        self.fast = True
        self.block_body()
        self.fast = False
        self.depth -= 2
        self.emit("b += run * rows")
        self.emit("continue")
        fast_end = len(self.lines)
        self.depth -= 1
        self.emit("if rows > 1:")
        self.emit("    one_row = b + run * rows")
        self.emit("    continue")
        self.emit("if run > 1:")
        self.emit("    alone = b + run")
        self.emit("    continue")
        checked = len(self.lines), "    " * self.depth
        self.zero_shared_memory()
        self.block_body()
        self.emit("b += 1")
        if not self.calls_back:  # (printf and assert run their blocks in order)
            self.paths["fast"] = (fast[0], fast_end, fast[1])
            self.paths["checked"] = (checked[0], len(self.lines), checked[1])
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
        threads = "tix in range(bx_)"
        for loop in ("tiz in range(bz_)", "tiy in range(by_)"):
            self.emit(f"for {loop}:")
            self.depth += 1
        if self.fast and self.jam is not None and self.jam.guard in self.ranges.guards:
            self.emit(f"for tix0 in range(0, bx_ - {LANES - 1} if jam else 0, {LANES}):")
            self.depth += 1
            self.jammed(self.jam)
            self.depth -= 1
            threads = f"tix in range(bx_ - bx_ % {LANES} if jam else 0, bx_)"  # the rest
        self.emit(f"for {threads}:")
        self.depth += 1
        self.thread_ops(list(body.ops))
        self.emit("pass")  # a kernel whose body is only kernel.return
        self.depth -= 3

    # ------------------------------------------------------------ jammed threads

    def jam_check(self) -> None:
        """Emit `jam`: whether this launch may run jammed (`jam.py`): every array argument
        C-contiguous, and each one the kernel writes sharing no memory with another."""
        kernel = self.kernel
        arrays = [p for p in kernel.params if isinstance(p.type, MemRefType)]
        written = set(stored_params(kernel))
        terms = [f"{self.v(p)}.flags.c_contiguous" for p in arrays]
        for w in arrays:
            if w not in written:
                continue
            for other in arrays:
                if other is w:
                    continue
                a, b = self.v(w), self.v(other)
                terms.append(
                    f"(({a}.ctypes.data + {a}.nbytes <= {b}.ctypes.data) | "
                    f"({b}.ctypes.data + {b}.nbytes <= {a}.ctypes.data))"
                )
        self.emit(f"jam = {' & '.join(terms) or 'True'}")

    def for_lanes(self, ops: list[Operation], set_tix: bool) -> None:
        """Emit `ops` for each lane of a jammed group in turn (thread by thread)."""
        for r in range(LANES):
            self.lane = f"_l{r}"
            if set_tix:
                self.emit(f"tix = tix0 + {r}")
            self.thread_ops(ops)
        self.lane = ""

    def jammed(self, jam: JamPlan) -> None:
        """Emit a group of `LANES` threads from `tix0` (see `jam.py`)."""
        self.for_lanes(jam.prefix, set_tix=True)
        self.emit(f"if {self.ranges.guards[jam.guard]}:")  # uniform: one branch for all
        self.depth += 1
        self.for_lanes(jam.before, set_tix=True)  # (a fault names its thread)
        self.jammed_for(jam.loop)
        self.for_lanes(jam.after, set_tix=False)
        self.depth -= 1

    def jammed_for(self, op: Operation) -> None:
        """One `scf.for` for every lane of the group, each op of the body lane by lane."""
        body = op.regions[0].block
        self.lane = "_l0"  # the bounds are the same in every lane
        lb, ub, step = (self.v(o) for o in op.operands[:3])
        self.lane = ""
        self.shared_ivs.add(body.args[0])
        iv = self.v(body.args[0])
        for r in range(LANES):
            self.lane = f"_l{r}"
            for result, init in zip(op.results, op.operands[3:], strict=True):
                self.emit(f"{self.v(result)} = {self.v(init)}")
        self.lane = ""
        self.emit(f"for {iv} in range({lb}, {ub}, {step}):")
        self.depth += 1
        for r in range(LANES):
            self.lane = f"_l{r}"
            for arg, result in zip(body.args[1:], op.results, strict=True):
                self.emit(f"{self.v(arg)} = {self.v(result)}")
        ops, yielded = self.region_ops(body)
        for inner in ops:
            if inner.name == "scf.for":
                self.jammed_for(inner)
                continue
            for r in range(LANES):
                self.lane = f"_l{r}"
                self.thread_op(inner)
        for r in range(LANES):
            self.lane = f"_l{r}"
            for result, value in zip(op.results, yielded, strict=True):
                self.emit(f"{self.v(result)} = {self.v(value)}")
        self.lane = ""
        self.depth -= 1

    # ------------------------------------------------------------ per-block kernels

    def per_block_body(self) -> None:
        self.block_level(list(self.kernel.func.body.block.ops), [])

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
        hoisted = self.values.uniform_ops(body, ops)
        per_thread = [op for op in ops if op not in hoisted]
        bounds: set[SSAValue] = set()
        self.new_loop_tag()  # the bounds computed again here are named for this loop
        for bound in (lb, ub):
            if bound not in bounds and self.values.recomputable(bound):
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
        lead = self.values.leading_index_ops(work)
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
            if self.values.recomputable(value):
                self.recompute(value, done)
            elif value in self.spilled:
                self.emit(f"{self.v(value)} = {self.spilled[value]}[lin]")
                done.add(value)

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
                if o not in done and self.values.recomputable(o)
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
        if not positive_constant(op.operands[2]):
            self.emit(f"if {step} <= 0:")
            self.depth += 1
            self.emit("tix = tiy = tiz = 0")
            self.fault(site)
            self.depth -= 1
        carried = [self.spilled[a] for a in body.args[1:]]
        for array, init in zip(carried, op.operands[3:], strict=True):
            source = self.spilled.get(init)
            if source is None:
                self.emit(f"{array}[:] = {self.v(init)}")
            else:
                self.copy_row(array, source)
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
            self.copy_row(target, array)

    def copy_row(self, target: str, source: str) -> None:
        """`target[:] = source` for two rows of per-thread values, as a loop: Numba compiles
        an array-to-array slice assignment with its shape-mismatch message, whose string
        formatting costs about 2.5 CPU-s to compile in each process (the rows are as long
        as each other, so the message can never be raised)."""
        self.emit(f"for q_ in range({target}.shape[0]):")
        self.emit(f"    {target}[q_] = {source}[q_]")

    def block_if(self, op: Operation) -> None:
        # The branch taken must be the same in every thread: check it against thread 0.
        cond = self.uniform(op.operands[0], op)
        targets = [self.spilled[r] for r in op.results]
        for block in self.branches(op, cond):
            self.block_level(list(block.ops), targets)
