"""Per-block value ranges: which blocks the numba backend runs without bounds checks."""

from __future__ import annotations

from typing import Any

import numpy as np

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime import semantics
from devplan.runtime.kernels.common import Kernel
from devplan.runtime.kernels.compile import compile_kernel
from devplan.runtime.kernels.numba_source import NumbaSource
from devplan.runtime.kernels.ranges import BlockRanges

GUARDED_ADD = """
kernel.func @add(%a: memref<?xf32>, %c: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %bd = kernel.block_dim x
  %i0 = arith.muli %bx, %bd : index
  %i = arith.addi %i0, %tx : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %in = arith.cmpi ult, %i, %n : index
  scf.if %in {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %c[%i] : memref<?xf32>
  }
  kernel.return
}
"""

LOOP = """
kernel.func @rowsum(%a: memref<?x?xf32>, %out: memref<?xf32>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = kernel.thread_id x
  %s = scf.for %k = %c0 to %m step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %a[%r, %k] : memref<?x?xf32>
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  memref.store %s, %out[%r] : memref<?xf32>
  kernel.return
}
"""

GATHER = """
kernel.func @gather(%idx: memref<?xindex>, %a: memref<?xf32>, %c: memref<?xf32>) {
  %t = kernel.thread_id x
  %j = memref.load %idx[%t] : memref<?xindex>
  %x = memref.load %a[%j] : memref<?xf32>
  memref.store %x, %c[%t] : memref<?xf32>
  kernel.return
}
"""


def ranges_of(text: str) -> tuple[Kernel, BlockRanges]:
    module = devplan.parse(f'kernel.module @k target #target.target<"cuda"> {{\n{text}\n}}')
    func = next(op for op in module.walk() if isinstance(op, KernelFuncOp))
    kernel = Kernel(func)
    return kernel, BlockRanges(kernel).analyse()


def fast(
    text: str,
    block_id: int,
    block_dim: int,
    grid_dim: int,
    args: list[Any],
    last_block_id: int | None = None,
) -> bool:
    """Whether the block `block_id` (along x) would run the fast path; with
    `last_block_id`, whether the run of blocks `block_id` to `last_block_id` would."""
    kernel, ranges = ranges_of(text)
    assert ranges.possible
    env: dict[str, Any] = {"np": np}
    env |= {"I_arith_divsi": semantics.int_scalar("arith.divsi")}
    env |= {"I_arith_floordivsi": semantics.int_scalar("arith.floordivsi")}
    last = block_id if last_block_id is None else last_block_id
    env |= {"bix_lo": block_id, "bix_hi": last, "biy_lo": 0, "biy_hi": 0, "biz": 0}
    env |= {"bx_": block_dim, "by_": 1, "bz_": 1}
    env |= {"gx": grid_dim, "gy": 1, "gz": 1}
    env |= {kernel.name_of(p): a for p, a in zip(kernel.params, args, strict=True)}
    exec("\n".join(ranges.lines), env)
    return bool(env["fast"])


def test_full_blocks_of_a_guarded_add_are_fast_and_the_tail_block_is_checked() -> None:
    a, c = np.zeros(1000, np.float32), np.zeros(1000, np.float32)
    assert [fast(GUARDED_ADD, b, 256, 4, [a, c]) for b in range(4)] == [True, True, True, False]


def test_a_run_of_blocks_is_fast_as_a_whole_when_each_of_its_blocks_is() -> None:
    a, c = np.zeros(1000, np.float32), np.zeros(1000, np.float32)
    assert fast(GUARDED_ADD, 0, 256, 4, [a, c], last_block_id=2)
    assert not fast(GUARDED_ADD, 0, 256, 4, [a, c], last_block_id=3)  # the tail block
    assert not fast(GUARDED_ADD, 2, 256, 4, [a, c], last_block_id=3)


def test_a_block_whose_guard_is_false_for_every_thread_is_fast() -> None:
    a, c = np.zeros(512, np.float32), np.zeros(512, np.float32)
    assert fast(GUARDED_ADD, 5, 256, 6, [a, c])


