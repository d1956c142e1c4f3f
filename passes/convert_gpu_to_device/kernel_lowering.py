"""Kernel-body lowering for `convert-gpu-to-device`: what a `gpu.func` body may hold beyond
the kernel dialect's ops, rewritten into ops the kernel backends run.

Phases, per kernel body (before its gpu ops become kernel ops):

1. **Structured control flow.** A body of several blocks (`cf.br`/`cf.cond_br`, as
   MLIR's outliner and the shuffle example write) is rebuilt as one block: a
   `cf.cond_br` becomes an `scf.if` whose results are the block arguments of the
   branches' join point (the arms' nearest common post-dominator); a `cf.br` to a
   block with one predecessor inlines that block. Loops (back edges) and returns
   from inside a branch are refused with a located error.
2. **Collectives through shared memory.** Each `gpu.all_reduce` (every reduction
   kind, or a region combining two values), `gpu.subgroup_reduce`, `gpu.shuffle` and
   `gpu.rotate` becomes: each thread stores its value into a `kernel.alloc_shared`
   buffer at its linear thread index, a barrier, each thread reads what it needs (all
   values of its block, of its subgroup, or one other lane's) and combines them in lane
   order, and a barrier (so the buffer can be reused). The buffer holds
   `max_num_threads` values of the target; the subgroup size is the target's
   `thread_warp_size`. A shuffle's lane is its linear index modulo the subgroup size;
   lanes form segments of `width`; the result is valid when the source lane is inside
   the segment and the block. A rotation reads within the lane's segment too, and is
   valid for the subgroup's first `width` lanes (as MLIR defines it).
3. **Side effects.** `gpu.printf` becomes `kernel.printf` and `cf.assert`
   `kernel.assert`, carrying the place MLIR's CUDA runtime names in its message
   (`file:line: function`, from the op's location).

Invariant: every op added is an `arith`/`memref`/`scf` op or a `gpu` index query or
barrier, which the rest of the conversion maps to the kernel dialect.

Unhandled (a located error): a `gpu.subgroup_reduce` with a cluster stride, a
reduction region of several blocks and unstructured control flow (above). An `scf.while`
that waits for memory another kernel changes (a spin-wait) is converted: the scheduler
runs unordered launches that meet through atomics at once, and the kernels' watchdog
(`runtime/kernels/watchdog.py`) stops a wait that does not end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, cf, gpu, memref, scf
from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    IndexType,
    IntegerAttr,
    MemRefType,
    NameLoc,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.rewriter import Rewriter

from ...diagnostics import error_at, explicit_location
from ...dialects import kernel
from ...dialects.virtual_device import DeviceAttr
from ...upstream import gpu as ga

# ---- phase 1: structured control flow -----------------------------------------------------


def _successors(block: Block) -> list[Block]:
    last = block.last_op
    return list(last.successors) if last is not None else []


def _postdominators(region: Region) -> dict[Block, frozenset[Block]]:
    """For each block, the blocks every path from it to a return passes (itself included).
    The region must be acyclic (checked by the caller)."""
    result: dict[Block, frozenset[Block]] = {}

    def visit(block: Block) -> frozenset[Block]:
        if block in result:
            return result[block]
        succs = _successors(block)
        common: frozenset[Block] | None = None
        for s in succs:
            p = visit(s)
            common = p if common is None else common & p
        result[block] = frozenset({block}) | (common or frozenset())
        return result[block]

    for block in region.blocks:
        visit(block)
    return result


def _check_acyclic(region: Region, where: Operation) -> None:
    state: dict[Block, int] = {}

    def visit(block: Block) -> None:
        state[block] = 1
        for s in _successors(block):
            if state.get(s) == 1:
                last = block.last_op
                raise error_at(
                    last or where,
                    "a branch back to an earlier block (a loop in cf form) cannot be "
                    "converted; write the loop with scf.for or scf.while",
                )
            if s not in state:
                visit(s)
        state[block] = 2

    entry = region.blocks.first
    if entry is not None:
        visit(entry)


def structurize(region: Region, where: Operation) -> None:
    """Rebuild a multi-block kernel body as one block (phase 1)."""
    if len(region.blocks) <= 1:
        return
    _check_acyclic(region, where)
    entry = region.blocks.first
    assert entry is not None
    _Structurizer(region, where, entry).inline(entry, None, entry)
    for block in list(region.blocks):
        if block is not entry:
            for op in reversed(list(block.ops)):
                op.detach()
                op.erase(safe_erase=False)
            region.detach_block(block)
            block.erase()


class _Structurizer:
    """Moves the blocks of an acyclic region into its entry block (see `structurize`)."""

    def __init__(self, region: Region, where: Operation, entry: Block) -> None:
        self.pdom = _postdominators(region)
        self.where = where
        self.done: set[Block] = {entry}

    def join_of(self, a: Block, b: Block) -> Block | None:
        common = self.pdom[a] & self.pdom[b]
        return max(common, key=lambda blk: len(self.pdom[blk])) if common else None

    def take(self, block: Block, dest: Block) -> None:
        if block in self.done:
            raise error_at(
                block.first_op or self.where,
                "this block is reached along several paths that are not a simple branch "
                "and join; it cannot be converted to structured control flow",
            )
        self.done.add(block)
        for op in list(block.ops):
            op.detach()
            dest.add_op(op)

    def inline(self, block: Block, join: Block | None, dest: Block) -> Sequence[SSAValue]:
        """Move `block` and what follows it up to `join` into `dest`; the values it
        passes to `join`."""
        while True:
            if block is not dest:
                self.take(block, dest)
            last = dest.last_op
            if isinstance(last, cf.BranchOp):
                target, args = last.successor, list(last.arguments)
                Rewriter.erase_op(last)
                if target is join:
                    return args
                for arg, value in zip(target.args, args, strict=True):
                    arg.replace_all_uses_with(value)
            elif isinstance(last, cf.ConditionalBranchOp):
                target, results = self.branch(last, join, dest)
                if target is join:
                    return results
            else:
                return []
            block = target

    def branch(
        self, last: cf.ConditionalBranchOp, join: Block | None, dest: Block
    ) -> tuple[Block, Sequence[SSAValue]]:
        """A `cf.cond_br` as an `scf.if` yielding its join point's arguments."""
        merge = self.join_of(last.then_block, last.else_block)
        if merge is None or (join is not None and merge not in self.pdom[join] | {join}):
            raise error_at(
                last,
                "the branches of this cf.cond_br do not meet again before the kernel "
                "returns; devplan converts only branches that join",
            )
        cond = last.cond
        arms = (
            (last.then_block, list(last.then_arguments)),
            (last.else_block, list(last.else_arguments)),
        )
        Rewriter.erase_op(last)
        regions: list[Region] = []
        for target, args in arms:
            arm = Block()
            values: Sequence[SSAValue] = args
            if target is not merge:
                for arg, value in zip(target.args, args, strict=True):
                    arg.replace_all_uses_with(value)
                values = self.inline(target, merge, arm)
            arm.add_op(scf.YieldOp(*values))
            regions.append(Region(arm))
        if_op = scf.IfOp(cond, [a.type for a in merge.args], regions[0], regions[1])
        if_op.location = self.where.location
        dest.add_op(if_op)
        for arg, value in zip(merge.args, if_op.results, strict=True):
            arg.replace_all_uses_with(value)
        return merge, list(if_op.results)


