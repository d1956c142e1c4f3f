# ruff: noqa: E501  (IR lines are as long as IR lines are)
"""Host blocks: the memory of a dead host array serves the next array of its size, never
while any view of it lives, and as zeros unless a launch overwrites all of it first; runs
of a program reuse their intermediate arrays, never an output the caller still holds."""

from __future__ import annotations

import numpy as np

import devplan
from devplan.execution import compile_program
from devplan.runtime.storage import HOST_BLOCKS, HostBlocks, host_zeros

F32 = np.dtype(np.float32)
MIB = (1 << 18,)  # 1 MiB of float32: the smallest array kept


def test_a_dead_arrays_block_serves_the_next_array_of_its_size_as_zeros() -> None:
    blocks = HostBlocks(capacity=8 << 20)
    a = blocks.zeros(MIB, F32)
    assert a.flags.c_contiguous
    assert a.flags.writeable
    assert a.ctypes.data % 64 == 0
    address = a.ctypes.data
    a[...] = 7
    del a
    assert blocks.held == 1 << 20
    b = blocks.zeros(MIB, F32)
    assert (blocks.reused, blocks.held, b.ctypes.data) == (1, 0, address)
    assert not b.any()  # the old data is gone
    c = blocks.zeros(MIB, F32)  # none kept: fresh memory
    assert c.ctypes.data != address
    assert blocks.reused == 1


def test_a_block_is_not_reused_while_a_view_of_its_array_lives() -> None:
    blocks = HostBlocks(capacity=8 << 20)
    a = blocks.zeros((512, 512), F32)
    view = a[1:3].T
    del a
    assert blocks.held == 0
    other = blocks.zeros((512, 512), F32)
    other[...] = 1
    assert not view.any()  # the view kept its memory: `other` is elsewhere
    del view
    assert blocks.held == 1 << 20


def test_small_arrays_and_blocks_beyond_the_capacity_are_not_kept() -> None:
    blocks = HostBlocks(capacity=1 << 20)
    small = blocks.zeros((16,), F32)
    del small
    assert blocks.held == 0
    a, b = blocks.zeros(MIB, F32), blocks.zeros(MIB, F32)
    del a, b
    assert blocks.held == 1 << 20  # one kept, the second beyond the capacity


RUN_TWICE = """
kernel.module @k target #target.target<"llvm"> {
  kernel.func @add_one(%x: memref<?xf32>, %y: memref<?xf32>) {
    %t = kernel.thread_id x
    %b = kernel.block_id x
    %n = kernel.block_dim x
    %o = arith.muli %b, %n : index
    %i = arith.addi %o, %t : index
    %one = arith.constant 1.0 : f32
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %y[%i] : memref<?xf32>
    kernel.return
  }
}
func.func @main(%a: memref<262144xf32>) -> memref<262144xf32> {
  %g = arith.constant 1024 : index
  %n = arith.constant 256 : index
  %u = arith.constant 1 : index
  %mid = memref.alloc() : memref<262144xf32>
  device.launch @k::@add_one on #vdev.device<"cpu", 0> grid(%g, %u, %u) block(%n, %u, %u) args(%a, %mid) : memref<262144xf32>, memref<262144xf32>
  %out = memref.alloc() : memref<262144xf32>
  device.launch @k::@add_one on #vdev.device<"cpu", 0> grid(%g, %u, %u) block(%n, %u, %u) args(%mid, %out) : memref<262144xf32>, memref<262144xf32>
  memref.dealloc %mid : memref<262144xf32>
  func.return %out : memref<262144xf32>
}
"""


def test_runs_reuse_their_intermediate_memory_but_not_an_output_the_caller_holds() -> None:
    program = compile_program(devplan.parse(RUN_TWICE), "numpy")
    a = np.arange(1 << 18, dtype=np.float32)
    first = program.run([a]).outputs[0]
    reused = HOST_BLOCKS.reused
    second = program.run([a]).outputs[0]
    assert HOST_BLOCKS.reused == reused + 1  # %mid of the first run, not its %out
    assert second.ctypes.data != first.ctypes.data
    np.testing.assert_array_equal(first, a + 2)
    np.testing.assert_array_equal(second, a + 2)
    address = first.ctypes.data
    del first  # now the caller lets it go: the next run may take it
    third = program.run([a]).outputs[0]
    assert HOST_BLOCKS.reused == reused + 3
    assert address in (third.ctypes.data, host_zeros(MIB, F32).ctypes.data)
    np.testing.assert_array_equal(third, a + 2)


WRITE_COLUMNS = """
kernel.module @k target #target.target<"llvm"> {{
  kernel.func @seven(%out: memref<?xf32>) {{
    %t = kernel.thread_id x
    %b = kernel.block_id x
    %n = kernel.block_dim x
    %o = arith.muli %b, %n : index
    %i = arith.addi %o, %t : index
    %c0 = arith.constant 0 : index
    %size = memref.dim %out, %c0 : memref<?xf32>
    %inside = arith.cmpi ult, %i, %size : index
    scf.if %inside {{
      %seven = arith.constant 7.0 : f32
      memref.store %seven, %out[%i] : memref<?xf32>
    }}
    kernel.return
  }}
}}
func.func @main() -> memref<262144xf32> {{
  %g = arith.constant {blocks} : index
  %n = arith.constant 256 : index
  %u = arith.constant 1 : index
  %out = memref.alloc() : memref<262144xf32>
  device.launch @k::@seven on #vdev.device<"cpu", 0> grid(%g, %u, %u) block(%n, %u, %u) args(%out) : memref<262144xf32>
  func.return %out : memref<262144xf32>
}}
"""


def test_an_output_a_launch_writes_only_in_part_is_zeroed_on_a_reused_block() -> None:
    """An allocation that its first launch overwrites whole skips the zeroing of a reused
    block (`analysis/overwritten_memory.py`); one the launch covers in part does not: the
    old bytes of the block never show."""
    for blocks, expected_tail in ((1024, 7.0), (512, 0.0)):  # all 2^18 elements, half
        program = compile_program(devplan.parse(WRITE_COLUMNS.format(blocks=blocks)), "numpy")
        stale = host_zeros(MIB, F32)
        stale[...] = -1.0
        address = stale.ctypes.data
        del stale  # its block, full of -1, is the next one of its size
        out = program.run([]).outputs[0]
        assert out.ctypes.data == address
        assert (out[: 1 << 17] == 7.0).all()
        assert (out[1 << 17 :] == expected_tail).all()
