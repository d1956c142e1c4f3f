"""The kernel of any `linalg.generic`: its loop nest mapped onto threads.

`GenericLoops.of(op)` reads the op's structure and checks it is one the kernel can run:
  * iterators `parallel` and `reduction`;
  * each map's results built from loop dimensions, constants, `+` and `*`, `floordiv`,
    `ceildiv`, `mod` by constants (a permutation, projection, broadcast, constant index,
    or a convolution's `d0 * 2 + d4`); no symbols;
  * every loop dimension appears alone as a result of some operand's map: that operand
    dimension is the loop's extent (outputs first, then inputs);
  * each output's map is a permutation of exactly the parallel dimensions (so each
    thread owns the output elements it writes and no two threads write one element);
  * a body of ops the kernel backends support, `linalg.index` and `linalg.yield`.

`generic_kernel` builds the kernel: one thread per point of the parallel dimensions (a
1-D grid, its linear index split row-major over the parallel extents in loop order, read
from the buffers with `memref.dim`, so one kernel serves every shape of a given rank;
or, with `rows`, a 2-D grid: the dimension of the first output's last dimension is the
global id along x and the other parallel dimensions are split from the global id along
y, so that no thread divides per element and the Numba backend sees the global ids that
let it vectorise a row and run blocks in parallel); each thread
  1. loads the initial value of each output whose value the body reads (its block
     argument is used) or that a reduction accumulates into;
  2. runs the reduction dimensions as nested `scf.for`s (outermost first, in loop
     order), carrying the outputs' values, loading each input at its map of the indices
     and running the body; without reductions, the body once;
  3. stores each output's value at its map of the indices.

Kernel parameters: the inputs (memrefs of dynamic shape, or scalars as they are), then
the initial value of each output that is read (`init<j>`), then the outputs (`out<j>`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, MemRefType, TensorType
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.utils.hints import isa

from ...dialects import kernel as kn
from ...dialects.kernel import SUPPORTED_OPS
from .kernel_builder import (
    KernelBuilder,
    delinearise,
    dynamic_memref,
    guarded,
    name_params,
)
from .kernels import SHORT_NAMES, op_stem
from .types import kernel_element, type_text


class UnsupportedGeneric(Exception):
    """Why a `linalg.generic` has no kernel (the message names the part at fault)."""


@dataclass(frozen=True)
class GenericLoops:
    """The loop structure of a `linalg.generic` (see the header for what is accepted)."""

    maps: tuple[AffineMap, ...]
    """One per operand, inputs then outputs."""
    reductions: tuple[bool, ...]
    """Per loop dimension: whether it is a reduction."""
    extents: tuple[tuple[int, int], ...]
    """Per loop dimension: (operand, dimension of it) giving its extent."""
    inputs: int
    """The number of inputs."""
    reads_init: tuple[bool, ...]
    """Per output: whether the kernel reads its initial value."""

    @property
    def loops(self) -> int:
        return len(self.reductions)

    @property
    def parallel(self) -> list[int]:
        return [d for d, r in enumerate(self.reductions) if not r]

    @property
    def reduction(self) -> list[int]:
        return [d for d, r in enumerate(self.reductions) if r]

    @staticmethod
    def of(op: GenericOp) -> GenericLoops:
        maps = tuple(m.data for m in op.indexing_maps.data)
        inputs = len(op.inputs)
        reductions = _reductions(op)
        if len(maps) != len(op.operands):
            raise UnsupportedGeneric(f"{len(maps)} indexing maps for {len(op.operands)} operands")
        _check_maps(maps, inputs, {d for d, r in enumerate(reductions) if not r})
        extents = _extents(maps, inputs, len(reductions))
        _check_body(op)
        body = op.body.block
        reads = tuple(
            any(reductions) or bool(body.args[inputs + j].uses) for j in range(len(op.outputs))
        )
        return GenericLoops(maps, tuple(reductions), extents, inputs, reads)


def _reductions(op: GenericOp) -> list[bool]:
    reductions: list[bool] = []
    for d, it in enumerate(op.iterator_types.data):
        if it.data == IteratorType.WINDOW:
            raise UnsupportedGeneric(f"iterator d{d} is 'window' (parallel and reduction are)")
        reductions.append(it.data == IteratorType.REDUCTION)
    return reductions


def _check_maps(maps: Sequence[AffineMap], inputs: int, parallel: set[int]) -> None:
    for i, m in enumerate(maps):
        if m.num_symbols:
            raise UnsupportedGeneric(f"the map of operand {i} has symbols")
        for e in m.results:
            _check_expr(e, i)
    for j, m in enumerate(maps[inputs:]):
        dims = [e.position for e in m.results if isinstance(e, AffineDimExpr)]
        if len(dims) != len(m.results) or len(set(dims)) != len(dims) or set(dims) != parallel:
            raise UnsupportedGeneric(
                f"the map of output {j} ({m}) is not a permutation of the parallel dimensions"
            )


def _extents(maps: Sequence[AffineMap], inputs: int, loops: int) -> tuple[tuple[int, int], ...]:
    """Per loop dimension, the first (operand, dimension) it is alone (outputs first)."""
    order = [*range(inputs, len(maps)), *range(inputs)]
    extents: list[tuple[int, int]] = []
    for d in range(loops):
        found = next(
            (
                (o, p)
                for o in order
                for p, e in enumerate(maps[o].results)
                if isinstance(e, AffineDimExpr) and e.position == d
            ),
            None,
        )
        if found is None:
            raise UnsupportedGeneric(
                f"loop dimension d{d} is not alone a dimension of any operand, so its "
                "extent is unknown"
            )
        extents.append(found)
    return tuple(extents)


def _check_body(op: GenericOp) -> None:
    last = op.body.block.last_op
    if isinstance(last, YieldOp) and len(last.operands) != len(op.outputs):
        # xDSL's verifier lets this through; the kernel would carry a value it never gets
        raise UnsupportedGeneric(
            f"its body yields {len(last.operands)} value(s) for {len(op.outputs)} output(s)"
        )
    for inner in op.body.block.walk():
        for value in inner.operands:
            if not op.body.is_ancestor(value.owner):
                raise UnsupportedGeneric(
                    f"the body's '{inner.name}' uses a value defined outside the body "
                    "(pass it to the op as an input)"
                )
        if isinstance(inner, IndexOp | YieldOp):
            continue
        if inner.name not in SUPPORTED_OPS:
            raise UnsupportedGeneric(f"the kernel backends do not support '{inner.name}'")
        for t in (*inner.operand_types, *inner.result_types):
            if not kernel_element(t):
                raise UnsupportedGeneric(f"'{inner.name}' on {t}, an element type kernels lack")


def _check_expr(e: AffineExpr, operand: int) -> None:
    if isinstance(e, AffineDimExpr | AffineConstantExpr):
        return
    if isinstance(e, AffineBinaryOpExpr):
        if e.kind != AffineBinaryOpKind.Add and not isinstance(e.rhs, AffineConstantExpr):
            raise UnsupportedGeneric(f"the map of operand {operand} has {e}: not by a constant")
        _check_expr(e.lhs, operand)
        _check_expr(e.rhs, operand)
        return
    raise UnsupportedGeneric(f"the map of operand {operand} has {e} (symbols are not lowered)")


def _expr_value(k: KernelBuilder, e: AffineExpr, indices: Sequence[SSAValue]) -> SSAValue:
    """`e` at `indices` (one per loop dimension), as index arithmetic in `k`."""
    if isinstance(e, AffineDimExpr):
        return indices[e.position]
    if isinstance(e, AffineConstantExpr):
        return k.index(e.value)
    assert isinstance(e, AffineBinaryOpExpr)
    lhs, rhs = _expr_value(k, e.lhs, indices), _expr_value(k, e.rhs, indices)
    match e.kind:
        case AffineBinaryOpKind.Add:
            return k.add(arith.AddiOp(lhs, rhs))
        case AffineBinaryOpKind.Mul:
            return k.add(arith.MuliOp(lhs, rhs))
        case AffineBinaryOpKind.FloorDiv:
            return k.add(arith.FloorDivSIOp(lhs, rhs))
        case AffineBinaryOpKind.CeilDiv:
            return k.add(arith.CeilDivSIOp(lhs, rhs))
        case AffineBinaryOpKind.Mod:
            # MLIR's mod is never negative (for a positive divisor).
            rem = k.add(arith.RemSIOp(lhs, rhs))
            negative = k.add(arith.CmpiOp(rem, k.index(0), "slt"))
            return k.add(arith.SelectOp(negative, k.add(arith.AddiOp(rem, rhs)), rem))


def map_indices(k: KernelBuilder, m: AffineMap, indices: Sequence[SSAValue]) -> list[SSAValue]:
    return [_expr_value(k, e, indices) for e in m.results]


def row_dimension(loops: GenericLoops) -> int:
    """The loop dimension of the first output's last dimension (its rows are contiguous)."""
    last = loops.maps[loops.inputs].results[-1]
    assert isinstance(last, AffineDimExpr)
    return last.position


