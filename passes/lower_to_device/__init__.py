"""`lower-to-device`: a planned level-1 module becomes a level-2 host program.

Input: a *planned* module (the placement contract plan-devices guarantees): every op
yielding tensors carries `vdev.device`, every tensor argument and result of a function
its `vdev.device` attribute, every tensor operand lives where its op runs, and
`vdev.device_copy` moves values between devices. Output: the same program over memrefs,
with `device` ops running generated kernels.

Phase 0 — one lowering path. `linalg.pack`/`unpack` become pad, reshapes and transpose
  generics (`pack.py`, on the op's device). Elementwise `arith`/`math` ops on tensors become
  `linalg.generic`s (`convert_elementwise_to_linalg.py`) and named linalg ops their
  generic form (`linalg_generalize_named_ops.py`), each keeping its location and
  `vdev.device`; the walk remembers the name of the op each generic came from (its
  messages name what the user wrote) and the work the cost model charged it.

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
  body also reads, a view — is *cloned* (alloc + copy) there, so each buffer has one
  owner and is freed exactly once, and a returned buffer is never freed by its function.
  A view (a slice or reshape that becomes a `device.view`) owns nothing: its uses count
  as uses of the value it views, transitively.

Phase 2 — one walk that rebuilds each function, op by op, consulting the facts:
  * types: `tensor<...>` on the host device (`vdev.host_device`) becomes a memref in
    host memory (no memory space); elsewhere `memref<..., #vdev.device<type, id, ?,
    scope>>`; signatures, `func.call`, `scf.if` and `scf.for` (results, iteration
    arguments, yields) follow;
  * `linalg.generic` (`generic.py`, `generic_kernel.py`): allocate each output, launch
    a generated kernel with one thread per point of the parallel loops over a 1-D grid
    of `ceil(n / block)` blocks, the block `min(256, max_num_threads)` of the device's
    target; the kernel splits its linear index over the parallel extents (read with
    `memref.dim`, so one kernel serves every shape, static or dynamic, of a rank), runs
    the reduction loops in the thread, and loads and stores at the maps' indices;
  * dynamic shapes: where two operand dimensions give one loop dimension and one is
    dynamic, a `cf.assert` checks they agree at run time before the launch, so a
    mismatch is a located error, not a kernel sized by one operand that cuts another
    short or reads past its end;
  * fast paths chosen from a generic's maps and body: a fill (a scalar yielded
    everywhere) launches the fill kernel; a contraction (body out + in0 * in1, maps
    that make it a matrix product: matmul, batch_matmul, `q k^T`, a convolution as an
    implicit GEMM; its operands viewed, or packed into scratch buffers by strided
    copies or copy kernels, in the kernel's layout: `contraction.py`) a kernel where
    each thread computes
    `MATMUL_ROWS` (8) rows of one column, summing over k in order: `MATMUL_UNROLL` (4)
    steps of k per iteration, then the steps left one by one; for floats each step is
    one `math.fma` per row (one rounding instead of the two of the body's `mulf` and
    `addf`: the result is as close to the exact sum, and a CPU does it in one
    instruction; MLIR's own lowering of vector contractions makes `vector.fma`s too).
    Blocks of 8 rows go along x (blocks run in turn then read the same columns of B)
    and 1-D blocks along the columns, on y, of all of them when they fit in
    `min(W, max_num_threads)` threads (W: 1024 on a CPU, 256 on a GPU,
    `contraction.matmul_columns`), else of the widest block of at least 256 that
    divides them evenly, else of 256 (`contraction.matmul_threads`);
    threads past the last row or column read the last one and store nothing, and a
    `kernel.barrier` after each loop over k parts it from what follows (so the numba
    backend vectorises it across a block's columns);
  * `tensor.empty`: an allocation (zeroed by every DeviceAPI), or nothing when only
    generics that never read it write over it (each allocates its result); `tensor.dim`
    a `memref.dim` (sizes are host values, wherever the buffer lives);
  * data movement (`movement.py`, `views.py`): `extract_slice`, ranked `cast`, and
    `collapse_shape`, `expand_shape` and `reshape` of a row-major buffer or a contiguous
    slice, are views of their source (`device.view`: no allocation, no kernel; kernels
    read strided views in place); `insert_slice` and `concat` launch a window kernel
    (offsets, sizes and strides as scalar arguments) into a fresh buffer, a reshape of a
    strided slice a reshape kernel;
    `tensor.extract` of a device value copies that one element to the host; a `cast`
    to an unranked tensor (what MLIR's runner printers take) is a host copy of its
    operand seen as an unranked memref, freed after its last use;
  * `arith.constant dense<...>`: a splat is an allocation plus a fill launch on its
    device; other data lives in a `memref.global` and is copied to a fresh buffer on
    its device;
  * `vdev.device_copy`: an allocation on the destination plus `device.copy` (memory
    scope changes included);
  * values on a CPU device run there too: its kernels launch through the `cpu`
    DeviceAPI, so a plan that splits work between CPU and GPUs runs as planned.
  Kernels live in one `kernel.module` per target (`@cuda_kernels`, `@cpu_kernels`),
  are named for what they compute (`@add_f32`, `@cmpf_olt_f32_2d`, `@matmul_f32_rows8`,
  `@mul_add_f32_0009a5`: a generic's body ops and a hash of its maps) and are generated
  once per module however often they are launched (deduplicated by their text).
  An op the walk cannot lower is recorded and the walk goes on (what uses its results
  is skipped); the pass then raises every recorded error at once.

Invariants of the output: it verifies; every buffer the program allocates is freed on
every path except those a function returns; scalars stay host values and reach kernels
as scalar arguments; every lowered op keeps the location of the level-1 op it came
from, so run-time errors point at the user's source.

Not handled (each a located error): a module that is not planned (`vdev.on_device`
left, a tensor op without `vdev.device`, an operand on another device than its op),
tensor ops outside the level-1 set (`tensor.cast` from unranked, ...), generics
`GenericLoops` refuses (`window` iterators, symbols,
outputs not at a permutation of the parallel loops, a loop dimension no operand
dimension gives, body ops the kernel backends lack, tensors captured from outside the
body: captured scalars become operands first, `captures.py`), tensors of element
types the backends lack, and tensors crossing other region ops
(`scf.while`). Reads at affine sums (`d0 * 2 + d4`) are checked against static shapes
by `linalg.generic`'s verifier only: with dynamic shapes no run-time check guards them.
A reduction runs in one thread per output element (no block reduction in shared memory
yet). Buffers are never reused in place: each op writes a fresh buffer (or views one).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.passes import ModulePass

from ...analysis.op_work import op_work
from ..convert_elementwise_to_linalg import is_elementwise_on_tensors, replace_elementwise
from ..linalg_generalize_named_ops import is_named_structured, replace_named
from .captures import take_captures
from .lowering import Lowering
from .pack import decompose_packs
from .rules import RULES


@dataclass(frozen=True)
class LowerToDevicePass(ModulePass):
    """Lowers a planned level-1 module to a level-2 host program (see the module header)."""

    name = "lower-to-device"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        decompose_packs(op)  # linalg.pack/unpack become pad, reshapes, transposes
        lowering = Lowering(op, RULES)
        # Phase 0: one lowering path. The generics remember the op they were made from,
        # for messages and for the work the cost model charged it. Scalars a generic's
        # body captures become its own (captures.py).
        for found in [o for o in op.walk() if isinstance(o, GenericOp)]:
            take_captures(found)
        for found in [o for o in op.walk() if is_elementwise_on_tensors(o)]:
            if not isinstance(found.parent_op(), GenericOp):
                work = op_work(found)
                generic = replace_elementwise(found)
                lowering.origins[generic], lowering.works[generic] = found.name, work
        for found in [o for o in op.walk() if is_named_structured(o)]:
            work = op_work(found)
            generic = replace_named(found)
            lowering.origins[generic], lowering.works[generic] = found.name, work
        lowering.run()
