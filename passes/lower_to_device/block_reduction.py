"""A block reduction: one block of threads per output element, for long reductions.

When a generic's parallel loops are few and its reductions long (a dot product, the sum
of a few long rows), one thread per output element leaves the device idle. Here each
output element gets a block of `threads` threads (GPU libraries' block reduction):

  1. thread t runs the body over reduction points t, t + threads, t + 2 * threads, ...
     (the reduction loops linearised, row-major), starting from the identity of the
     combining op, so it holds a partial result;
  2. the partials go to shared memory (`kernel.alloc_shared`), then a tree halves them,
     a `kernel.barrier` after each level (`threads` is a power of two, unrolled);
  3. thread 0 combines the output's initial value with the total and stores it.

Only a body of the form `yield out <op> f(inputs)`, `<op>` an associative, commutative
op with an identity (`COMBINERS`), can be split so; the order of the additions changes,
so a float result differs from the one-thread loop by rounding only.
"""

from __future__ import annotations

import math as pymath
from typing import Any, cast

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerType,
    MemRefType,
    TensorType,
)
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.utils.hints import isa

from ...dialects import kernel as kn
from ...dialects.virtual_device import DeviceAttr
from .generic_kernel import GenericLoops, body_values, map_indices
from .kernel_builder import KernelBuilder, delinearise, dynamic_memref, name_params

COMBINERS: dict[str, float | str] = {
    "arith.addf": 0.0, "arith.mulf": 1.0, "arith.maximumf": -pymath.inf,
    "arith.minimumf": pymath.inf, "arith.addi": 0, "arith.muli": 1, "arith.ori": 0,
    "arith.xori": 0, "arith.andi": -1, "arith.maxsi": "min", "arith.minsi": "max",
    "arith.maxui": 0, "arith.minui": -1,
}  # fmt: skip
"""Combining ops a block may split a reduction over, with their identities ("min" and
"max": the type's most negative and most positive values)."""


def combiner(op: GenericOp, loops: GenericLoops) -> Operation | None:
    """The op combining the output with each point's value, when the body has the form
    the block reduction needs (one output, `yield out <op> v`, `out` used only there)."""
    if not loops.reduction or len(op.outputs) != 1 or len(op.results) != 1:
        return None
    block = op.body.block
    last = block.last_op
    out = block.args[-1]
    if not isinstance(last, YieldOp) or len(last.operands) != 1:
        return None
    combine = last.operands[0].owner
    if not isinstance(combine, Operation) or combine.name not in COMBINERS:
        return None
    uses = [u.operation for u in out.uses]
    if uses != [combine] or len(combine.operands) != 2 or combine.attributes:
        return None
    return combine


def _identity(k: KernelBuilder, name: str, element: Attribute) -> SSAValue:
    value = COMBINERS[name]
    if isinstance(element, IntegerType | IndexType):
        width: int = cast(IntegerType, element).bitwidth if isinstance(element, IntegerType) else 64
        if value == "min":
            number = -(1 << (width - 1))
        elif value == "max":
            number = (1 << (width - 1)) - 1
        else:
            number = int(value)
        return k.add(arith.ConstantOp.from_int_and_width(number, cast(Any, element)))
    return k.add(arith.ConstantOp(FloatAttr(float(value), cast(Any, element))))


def _combine(k: KernelBuilder, combine: Operation, x: SSAValue, y: SSAValue) -> SSAValue:
    return k.add(
        combine.create(
            operands=[x, y],
            result_types=[x.type],
            properties=dict(combine.properties),
        )
    )


def block_reduction_kernel(
    name: str, op: GenericOp, loops: GenericLoops, combine: Operation, threads: int
) -> kn.KernelFuncOp:
    """The kernel (see the header); launched with one block of `threads` threads (a power
    of two) per output element."""
    element = combine.results[0].type
    params: list[Attribute] = [
        dynamic_memref(t.element_type, len(t.get_shape())) if isa(t, TensorType[Attribute]) else t
        for t in (v.type for v in op.inputs)
    ]
    out_rank = len(loops.parallel)
    params += [dynamic_memref(element, out_rank)] * 2
    kernel = kn.KernelFuncOp(name, params)
    body = kernel.body.block
    name_params(body, [f"in{i}" for i in range(len(op.inputs))] + ["init", "out"])
    *in_args, init, out = body.args
    k = KernelBuilder(body)
    shared_type = MemRefType(
        element, [threads], memory_space=DeviceAttr.make(None, None, None, "shared")
    )
    shared = k.add(kn.AllocSharedOp(shared_type))
    tx = k.add(kn.ThreadIdOp("x"))
    bx = k.add(kn.BlockIdOp("x"))

    def buffer(o: int) -> SSAValue:
        return in_args[o] if o < loops.inputs else out

    extents = [k.add(memref.DimOp(buffer(o), k.index(p))) for o, p in loops.extents]
    indices: list[SSAValue] = [k.index(0)] * loops.loops
    for d, value in zip(
        loops.parallel, delinearise(k, bx, [extents[d] for d in loops.parallel]), strict=True
    ):
        indices[d] = value
    reduction = [extents[d] for d in loops.reduction]
    total = reduction[0]
    for extent in reduction[1:]:
        total = k.add(arith.MuliOp(total, extent))
    start = _identity(k, combine.name, element)
    loop = k.nested([IndexType(), element])
    r, acc = loop.block.args
    inner = list(indices)
    for d, value in zip(loops.reduction, delinearise(loop, r, reduction), strict=True):
        inner[d] = value
    (value,) = body_values(loop, op, loops, in_args, inner, [acc])
    loop.add(scf.YieldOp(value))
    partial = scf.ForOp(tx, total, k.index(threads), [start], Region(loop.block))
    k.add(partial)
    k.add(memref.StoreOp.get(partial.results[0], shared, [tx]))
    k.add(kn.BarrierOp())
    half = threads // 2
    while half >= 1:
        step = k.nested()
        other = step.add(arith.AddiOp(tx, k.index(half)))
        mine = step.add(memref.LoadOp.get(shared, [tx]))
        theirs = step.add(memref.LoadOp.get(shared, [other]))
        step.add(memref.StoreOp.get(_combine(step, combine, mine, theirs), shared, [tx]))
        step.add(scf.YieldOp())
        below = k.add(arith.CmpiOp(tx, k.index(half), "ult"))
        k.add(scf.IfOp(below, [], Region(step.block)))
        k.add(kn.BarrierOp())
        half //= 2
    last = k.nested()
    where = map_indices(last, loops.maps[-1], indices)
    first = last.add(memref.LoadOp.get(init, where))
    whole = last.add(memref.LoadOp.get(shared, [k.index(0)]))
    last.add(memref.StoreOp.get(_combine(last, combine, first, whole), out, where))
    last.add(scf.YieldOp())
    leader = k.add(arith.CmpiOp(tx, k.index(0), "eq"))
    k.add(scf.IfOp(leader, [], Region(last.block)))
    k.add(kn.ReturnOp())
    return kernel