def generic_kernel(
    name: str, op: GenericOp, loops: GenericLoops, rows: bool = False
) -> kn.KernelFuncOp:
    """The kernel computing `op` (see the header); with `rows` (two or more parallel
    dimensions), a 2-D grid instead: `row_dimension` along x (a global id, no division
    per element), the other parallel dimensions linearised along y (one block row each)."""
    ins = list(op.inputs)
    outs = list(op.outputs)
    params: list[Attribute] = []
    names: list[str] = []
    for i, value in enumerate(ins):
        t = value.type
        params.append(
            dynamic_memref(t.element_type, len(t.get_shape()))
            if isa(t, TensorType[Attribute])
            else t
        )
        names.append(f"in{i}")
    out_types = [_out_memref(v.type) for v in outs]
    for j, t in enumerate(out_types):
        if loops.reads_init[j]:
            params.append(t)
            names.append(f"init{j}" if len(outs) > 1 else "init")
    params += out_types
    names += [f"out{j}" if len(outs) > 1 else "out" for j in range(len(outs))]
    kernel = kn.KernelFuncOp(name, params)
    body = kernel.body.block
    name_params(body, names)
    args = list(body.args)
    in_args = args[: len(ins)]
    init_args: list[SSAValue | None] = []
    rest = args[len(ins) :]
    for read in loops.reads_init:
        init_args.append(rest.pop(0) if read else None)
    out_args = rest

    def buffer(o: int) -> SSAValue:
        return in_args[o] if o < loops.inputs else out_args[o - loops.inputs]

    k = KernelBuilder(body)
    i = k.thread_index()
    row = k.thread_index("y") if rows else i
    extents = [k.add(memref.DimOp(buffer(o), k.index(p))) for o, p in loops.extents]
    parallel = [extents[d] for d in loops.parallel]
    inside = k.nested()
    indices: list[SSAValue] = [k.index(0)] * loops.loops
    if rows:
        along = row_dimension(loops)
        outer = [d for d in loops.parallel if d != along]
        indices[along] = i
        others = delinearise(inside, row, [extents[d] for d in outer], signed=True)
        split = zip(outer, others, strict=True)
    else:
        split = zip(loops.parallel, delinearise(inside, i, parallel), strict=True)
    for d, value in split:
        indices[d] = value
    out_maps = loops.maps[loops.inputs :]
    starts: list[SSAValue] = []
    for j, init in enumerate(init_args):
        if init is not None:
            starts.append(
                inside.add(memref.LoadOp.get(init, map_indices(inside, out_maps[j], indices)))
            )
    values = _reduce(inside, op, loops, in_args, extents, indices, starts, loops.reduction)
    for j, value in enumerate(values):
        where = map_indices(inside, out_maps[j], indices)
        inside.add(memref.StoreOp.get(value, out_args[j], where))
    if rows:
        _guarded_rows(k, loops, i, row, extents, inside)
    else:
        guarded(k, i, parallel, inside)
    return kernel


