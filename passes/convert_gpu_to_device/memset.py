"""`gpu.memset` for `convert-gpu-to-device`: each fill becomes a launch of a fill kernel.

devplan's `device` dialect has no fill operation, so a `gpu.memset %dst, %v` becomes
what a programmer would write: a kernel that stores `%v` at every element of `%dst`,
launched over the elements.

Phases:

1. Kernels: one `gpu.func @fill_<n> kernel (%dst: <memref type>, %v: <element type>)`
   per distinct memref type, in one new `gpu.module @memset_kernels` (suffixed when the
   name is taken). Thread `i = block_id.x * block_dim.x + thread_id.x` stores `%v` at the
   row-major position `i` when `i` is below the element count (from `memref.dim`).
2. Launches: the memset becomes, in place, the element count (`memref.dim` products on
   the host), `ceil(count / 128)` blocks (at least one) of 128 threads, and a
   `gpu.launch_func` of the kernel with the same async dependencies and token. The rest
   of the conversion then treats it as any other launch (so `%dst` must be memory the
   device reaches, as for MLIR).

Invariant: afterwards no `gpu.memset` remains; each launch covers every element once.
"""

from __future__ import annotations

from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.hints import isa

from ...upstream import gpu as ga

THREADS_PER_BLOCK = 128
"""Threads of each fill launch (within every target's `max_num_threads`)."""


def _index(ops: list[Operation], value: int) -> SSAValue:
    constant = arith.ConstantOp.from_int_and_width(value, IndexType())
    ops.append(constant)
    return constant.result


def _element_count(ops: list[Operation], buffer: SSAValue, rank: int) -> list[SSAValue]:
    """The sizes of `buffer`'s dimensions (appended ops compute them), then their product."""
    sizes: list[SSAValue] = []
    for d in range(rank):
        dim = memref.DimOp(buffer, _index(ops, d))
        ops.append(dim)
        sizes.append(dim.result)
    count = _index(ops, 1) if not sizes else sizes[0]
    for size in sizes[1:]:
        product = arith.MuliOp(count, size)
        ops.append(product)
        count = product.result
    return [*sizes, count]


def _fill_kernel(name: str, type_: MemRefType[Attribute]) -> ga.FuncOp:
    """Phase 1: `dst[unravel(i)] = value` for the thread's linear index `i`."""
    element = type_.element_type
    block = Block(arg_types=[type_, element])
    dst, value = block.args
    dst.name_hint, value.name_hint = "dst", "value"
    ops: list[Operation] = []
    ids = [
        op.build(
            result_types=[IndexType()],
            properties={"dimension": gpu.DimensionAttr(gpu.DimensionEnum("x"))},
        )
        for op in (ga.BlockIdOp, ga.BlockDimOp, ga.ThreadIdOp)
    ]
    ops.extend(ids)
    base = arith.MuliOp(ids[0].results[0], ids[1].results[0])
    linear = arith.AddiOp(base, ids[2].results[0])
    ops.extend([base, linear])
    *sizes, count = _element_count(ops, dst, type_.get_num_dims())
    inside = arith.CmpiOp(linear, count, "ult")
    ops.append(inside)
    body: list[Operation] = []
    indices: list[SSAValue] = []
    rest: SSAValue = linear.result
    for size in reversed(sizes[1:]):
        index = arith.RemUIOp(rest, size)
        quotient = arith.DivUIOp(rest, size)
        body.extend([index, quotient])
        indices.append(index.result)
        rest = quotient.result
    if sizes:
        indices.append(rest)
    body.append(memref.StoreOp.get(value, dst, list(reversed(indices))))
    body.append(scf.YieldOp())
    ops.append(scf.IfOp(inside, [], Region(Block(body))))
    ops.append(ga.ReturnOp.build(operands=[[]]))
    block.add_ops(ops)
    return ga.FuncOp.build(
        properties={
            "function_type": FunctionType.from_lists([type_, element], []),
            "kernel": UnitAttr(),
        },
        attributes={"sym_name": StringAttr(name)},
        regions=[Region(block)],
    )


def _module_name(module: ModuleOp) -> str:
    taken = {
        name.data
        for op in module.body.block.ops
        for name in (op.attributes.get("sym_name"), op.properties.get("sym_name"))
        if isinstance(name, StringAttr)
    }
    name, n = "memset_kernels", 0
    while name in taken:
        name, n = f"memset_kernels_{n}", n + 1
    return name


def _launch(op: ga.MemsetOp, module_name: str, kernel: str) -> None:
    """Phase 2: the memset becomes the element count, the grid and a launch."""
    type_ = op.dst.type
    assert isa(type_, MemRefType[Attribute])
    ops: list[Operation] = []
    count = _element_count(ops, op.dst, type_.get_num_dims())[-1]
    one, threads = _index(ops, 1), _index(ops, THREADS_PER_BLOCK)
    rounded = arith.AddiOp(count, _index(ops, THREADS_PER_BLOCK - 1))
    blocks = arith.DivUIOp(rounded, threads)
    at_least_one = arith.MaxUIOp(blocks, one)
    ops.extend([rounded, blocks, at_least_one])
    launch = ga.LaunchFuncOp.build(
        operands=[
            list(op.asyncDependencies),
            at_least_one.result,
            one,
            one,
            threads,
            one,
            one,
            [],
            [],
            [],
            [],
            [op.dst, op.value],
            [],
        ],
        result_types=[[gpu.AsyncTokenType()] if op.asyncToken is not None else []],
        properties={"kernel": SymbolRefAttr(module_name, [kernel])},
    )
    ops.append(launch)
    for new in ops:
        new.location = op.location
    block = op.parent_block()
    assert block is not None
    block.insert_ops_before(ops, op)
    if op.asyncToken is not None:
        launch.results[0].name_hint = op.asyncToken.name_hint
        op.asyncToken.replace_all_uses_with(launch.results[0])
    Rewriter.erase_op(op)


def memsets_to_launches(module: ModuleOp) -> None:
    """Replace every `gpu.memset` of `module` by a fill launch (see the module docstring)."""
    memsets = [op for op in module.walk() if isinstance(op, ga.MemsetOp)]
    if not memsets:
        return
    module_name = _module_name(module)
    kernels: dict[Attribute, str] = {}
    funcs: list[Operation] = []
    for op in memsets:
        type_ = op.dst.type
        assert isa(type_, MemRefType[Attribute])
        if type_ not in kernels:
            kernels[type_] = f"fill_{len(kernels)}"
            kernel = _fill_kernel(kernels[type_], type_)
            kernel.location = op.location
            funcs.append(kernel)
        _launch(op, module_name, kernels[type_])
    holder = ga.ModuleOp.build(
        properties={"sym_name": StringAttr(module_name)}, regions=[Region(Block(funcs))]
    )
    holder.location = memsets[0].location
    module.body.block.add_op(holder)
    module.attributes["gpu.container_module"] = UnitAttr()
