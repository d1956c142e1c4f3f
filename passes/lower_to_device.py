"""`lower-to-device`: a planned level-1 module becomes a level-2 host program.

Input: a *planned* module (the placement contract plan-devices guarantees): every op
yielding tensors carries `vdev.device`, every tensor argument and result of a function
its `vdev.device` attribute, every tensor operand lives where its op runs, and
`vdev.device_copy` moves values between devices. Output: the same program over memrefs,
with `device` ops running generated kernels.

Phase 1 — facts (`Ownership`, computed on the level-1 IR before anything changes).
  Every tensor value becomes one buffer. A buffer is *owned* by the block that defines
  it (op results; the iteration arguments of an `scf.for` body) or *borrowed* (function
  arguments: the caller owns them). For each owned value the walk finds its last use in
  its block (a use inside a nested region counts at the op holding the region):
  * used by its block's terminator (`func.return`, `scf.yield`) as the last use: its
    ownership moves to the caller / the enclosing op; it is not freed;
  * an `scf.for` init operand that nothing inside the loop reads: ownership moves into
    the loop (its first iteration argument);
  * otherwise it is freed right after its last use (right after its definition when it
    has none).
  A terminator or `scf.for` init operand that cannot take ownership — a borrowed value,
  a value from an enclosing block, the second occurrence of one value, an init the loop
  body also reads — is *cloned* (alloc + copy) there, so each buffer has one owner and
  is freed exactly once, and a returned buffer is never freed by its function.

Phase 2 — one walk that rebuilds each function, op by op, consulting the facts:
  * types: `tensor<...>` on the host device (`vdev.host_device`) becomes a memref in
    host memory (no memory space); elsewhere `memref<..., #vdev.device<type, id, ?,
    scope>>`; signatures, `func.call`, `scf.if` and `scf.for` (results, iteration
    arguments, yields) follow;
  * elementwise `arith`/`math` on tensors: allocate the result, launch a generated
    kernel (one thread per element over a 1-D grid of `ceil(n / block)` blocks, the
    block `min(256, max_num_threads)` of the device's target; the kernel turns its
    linear index into one index per dimension with `memref.dim`, so one kernel serves
    every shape, static or dynamic, of a rank);
  * dynamic shapes: where an op needs two buffers to agree in a dimension that is
    dynamic in one of them (elementwise operands; matmul's M, N and K), a `cf.assert`
    checks it at run time before the launch, so a mismatch is a located error, not a
    kernel sized by one operand that cuts another short or reads past its end;
  * `linalg.fill`: a fill kernel; `linalg.matmul` (result = outs + ins[0] x ins[1]): a
    kernel where each thread computes `MATMUL_ROWS` (8) rows of one column, summing over
    k in order: `MATMUL_UNROLL` (4) steps of k per iteration, then the steps left one by
    one; for floats each step is one `math.fma` per row (one rounding instead of the two
    of the body's `mulf` and `addf`: the result is as close to the exact sum, and a CPU
    does it in one instruction; MLIR's own lowering of vector contractions makes
    `vector.fma`s too). Blocks of 8 rows go along x (blocks run in turn then read the
    same columns of B) and 1-D blocks of `min(256, max_num_threads)` threads (fewer for a
    narrower result) along the columns, on y; threads past the last row or column read
    the last one and store nothing, and a `kernel.barrier` after each loop over k parts
    it from what follows (so the numba backend vectorises it across a block's columns);
  * `tensor.empty`: an allocation (zeroed by every DeviceAPI), or nothing when only
    `linalg.fill`s write over it (each fill allocates its result);
  * `arith.constant dense<...>`: a splat is an allocation plus a fill launch on its
    device; other data lives in a `memref.global` and is copied to a fresh buffer on
    its device;
  * `vdev.device_copy`: an allocation on the destination plus `device.copy` (memory
    scope changes included);
  * values on a CPU device run there too: its kernels launch through the `cpu`
    DeviceAPI, so a plan that splits work between CPU and GPUs runs as planned.
  Kernels live in one `kernel.module` per target (`@cuda_kernels`, `@cpu_kernels`),
  are named for what they compute (`@add_f32`, `@cmpf_olt_f32_2d`, `@matmul_f32_rows8`)
  and are generated once per module however often they are launched.

Invariants of the output: it verifies; every buffer the program allocates is freed on
every path except those a function returns; scalars stay host values and reach kernels
as scalar arguments; every lowered op keeps the location of the level-1 op it came
from, so run-time errors point at the user's source.

Not handled (each a located error): a module that is not planned (`vdev.on_device`
left, a tensor op without `vdev.device`, an operand on another device than its op),
tensor ops outside the level-1 set (`tensor.extract`, `linalg.generic`, ...), elementwise
ops the kernel backends do not support, `linalg.matmul` over mixed or `i1` element types,
tensors of element types the backends lack, and tensors crossing other region ops
(`scf.while`). Buffers are never reused in place: each op writes a fresh buffer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from xdsl.context import Context
from xdsl.dialects import arith, cf, func, math, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.linalg.ops import FillOp, MatmulOp
from xdsl.dialects.tensor import EmptyOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.hints import isa

from ..analysis.dtypes import dtype_of
from ..diagnostics import error_at
from ..dialects import device as dev
from ..dialects import kernel as kn
from ..dialects.kernel import SUPPORTED_OPS
from ..dialects.memory_scopes import DEFAULT_SCOPE
from ..dialects.placement import (
    arg_device,
    host_device,
    module_targets,
    result_device,
    result_placement,
    value_device,
)
from ..dialects.target import TargetAttr
from ..dialects.vdev import DEVICE_ATTR, DeviceCopyOp, OnDeviceOp
from ..dialects.virtual_device import DeviceAttr, ir_text
from ..dispatch import OpTable
from ..system.cost import NO_WORK, WORK_ATTR, op_work

ELEMENTWISE_BLOCK = 256
"""Threads per block of elementwise and fill kernels (fewer when the target allows fewer)."""
MATMUL_ROWS = 8
"""Rows of the result each thread of a matmul kernel computes (one column of them)."""
MATMUL_UNROLL = 4
"""Steps of k one iteration of a matmul kernel's loop over k takes."""

_SHORT_NAMES = {
    "addf": "add", "addi": "add", "subf": "sub", "subi": "sub", "mulf": "mul",
    "muli": "mul", "divf": "div", "negf": "neg",
}  # fmt: skip
"""Kernel name stems where the op's name says more than the kernel's (`addf` -> `add`)."""


def _is_tensor(value: SSAValue) -> bool:
    return isa(value.type, TensorType[Attribute])


def _tensor(type_: Attribute) -> TensorType[Attribute]:
    return cast(TensorType[Attribute], type_)


