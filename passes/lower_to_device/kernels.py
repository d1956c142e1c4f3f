"""The fixed kernels: elementwise (one thread per element), fill, and the register-tiled
matmul (`MATMUL_ROWS` rows of one column per thread; see the package header)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, math, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerType,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue

from ...dialects import kernel as kn
from .kernel_builder import (
    KernelBuilder,
    delinearise,
    dynamic_memref,
    guarded,
    name_params,
    rank_suffix,
    zero_op,
)
from .types import (
    type_text,
)

MATMUL_ROWS = 8
"""Rows of the result each thread of a matmul kernel computes (one column of them)."""
MATMUL_UNROLL = 4
"""Steps of k one iteration of a matmul kernel's loop over k takes."""
MATMUL_COLUMNS = 1024
"""Threads (columns of the result) of one block of a matmul kernel, at most: on a CPU the
numba backend runs the loop over k with the block's threads inside it, so that each
pass over k reads 1024 consecutive elements of a row of B (4 KiB of f32, a whole page,
which the hardware prefetcher streams) instead of a quarter page a pass."""

SHORT_NAMES = {
    "addf": "add", "addi": "add", "subf": "sub", "subi": "sub", "mulf": "mul",
    "muli": "mul", "divf": "div", "negf": "neg",
}  # fmt: skip
"""Kernel name stems where the op's name says more than the kernel's (`addf` -> `add`)."""


def fill_kernel(name: str, element: Attribute, rank: int) -> kn.KernelFuncOp:
    """One thread per element: out[idx] = value."""
    kernel = kn.KernelFuncOp(name, [dynamic_memref(element, rank), element])
    out, value = kernel.body.block.args
    name_params(kernel.body.block, ["out", "value"])
    k = KernelBuilder(kernel.body.block)
    i = k.thread_index()
    dims = k.dims(out, rank)
    inside = k.nested()
    inside.add(memref.StoreOp.get(value, out, delinearise(inside, i, dims)))
    guarded(k, i, dims, inside)
    return kernel


def matmul_kernel(name: str, element: Attribute, batched: bool = False) -> kn.KernelFuncOp:
    """R = C + A x B, `MATMUL_ROWS` rows of one column of R per thread (see the header).

    `batched`: every operand has a leading batch dimension, one batch per block along z
    (`batch_matmul`). Contractions of other layouts reach it through views or packed
    copies of their operands (`contraction.py`)."""
    matrix = dynamic_memref(element, 3 if batched else 2)
    kernel = kn.KernelFuncOp(name, [matrix, matrix, matrix, matrix])
    a, b, c, r = kernel.body.block.args
    name_params(kernel.body.block, ["lhs", "rhs", "acc", "out"])
    k = KernelBuilder(kernel.body.block)
    c0, c1 = k.index(0), k.index(1)
    zero = k.add(zero_op(element))
    # Blocks along x take consecutive tiles of rows, so that blocks run one after another
    # (on a CPU) read the same columns of B, from cache.
    tx, bx, by = k.add(kn.ThreadIdOp("x")), k.add(kn.BlockIdOp("x")), k.add(kn.BlockIdOp("y"))
    batch: list[SSAValue] = [k.add(kn.BlockIdOp("z"))] if batched else []
    col = k.add(arith.AddiOp(k.add(arith.MuliOp(by, k.add(kn.BlockDimOp("x")))), tx))
    first = k.add(arith.MuliOp(bx, k.index(MATMUL_ROWS)))
    rows = [first] + [k.add(arith.AddiOp(first, k.index(i))) for i in range(1, MATMUL_ROWS)]
    row_dim, depth_dim = (k.index(1), k.index(2)) if batched else (c0, c1)
    m = k.add(memref.DimOp(a, row_dim))
    depth = k.add(memref.DimOp(a, depth_dim))
    n = k.add(memref.DimOp(b, depth_dim))
    # Threads past the last row or column read the last one (and store nothing): every
    # load is in bounds, so whole blocks run vectorised. A result with no rows or no
    # columns has no last one to read: the loop over k then runs no step.
    last_col = k.add(arith.MinSIOp(col, k.add(arith.SubiOp(n, c1))))
    last_row = k.add(arith.SubiOp(m, c1))
    read_rows = [k.add(arith.MinSIOp(row, last_row)) for row in rows]
    no_rows = k.add(arith.CmpiOp(m, c0, "eq"))
    empty = k.add(arith.OrIOp(no_rows, k.add(arith.CmpiOp(n, c0, "eq"))))
    batches = k.add(memref.DimOp(r, c0)) if batched else None
    if batches is not None:  # no batches: the grid's one block along z reads nothing
        empty = k.add(arith.OrIOp(empty, k.add(arith.CmpiOp(batches, c0, "eq"))))
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
            y = loop.add(memref.LoadOp.get(b, [*batch, kk, last_col]))
            for i, row in enumerate(read_rows):
                x = loop.add(memref.LoadOp.get(a, [*batch, row, kk]))
                partials[i] = multiply_add(loop, element, x, y, partials[i])
        loop.add(scf.YieldOp(*partials))
        products = scf.ForOp(start, end, k.index(unroll), list(sums), Region(loop.block))
        k.add(products)
        k.add(kn.BarrierOp())
        sums = products.results

    col_inside = k.add(arith.CmpiOp(col, n, "ult"))
    if batches is not None:  # and stores nothing
        col_inside = k.add(arith.AndIOp(col_inside, k.add(arith.CmpiOp(batch[0], batches, "ult"))))
    for row, product in zip(rows, sums, strict=True):
        store = k.nested()
        previous = store.add(memref.LoadOp.get(c, [*batch, row, col]))
        total = store.add(add_op(element, previous, product))
        store.add(memref.StoreOp.get(total, r, [*batch, row, col]))
        store.add(scf.YieldOp())
        inside = k.add(arith.AndIOp(k.add(arith.CmpiOp(row, m, "ult")), col_inside))
        k.add(scf.IfOp(inside, [], Region(store.block)))
    k.add(kn.ReturnOp())
    return kernel


def is_int(element: Attribute) -> bool:
    return isinstance(element, IntegerType | IndexType)


def multiply_add(
    k: KernelBuilder, element: Attribute, x: SSAValue, y: SSAValue, partial: SSAValue
) -> SSAValue:
    """`partial + x * y`: for floats one `math.fma`, rounded once."""
    if is_int(element):
        return k.add(arith.AddiOp(partial, k.add(arith.MuliOp(x, y))))
    return k.add(math.FmaOp(x, y, partial))


def add_op(element: Attribute, x: SSAValue, y: SSAValue) -> Operation:
    return arith.AddiOp(x, y) if is_int(element) else arith.AddfOp(x, y)


def op_stem(op: Operation, first: Attribute, result: Attribute, rank: int) -> str:
    """The name of an elementwise kernel running scalar `op`: its name, the element type
    of its first tensor operand `first` (of `result` for a select, named for the values it
    picks, not its condition; both for a cast) and the rank (`add_f32`, `cmpf_olt_f32_2d`)."""
    short = op.name.split(".", 1)[1]
    stem = SHORT_NAMES.get(short, short)
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
    words = [stem, type_text(result if op.name == "arith.select" else first)]
    if op.name in CASTS:
        words.append(type_text(result))
    return "_".join(words) + rank_suffix(rank)


CASTS = frozenset(
    (
        "arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci",
        "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.extf", "arith.truncf",
    )
)  # fmt: skip