def _guarded_rows(
    k: KernelBuilder,
    loops: GenericLoops,
    column: SSAValue,
    row: SSAValue,
    extents: Sequence[SSAValue],
    inside: KernelBuilder,
) -> None:
    """`if column < its extent and row < the product of the other parallel extents
    { inside }`, then `kernel.return`."""
    along = row_dimension(loops)
    outer = [extents[d] for d in loops.parallel if d != along]
    count = outer[0]
    for extent in outer[1:]:
        count = k.add(arith.MuliOp(count, extent))
    in_row = k.add(arith.CmpiOp(column, extents[along], "ult"))
    in_rows = k.add(arith.CmpiOp(row, count, "ult"))
    inside.add(scf.YieldOp())
    k.add(scf.IfOp(k.add(arith.AndIOp(in_row, in_rows)), [], Region(inside.block)))
    k.add(kn.ReturnOp())


def _out_memref(t: Attribute) -> MemRefType[Attribute]:
    assert isa(t, TensorType[Attribute])
    return dynamic_memref(t.element_type, len(t.get_shape()))


def _reduce(
    k: KernelBuilder,
    op: GenericOp,
    loops: GenericLoops,
    in_args: Sequence[SSAValue],
    extents: Sequence[SSAValue],
    indices: list[SSAValue],
    carried: Sequence[SSAValue],
    dims: Sequence[int],
) -> list[SSAValue]:
    """The outputs' values after the loops over `dims` (outermost first), from `carried`:
    the values of the outputs read (an output not read gets the body's last value)."""
    if not dims:
        return body_values(k, op, loops, in_args, indices, carried)
    d, inner = dims[0], dims[1:]
    types = [SSAValue.get(v).type for v in carried]
    loop = k.nested([IndexType(), *types])
    iv, *acc = loop.block.args
    indices = list(indices)
    indices[d] = iv
    results = _reduce(loop, op, loops, in_args, extents, indices, acc, inner)
    loop.add(scf.YieldOp(*results))
    nest = scf.ForOp(k.index(0), extents[d], k.index(1), list(carried), Region(loop.block))
    k.add(nest)
    return list(nest.results)