def _memref(type_: Attribute) -> MemRefType[Attribute]:
    return cast(MemRefType[Attribute], type_)


def _type_text(type_: Attribute) -> str:
    return ir_text(type_)


# ---------------------------------------------------------------------------------------
# Phase 1: ownership facts


@dataclass
class Ownership:
    """Where each buffer is freed and which uses get a clone (see the header, phase 1)."""

    frees_after: dict[Operation, list[SSAValue]] = field(
        default_factory=dict[Operation, list[SSAValue]]
    )
    """Owned values to free right after an op (their last use, or their definition)."""
    frees_at_start: dict[Block, list[SSAValue]] = field(default_factory=dict[Block, list[SSAValue]])
    """Block arguments to free as the block starts (they have no use)."""
    clones: set[tuple[Operation, int]] = field(default_factory=set[tuple[Operation, int]])
    """(op, operand index) whose operand is copied to a fresh buffer first."""

    @staticmethod
    def of(function: func.FuncOp) -> Ownership:
        facts = Ownership()
        for op in function.walk():
            for region in op.regions:
                for block in region.blocks:
                    facts._analyse_block(block, function)
        return facts

    def _analyse_block(self, block: Block, function: func.FuncOp) -> None:
        owned: list[SSAValue] = []
        if block.parent_op() is not function:
            owned += [a for a in block.args if _is_tensor(a)]
        for op in block.ops:
            owned += [r for r in op.results if _is_tensor(r)]
            if isinstance(op, func.ReturnOp | scf.YieldOp):
                self._terminator_clones(op, block)
            elif isinstance(op, scf.ForOp):
                self._init_clones(op)
        for value in owned:
            self._place_free(value, block)

    def _terminator_clones(self, op: Operation, block: Block) -> None:
        seen: set[SSAValue] = set()
        for i, value in enumerate(op.operands):
            if not _is_tensor(value):
                continue
            defined_here = _owner_block(value) is block and not _borrowed(value)
            if not defined_here or value in seen:
                self.clones.add((op, i))
            seen.add(value)

    def _init_clones(self, loop: scf.ForOp) -> None:
        seen: set[SSAValue] = set()
        offset = len(loop.operands) - len(loop.iter_args)
        for i, value in enumerate(loop.iter_args):
            if _is_tensor(value) and not self._moves_into(value, loop, seen):
                self.clones.add((loop, offset + i))
            seen.add(value)

    @staticmethod
    def _moves_into(value: SSAValue, loop: scf.ForOp, seen: set[SSAValue]) -> bool:
        """Whether the loop may take `value`'s buffer as its first iteration argument."""
        block = loop.parent_block()
        if value in seen or _borrowed(value) or _owner_block(value) is not block:
            return False
        assert block is not None
        for use in value.uses:
            user = use.operation
            if user is loop:
                continue
            if loop.is_ancestor(user):
                return False  # the body reads it while the loop may free its buffer
            ancestor = block.find_ancestor_op_in_block(user)
            if ancestor is not None and loop.is_before_in_block(ancestor):
                return False  # used after the loop
        return True

    def _place_free(self, value: SSAValue, block: Block) -> None:
        last: Operation | None = None
        for use in value.uses:
            ancestor = block.find_ancestor_op_in_block(use.operation)
            assert ancestor is not None  # SSA dominance: uses are in the defining block
            if last is None or last.is_before_in_block(ancestor):
                last = ancestor
        if last is None:
            if isinstance(value, BlockArgument):
                self.frees_at_start.setdefault(block, []).append(value)
            else:
                self.frees_after.setdefault(cast(OpResult, value).op, []).append(value)
            return
        if isinstance(last, func.ReturnOp | scf.YieldOp):
            return  # the terminator hands the buffer on (a duplicate is cloned)
        moved = isinstance(last, scf.ForOp) and value in last.iter_args
        if moved and (last, _operand_index(last, value)) not in self.clones:
            return  # moved into the loop
        self.frees_after.setdefault(last, []).append(value)


def _operand_index(op: Operation, value: SSAValue) -> int:
    for i, operand in enumerate(op.operands):
        if operand is value:
            return i
    return -1


def _owner_block(value: SSAValue) -> Block | None:
    if isinstance(value, BlockArgument):
        return value.block
    return cast(OpResult, value).op.parent_block()


def _borrowed(value: SSAValue) -> bool:
    """Function arguments: the caller owns their buffers."""
    return isinstance(value, BlockArgument) and isinstance(value.block.parent_op(), func.FuncOp)


# ---------------------------------------------------------------------------------------
# Kernels


@dataclass
class KernelLibrary:
    """The generated kernels: one `kernel.module` per target, one kernel per computation."""

    top: ModuleOp
    modules: dict[TargetAttr, kn.KernelModuleOp] = field(
        default_factory=dict[TargetAttr, kn.KernelModuleOp]
    )
    kernels: dict[tuple[TargetAttr, str], SymbolRefAttr] = field(
        default_factory=dict[tuple[TargetAttr, str], SymbolRefAttr]
    )
    """(target, what the kernel computes) -> `@module::@kernel`."""

    def module_for(self, target: TargetAttr) -> kn.KernelModuleOp:
        found = self.modules.get(target)
        if found is None:
            taken = {
                str(op.sym_name.data)
                for op in self.top.ops
                if isinstance(op, kn.KernelModuleOp | func.FuncOp | memref.GlobalOp)
            }
            stem = f"{target.device_type}_kernels"
            name, n = stem, 0
            while name in taken:
                n += 1
                name = f"{stem}_{n}"
            found = kn.KernelModuleOp(name, target)
            self.modules[target] = found
            # In the order they are made, before the functions.
            previous = list(self.modules.values())[-2] if len(self.modules) > 1 else None
            where = (
                InsertPoint.after(previous)
                if previous is not None
                else InsertPoint.at_start(self.top.body.block)
            )
            Rewriter.insert_op(found, where)
        return found

    def kernel(
        self,
        target: TargetAttr,
        stem: str,
        key: str,
        build: Callable[[str], kn.KernelFuncOp],
        source: Operation,
    ) -> SymbolRefAttr:
        """`@module::@name` of the kernel computing `key`, built by `build(name)` once;
        its ops take the location of `source`, the first op it was generated for."""
        found = self.kernels.get((target, key))
        if found is not None:
            return found
        module = self.module_for(target)
        taken = {k.sym_name.data for k in module.kernels}
        name, n = stem, 0
        while name in taken:
            n += 1
            name = f"{stem}_{n}"
        kernel = build(name)
        for op in kernel.walk():
            op.location = source.location
        module.body.block.add_op(kernel)
        found = SymbolRefAttr(module.sym_name.data, [name])
        self.kernels[(target, key)] = found
        return found