# ---- phase 2: collectives ---------------------------------------------------------------


class Collectives:
    """Rewrites the collectives of one kernel body through shared memory (phase 2)."""

    def __init__(self, body: Block, max_threads: int, warp_size: int) -> None:
        self.body = body
        self.max_threads = max_threads
        self.warp_size = warp_size

    def _dims(self, dim_op: type[IRDLOperation], at: Operation) -> list[SSAValue]:
        values: list[SSAValue] = []
        for d in "xyz":
            q = dim_op.build(
                result_types=[IndexType()],
                properties={"dimension": gpu.DimensionAttr(gpu.DimensionEnum(d))},
            )
            self._before(at, q)
            values.append(q.results[0])
        return values

    def _before(self, at: Operation, *ops: Operation) -> None:
        block = at.parent_block()
        assert block is not None
        for op in ops:
            op.location = at.location
            block.insert_op_before(op, at)

    def _arith(self, at: Operation, op: Operation) -> SSAValue:
        self._before(at, op)
        return op.results[0]

    def _index(self, at: Operation, value: int) -> SSAValue:
        return self._arith(at, arith.ConstantOp(IntegerAttr(value, IndexType())))

    def _linear(self, at: Operation) -> tuple[SSAValue, SSAValue]:
        """The thread's linear index in its block, and the block's thread count."""
        tx, ty, tz = self._dims(ga.ThreadIdOp, at)
        bx, by, bz = self._dims(ga.BlockDimOp, at)
        inner = self._arith(at, arith.AddiOp(ty, self._arith(at, arith.MuliOp(by, tz))))
        linear = self._arith(at, arith.AddiOp(tx, self._arith(at, arith.MuliOp(bx, inner))))
        count = self._arith(at, arith.MuliOp(bx, self._arith(at, arith.MuliOp(by, bz))))
        return linear, count

    def _buffer(self, at: Operation, type_: Attribute) -> SSAValue:
        shared = MemRefType(
            type_, [self.max_threads], memory_space=DeviceAttr.make(None, None, None, "shared")
        )
        alloc = kernel.AllocSharedOp(shared)
        alloc.location = at.location
        first = self.body.first_op
        assert first is not None
        self.body.insert_op_before(alloc, first)
        return alloc.result

    def _publish(self, at: Operation, value: SSAValue, linear: SSAValue) -> SSAValue:
        buffer = self._buffer(at, value.type)
        self._before(at, memref.StoreOp.get(value, buffer, [linear]), ga.BarrierOp.build())
        return buffer

    def _fold(
        self,
        at: Operation,
        buffer: SSAValue,
        start: SSAValue,
        stop: SSAValue,
        combine: Callable[[Block, SSAValue, SSAValue], SSAValue],
    ) -> SSAValue:
        """`buffer[start] ⊕ buffer[start+1] ⊕ ... ⊕ buffer[stop-1]`, in lane order."""
        first = self._arith(at, memref.LoadOp.get(buffer, [start]))
        one = self._index(at, 1)
        begin = self._arith(at, arith.AddiOp(start, one))
        body = Block(arg_types=[IndexType(), first.type])
        x = memref.LoadOp.get(buffer, [body.args[0]])
        x.location = at.location
        body.add_op(x)
        result = combine(body, body.args[1], x.res)
        body.add_op(scf.YieldOp(result))
        loop = scf.ForOp(begin, stop, one, [first], Region(body))
        self._before(at, loop, ga.BarrierOp.build())
        return loop.results[0]

    def combiner(
        self, op: Operation, kind: str | None, region: Region | None, type_: Attribute
    ) -> Callable[[Block, SSAValue, SSAValue], SSAValue]:
        if region is not None:
            if len(region.blocks) != 1:
                raise error_at(op, "a reduction region of several blocks cannot be converted")

            def inline(block: Block, a: SSAValue, b: SSAValue) -> SSAValue:
                source = region.block
                mapping: dict[SSAValue, SSAValue] = {source.args[0]: a, source.args[1]: b}
                for inner in source.ops:
                    if isinstance(inner, gpu.YieldOp):
                        return mapping.get(inner.values[0], inner.values[0])
                    block.add_op(inner.clone(mapping))
                raise error_at(op, "the reduction region does not end with gpu.yield")

            return inline
        assert kind is not None
        is_float = not isinstance(type_, IndexType) and type_.__class__.__name__.startswith("Float")
        name = _REDUCE_OPS.get((kind, is_float))
        if name is None:
            raise error_at(
                op,
                f"reduction '{kind}' is not defined for {type_}",
            )
        op_class = _ARITH[name]

        def apply(block: Block, a: SSAValue, b: SSAValue) -> SSAValue:
            new = op_class(a, b)
            new.location = op.location
            block.add_op(new)
            return new.results[0]

        return apply

    def all_reduce(self, op: ga.AllReduceOp) -> None:
        linear, count = self._linear(op)
        buffer = self._publish(op, op.operand, linear)
        kind = op.kind
        combine = self.combiner(op, kind, op.body if op.body.blocks else None, op.operand.type)
        result = self._fold(op, buffer, self._index(op, 0), count, combine)
        op.result.replace_all_uses_with(result)
        Rewriter.erase_op(op)

    def subgroup_reduce(self, op: ga.SubgroupReduceOp) -> None:
        if op.cluster_stride is not None and op.cluster_stride.value.data != 1:
            raise error_at(op, "gpu.subgroup_reduce with a cluster stride cannot be converted")
        size = op.cluster_size.value.data if op.cluster_size is not None else self.warp_size
        linear, count = self._linear(op)
        buffer = self._publish(op, op.value, linear)
        width = self._index(op, size)
        start = self._arith(op, arith.MuliOp(self._arith(op, arith.DivUIOp(linear, width)), width))
        end = self._arith(op, arith.AddiOp(start, width))
        stop = self._arith(op, arith.MinUIOp(end, count))
        combine = self.combiner(op, op.op.data, None, op.value.type)
        result = self._fold(op, buffer, start, stop, combine)
        op.result.replace_all_uses_with(result)
        Rewriter.erase_op(op)

    def shuffle(self, op: ga.ShuffleOp) -> None:
        linear, count = self._linear(op)
        buffer = self._publish(op, op.value, linear)
        warp = self._index(op, self.warp_size)
        lane = self._arith(op, arith.RemUIOp(linear, warp))
        width = self._arith(op, arith.IndexCastOp(op.width, IndexType()))
        offset = self._arith(op, arith.IndexCastOp(op.offset, IndexType()))
        segment = self._arith(op, arith.MuliOp(self._arith(op, arith.DivUIOp(lane, width)), width))
        local = self._arith(op, arith.SubiOp(lane, segment))
        mode = op.mode.data
        source: SSAValue
        if mode == "xor":
            source = self._arith(op, arith.XOrIOp(local, offset))
        elif mode == "down":
            source = self._arith(op, arith.AddiOp(local, offset))
        elif mode == "up":
            source = self._arith(op, arith.SubiOp(local, offset))
        else:
            source = offset
        zero = self._index(op, 0)
        in_segment = self._arith(
            op,
            arith.AndIOp(
                self._arith(op, arith.CmpiOp(source, zero, "sge")),
                self._arith(op, arith.CmpiOp(source, width, "slt")),
            ),
        )
        base = self._arith(op, arith.SubiOp(linear, local))
        target = self._arith(op, arith.AddiOp(base, source))
        valid = self._arith(
            op, arith.AndIOp(in_segment, self._arith(op, arith.CmpiOp(target, count, "slt")))
        )
        index = self._arith(op, arith.SelectOp(valid, target, linear))
        value = self._arith(op, memref.LoadOp.get(buffer, [index]))
        self._before(op, ga.BarrierOp.build())
        op.shuffled.replace_all_uses_with(value)
        op.valid.replace_all_uses_with(valid)
        Rewriter.erase_op(op)

    def rotate(self, op: ga.RotateOp) -> None:
        """Lane `k` reads lane `base + (k - base + offset) mod width` of its segment of
        `width` lanes (`base`); valid for the subgroup's first `width` lanes."""
        linear, count = self._linear(op)
        buffer = self._publish(op, op.value, linear)
        warp = self._index(op, self.warp_size)
        lane = self._arith(op, arith.RemUIOp(linear, warp))
        width = self._index(op, op.width.value.data)
        local = self._arith(op, arith.RemUIOp(lane, width))
        shifted = self._arith(op, arith.AddiOp(local, self._index(op, op.offset.value.data)))
        source = self._arith(op, arith.RemUIOp(shifted, width))
        target = self._arith(op, arith.AddiOp(self._arith(op, arith.SubiOp(linear, local)), source))
        valid = self._arith(
            op,
            arith.AndIOp(
                self._arith(op, arith.CmpiOp(lane, width, "ult")),
                self._arith(op, arith.CmpiOp(target, count, "ult")),
            ),
        )
        index = self._arith(op, arith.SelectOp(valid, target, linear))
        value = self._arith(op, memref.LoadOp.get(buffer, [index]))
        self._before(op, ga.BarrierOp.build())
        op.rotated.replace_all_uses_with(value)
        op.valid.replace_all_uses_with(valid)
        Rewriter.erase_op(op)