def body_values(
    k: KernelBuilder,
    op: GenericOp,
    loops: GenericLoops,
    in_args: Sequence[SSAValue],
    indices: Sequence[SSAValue],
    carried: Sequence[SSAValue],
) -> list[SSAValue]:
    """The body's yielded values at `indices`, the outputs' block arguments bound to
    `carried` (in order, for the outputs whose value is read)."""
    block: Block = op.body.block
    values: dict[SSAValue, SSAValue] = {}
    for i, arg in enumerate(block.args[: loops.inputs]):
        if not arg.uses:
            continue
        source = in_args[i]
        if isinstance(source.type, MemRefType):
            where = map_indices(k, loops.maps[i], indices)
            values[arg] = k.add(memref.LoadOp.get(source, where))
        else:
            values[arg] = source
    reads = iter(carried)
    for j, arg in enumerate(block.args[loops.inputs :]):
        if loops.reads_init[j]:
            values[arg] = next(reads)
    yielded: list[SSAValue] = []
    for inner in block.ops:
        if isinstance(inner, YieldOp):
            yielded = [values.get(v, v) for v in inner.operands]
        elif isinstance(inner, IndexOp):
            values[inner.result] = indices[inner.dim.value.data]
        else:
            copy = inner.clone(value_mapper=values)
            k.add(copy)
    return yielded


def kernel_stem(op: GenericOp, loops: GenericLoops) -> str:
    """A name for the kernel of `op`: an elementwise generic (identity maps, one op applied
    to the inputs in order) is named as that op's kernel (`add_f32`, `cmpf_olt_f32_2d`);
    any other by its body's ops, its first output's element type and a short hash of its
    maps and iterators (`mul_add_f32_1c0ffe`)."""
    block = op.body.block
    computing = [o for o in block.ops if not isinstance(o, IndexOp | YieldOp)]
    out = op.outputs[0].type
    assert isa(out, TensorType[Attribute])
    rank = len(out.get_shape())
    if len(computing) == 1 and not loops.reduction:
        single = computing[0]
        identity = AffineMap.identity(loops.loops)
        tensor_inputs = [v for v in op.inputs if isa(v.type, TensorType[Attribute])]
        if (
            all(m == identity or not m.results for m in loops.maps)
            and list(single.operands) == list(block.args[: loops.inputs])
            and tensor_inputs
            and list(list(block.ops)[-1].operands) == list(single.results)
        ):
            first = tensor_inputs[0].type
            assert isa(first, TensorType[Attribute])
            return op_stem(single, first.element_type, out.element_type, rank)
    words: list[str] = []
    for o in computing:
        if isinstance(o, arith.ConstantOp):
            continue
        short = o.name.split(".", 1)[1]
        word = SHORT_NAMES.get(short, short)
        if not words or words[-1] != word:
            words.append(word)
    words = words[:4] or ["copy"]
    shape = f"{op.indexing_maps} {op.iterator_types}"
    digest = hashlib.sha1(shape.encode()).hexdigest()[:6]
    return "_".join([*words, type_text(out.element_type), digest])