class _KernelBuilder:
    """Appends ops to a kernel body (and to the blocks of `scf.if`/`scf.for` inside it)."""

    def __init__(self, block: Block, outer: _KernelBuilder | None = None) -> None:
        self.block = block
        self.root: _KernelBuilder = outer.root if outer is not None else self
        self.constants: dict[int, SSAValue] = {}

    def nested(self, arg_types: Sequence[Attribute] = ()) -> _KernelBuilder:
        """A builder for a new block (of an scf.if or scf.for) inside this kernel."""
        return _KernelBuilder(Block(arg_types=arg_types), self)

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0] if op.results else cast(SSAValue, None)

    def index(self, n: int) -> SSAValue:
        """An index constant in the kernel's top block (one per value): nested blocks
        are attached after it, so it dominates them."""
        root = self.root
        found = root.constants.get(n)
        if found is None:
            found = root.constants[n] = root.add(
                arith.ConstantOp.from_int_and_width(n, IndexType())
            )
        return found

    def thread_index(self, dim: kn.Dimension = "x") -> SSAValue:
        """blockIdx * blockDim + threadIdx along `dim`."""
        tx = self.add(kn.ThreadIdOp(dim))
        bx = self.add(kn.BlockIdOp(dim))
        bd = self.add(kn.BlockDimOp(dim))
        return self.add(arith.AddiOp(self.add(arith.MuliOp(bx, bd)), tx))

    def dims(self, buffer: SSAValue, rank: int) -> list[SSAValue]:
        return [self.add(memref.DimOp(buffer, self.index(d))) for d in range(rank)]


def _name_params(block: Block, names: Sequence[str]) -> None:
    for arg, name in zip(block.args, names, strict=True):
        arg.name_hint = name


def _dynamic_memref(element: Attribute, rank: int) -> MemRefType[Attribute]:
    return MemRefType(element, [DYNAMIC_INDEX] * rank)


def _rank_suffix(rank: int) -> str:
    return "" if rank == 1 else f"_{rank}d"


def _elementwise_kernel(
    name: str, op: Operation, operand_types: Sequence[Attribute], rank: int
) -> kn.KernelFuncOp:
    """One thread per element: out[idx] = op(in0[idx], ...); scalars pass as they are."""
    result = _tensor(op.results[0].type).element_type
    params: list[Attribute] = [
        _dynamic_memref(_tensor(t).element_type, rank) if isa(t, TensorType[Attribute]) else t
        for t in operand_types
    ]
    params.append(_dynamic_memref(result, rank))
    kernel = kn.KernelFuncOp(name, params)
    body = kernel.body.block
    _name_params(body, [f"in{i}" for i in range(len(params) - 1)] + ["out"])
    out = body.args[-1]
    k = _KernelBuilder(body)
    i = k.thread_index()
    dims = k.dims(out, rank)
    inside = k.nested()
    indices = _delinearise(inside, i, dims)
    scalars = [
        inside.add(memref.LoadOp.get(arg, indices)) if isinstance(arg.type, MemRefType) else arg
        for arg in body.args[:-1]
    ]
    computed = inside.add(
        op.create(
            operands=scalars,
            result_types=[result],
            properties=dict(op.properties),
            attributes={n: a for n, a in op.attributes.items() if n != DEVICE_ATTR},
        )
    )
    inside.add(memref.StoreOp.get(computed, out, indices))
    _guarded(k, i, dims, inside)
    return kernel


def _fill_kernel(name: str, element: Attribute, rank: int) -> kn.KernelFuncOp:
    """One thread per element: out[idx] = value."""
    kernel = kn.KernelFuncOp(name, [_dynamic_memref(element, rank), element])
    out, value = kernel.body.block.args
    _name_params(kernel.body.block, ["out", "value"])
    k = _KernelBuilder(kernel.body.block)
    i = k.thread_index()
    dims = k.dims(out, rank)
    inside = k.nested()
    inside.add(memref.StoreOp.get(value, out, _delinearise(inside, i, dims)))
    _guarded(k, i, dims, inside)
    return kernel


def _delinearise(k: _KernelBuilder, i: SSAValue, dims: Sequence[SSAValue]) -> list[SSAValue]:
    """The row-major index of linear position `i` (< the product of `dims`)."""
    indices: list[SSAValue] = []
    rest = i
    for d in reversed(range(len(dims))):
        if d == 0:
            indices.append(rest)
        else:
            indices.append(k.add(arith.RemUIOp(rest, dims[d])))
            rest = k.add(arith.DivUIOp(rest, dims[d]))
    return list(reversed(indices))


def _guarded(
    k: _KernelBuilder, i: SSAValue, dims: Sequence[SSAValue], inside: _KernelBuilder
) -> None:
    """`if i < prod(dims) { inside }`, then `kernel.return`."""
    n = dims[0] if dims else k.index(1)
    for d in dims[1:]:
        n = k.add(arith.MuliOp(n, d))
    in_range = k.add(arith.CmpiOp(i, n, "ult"))
    inside.add(scf.YieldOp())
    k.add(scf.IfOp(in_range, [], Region(inside.block)))
    k.add(kn.ReturnOp())


def _zero(element: Attribute) -> Operation:
    if isinstance(element, IntegerType | IndexType):
        return arith.ConstantOp.from_int_and_width(0, cast(IndexType, element))
    return arith.ConstantOp(FloatAttr(0.0, cast(Any, element)))