_REDUCE_OPS: dict[tuple[str, bool], str] = {
    ("add", False): "addi", ("add", True): "addf",
    ("mul", False): "muli", ("mul", True): "mulf",
    ("and", False): "andi", ("or", False): "ori", ("xor", False): "xori",
    ("min", False): "minsi", ("max", False): "maxsi",
    ("min", True): "minnumf", ("max", True): "maxnumf",
    ("minsi", False): "minsi", ("maxsi", False): "maxsi",
    ("minui", False): "minui", ("maxui", False): "maxui",
    ("minnumf", True): "minnumf", ("maxnumf", True): "maxnumf",
    ("minimumf", True): "minimumf", ("maximumf", True): "maximumf",
}  # fmt: skip
"""(gpu reduction kind, float?) -> the arith op combining two values."""

_ARITH: dict[str, Callable[[SSAValue, SSAValue], Operation]] = {
    "addi": arith.AddiOp, "addf": arith.AddfOp, "muli": arith.MuliOp, "mulf": arith.MulfOp,
    "andi": arith.AndIOp, "ori": arith.OrIOp, "xori": arith.XOrIOp,
    "minsi": arith.MinSIOp, "maxsi": arith.MaxSIOp, "minui": arith.MinUIOp,
    "maxui": arith.MaxUIOp, "minnumf": arith.MinnumfOp, "maxnumf": arith.MaxnumfOp,
    "minimumf": arith.MinimumfOp, "maximumf": arith.MaximumfOp,
}  # fmt: skip