def test_a_shorter_output_makes_the_guarded_block_checked() -> None:
    a, c = np.zeros(1024, np.float32), np.zeros(1000, np.float32)
    assert [fast(GUARDED_ADD, b, 256, 4, [a, c]) for b in range(4)] == [True, True, True, False]


def test_loop_bounds_give_the_induction_variable_a_range() -> None:
    a, out = np.zeros((8, 5), np.float32), np.zeros(8, np.float32)
    assert fast(LOOP, 0, 8, 1, [a, out, 5])
    assert not fast(LOOP, 0, 8, 1, [a, out, 6])  # a[r, 5] is past the end
    assert not fast(LOOP, 0, 9, 1, [a, out, 5])  # thread 8 has no row
    assert fast(LOOP, 0, 8, 1, [a, out, 0])  # the loop runs in no thread


def test_an_index_loaded_from_memory_has_no_range_so_the_kernel_is_always_checked() -> None:
    _, ranges = ranges_of(GATHER)
    assert not ranges.possible


STRIDED = """
kernel.func @tiles(%a: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %tx = kernel.thread_id x
  %n = memref.dim %a, %c0 : memref<?xf32>
  %s = scf.for %t = %c0 to %n step %c16 iter_args(%acc = %zero) -> (f32) {
    %i = arith.addi %t, %tx : index
    %in = arith.cmpi ult, %i, %n : index
    %x = scf.if %in -> (f32) {
      %v = memref.load %a[%i] : memref<?xf32>
      scf.yield %v : f32
    } else {
      scf.yield %zero : f32
    }
    %next = arith.addf %acc, %x : f32
    scf.yield %next : f32
  }
  memref.store %s, %out[%tx] : memref<?xf32>
  kernel.return
}
"""


def test_a_loop_stepping_by_a_constant_ends_its_range_at_its_last_step() -> None:
    # Over 48 elements the tiles start at 0, 16 and 32: every guard `t + tx < 48` holds
    # for all 16 threads, so the block is fast; over 40 the last tile is cut: checked.
    out = np.zeros(16, np.float32)
    assert fast(STRIDED, 0, 16, 1, [np.zeros(48, np.float32), out])
    assert not fast(STRIDED, 0, 16, 1, [np.zeros(40, np.float32), out])
    assert fast(STRIDED, 0, 16, 1, [np.zeros(0, np.float32), out])  # no tile at all


CLAMPED_COPY = """
kernel.func @clamped(%a: memref<?xf32>, %c: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %bd = kernel.block_dim x
  %i0 = arith.muli %bx, %bd : index
  %i = arith.addi %i0, %tx : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %last = arith.subi %n, %c1 : index
  %j = arith.minsi %i, %last : index
  %x = memref.load %a[%j] : memref<?xf32>
  memref.store %x, %c[%i] : memref<?xf32>
  kernel.return
}
"""
"""`c[i] = a[min(i, len(a) - 1)]`: a clamp of the thread's index."""


def test_a_clamp_of_a_thread_index_that_bites_makes_the_block_checked() -> None:
    a, c = np.arange(1000, dtype=np.float32), np.zeros(1024, np.float32)
    assert [fast(CLAMPED_COPY, b, 256, 4, [a, c]) for b in range(4)] == [True, True, True, False]


def test_on_the_fast_path_a_clamp_that_does_not_bite_is_its_thread_index() -> None:
    kernel, ranges = ranges_of(CLAMPED_COPY)
    (clamp,) = (op for op in kernel.func.walk() if op.name == "arith.minsi")
    assert ranges.resolved == {clamp: clamp.operands[0]}
    source = NumbaSource(kernel).generate()
    fast_path = source[source.index("if fast:") : source.index("continue")]
    # values the fast path defines are named with an `f` before the checked path's name
    clamped, index = (f"f{kernel.name_of(v)}" for v in (clamp.results[0], clamp.operands[0]))
    assert f"{clamped} = {index}\n" in fast_path
    a, c = np.arange(1000, dtype=np.float32), np.zeros(1024, np.float32)
    for backend in ("numpy", "numba"):
        c[:] = 0
        compile_kernel(kernel.func, backend)((4, 1, 1), (256, 1, 1), [a, c])
        assert c.tobytes() == np.minimum(np.arange(1024), 999).astype(np.float32).tobytes()