def _matmul_kernel(name: str, element: Attribute) -> kn.KernelFuncOp:
    """R = C + A x B, `MATMUL_ROWS` rows of one column of R per thread (see the header)."""
    matrix = _dynamic_memref(element, 2)
    kernel = kn.KernelFuncOp(name, [matrix, matrix, matrix, matrix])
    a, b, c, r = kernel.body.block.args
    _name_params(kernel.body.block, ["lhs", "rhs", "acc", "out"])
    k = _KernelBuilder(kernel.body.block)
    c0, c1 = k.index(0), k.index(1)
    zero = k.add(_zero(element))
    # Blocks along x take consecutive tiles of rows, so that blocks run one after another
    # (on a CPU) read the same columns of B, from cache.
    tx, bx, by = k.add(kn.ThreadIdOp("x")), k.add(kn.BlockIdOp("x")), k.add(kn.BlockIdOp("y"))
    col = k.add(arith.AddiOp(k.add(arith.MuliOp(by, k.add(kn.BlockDimOp("x")))), tx))
    first = k.add(arith.MuliOp(bx, k.index(MATMUL_ROWS)))
    rows = [first] + [k.add(arith.AddiOp(first, k.index(i))) for i in range(1, MATMUL_ROWS)]
    m = k.add(memref.DimOp(a, c0))
    depth = k.add(memref.DimOp(a, c1))
    n = k.add(memref.DimOp(b, c1))
    # Threads past the last row or column read the last one (and store nothing): every
    # load is in bounds, so whole blocks run vectorised. A result with no rows or no
    # columns has no last one to read: the loop over k then runs no step.
    last_col = k.add(arith.MinSIOp(col, k.add(arith.SubiOp(n, c1))))
    last_row = k.add(arith.SubiOp(m, c1))
    read_rows = [k.add(arith.MinSIOp(row, last_row)) for row in rows]
    no_rows = k.add(arith.CmpiOp(m, c0, "eq"))
    empty = k.add(arith.OrIOp(no_rows, k.add(arith.CmpiOp(n, c0, "eq"))))
    steps = k.add(arith.SelectOp(empty, c0, depth))

    # The loop over k: `MATMUL_UNROLL` steps of k per iteration up to the last multiple
    # of it, then a loop over the rest. A barrier after each parts it from what follows,
    # so the numba backend runs each with the block's threads inside it, vectorised
    # across the columns; the reads of all threads come before any store.
    whole = k.add(
        arith.MuliOp(k.add(arith.DivSIOp(steps, k.index(MATMUL_UNROLL))), k.index(MATMUL_UNROLL))
    )
    sums: Sequence[SSAValue] = [zero] * MATMUL_ROWS
    for start, end, unroll in ((c0, whole, MATMUL_UNROLL), (whole, steps, 1)):
        loop = k.nested([IndexType()] + [element] * MATMUL_ROWS)
        first_k, *carried = loop.block.args
        partials: list[SSAValue] = list(carried)
        for step in range(unroll):
            kk = first_k if step == 0 else loop.add(arith.AddiOp(first_k, k.index(step)))
            y = loop.add(memref.LoadOp.get(b, [kk, last_col]))
            for i, row in enumerate(read_rows):
                x = loop.add(memref.LoadOp.get(a, [row, kk]))
                partials[i] = _multiply_add(loop, element, x, y, partials[i])
        loop.add(scf.YieldOp(*partials))
        products = scf.ForOp(start, end, k.index(unroll), list(sums), Region(loop.block))
        k.add(products)
        k.add(kn.BarrierOp())
        sums = products.results

    col_inside = k.add(arith.CmpiOp(col, n, "ult"))
    for row, product in zip(rows, sums, strict=True):
        store = k.nested()
        previous = store.add(memref.LoadOp.get(c, [row, col]))
        store.add(memref.StoreOp.get(store.add(_add(element, previous, product)), r, [row, col]))
        store.add(scf.YieldOp())
        inside = k.add(arith.AndIOp(k.add(arith.CmpiOp(row, m, "ult")), col_inside))
        k.add(scf.IfOp(inside, [], Region(store.block)))
    k.add(kn.ReturnOp())
    return kernel


def _is_int(element: Attribute) -> bool:
    return isinstance(element, IntegerType | IndexType)


def _multiply_add(
    k: _KernelBuilder, element: Attribute, x: SSAValue, y: SSAValue, partial: SSAValue
) -> SSAValue:
    """`partial + x * y`: for floats one `math.fma`, rounded once."""
    if _is_int(element):
        return k.add(arith.AddiOp(partial, k.add(arith.MuliOp(x, y))))
    return k.add(math.FmaOp(x, y, partial))


def _add(element: Attribute, x: SSAValue, y: SSAValue) -> Operation:
    return arith.AddiOp(x, y) if _is_int(element) else arith.AddfOp(x, y)


def _max_threads(target: TargetAttr) -> int:
    limit = target.get_attr("max_num_threads")
    return (
        limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else 1 << 30
    )


def _elementwise_stem(op: Operation, operand_types: Sequence[Attribute], rank: int) -> str:
    short = op.name.split(".", 1)[1]
    stem = _SHORT_NAMES.get(short, short)
    if isinstance(op, arith.CmpiOp | arith.CmpfOp):
        predicate = str(op.predicate.value.data)
        names = (
            ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
            if isinstance(op, arith.CmpiOp)
            else (
                "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
                "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
            )
        )  # fmt: skip
        stem += f"_{names[int(predicate)]}"
    first = next((t for t in operand_types if isa(t, TensorType[Attribute])), operand_types[0])
    result = _tensor(op.results[0].type).element_type
    # A select is named for the values it picks, not for its (possibly tensor) condition.
    words = [stem, _type_text(result if op.name == "arith.select" else _tensor(first).element_type)]
    if op.name in _CASTS:
        words.append(_type_text(result))
    return "_".join(words) + _rank_suffix(rank)


_CASTS = frozenset(
    (
        "arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci",
        "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.extf", "arith.truncf",
    )
)  # fmt: skip


# ---------------------------------------------------------------------------------------
# Phase 2: the rebuild