# ---- phase 3: side effects -------------------------------------------------------------


def assertion_origin(op: Operation, function: str) -> str:
    """`file:line: function` as CUDA's assertion message names the place of `op`: from the
    innermost callee of a call-site location, else the op's file and line in `function`."""
    loc = explicit_location(op) or op.location
    while isinstance(loc, CallSiteLoc):
        loc = loc.callee
    if isinstance(loc, NameLoc):
        child = loc.location
        if isinstance(child, FileLineColLoc):
            return f"{child.filename.data}:{child.line.data}: {loc.desc.data}"
        return loc.desc.data
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}: {function}"
    return function


def lower_side_effects(body: Region, function: str) -> None:
    """`gpu.printf` -> `kernel.printf`, `cf.assert` -> `kernel.assert` (phase 3)."""
    for op in list(body.walk()):
        if isinstance(op, ga.PrintfOp):
            new: Operation = kernel.PrintfOp(op.format.data, list(op.args))
        elif isinstance(op, cf.AssertOp):
            new = kernel.AssertOp(op.arg, op.msg.data, assertion_origin(op, function))
        else:
            continue
        new.location = op.location
        Rewriter.replace_op(op, new)


def lower_kernel_body(
    func: Operation, body: Region, name: str, max_threads: int, warp_size: int
) -> None:
    """Phases 1-3 on the body of the kernel `name`."""
    structurize(body, func)
    entry = body.blocks.first
    assert entry is not None
    collectives = Collectives(entry, max_threads, warp_size)
    for op in list(body.walk()):
        if isinstance(op, ga.AllReduceOp):
            collectives.all_reduce(op)
        elif isinstance(op, ga.SubgroupReduceOp):
            collectives.subgroup_reduce(op)
        elif isinstance(op, ga.ShuffleOp):
            collectives.shuffle(op)
        elif isinstance(op, ga.RotateOp):
            collectives.rotate(op)
    lower_side_effects(body, name)


__all__ = ["assertion_origin", "lower_kernel_body", "structurize"]
