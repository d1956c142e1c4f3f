"""Building kernels: the library of generated kernels (one `kernel.module` per target,
one kernel per computation, deduplicated by what it computes) and a builder appending
ops to a kernel body, with the index arithmetic every kernel shares (thread index,
row-major delinearisation, the bounds guard)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ...dialects import kernel as kn
from ...dialects.target import TargetAttr

ELEMENTWISE_BLOCK = 256
"""Threads per block of elementwise and fill kernels (fewer when the target allows fewer)."""


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

    def kernel_by_text(
        self, target: TargetAttr, stem: str, built: kn.KernelFuncOp, source: Operation
    ) -> SymbolRefAttr:
        """`kernel` keyed by the printed form of `built` (a kernel named `@kernel`), which
        is the kernel itself, renamed, when it is the first to compute what it does: a
        kernel is built once, not once for its key and again for the module."""

        def rename(name: str) -> kn.KernelFuncOp:
            built.sym_name = StringAttr(name)
            return built

        return self.kernel(target, stem, str(built), rename, source)


class KernelBuilder:
    """Appends ops to a kernel body (and to the blocks of `scf.if`/`scf.for` inside it)."""

    def __init__(self, block: Block, outer: KernelBuilder | None = None) -> None:
        self.block = block
        self.root: KernelBuilder = outer.root if outer is not None else self
        self.constants: dict[int, SSAValue] = {}

    def nested(self, arg_types: Sequence[Attribute] = ()) -> KernelBuilder:
        """A builder for a new block (of an scf.if or scf.for) inside this kernel."""
        return KernelBuilder(Block(arg_types=arg_types), self)

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


def name_params(block: Block, names: Sequence[str]) -> None:
    for arg, name in zip(block.args, names, strict=True):
        arg.name_hint = name


def dynamic_memref(element: Attribute, rank: int) -> MemRefType[Attribute]:
    return MemRefType(element, [DYNAMIC_INDEX] * rank)


def rank_suffix(rank: int) -> str:
    return "" if rank == 1 else f"_{rank}d"


def delinearise(
    k: KernelBuilder, i: SSAValue, dims: Sequence[SSAValue], signed: bool = False
) -> list[SSAValue]:
    """The row-major index of linear position `0 <= i <` the product of `dims`, by
    unsigned division and remainder, or with `signed` by signed ones (equal on these
    non-negative values; the Numba backend's range analysis, `ranges.py`, knows the
    intervals of the signed ones)."""
    rem, div = (arith.RemSIOp, arith.DivSIOp) if signed else (arith.RemUIOp, arith.DivUIOp)
    indices: list[SSAValue] = []
    rest = i
    for d in reversed(range(len(dims))):
        if d == 0:
            indices.append(rest)
        else:
            indices.append(k.add(rem(rest, dims[d])))
            rest = k.add(div(rest, dims[d]))
    return list(reversed(indices))


def guarded(k: KernelBuilder, i: SSAValue, dims: Sequence[SSAValue], inside: KernelBuilder) -> None:
    """`if i < prod(dims) { inside }`, then `kernel.return`."""
    n = dims[0] if dims else k.index(1)
    for d in dims[1:]:
        n = k.add(arith.MuliOp(n, d))
    in_range = k.add(arith.CmpiOp(i, n, "ult"))
    inside.add(scf.YieldOp())
    k.add(scf.IfOp(in_range, [], Region(inside.block)))
    k.add(kn.ReturnOp())


def zero_op(element: Attribute) -> Operation:
    if isinstance(element, IntegerType | IndexType):
        return arith.ConstantOp.from_int_and_width(0, cast(IndexType, element))
    return arith.ConstantOp(FloatAttr(0.0, cast(Any, element)))


def max_threads(target: TargetAttr) -> int:
    limit = target.get_attr("max_num_threads")
    return (
        limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else 1 << 30
    )
