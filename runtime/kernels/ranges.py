"""Per-block value ranges of a kernel's indices and guards, and which blocks may skip checks.

The Numba backend runs each block either on a *checked* path (every access bounds-checked,
as the NumPy backend does) or on a *fast* path without bounds checks, whose loops LLVM can
vectorise. This module decides, per block and at run time, whether the fast path is safe,
and writes that decision as Python source the backend puts at the start of each block.

Phase 1 (compile time): walk the kernel in program order and give every integer value an
*interval* over the threads of one block when it is a function of what is fixed for the
block or bounded per thread — block ids (fixed along z; along x and y, `[bix_lo, bix_hi]`
and `[biy_lo, biy_hi]`: the ids of a run of consecutive blocks whose ranges are evaluated
together, part of one grid row or whole rows), thread ids
(`[0, block_dim - 1]`), block and grid dims, memref sizes (`memref.dim` of a parameter
with a constant dimension), scalar parameters and constants — through `addi`, `subi`,
`muli`, `maxsi`, `minsi`, `andi`, `divsi`/`floordivsi`/`remsi` by a positive divisor,
casts, `cmpi` (an i1 interval: 0..0 all false, 1..1 all true, 0..1 mixed) and `select`;
and an `scf.for` induction variable `[lb.lo, ub.hi - 1]` (with a constant step and one
start, up to the last multiple of the step from lb below ub.hi). Loaded values,
loop-carried values and results of `scf.if` have none. The interval of each value is
emitted as two block-level variables `l_x`, `h_x`.

Phase 2 (compile time): collect the conditions under which the fast path is safe, each
guarded by whether its op can run at all in the block (`reach`: the conjunction of the
enclosing guards that may be true, and of enclosing loops that may iterate):
* every load and store reachable in the block has all its indices in bounds;
* every reachable `scf.if` whose condition has an interval is uniform in the block (its
  interval is 0..0 or 1..1), so the fast path branches on the block-level value;
* every interval stays within the signed 32-bit range (`[-2^31, 2^31 - 1]`, narrower for
  i8/i16 values): interval arithmetic in int64 then cannot overflow, and no value wraps.
An access whose index has no interval and which is reachable under guards without
intervals makes the fast path impossible: `possible` is False and the backend emits only
the checked path.

Phase 3 (run time, per run of blocks, and per block when a run is not fast as a whole):
the emitted source evaluates the intervals and `fast`, the conjunction of the conditions.
Intervals over-approximate (they are sound, not exact): those of a run contain those of
each of its blocks, and a block whose accesses are all in bounds may still take the
checked path, never the reverse. Faults other than out-of-bounds accesses (division by
zero, shifts, conversions, loop steps) keep their checks on both paths, so the first
fault is found in the same thread either way.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from .common import CMPI_PREDICATES, Kernel, constant_value, int_width, predicate_of

_LIMIT = 1 << 31

DIVISIONS = {"arith.divsi": "I_arith_divsi", "arith.floordivsi": "I_arith_floordivsi"}
"""The divisions whose intervals the emitted code computes, with the name it calls
`semantics.int_scalar` of the op by (the code generator binds it)."""


def _bound(width: int) -> int:
    """The magnitude an interval of a `width`-bit value must stay within."""
    return min(_LIMIT, 1 << (width - 1)) if width > 1 else 2


CHAIN = 64
"""Terms per `&` chain of the fast-path test (see `BlockRanges.conjunction`)."""


@dataclass
class BlockRanges:
    """The interval code and fast-path conditions of one kernel (see the module docstring)."""

    kernel: Kernel
    lines: list[str] = field(default_factory=list[str])
    """Block-level statements computing the intervals and `fast`."""
    known: set[SSAValue] = field(default_factory=set[SSAValue])
    """Values with an interval (`l_<name>`, `h_<name>`)."""
    bounds: dict[SSAValue, tuple[str, str]] = field(default_factory=dict[SSAValue, tuple[str, str]])
    """The expressions of each known value's bounds: `l_<name>` and `h_<name>`, a number,
    or `l_<name>` for both."""
    guards: dict[Operation, str] = field(default_factory=dict[Operation, str])
    """`scf.if` ops with an interval condition: the block-level value the fast path tests."""
    possible: bool = True
    """False when some reachable access can never be proven in bounds."""
    conditions: list[str] = field(default_factory=list[str])
    """The names of the block-level booleans whose conjunction is `fast`."""
    resolved: dict[Operation, SSAValue] = field(default_factory=dict[Operation, SSAValue])
    """`minsi`/`maxsi` ops of one thread-dependent operand and one that is not, and that
    operand: the fast path requires it to be the result in every thread of the run (a
    clamp that does not bite), so the backend emits the operand itself, affine in the
    thread id, instead of a select (which LLVM would turn into a gather)."""

    def analyse(self) -> BlockRanges:
        for arg in self.kernel.params:
            width = int_width(arg.type)
            if width is not None:
                name = self.kernel.name_of(arg)
                self.exact(arg, f"np.int64({name})" if width == 1 else name, width)
        self.block(self.kernel.func.body.block, "True")
        self.conjunction()
        return self

    def conjunction(self) -> None:
        """`fast = <every condition>`, in chains of at most `CHAIN` terms (each chain
        named, and those names joined the same way): Python's compiler recurses once per
        term of a chain, and a kernel of a few thousand accesses would exceed its limit."""
        terms = self.conditions or ["True"]
        count = 0
        while len(terms) > CHAIN:
            chains: list[str] = []
            for i in range(0, len(terms), CHAIN):
                chains.append(f"fast_{count}")
                self.lines.append(f"{chains[-1]} = {' & '.join(terms[i : i + CHAIN])}")
                count += 1
            terms = chains
        self.lines.append(f"fast = {' & '.join(terms)}")

    # -- intervals -------------------------------------------------------------------------

    def lo(self, value: SSAValue) -> str:
        return self.bounds.get(value, (f"l_{self.kernel.name_of(value)}", ""))[0]

    def hi(self, value: SSAValue) -> str:
        return self.bounds.get(value, ("", f"h_{self.kernel.name_of(value)}"))[1]

    def define(self, value: SSAValue, lo: str, hi: str, width: int) -> None:
        """The interval [lo, hi] of `value`. A bound that is a number is folded into the
        expressions that use it, and two equal bounds are one variable: each line emitted
        costs Numba compile time, and most bounds of a kernel are constants or equal."""
        name = self.kernel.name_of(value)
        low = lo if _literal(lo) is not None else f"l_{name}"
        high = hi if _literal(hi) is not None else low if lo == hi else f"h_{name}"
        if low != lo:
            self.lines.append(f"{low} = {lo}")
        if high not in (hi, low):
            self.lines.append(f"{high} = {hi}")
        self.bounds[value] = (low, high)
        if width > 1:
            bound = _bound(width)
            self.require(_both(_compare(low, ">=", -bound), _compare(high, "<", bound)))
        self.known.add(value)

    def exact(self, value: SSAValue, expr: str, width: int) -> None:
        self.define(value, expr, expr, width)

    def require(self, condition: str, reach: str = "True") -> None:
        # Each condition is a boolean of its own, combined with `&` and `|`, never `and`
        # or `or`: a short-circuit is a branch, and Numba's SSA and liveness passes grow
        # with branches times variables.
        if condition == "True" or reach == "False":
            return
        name = f"fc{len(self.conditions)}"
        self.conditions.append(name)
        if reach == "True":
            self.lines.append(f"{name} = {condition}")
        else:
            self.lines.append(f"{name} = (not ({reach})) | ({condition})")

    # -- the walk ----------------------------------------------------------------------------

    def block(self, block: Block, reach: str) -> None:
        for op in block.ops:
            self.op(op, reach)

    def op(self, op: Operation, reach: str) -> None:
        name = op.name
        if name == "scf.if":
            self.scf_if(op, reach)
        elif name == "scf.for":
            self.scf_for(op, reach)
        elif name in ("scf.while", "scf.index_switch"):
            # Loop-carried values and results have no interval; every region may run.
            for region in op.regions:
                for block in region.blocks:
                    self.block(block, reach)
        elif name in ("memref.load", "memref.store"):
            self.access(op, reach)
        elif name == "memref.dim":
            self.dim(op)
        elif op.results and all(o in self.known for o in op.operands):
            result = op.results[0]
            width = int_width(result.type)
            if width is not None:
                self.interval(op, result, width)

    def interval(self, op: Operation, result: SSAValue, width: int) -> None:  # noqa: C901
        short = op.name.split(".", 1)[1]
        ops = op.operands
        lo = [self.lo(o) for o in ops]
        hi = [self.hi(o) for o in ops]
        values = [_literal(a) if a == b else None for a, b in zip(lo, hi, strict=True)]
        if short in _FOLDED and None not in values:
            folded = str(_FOLDED[short](*cast(list[int], values)))
            self.define(result, folded, folded, width)
            return
        match op.name:
            case "arith.constant":
                value = constant_value(op)
                self.exact(result, str(int(value)), width)
            case "kernel.thread_id":
                self.define(result, "0", f"b{_axis(op)}_ - 1", width)
            case "kernel.block_id" if _axis(op) in ("x", "y"):
                axis = _axis(op)  # a run of blocks along x, or of whole grid rows along y
                self.define(result, f"bi{axis}_lo", f"bi{axis}_hi", width)
            case "kernel.block_id" | "kernel.block_dim" | "kernel.grid_dim":
                which = {"block_id": "bi", "block_dim": "b", "grid_dim": "g"}[short]
                suffix = "_" if short == "block_dim" else ""
                self.exact(result, f"{which}{_axis(op)}{suffix}", width)
            case "arith.addi":
                self.define(result, f"{lo[0]} + {lo[1]}", f"{hi[0]} + {hi[1]}", width)
            case "arith.subi":
                self.define(result, f"{lo[0]} - {hi[1]}", f"{hi[0]} - {lo[1]}", width)
            case "arith.muli":
                self.define(result, *_product(lo, hi, values), width)
            case "arith.maxsi" | "arith.minsi":
                f = "max" if short == "maxsi" else "min"
                self.define(result, f"{f}({lo[0]}, {lo[1]})", f"{f}({hi[0]}, {hi[1]})", width)
                varying = [_thread_dependent(o) for o in ops]
                if varying[0] != varying[1]:
                    w = 0 if varying[0] else 1
                    o = 1 - w
                    if short == "minsi":
                        self.require(f"{hi[w]} <= {lo[o]}")
                    else:
                        self.require(f"{lo[w]} >= {hi[o]}")
                    self.resolved[op] = ops[w]
            case "arith.andi" if width > 1:
                # x & y lies in [0, y] for y >= 0 (and in [0, x] for x >= 0).
                self.define(
                    result,
                    "0",
                    f"({hi[1]} if {lo[1]} >= 0 else ({hi[0]} if {lo[0]} >= 0 else -{_LIMIT}))",
                    width,
                )
                self.require(f"({lo[0]} >= 0) | ({lo[1]} >= 0)")
            case "arith.andi" | "arith.ori":
                sym = "&" if short == "andi" else "|"
                self.define(result, f"{lo[0]} {sym} {lo[1]}", f"{hi[0]} {sym} {hi[1]}", 1)
            case "arith.divsi" | "arith.floordivsi":
                self.divide(op, result, width)
            case "arith.remsi":
                # y > 0: x % y (truncating) lies in [0, y - 1] for x >= 0, else in [1 - y, y - 1].
                self.require(f"{lo[1]} > 0")
                self.define(
                    result,
                    f"(0 if {lo[0]} >= 0 else 1 - {hi[1]})",
                    f"min({hi[1]} - 1, max({hi[0]}, 0))",
                    width,
                )
            case "arith.index_cast" | "arith.extsi" | "arith.trunci":
                if int_width(ops[0].type) == 1 or width == 1:
                    return  # i1 reads as 0/-1, and truncation to i1 keeps the low bit
                self.define(result, lo[0], hi[0], width)
            case "arith.extui" if int_width(ops[0].type) == 1:
                self.define(result, lo[0], hi[0], width)
            case "arith.cmpi":
                self.compare(op, result)
            case "arith.select":
                c, a, b = ops
                self.define(
                    result,
                    f"({self.lo(a)} if {self.lo(c)} == 1 else ({self.lo(b)} if {self.hi(c)} == 0 "
                    f"else min({self.lo(a)}, {self.lo(b)})))",
                    f"({self.hi(a)} if {self.lo(c)} == 1 else ({self.hi(b)} if {self.hi(c)} == 0 "
                    f"else max({self.hi(a)}, {self.hi(b)})))",
                    width,
                )
            case _:
                return

    def dim(self, op: Operation) -> None:
        source = op.operands[0]
        d = constant_dim(op)
        if d is None or source not in self.kernel.params:
            return
        self.exact(op.results[0], f"{self.kernel.name_of(source)}.shape[{d}]", 64)

    def divide(self, op: Operation, result: SSAValue, width: int) -> None:
        x, y = op.operands
        lx, hx, ly, hy = self.lo(x), self.hi(x), self.lo(y), self.hi(y)
        # For y > 0 the quotient is monotone in x, and in y for each sign of x: the
        # extremes lie at the corners. The divisor is clamped to 1 so that the interval
        # code itself never divides by zero (the block is then not fast anyway).
        self.require(f"{ly} > 0")
        div = DIVISIONS[op.name]
        corners = [f"{div}({a}, max({b}, 1), 64)" for a in (lx, hx) for b in (ly, hy)]
        self.define(result, f"min({', '.join(corners)})", f"max({', '.join(corners)})", width)

    def compare(self, op: Operation, result: SSAValue) -> None:
        x, y = op.operands
        lx, hx, ly, hy = self.lo(x), self.hi(x), self.lo(y), self.hi(y)
        pred = predicate_of(op, CMPI_PREDICATES)
        if pred[0] == "u":
            # Unsigned order agrees with signed order on non-negative values.
            both = f"({lx} >= 0) & ({ly} >= 0)"
            pred = "s" + pred[1:]
        else:
            both = "True"
        one_value = f"({lx} == {hx}) & ({hx} == {ly}) & ({ly} == {hy})"
        apart = f"({hx} < {ly}) | ({hy} < {lx})"
        true, false = {
            "eq": (one_value, apart),
            "ne": (apart, one_value),
            "slt": (f"{hx} < {ly}", f"{lx} >= {hy}"),
            "sle": (f"{hx} <= {ly}", f"{lx} > {hy}"),
            "sgt": (f"{lx} > {hy}", f"{hx} <= {ly}"),
            "sge": (f"{lx} >= {hy}", f"{hx} < {ly}"),
        }[pred]
        lo = f"int(({both}) & ({true}))"
        hi = f"(1 - int(({both}) & ({false})))"
        self.define(result, lo, hi, 1)

    # -- guards, loops and accesses ---------------------------------------------------------

    def scf_if(self, op: Operation, reach: str) -> None:
        cond = op.operands[0]
        then_reach, else_reach = reach, reach
        if cond in self.known:
            self.require(f"({self.lo(cond)} == {self.hi(cond)})", reach)
            self.guards[op] = f"{self.lo(cond)} == 1"
            then_reach = _conj(reach, f"({self.hi(cond)} == 1)")
            else_reach = _conj(reach, f"({self.lo(cond)} == 0)")
        for region, branch_reach in zip(op.regions, (then_reach, else_reach), strict=False):
            for block in region.blocks:
                self.block(block, branch_reach)

    def scf_for(self, op: Operation, reach: str) -> None:
        lb, ub = op.operands[0], op.operands[1]
        body = op.regions[0].block
        if lb in self.known and ub in self.known:
            iv = body.args[0]
            width = int_width(iv.type) or 64
            last = f"{self.hi(ub)} - 1"
            step = _constant(op.operands[2])
            if step is not None and step > 1:
                # From one start, the counter takes only lb + j * step: the last value
                # is the largest such below ub (tight for tiles: 0, 16, 32 below 48).
                lb_lo, lb_hi = self.lo(lb), self.hi(lb)
                last = (
                    f"({lb_lo} + ({last} - {lb_lo}) // {step} * {step} "
                    f"if ({lb_lo} == {lb_hi}) & ({last} >= {lb_lo}) else {last})"
                )
            self.define(iv, self.lo(lb), last, width)
            reach = _conj(reach, f"({self.lo(lb)} <= {self.hi(ub)} - 1)")
        self.block(body, reach)

    def access(self, op: Operation, reach: str) -> None:
        buffer, *index = op.operands if op.name == "memref.load" else op.operands[1:]
        if not index:
            return
        if not all(i in self.known for i in index):
            if reach == "True":
                self.possible = False
            else:
                self.require("False", reach)
            return
        shape = self.shape_of(buffer)
        checks = [
            _both(_compare(self.lo(i), ">=", 0), _compare(self.hi(i), "<", size))
            for i, size in zip(index, shape, strict=True)
        ]
        self.require(_both(*checks), reach)

    def shape_of(self, buffer: SSAValue) -> list[str]:
        type_ = buffer.type
        assert isinstance(type_, MemRefType)
        if isinstance(buffer, BlockArgument) and buffer in self.kernel.params:
            name = self.kernel.name_of(buffer)
            return [f"{name}.shape[{d}]" for d in range(len(type_.get_shape()))]
        return [str(s) for s in type_.get_shape()]  # shared memory: static shape


def constant_dim(op: Operation) -> int | None:
    """The dimension a `memref.dim` asks for when it is a constant within the rank."""
    source, index = op.operands
    owner = index.owner
    type_ = source.type
    if not isinstance(owner, Operation) or owner.name != "arith.constant":
        return None
    if not isinstance(type_, MemRefType):
        return None
    d = int(constant_value(owner))
    return d if 0 <= d < len(type_.get_shape()) else None


_FOLDED: dict[str, Callable[[int, int], int]] = {
    "addi": operator.add,
    "subi": operator.sub,
    "muli": operator.mul,
    "minsi": min,
    "maxsi": max,
}
"""Ops whose interval over constant operands is computed when generating (the intervals
of a fast block stay within 32 bits, so the int64 code would compute the same)."""


def _compare(expr: str, relation: str, bound: int | str) -> str:
    """`expr <relation> bound`, decided when both are numbers."""
    left, right = _literal(expr), _literal(str(bound))
    if left is None or right is None:
        return f"({expr} {relation} {bound})"
    return str(left >= right if relation == ">=" else left < right)


def _both(*conditions: str) -> str:
    """The conjunction of conditions, those decided when generating left out or deciding it."""
    if "False" in conditions:
        return "False"
    terms = [c for c in conditions if c != "True"]
    return " & ".join(terms) if terms else "True"


def _literal(expr: str) -> int | None:
    """The integer `expr` spells, if it is one."""
    try:
        return int(expr)
    except ValueError:
        return None


def _product(lo: list[str], hi: list[str], values: list[int | None]) -> tuple[str, str]:
    """The bounds of a product of two intervals: the extremes of its corners, two of them
    when a factor is one value, their signs known when it is a constant."""
    for c, other in ((values[0], 1), (values[1], 0)):
        if c is not None:
            low, high = f"{lo[other]} * {c}", f"{hi[other]} * {c}"
            return (low, high) if c >= 0 else (high, low)
    firsts = (lo[0],) if lo[0] == hi[0] else (lo[0], hi[0])
    seconds = (lo[1],) if lo[1] == hi[1] else (lo[1], hi[1])
    corners = [f"{a} * {b}" for a in firsts for b in seconds]
    if len(corners) == 1:
        return corners[0], corners[0]
    return f"min({', '.join(corners)})", f"max({', '.join(corners)})"


def _thread_dependent(value: SSAValue) -> bool:
    """Whether `value` is computed from a thread id (block arguments count as not). A walk
    with a stack of its own: a chain of thousands of ops would exceed Python's recursion
    limit."""
    seen = {value}
    stack = [value]
    while stack:
        owner = stack.pop().owner
        if not isinstance(owner, Operation):
            continue
        if owner.name == "kernel.thread_id":
            return True
        for operand in owner.operands:
            if operand not in seen:
                seen.add(operand)
                stack.append(operand)
    return False


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, Operation) and owner.name == "arith.constant":
        return int(constant_value(owner))
    return None


def _axis(op: Operation) -> str:
    dim: str = cast(Any, op).dim
    return dim


def _conj(reach: str, condition: str) -> str:
    return condition if reach == "True" else f"({reach}) & ({condition})"


# -- blocks that never touch one element ------------------------------------------------------


_WRITES = ("memref.store", "memref.atomic_rmw")
"""The ops that write memory: their memref is operand 1, its indices follow."""


def stored_params(kernel: Kernel) -> set[SSAValue]:
    """The memref parameters the kernel stores to (`memref.store`, `memref.atomic_rmw`)."""
    params = set(kernel.params)
    return {
        op.operands[1]
        for op in kernel.func.body.walk()
        if op.name in _WRITES and op.operands[1] in params
    }


def separating_axes(kernel: Kernel) -> frozenset[str] | None:
    """Grid axes along which blocks touch disjoint elements of every buffer written.

    For every parameter the kernel stores to, each access (load, store or atomic
    read-modify-write) is examined for
    indices of the form `block_id d * block_dim e + thread_id e` or `block_id d * c + k`
    with constants `0 <= k < c` (a *global id* along d: blocks that differ along d have
    disjoint ranges of it, whatever their other ids). An axis separates blocks when every
    access to every written parameter has a global id along it at one same index
    position, with one same width (`block_dim e` or `c`): ranges of different widths
    overlap between blocks (`block_id x * 2 + 1` of block 0 is `block_id x * 1` of
    block 1). Blocks may then run in any order, as long as the grid is 1 along every
    other axis (checked at launch) and no written array overlaps another argument.
    None: no axis separates them (the blocks must run in order). Shared memory is private
    to a block and needs no check.
    """
    written = stored_params(kernel)
    common: set[tuple[int, str, str]] | None = None
    for op in kernel.func.body.walk():
        if op.name != "memref.load" and op.name not in _WRITES:
            continue
        buffer, *index = op.operands if op.name == "memref.load" else op.operands[1:]
        if buffer not in written:
            continue
        found = {(k, *gid) for k, i in enumerate(index) if (gid := _global_id(i)) is not None}
        common = found if common is None else common & found
    if common is None:
        return frozenset("xyz")
    axes = frozenset(axis for _, axis, _ in common)
    return axes or None


def _global_id(value: SSAValue) -> tuple[str, str] | None:
    """(d, width) when `value` is `block_id d * block_dim e + thread_id e` (e = d, or a
    block of threads along e covering the indices of one block along d; width
    `block_dim e`), or `block_id d * c + k` for constants `0 <= k < c` (a tile of `c`
    indices per block; width `c`), operands in any order."""
    tile = _block_tile(value)
    if tile is not None:
        return tile
    add = value.owner
    if not isinstance(add, Operation) or add.name != "arith.addi":
        return None
    for mul, thread in (add.operands, add.operands[::-1]):
        t, m = thread.owner, mul.owner
        if not isinstance(t, Operation) or t.name != "kernel.thread_id":
            continue
        if not isinstance(m, Operation) or m.name != "arith.muli":
            continue
        names = sorted(
            (o.owner.name, _axis(o.owner))
            for o in m.operands
            if isinstance(o.owner, Operation) and o.owner.name.startswith("kernel.")
        )
        if (
            len(names) == 2
            and names[0] == ("kernel.block_dim", _axis(t))
            and names[1][0] == "kernel.block_id"
        ):
            return names[1][1], f"block_dim {_axis(t)}"
    return None


def _block_tile(value: SSAValue) -> tuple[str, str] | None:
    """(d, c) when `value` is `block_id d * c + k` (or `block_id d * c`) for constants
    `0 <= k < c < 2^31`: the blocks along d index disjoint tiles of `c` values (block ids
    are below 2^31, so the index cannot wrap around)."""
    offset = 0
    owner = value.owner
    if isinstance(owner, Operation) and owner.name == "arith.addi":
        for base, constant in (owner.operands, owner.operands[::-1]):
            k = _constant(constant)
            if (
                k is not None
                and isinstance(base.owner, Operation)
                and base.owner.name == "arith.muli"
            ):
                offset, owner = k, base.owner
                break
    if not isinstance(owner, Operation) or owner.name != "arith.muli":
        return None
    for block, constant in (owner.operands, owner.operands[::-1]):
        c = _constant(constant)
        b = block.owner
        if (
            c is not None
            and 0 <= offset < c < _LIMIT
            and isinstance(b, Operation)
            and b.name == "kernel.block_id"
        ):
            return _axis(b), str(c)
    return None