class Lowering:
    """Rebuilds every function of a planned module as a level-2 host program."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self.host = host_device(module)
        self.targets = module_targets(module)
        self.kernels = KernelLibrary(module)
        self.globals: dict[tuple[str, str], str] = {}
        self.values: dict[SSAValue, SSAValue] = {}
        self.facts = Ownership()
        self.block = Block()
        self.constants: dict[int, SSAValue] = {}
        self.constant_ops: list[Operation] = []
        self.source: Operation = module
        self.signatures: dict[str, FunctionType] = {}
        """The lowered type of every function, by name (calls need their callee's)."""
        self.shape_only: dict[SSAValue, list[SSAValue]] = {}
        """`tensor.empty` results only `linalg.fill` writes over: no buffer, just the
        dynamic sizes (lowered) for the fills' own allocations."""

    # -- placement and types -----------------------------------------------------------

    def is_host(self, device: DeviceAttr) -> bool:
        host = self.host
        return (
            device.type_name == host.type_name
            and device.device_id == host.device_id
            and (device.scope or DEFAULT_SCOPE) == (host.scope or DEFAULT_SCOPE)
        )

    def memory_space(self, device: DeviceAttr) -> Attribute | None:
        if self.is_host(device):
            return None
        return DeviceAttr.make(
            device.type_name, device.device_id, None, device.scope or DEFAULT_SCOPE
        )

    def buffer_type(self, type_: Attribute, device: DeviceAttr | None, op: Operation) -> Attribute:
        if not isa(type_, TensorType[Attribute]):
            return type_
        if device is None:
            raise error_at(
                op, f"'{op.name}': a {_type_text(type_)} value has no placement; {_PLAN}"
            )
        tensor = _tensor(type_)
        space = self.memory_space(device)
        shape = list(tensor.get_shape())
        if space is None:
            return MemRefType(tensor.element_type, shape)
        return MemRefType(tensor.element_type, shape, memory_space=space)

    def target(self, device: DeviceAttr, op: Operation) -> TargetAttr:
        target = device.target_value
        if target is None and device.type_name is not None:
            target = self.targets.get(device.type_name)
        if target is None:
            raise error_at(
                op, f"'{op.name}' runs on {ir_text(device)}, which has no target; {_PLAN}"
            )
        return target

    def launch_device(self, device: DeviceAttr, op: Operation) -> DeviceAttr:
        if device.type_name is None or device.device_id is None:
            raise error_at(
                op, f"'{op.name}' runs on {ir_text(device)}, which needs a type and an id; {_PLAN}"
            )
        return DeviceAttr.make(device.type_name, device.device_id)

    def op_device(self, op: Operation) -> DeviceAttr:
        device = result_placement(op, 0)
        if device is None:
            raise error_at(op, f"'{op.name}' has no '{DEVICE_ATTR}' placement; {_PLAN}")
        return device

    def operand(self, op: Operation, index: int, device: DeviceAttr) -> SSAValue:
        """Operand `index` of `op`, lowered; it must live on `device`."""
        self.check_place(op, index, device)
        return self.values[op.operands[index]]

    def check_place(self, op: Operation, index: int, device: DeviceAttr) -> None:
        """A located error unless tensor operand `index` of `op` lives on `device`."""
        value = op.operands[index]
        if _is_tensor(value):
            have = value_device(value)
            if have is None or not _same_place(have, device):
                where = ir_text(have) if have is not None else "nowhere (no placement)"
                raise error_at(
                    op,
                    f"'{op.name}' runs on {ir_text(device)} but its operand {index} lives "
                    f"on {where}; {_PLAN} (it inserts a vdev.device_copy)",
                )

    # -- emitting ---------------------------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        op.location = self.source.location
        self.block.add_op(op)
        return op

    def index(self, n: int) -> SSAValue:
        """An index constant of the function being lowered (placed at its entry)."""
        found = self.constants.get(n)
        if found is None:
            constant = arith.ConstantOp.from_int_and_width(n, IndexType())
            constant.location = self.source.location
            self.constant_ops.append(constant)
            found = self.constants[n] = constant.result
        return found

    def dim(self, buffer: SSAValue, d: int) -> SSAValue:
        return self.emit(memref.DimOp(buffer, self.index(d))).results[0]

    def dynamic_sizes(self, type_: Attribute, like: SSAValue) -> list[SSAValue]:
        shape = _memref(type_).get_shape()
        return [self.dim(like, d) for d, n in enumerate(shape) if n == DYNAMIC_INDEX]

    def require_same_extent(self, a: SSAValue, da: int, b: SSAValue, db: int, what: str) -> None:
        """Dimension `da` of buffer `a` equals dimension `db` of `b`: checked here when
        both are static, else at run time by a `cf.assert` saying `what` (a kernel
        sized by one operand would otherwise read past, or silently short of, another)."""
        na, nb = _memref(a.type).get_shape()[da], _memref(b.type).get_shape()[db]
        if na != DYNAMIC_INDEX and nb != DYNAMIC_INDEX:
            if na != nb:
                raise error_at(self.source, f"{what} ({na} and {nb})")
            return
        x = self.index(na) if na != DYNAMIC_INDEX else self.dim(a, da)
        y = self.index(nb) if nb != DYNAMIC_INDEX else self.dim(b, db)
        same = self.emit(arith.CmpiOp(x, y, "eq")).results[0]
        self.emit(cf.AssertOp(same, what))

    def alloc(self, type_: Attribute, sizes: Sequence[SSAValue]) -> SSAValue:
        mtype = _memref(type_)
        if memory_of(mtype) is None:
            return self.emit(memref.AllocOp(list(sizes), [], mtype)).results[0]
        return self.emit(dev.AllocOp(mtype, sizes)).results[0]

    def free(self, buffer: SSAValue) -> None:
        if memory_of(buffer.type) is None:
            self.emit(memref.DeallocOp.get(buffer))
        else:
            self.emit(dev.FreeOp(buffer))

    def clone(self, buffer: SSAValue) -> SSAValue:
        fresh = self.alloc(buffer.type, self.dynamic_sizes(buffer.type, buffer))
        self.emit(dev.CopyOp(buffer, fresh))
        return fresh

    def element_count(self, buffer: SSAValue) -> SSAValue | int:
        """The number of elements of `buffer`: an int when its shape is static."""
        shape = _memref(buffer.type).get_shape()
        if all(n != DYNAMIC_INDEX for n in shape):
            count = 1
            for n in shape:
                count *= n
            return count
        extents = [
            self.index(n) if n != DYNAMIC_INDEX else self.dim(buffer, d)
            for d, n in enumerate(shape)
        ]
        total = extents[0]
        for extent in extents[1:]:
            total = self.emit(arith.MuliOp(total, extent)).results[0]
        return total

    def launch(
        self,
        device: DeviceAttr,
        kernel: SymbolRefAttr,
        grid: Sequence[SSAValue],
        block: Sequence[SSAValue],
        args: Sequence[SSAValue],
        op: Operation,
    ) -> None:
        launch = dev.LaunchOp(kernel, self.launch_device(device, op), grid, block, args)
        work = op_work(op)  # what the planner's cost model charged for `op` (cost.py)
        if work is not None and work != NO_WORK:
            launch.attributes[WORK_ATTR] = DenseArrayBase.from_list(i64, [work.flops, work.nbytes])
        self.emit(launch)

    def blocks_for(self, count: SSAValue | int, per_block: int) -> SSAValue:
        """max(1, ceil(count / per_block)) as an index value."""
        if isinstance(count, int):
            return self.index(max(1, -(-count // per_block)))
        blocks = self.emit(arith.CeilDivUIOp(count, self.index(per_block))).results[0]
        return self.emit(arith.MaxUIOp(blocks, self.index(1))).results[0]

    def launch_over(
        self,
        device: DeviceAttr,
        kernel: SymbolRefAttr,
        out: SSAValue,
        args: Sequence[SSAValue],
        op: Operation,
    ) -> None:
        """Launch an elementwise-style kernel with one thread per element of `out`."""
        per_block = min(ELEMENTWISE_BLOCK, _max_threads(self.target(device, op)))
        count = self.element_count(out)
        if isinstance(count, int):
            per_block = max(1, min(per_block, count))  # a small tensor: one block, no idle threads
        grid = self.blocks_for(count, per_block)
        one = self.index(1)
        self.launch(device, kernel, [grid, one, one], [self.index(per_block), one, one], args, op)

    # -- the walk ---------------------------------------------------------------------------

    def run(self) -> None:
        functions = [op for op in self.module.ops if isinstance(op, func.FuncOp)]
        for function in functions:
            self.signatures[function.sym_name.data] = self.signature(function)
        for function in functions:
            if function.body.blocks:
                self.lower_body(function)
        for function in functions:
            function.function_type = self.signatures[function.sym_name.data]
            _drop_device_attrs(function)

    def signature(self, function: func.FuncOp) -> FunctionType:
        inputs = [
            self.buffer_type(t, arg_device(function, i), function)
            for i, t in enumerate(function.function_type.inputs.data)
        ]
        outputs = [
            self.buffer_type(t, result_device(function, i), function)
            for i, t in enumerate(function.function_type.outputs.data)
        ]
        return FunctionType.from_lists(inputs, outputs)

    def lower_body(self, function: func.FuncOp) -> None:
        old = function.body.block
        self.facts = Ownership.of(function)
        self.constants, self.constant_ops = {}, []
        new = Block(arg_types=self.signatures[function.sym_name.data].inputs.data)
        for a, b in zip(old.args, new.args, strict=True):
            b.name_hint = a.name_hint
            self.values[a] = b
        self.lower_block(old, new)
        first = new.first_op
        for constant in self.constant_ops:
            if first is None:
                new.add_op(constant)
            else:
                new.insert_op_before(constant, first)
        function.body.detach_block(old)
        function.body.add_block(new)
        old.erase(safe_erase=False)

    def lower_block(self, old: Block, new: Block) -> None:
        outer, self.block = self.block, new
        self.source = old.parent_op() or self.module
        for value in self.facts.frees_at_start.get(old, []):
            self.free(self.values[value])  # block arguments: never shape-only
        for op in old.ops:
            self.source = op
            self.lower_op(op)
            for value in self.facts.frees_after.get(op, []):
                if value not in self.shape_only:
                    self.source = op
                    self.free(self.values[value])
        self.block = outer

    def lower_op(self, op: Operation) -> None:
        lower = _RULES.lookup(op)
        if lower is not None:
            lower(self, op)
        elif isinstance(op, OnDeviceOp):
            raise error_at(op, f"'vdev.on_device' is left in the module; {_PLAN}")
        elif any(isa(t, TensorType[Attribute]) for t in (*op.result_types, *op.operand_types)):
            if op.name.startswith(("arith.", "math.")):
                self.lower_elementwise(op)
            else:
                raise error_at(
                    op,
                    f"'{op.name}' on tensors is not lowered by lower-to-device (level-1 ops: "
                    "elementwise arith/math the kernel backends support, linalg.fill, "
                    "linalg.matmul, tensor.empty, arith.constant, func.call, scf.if, scf.for, "
                    "vdev.device_copy)",
                )
        else:
            self.lower_scalar(op)

    def map_results(self, old: Operation, new: Sequence[SSAValue]) -> None:
        for a, b in zip(old.results, new, strict=True):
            if a.name_hint and not b.name_hint:
                b.name_hint = a.name_hint
            self.values[a] = b

    def lowered_operand(self, op: Operation, index: int) -> SSAValue:
        """Operand `index` as the new IR sees it, cloned when phase 1 said so."""
        value = self.values[op.operands[index]]
        if (op, index) in self.facts.clones:
            return self.clone(value)
        return value

    def lower_scalar(self, op: Operation) -> None:
        if any(_is_tensor(v) for inner in op.walk() for v in (*inner.operands, *inner.results)):
            raise error_at(
                op,
                f"'{op.name}' holds tensor values; lower-to-device lowers tensors across "
                "func.call, scf.if and scf.for only",
            )
        clone = op.clone(value_mapper=self.values)
        self.emit(clone)
        for inner in clone.walk():
            inner.location = self.source.location if inner is clone else inner.location
        self.map_results(op, clone.results)

    def lower_elementwise(self, op: Operation) -> None:
        device = self.op_device(op)
        operands = [self.operand(op, i, device) for i in range(len(op.operands))]
        types = [o.type for o in op.operands]
        first, shaped = next(
            (i, v) for i, v in enumerate(operands) if isinstance(v.type, MemRefType)
        )
        rank = _memref(shaped.type).get_num_dims()
        for t in (*types, op.results[0].type):
            element = _tensor(t).element_type if isa(t, TensorType[Attribute]) else t
            if not _kernel_element(element):
                raise error_at(op, f"'{op.name}' on {_type_text(t)}: {_ELEMENTS}")
        if op.name not in SUPPORTED_OPS:
            raise error_at(
                op, f"'{op.name}' on tensors: the kernel backends do not support '{op.name}'"
            )
        for i, other in enumerate(operands[first + 1 :], first + 1):
            if isinstance(other.type, MemRefType):
                for d in range(rank):
                    self.require_same_extent(
                        shaped, d, other, d,
                        f"'{op.name}' on tensors of different shapes: dimension {d} of "
                        f"operand {i} differs from dimension {d} of operand {first}",
                    )  # fmt: skip
        out_type = self.buffer_type(op.results[0].type, device, op)
        out = self.alloc(out_type, self.dynamic_sizes(out_type, shaped))
        stem = _elementwise_stem(op, types, rank)
        key = _kernel_key(op, types, rank)
        kernel = self.kernels.kernel(
            self.target(device, op),
            stem,
            key,
            lambda name: _elementwise_kernel(name, op, types, rank),
            op,
        )
        self.launch_over(device, kernel, out, [*operands, out], op)
        self.map_results(op, [out])


_PLAN = "lower-to-device lowers planned modules: run plan-devices first"
_ELEMENTS = "the kernel backends support index, i1, i8, i16, i32, i64, f16, f32 and f64 elements"


def _kernel_element(element: Attribute) -> bool:
    return dtype_of(element) is not None


def _kernel_key(op: Operation, types: Sequence[Attribute], rank: int) -> str:
    element_types = [
        _type_text(_tensor(t).element_type)
        if isa(t, TensorType[Attribute])
        else f"scalar {_type_text(t)}"
        for t in types
    ]
    props = ", ".join(f"{k}={ir_text(v)}" for k, v in sorted(op.properties.items()))
    attrs = ", ".join(
        f"{k}={ir_text(v)}" for k, v in sorted(op.attributes.items()) if k != DEVICE_ATTR
    )
    result = _type_text(_tensor(op.results[0].type).element_type)
    return f"{op.name} {props} {attrs} ({', '.join(element_types)}) -> {result} rank {rank}"


def memory_of(type_: Attribute) -> DeviceAttr | None:
    space = _memref(type_).memory_space
    return space if isinstance(space, DeviceAttr) else None


def _same_place(a: DeviceAttr, b: DeviceAttr) -> bool:
    return (
        a.type_name == b.type_name
        and a.device_id == b.device_id
        and (a.scope or DEFAULT_SCOPE) == (b.scope or DEFAULT_SCOPE)
    )


def _drop_device_attrs(function: func.FuncOp) -> None:
    for key in ("arg_attrs", "res_attrs"):
        attrs = function.properties.get(key)
        if not isinstance(attrs, ArrayAttr):
            continue
        entries = [
            DictionaryAttr({k: v for k, v in d.data.items() if k != DEVICE_ATTR})
            for d in cast(ArrayAttr[DictionaryAttr], attrs).data
        ]
        if all(not e.data for e in entries):
            del function.properties[key]
        else:
            function.properties[key] = ArrayAttr(entries)


# ---------------------------------------------------------------------------------------
# Lowering rules by op class

_RULES: OpTable[Callable[[Lowering, Any], None]] = OpTable("lower-to-device")


@_RULES.impl(func.ReturnOp)
def _return(low: Lowering, op: func.ReturnOp) -> None:
    function = op.parent_op()
    assert isinstance(function, func.FuncOp)
    values: list[SSAValue] = []
    for i, value in enumerate(op.operands):
        if _is_tensor(value):
            low.operand(
                op,
                i,
                _require(
                    result_device(function, i), op, f"result {i} of @{function.sym_name.data}"
                ),
            )
        values.append(low.lowered_operand(op, i))
    low.emit(func.ReturnOp(*values))


@_RULES.impl(func.CallOp)
def _call(low: Lowering, op: func.CallOp) -> None:
    callee = _callee(low.module, op)
    args: list[SSAValue] = []
    for i, value in enumerate(op.arguments):
        if _is_tensor(value):
            where = _require(arg_device(callee, i), op, f"argument {i} of @{callee.sym_name.data}")
            low.operand(op, i, where)
        args.append(low.values[value])
    result_types: list[Attribute] = []
    for j, result in enumerate(op.res):
        placed = result_placement(op, j) if _is_tensor(result) else None
        wanted = result_device(callee, j) if _is_tensor(result) else None
        if placed is not None and wanted is not None and not _same_place(placed, wanted):
            raise error_at(
                op,
                f"'func.call' result {j} is placed on {ir_text(placed)} but @"
                f"{callee.sym_name.data} returns it on {ir_text(wanted)}; {_PLAN}",
            )
        result_types.append(low.buffer_type(result.type, wanted or placed, op))
    call = low.emit(func.CallOp(op.callee, args, result_types))
    low.map_results(op, call.results)


def _callee(module: ModuleOp, op: func.CallOp) -> func.FuncOp:
    name = op.callee.string_value()
    for candidate in module.ops:
        if isinstance(candidate, func.FuncOp) and candidate.sym_name.data == name:
            return candidate
    raise error_at(op, f"'func.call' of @{name}, which is not a function of the module")


def _require(device: DeviceAttr | None, op: Operation, what: str) -> DeviceAttr:
    if device is None:
        raise error_at(op, f"'{op.name}': {what} has no '{DEVICE_ATTR}' placement; {_PLAN}")
    return device


@_RULES.impl(DeviceCopyOp)
def _device_copy(low: Lowering, op: DeviceCopyOp) -> None:
    source = low.operand(op, 0, op.src_device)
    out_type = low.buffer_type(op.result.type, op.dst_device, op)
    out = low.alloc(out_type, low.dynamic_sizes(out_type, source))
    low.emit(dev.CopyOp(source, out))
    low.map_results(op, [out])


@_RULES.impl(EmptyOp)
def _empty(low: Lowering, op: Operation) -> None:
    device = low.op_device(op)
    out_type = low.buffer_type(op.results[0].type, device, op)
    sizes = [low.values[v] for v in op.operands]
    result = op.results[0]
    if result.uses and all(_is_fill_destination(use.operation, use.index) for use in result.uses):
        low.shape_only[result] = sizes  # each fill allocates its own result
        return
    low.map_results(op, [low.alloc(out_type, sizes)])


def _is_fill_destination(op: Operation, index: int) -> bool:
    return op.name == "linalg.fill" and index == 1


@_RULES.impl(arith.ConstantOp)
def _constant(low: Lowering, op: arith.ConstantOp) -> None:
    if not _is_tensor(op.result):
        low.lower_scalar(op)
        return
    device = low.op_device(op)
    value = op.value
    if not isinstance(value, DenseIntOrFPElementsAttr):
        raise error_at(op, f"'arith.constant' of {ir_text(value)} is not lowered (dense<...> is)")
    out_type = low.buffer_type(op.result.type, device, op)
    element = _tensor(op.result.type).element_type
    if not _kernel_element(element):
        raise error_at(op, f"'arith.constant' of {_type_text(op.result.type)}: {_ELEMENTS}")
    out = low.alloc(out_type, [])
    if 0 in _tensor(op.result.type).get_shape():
        pass  # no element to write (and xDSL's is_splat fails on no data)
    elif value.is_splat():
        scalar = low.emit(arith.ConstantOp(next(iter(value.iter_attrs())))).results[0]
        _fill(low, device, out, scalar, op)
    else:
        host_type = MemRefType(element, _tensor(op.result.type).get_shape())
        name = _constant_global(low, value, host_type)
        data = low.emit(memref.GetGlobalOp(name, host_type)).results[0]
        low.emit(dev.CopyOp(data, out))
    low.map_results(op, [out])


def _constant_global(
    low: Lowering, value: DenseIntOrFPElementsAttr, type_: MemRefType[Attribute]
) -> str:
    """The `memref.global` holding `value` (one per distinct value and type)."""
    key = (ir_text(value), ir_text(type_))
    name = low.globals.get(key)
    if name is None:
        shape = "x".join(str(n) for n in type_.get_shape())
        name = (
            f"constant_{shape}x{ir_text(type_.element_type)}"
            if shape
            else f"constant_{ir_text(type_.element_type)}"
        )
        taken = {
            str(o.sym_name.data)
            for o in low.module.ops
            if isinstance(o, memref.GlobalOp | func.FuncOp | kn.KernelModuleOp)
        }
        stem, n = name, 0
        while name in taken:
            n += 1
            name = f"{stem}_{n}"
        low.globals[key] = name
        glob = memref.GlobalOp.get(StringAttr(name), type_, value, constant=UnitAttr())
        glob.location = low.source.location
        first_func = next((o for o in low.module.ops if isinstance(o, func.FuncOp)), None)
        if first_func is None:
            low.module.body.block.add_op(glob)
        else:
            low.module.body.block.insert_op_before(glob, first_func)
    return name


def _fill(low: Lowering, device: DeviceAttr, out: SSAValue, value: SSAValue, op: Operation) -> None:
    element = value.type
    rank = _memref(out.type).get_num_dims()
    stem = f"fill_{_type_text(element)}{_rank_suffix(rank)}"
    kernel = low.kernels.kernel(
        low.target(device, op), stem, f"fill {_type_text(element)} rank {rank}",
        lambda name: _fill_kernel(name, element, rank), op,
    )  # fmt: skip
    low.launch_over(device, kernel, out, [out, value], op)


@_RULES.impl(FillOp)
def _linalg_fill(low: Lowering, op: Operation) -> None:
    device = low.op_device(op)
    value = low.values[op.operands[0]]
    if isinstance(value.type, MemRefType):
        raise error_at(op, "'linalg.fill' of a tensor value is not lowered (fill with a scalar)")
    out_type = low.buffer_type(op.results[0].type, device, op)
    if value.type != _memref(out_type).element_type:
        raise error_at(
            op,
            f"'linalg.fill' of {_type_text(value.type)} into "
            f"{_type_text(op.results[0].type)}: the element types must agree",
        )
    sizes = low.shape_only.get(op.operands[1])
    if sizes is None:
        sizes = low.dynamic_sizes(out_type, low.operand(op, 1, device))
    else:
        low.check_place(op, 1, device)
    out = low.alloc(out_type, sizes)
    _fill(low, device, out, value, op)
    low.map_results(op, [out])


@_RULES.impl(MatmulOp)
def _matmul(low: Lowering, op: Operation) -> None:
    device = low.op_device(op)
    if len(op.operands) != 3 or len(op.results) != 1:
        raise error_at(op, "'linalg.matmul' is lowered with two inputs and one output tensor")
    a, b, c = (low.operand(op, i, device) for i in range(3))
    elements = {_memref(v.type).element_type for v in (a, b, c)}
    element = _tensor(op.results[0].type).element_type
    if (
        len(elements) != 1
        or element not in elements
        or not all(_memref(v.type).get_num_dims() == 2 for v in (a, b, c))
    ):
        raise error_at(op, "'linalg.matmul' is lowered for 2-D operands of one element type")
    if not _kernel_element(element) or element == IntegerType(1):
        raise error_at(
            op,
            f"'linalg.matmul' of {_type_text(element)}: matmul kernels take integers "
            "(i8 to i64, index) and floats",
        )
    target = low.target(device, op)
    stem = f"matmul_{_type_text(element)}_rows{MATMUL_ROWS}"
    kernel = low.kernels.kernel(
        target, stem, f"matmul {_type_text(element)} rows {MATMUL_ROWS}",
        lambda name: _matmul_kernel(name, element), op,
    )  # fmt: skip
    mismatch = "'linalg.matmul' of mismatched shapes: dimension"
    low.require_same_extent(
        a, 1, b, 0, f"{mismatch} 1 of ins[0] differs from dimension 0 of ins[1]"
    )
    low.require_same_extent(c, 0, a, 0, f"{mismatch} 0 of outs differs from dimension 0 of ins[0]")
    low.require_same_extent(c, 1, b, 1, f"{mismatch} 1 of outs differs from dimension 1 of ins[1]")
    out_type = low.buffer_type(op.results[0].type, device, op)
    out = low.alloc(out_type, low.dynamic_sizes(out_type, c))
    columns = _extent(low, c, 1)
    threads = min(ELEMENTWISE_BLOCK, _max_threads(target))
    if isinstance(columns, int):
        threads = max(1, min(threads, columns))  # a narrow result: no idle threads
    tiles = low.blocks_for(_extent(low, c, 0), MATMUL_ROWS)
    strips = low.blocks_for(columns, threads)
    one = low.index(1)
    low.launch(
        device, kernel, [tiles, strips, one], [low.index(threads), one, one], [a, b, c, out], op
    )
    low.map_results(op, [out])


def _extent(low: Lowering, buffer: SSAValue, d: int) -> SSAValue | int:
    n = _memref(buffer.type).get_shape()[d]
    return n if n != DYNAMIC_INDEX else low.dim(buffer, d)


@_RULES.impl(scf.IfOp)
def _if(low: Lowering, op: scf.IfOp) -> None:
    types = [
        low.buffer_type(r.type, result_placement(op, i) if _is_tensor(r) else None, op)
        for i, r in enumerate(op.results)
    ]
    cond = low.values[op.cond]
    then = Block()
    low.lower_block(op.true_region.block, then)
    regions = [Region(then)]
    if op.false_region.blocks:
        orelse = Block()
        low.lower_block(op.false_region.block, orelse)
        regions.append(Region(orelse))
    low.source = op
    new = low.emit(scf.IfOp(cond, types, regions[0], regions[1] if len(regions) > 1 else None))
    _check_yields(low, op, types)
    low.map_results(op, new.results)


@_RULES.impl(scf.ForOp)
def _for(low: Lowering, op: scf.ForOp) -> None:
    types = [
        low.buffer_type(r.type, result_placement(op, i) if _is_tensor(r) else None, op)
        for i, r in enumerate(op.results)
    ]
    offset = len(op.operands) - len(op.iter_args)
    inits: list[SSAValue] = []
    for i, value in enumerate(op.iter_args):
        if _is_tensor(value):
            low.operand(op, offset + i, _require(result_placement(op, i), op, f"result {i}"))
        inits.append(low.lowered_operand(op, offset + i))
    old = op.body.block
    body = Block(arg_types=[old.args[0].type, *types])
    for a, b in zip(old.args, body.args, strict=True):
        b.name_hint = a.name_hint
        low.values[a] = b
    low.lower_block(old, body)
    low.source = op
    new = low.emit(
        scf.ForOp(low.values[op.lb], low.values[op.ub], low.values[op.step], inits, Region(body))
    )
    _check_yields(low, op, types)
    low.map_results(op, new.results)


def _check_yields(low: Lowering, op: Operation, types: Sequence[Attribute]) -> None:
    for region in op.regions:
        for block in region.blocks:
            yielded = block.last_op
            if not isinstance(yielded, scf.YieldOp):
                continue
            for i, value in enumerate(yielded.operands):
                if _is_tensor(value):
                    low.operand(yielded, i, _require(result_placement(op, i), op, f"result {i}"))


@_RULES.impl(scf.YieldOp)
def _yield(low: Lowering, op: scf.YieldOp) -> None:
    low.emit(scf.YieldOp(*(low.lowered_operand(op, i) for i in range(len(op.operands)))))


@dataclass(frozen=True)
class LowerToDevicePass(ModulePass):
    """Lowers a planned level-1 module to a level-2 host program (see the module header)."""

    name = "lower-to-device"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        Lowering(op).run()
