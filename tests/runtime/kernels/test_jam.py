"""Jammed threads on the numba backend's fast path (`jam.py`): a kernel of one thread per
output that loops over a reduction runs `LANES` threads at once, each computing exactly
what it computes alone (bitwise the numpy backend's results, the same first fault), and
not when its arguments share memory (then the threads run in order).
One kernel text per test: each is one Numba compilation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels.common import KernelError
from devplan.runtime.kernels.compile import compile_kernel
from devplan.runtime.kernels.jam import LANES

ROW_SUMS = """
kernel.func @row_sums(%in0: memref<?x?xf32>, %z: memref<?xi64>, %out: memref<?xf32>) {
  %t = kernel.thread_id x
  %b = kernel.block_id x
  %n = kernel.block_dim x
  %o = arith.muli %b, %n : index
  %i = arith.addi %o, %t : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %out, %c0 : memref<?xf32>
  %cols = memref.dim %in0, %c1 : memref<?x?xf32>
  %inside = arith.cmpi ult, %i, %rows : index
  scf.if %inside {
    %zero = arith.constant 0.0 : f32
    %seven = arith.constant 7 : i64
    %zi = memref.load %z[%i] : memref<?xi64>
    %q = arith.divsi %seven, %zi : i64
    %s = scf.for %k = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %in0[%i, %k] : memref<?x?xf32>
      %r = arith.addf %acc, %x : f32
      scf.yield %r : f32
    }
    %qf = arith.sitofp %q : i64 to f32
    %w = arith.addf %s, %qf : f32
    memref.store %w, %out[%i] : memref<?xf32>
  }
  kernel.return
}
"""
"""out[i] = (in0[i, 0] + in0[i, 1] + ...) + 7 / z[i], in order; the division by zero of a
thread faults before its loop."""


def row_sums() -> KernelFuncOp:
    module = devplan.parse(f'kernel.module @k target #target.target<"llvm"> {{\n{ROW_SUMS}\n}}')
    return next(op for op in module.walk() if isinstance(op, KernelFuncOp))


def launch(backend: str, rows: int, args: list[Any]) -> list[Any] | str:
    block = 20  # two groups of LANES threads and 4 more
    grid = (rows + block - 1) // block
    try:
        compile_kernel(row_sums(), backend)((grid, 1, 1), (block, 1, 1), args)
    except KernelError as e:
        return str(e)
    return args


def test_a_row_reduction_runs_jammed_bitwise_as_the_numpy_backend() -> None:
    assert 20 // LANES == 2
    func = row_sums()
    assert "for tix0 in range(" in compile_kernel(func, "numba").source
    rng = np.random.default_rng(1)
    rows = 57  # the last block has threads beyond the rows: its checked path
    values = rng.standard_normal((rows, 300)).astype(np.float32) * 1e3
    ones = np.ones(rows, np.int64)
    results = [
        launch(backend, rows, [values.copy(), ones.copy(), np.zeros(rows, np.float32)])
        for backend in ("numpy", "numba")
    ]
    np.testing.assert_array_equal(results[0][2], results[1][2])
    in_order = np.zeros(rows, np.float32)
    for i in range(rows):  # the sum in its order, in f32
        for x in values[i]:
            in_order[i] = np.float32(in_order[i] + x)
    np.testing.assert_array_equal(results[1][2], in_order + 7)


def test_the_first_fault_of_a_jammed_group_is_the_first_thread_in_order() -> None:
    rows = 40
    z = np.ones(rows, np.int64)
    z[[3, 5, 27]] = 0  # threads 3 and 5 of the first group, and one of another block
    args = [np.zeros((rows, 8), np.float32), z, np.zeros(rows, np.float32)]
    faults = [launch(b, rows, [a.copy() for a in args]) for b in ("numpy", "numba")]
    assert isinstance(faults[1], str)
    assert "thread (3, 0, 0)" in faults[1]
    assert faults[0] == faults[1]


@pytest.mark.parametrize("offset", [4, 12])
def test_threads_run_in_order_when_the_output_shares_memory_with_an_input(offset: int) -> None:
    rows, cols = 24, 4
    memory = np.arange(rows * cols + offset + rows, dtype=np.float32)
    values = memory[: rows * cols].reshape(rows, cols)
    out = memory[offset : offset + rows]  # thread i writes where thread i + 1 reads
    numba_out = launch("numba", rows, [values, np.ones(rows, np.int64), out])
    assert not isinstance(numba_out, str)
    expected = np.arange(rows * cols + offset + rows, dtype=np.float32)
    seen = expected[: rows * cols].reshape(rows, cols)
    for i in range(rows):  # thread by thread: each sees the stores of those before it
        expected[offset + i] = np.float32(seen[i].sum(dtype=np.float32) + 7)
    np.testing.assert_array_equal(memory, expected)
