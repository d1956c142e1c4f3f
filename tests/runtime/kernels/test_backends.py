"""The kernel backends (numpy, numba) run kernels as SIMT programs and agree with NumPy."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import devplan
from devplan.diagnostics import DevplanError
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime import compile_clock
from devplan.runtime.kernels import numba_backend
from devplan.runtime.kernels.common import KernelError
from devplan.runtime.kernels.compile import BACKENDS, compile_kernel

SHARED = '#vdev.device<?, ?, ?, "shared">'


def kernel(body: str) -> KernelFuncOp:
    """Parse one `kernel.func` (text) inside a kernel.module."""
    module = devplan.parse(f'kernel.module @k target #target.target<"cuda"> {{\n{body}\n}}')
    return next(op for op in module.walk() if isinstance(op, KernelFuncOp))


def run(func: KernelFuncOp, backend: str, grid: Any, block: Any, args: list[Any]) -> None:
    compile_kernel(func, backend)(grid=grid, block=block, args=args)


def fault_of(source: str, backend: str, grid: Any, block: Any, args: list[Any]) -> str:
    """The message of the `KernelError` that running the kernel `source` raises."""
    with pytest.raises(KernelError) as caught:
        run(kernel(source), backend, grid, block, args)
    return str(caught.value)


backends = pytest.mark.parametrize("backend", BACKENDS)

VECTOR_ADD = """
kernel.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {
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
    %y = memref.load %b[%i] : memref<?xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<?xf32>
  }
  kernel.return
}
"""


def vectors(n: int, seed: int = 0) -> tuple[np.ndarray[Any, Any], ...]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    return a, b, np.full(n, -7.0, dtype=np.float32)


@backends
def test_vector_add_1d_grid_matches_numpy(backend: str) -> None:
    a, b, c = vectors(1024)
    run(kernel(VECTOR_ADD), backend, (4, 1, 1), (256, 1, 1), [a, b, c])
    np.testing.assert_array_equal(c, a + b)


@backends
@pytest.mark.parametrize(("n", "block"), [(1000, 256), (1, 32), (33, 32), (257, 64), (5, 7)])
def test_masked_tail_threads_past_the_end_do_not_touch_memory(
    backend: str, n: int, block: int
) -> None:
    a, b, c = vectors(n + 8)
    a, b, c = a[:n], b[:n], c[: n + 8]  # c is longer: a write past n would show
    grid = (n + block - 1) // block
    run(kernel(VECTOR_ADD), backend, (grid, 1, 1), (block, 1, 1), [a, b, c[:n]])
    np.testing.assert_array_equal(c[:n], a + b)
    np.testing.assert_array_equal(c[n:], np.full(8, -7.0, dtype=np.float32))


MATRIX_ADD = """
kernel.func @madd(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tx = kernel.thread_id x
  %ty = kernel.thread_id y
  %bx = kernel.block_id x
  %by = kernel.block_id y
  %dx = kernel.block_dim x
  %dy = kernel.block_dim y
  %col0 = arith.muli %bx, %dx : index
  %col = arith.addi %col0, %tx : index
  %row0 = arith.muli %by, %dy : index
  %row = arith.addi %row0, %ty : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  %inr = arith.cmpi slt, %row, %m : index
  %inc = arith.cmpi slt, %col, %n : index
  %in = arith.andi %inr, %inc : i1
  scf.if %in {
    %x = memref.load %a[%row, %col] : memref<?x?xf32>
    %y = memref.load %b[%row, %col] : memref<?x?xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%row, %col] : memref<?x?xf32>
  }
  kernel.return
}
"""


@backends
@pytest.mark.parametrize(("m", "n"), [(16, 16), (13, 21), (1, 40)])
def test_matrix_add_2d_grid_matches_numpy(backend: str, m: int, n: int) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, n)).astype(np.float32)
    b = rng.standard_normal((m, n)).astype(np.float32)
    c = np.zeros((m, n), dtype=np.float32)
    grid = ((n + 7) // 8, (m + 3) // 4, 1)
    run(kernel(MATRIX_ADD), backend, grid, (8, 4, 1), [a, b, c])
    np.testing.assert_array_equal(c, a + b)


BLOCK_SUM = f"""
kernel.func @block_sum(%a: memref<?xf32>, %out: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %s = kernel.alloc_shared : memref<64xf32, {SHARED}>
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %bd = kernel.block_dim x
  %base = arith.muli %bx, %bd : index
  %i = arith.addi %base, %tx : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %in = arith.cmpi ult, %i, %n : index
  %v = scf.if %in -> (f32) {{
    %x = memref.load %a[%i] : memref<?xf32>
    scf.yield %x : f32
  }} else {{
    scf.yield %zero : f32
  }}
  memref.store %v, %s[%tx] : memref<64xf32, {SHARED}>
  kernel.barrier
  scf.for %k = %c0 to %c6 step %c1 {{
    %k1 = arith.addi %k, %c1 : index
    %half = arith.shrui %bd, %k1 : index
    %active = arith.cmpi ult, %tx, %half : index
    scf.if %active {{
      %j = arith.addi %tx, %half : index
      %p = memref.load %s[%tx] : memref<64xf32, {SHARED}>
      %q = memref.load %s[%j] : memref<64xf32, {SHARED}>
      %r = arith.addf %p, %q : f32
      memref.store %r, %s[%tx] : memref<64xf32, {SHARED}>
    }}
    kernel.barrier
  }}
  %first = arith.cmpi eq, %tx, %c0 : index
  scf.if %first {{
    %t = memref.load %s[%c0] : memref<64xf32, {SHARED}>
    memref.store %t, %out[%bx] : memref<?xf32>
  }}
  kernel.return
}}
"""


@backends
@pytest.mark.parametrize("n", [64, 200, 1000])
def test_reduction_with_shared_memory_and_barriers_sums_each_block(backend: str, n: int) -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(-50, 50, n).astype(np.float32)  # integers: every order sums exactly
    blocks = (n + 63) // 64
    out = np.zeros(blocks, dtype=np.float32)
    run(kernel(BLOCK_SUM), backend, (blocks, 1, 1), (64, 1, 1), [a, out])
    padded = np.zeros(blocks * 64, dtype=np.float32)
    padded[:n] = a
    np.testing.assert_array_equal(out, padded.reshape(blocks, 64).sum(axis=1))


TILED_MATMUL = f"""
kernel.func @matmul(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sa = kernel.alloc_shared : memref<8x8xf32, {SHARED}>
  %sb = kernel.alloc_shared : memref<8x8xf32, {SHARED}>
  %tx = kernel.thread_id x
  %ty = kernel.thread_id y
  %bx = kernel.block_id x
  %by = kernel.block_id y
  %r0 = arith.muli %by, %c8 : index
  %row = arith.addi %r0, %ty : index
  %q0 = arith.muli %bx, %c8 : index
  %col = arith.addi %q0, %tx : index
  %M = memref.dim %A, %c0 : memref<?x?xf32>
  %K = memref.dim %A, %c1 : memref<?x?xf32>
  %N = memref.dim %B, %c1 : memref<?x?xf32>
  %tiles = arith.ceildivsi %K, %c8 : index
  %rin = arith.cmpi slt, %row, %M : index
  %cin = arith.cmpi slt, %col, %N : index
  %acc = scf.for %t = %c0 to %tiles step %c1 iter_args(%sum = %zero) -> (f32) {{
    %t8 = arith.muli %t, %c8 : index
    %ak = arith.addi %t8, %tx : index
    %bk = arith.addi %t8, %ty : index
    %akin = arith.cmpi slt, %ak, %K : index
    %ina = arith.andi %rin, %akin : i1
    %va = scf.if %ina -> (f32) {{
      %x = memref.load %A[%row, %ak] : memref<?x?xf32>
      scf.yield %x : f32
    }} else {{
      scf.yield %zero : f32
    }}
    memref.store %va, %sa[%ty, %tx] : memref<8x8xf32, {SHARED}>
    %bkin = arith.cmpi slt, %bk, %K : index
    %inb = arith.andi %bkin, %cin : i1
    %vb = scf.if %inb -> (f32) {{
      %y = memref.load %B[%bk, %col] : memref<?x?xf32>
      scf.yield %y : f32
    }} else {{
      scf.yield %zero : f32
    }}
    memref.store %vb, %sb[%ty, %tx] : memref<8x8xf32, {SHARED}>
    kernel.barrier
    %part = scf.for %k = %c0 to %c8 step %c1 iter_args(%s = %sum) -> (f32) {{
      %x = memref.load %sa[%ty, %k] : memref<8x8xf32, {SHARED}>
      %y = memref.load %sb[%k, %tx] : memref<8x8xf32, {SHARED}>
      %p = arith.mulf %x, %y : f32
      %s2 = arith.addf %s, %p : f32
      scf.yield %s2 : f32
    }}
    kernel.barrier
    scf.yield %part : f32
  }}
  %in = arith.andi %rin, %cin : i1
  scf.if %in {{
    memref.store %acc, %C[%row, %col] : memref<?x?xf32>
  }}
  kernel.return
}}
"""


@backends
@pytest.mark.parametrize(("m", "k", "n"), [(16, 16, 16), (13, 20, 9), (8, 3, 17)])
def test_tiled_matmul_with_shared_memory_matches_numpy(
    backend: str, m: int, k: int, n: int
) -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (m, k)).astype(np.float32)
    b = rng.integers(-4, 5, (k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, dtype=np.float32)
    run(kernel(TILED_MATMUL), backend, ((n + 7) // 8, (m + 7) // 8, 1), (8, 8, 1), [a, b, c])
    np.testing.assert_array_equal(c, a @ b)


POLY = """
kernel.func @poly(%x: memref<?xf32>, %coef: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %i = kernel.thread_id x
  %xi = memref.load %x[%i] : memref<?xf32>
  %nc = memref.dim %coef, %c0 : memref<?xf32>
  %acc = scf.for %k = %c0 to %nc step %c1 iter_args(%h = %zero) -> (f32) {
    %ck = memref.load %coef[%k] : memref<?xf32>
    %hx = arith.mulf %h, %xi : f32
    %h2 = arith.addf %hx, %ck : f32
    scf.yield %h2 : f32
  }
  memref.store %acc, %out[%i] : memref<?xf32>
  kernel.return
}
"""


@backends
def test_scf_for_with_iter_args_evaluates_horner(backend: str) -> None:
    x = np.linspace(-2, 2, 50).astype(np.float32)
    coef = np.array([1.0, -2.0, 0.5, 3.0], dtype=np.float32)
    out = np.zeros_like(x)
    run(kernel(POLY), backend, (1, 1, 1), (50, 1, 1), [x, coef, out])
    expected = np.zeros_like(x)
    for c in coef:
        expected = expected * x + c
    np.testing.assert_array_equal(out, expected)


PREFIX = """
kernel.func @prefix(%a: memref<?xi32>, %out: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %bd = kernel.block_dim x
  %i0 = arith.muli %bx, %bd : index
  %i = arith.addi %i0, %tx : index
  %n = memref.dim %a, %c0 : memref<?xi32>
  %in = arith.cmpi ult, %i, %n : index
  scf.if %in {
    %end = arith.addi %i, %c1 : index
    %s = scf.for %k = %c0 to %end step %c1 iter_args(%acc = %z) -> (i32) {
      %v = memref.load %a[%k] : memref<?xi32>
      %acc2 = arith.addi %acc, %v : i32
      scf.yield %acc2 : i32
    }
    memref.store %s, %out[%i] : memref<?xi32>
  }
  kernel.return
}
"""


@backends
def test_scf_for_with_per_thread_bounds_runs_each_thread_to_its_own_bound(backend: str) -> None:
    a = np.arange(1, 41, dtype=np.int32)
    out = np.zeros(40, dtype=np.int32)
    run(kernel(PREFIX), backend, (3, 1, 1), (16, 1, 1), [a, out])
    np.testing.assert_array_equal(out, np.cumsum(a, dtype=np.int32))


@backends
def test_i32_arithmetic_wraps_at_32_bits(backend: str) -> None:
    a = np.array([2**31 - 1, 2**30, -(2**31), 7] * 10, dtype=np.int32)
    out = np.zeros(40, dtype=np.int32)
    run(kernel(PREFIX), backend, (1, 1, 1), (40, 1, 1), [a, out])
    np.testing.assert_array_equal(out, np.cumsum(a, dtype=np.int32))


CLAMP = """
kernel.func @clamp_or_scale(%a: memref<?xf32>, %out: memref<?xf32>, %lim: f32) {
  %two = arith.constant 2.0 : f32
  %i = kernel.thread_id x
  %x = memref.load %a[%i] : memref<?xf32>
  %big = arith.cmpf ogt, %x, %lim : f32
  %y = scf.if %big -> (f32) {
    scf.yield %lim : f32
  } else {
    %neg = arith.cmpf olt, %x, %two : f32
    %d = arith.mulf %x, %two : f32
    %e = math.exp %x : f32
    %z = arith.select %neg, %d, %e : f32
    scf.yield %z : f32
  }
  memref.store %y, %out[%i] : memref<?xf32>
  kernel.return
}
"""


@backends
def test_scf_if_with_results_merges_both_sides(backend: str) -> None:
    a = np.linspace(-3, 5, 64).astype(np.float32)
    out = np.zeros_like(a)
    run(kernel(CLAMP), backend, (1, 1, 1), (64, 1, 1), [a, out, 4.0])
    expected = np.where(a > 4.0, np.float32(4.0), np.where(a < 2, a * 2, np.exp(a)))
    np.testing.assert_allclose(out, expected, rtol=1e-6)


INT_OPS = """
kernel.func @ints(%a: memref<?xi32>, %b: memref<?xi32>, %out: memref<8x?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %s3 = arith.constant 3 : i32
  %i = kernel.thread_id x
  %x = memref.load %a[%i] : memref<?xi32>
  %y = memref.load %b[%i] : memref<?xi32>
  %q = arith.divsi %x, %y : i32
  memref.store %q, %out[%c0, %i] : memref<8x?xi32>
  %r = arith.remsi %x, %y : i32
  memref.store %r, %out[%c1, %i] : memref<8x?xi32>
  %fq = arith.floordivsi %x, %y : i32
  memref.store %fq, %out[%c2, %i] : memref<8x?xi32>
  %cq = arith.ceildivsi %x, %y : i32
  memref.store %cq, %out[%c3, %i] : memref<8x?xi32>
  %uq = arith.divui %x, %y : i32
  memref.store %uq, %out[%c4, %i] : memref<8x?xi32>
  %sh = arith.shrsi %x, %s3 : i32
  memref.store %sh, %out[%c5, %i] : memref<8x?xi32>
  %su = arith.shrui %x, %s3 : i32
  memref.store %su, %out[%c6, %i] : memref<8x?xi32>
  %mx = arith.maxui %x, %y : i32
  memref.store %mx, %out[%c7, %i] : memref<8x?xi32>
  kernel.return
}
"""


@backends
def test_integer_division_truncates_and_unsigned_ops_read_bits_unsigned(backend: str) -> None:
    a = np.array([7, -7, 7, -7, 0, -1, 2**31 - 1, -(2**31)], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 5, 3, -1, 7], dtype=np.int32)
    out = np.zeros((8, 8), dtype=np.int32)
    run(kernel(INT_OPS), backend, (1, 1, 1), (8, 1, 1), [a, b, out])
    ua, ub = a.astype(np.int64) & 0xFFFFFFFF, b.astype(np.int64) & 0xFFFFFFFF
    trunc = np.array([int(x / y) for x, y in zip(a.tolist(), b.tolist(), strict=True)])
    expected = [
        trunc,
        a - trunc * b,
        np.floor_divide(a.astype(np.int64), b),
        -np.floor_divide(-a.astype(np.int64), b),
        ua // ub,
        a >> 3,
        ua >> 3,
        np.where(ua >= ub, a, b),
    ]
    np.testing.assert_array_equal(out, np.array(expected).astype(np.int32))


# ---------------------------------------------------------------- errors

UNGUARDED = """
kernel.func @copy(%a: memref<?xf32>, %b: memref<?xf32>) {
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %bd = kernel.block_dim x
  %i0 = arith.muli %bx, %bd : index
  %i = arith.addi %i0, %tx : index
  %x = memref.load %a[%i] : memref<?xf32>
  memref.store %x, %b[%i] : memref<?xf32>
  kernel.return
}
"""


@backends
def test_out_of_bounds_load_names_kernel_op_thread_buffer_index_and_shape(backend: str) -> None:
    a, b, _ = vectors(1000)
    message = fault_of(UNGUARDED, backend, (4, 1, 1), (256, 1, 1), [a, b])
    assert message.startswith("<string>:9:3: error: in kernel @copy: out-of-bounds load from ")
    assert "argument 0 (%a): index [1000] is outside shape (1000)" in message
    assert "(block (3, 0, 0), thread (232, 0, 0))" in message
    assert "memref.load %a[%i]" in message  # the source line under the diagnostic


@backends
def test_out_of_bounds_store_is_reported_and_larger_buffers_are_not_clamped(backend: str) -> None:
    a = np.arange(12, dtype=np.float32)
    b = np.zeros(10, dtype=np.float32)
    message = fault_of(UNGUARDED, backend, (1, 1, 1), (12, 1, 1), [a, b])
    assert "out-of-bounds store to argument 1 (%b)" in message


NEGATIVE = """
kernel.func @shift_left(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %tx = kernel.thread_id x
  %i = arith.subi %tx, %c1 : index
  %x = memref.load %a[%i] : memref<?xf32>
  memref.store %x, %b[%tx] : memref<?xf32>
  kernel.return
}
"""


@backends
def test_negative_index_is_out_of_bounds_not_wrapped(backend: str) -> None:
    a, b, _ = vectors(8)
    message = fault_of(NEGATIVE, backend, (1, 1, 1), (8, 1, 1), [a, b])
    assert "index [-1] is outside shape (8)" in message
    assert "(block (0, 0, 0), thread (0, 0, 0))" in message


DIVIDE = """
kernel.func @div(%a: memref<?xi32>, %d: i32) {
  %i = kernel.thread_id x
  %x = memref.load %a[%i] : memref<?xi32>
  %q = arith.divsi %x, %d : i32
  memref.store %q, %a[%i] : memref<?xi32>
  kernel.return
}
"""


@backends
def test_integer_division_by_zero_is_an_error(backend: str) -> None:
    a = np.arange(4, dtype=np.int32)
    message = fault_of(DIVIDE, backend, (1, 1, 1), (4, 1, 1), [a, 0])
    assert "'arith.divsi' divides by zero (block (0, 0, 0)" in message


DIVERGENT = f"""
kernel.func @bad_barrier(%a: memref<?xf32>) {{
  %c4 = arith.constant 4 : index
  %s = kernel.alloc_shared : memref<8xf32, {SHARED}>
  %tx = kernel.thread_id x
  %low = arith.cmpi ult, %tx, %c4 : index
  scf.if %low {{
    kernel.barrier
  }}
  kernel.return
}}
"""


@backends
def test_barrier_in_divergent_control_flow_is_an_error(backend: str) -> None:
    message = fault_of(DIVERGENT, backend, (1, 1, 1), (8, 1, 1), [np.zeros(8, np.float32)])
    assert message.startswith("<string>:9:5: error: in kernel @bad_barrier: 'kernel.barrier'")
    assert "divergent control flow" in message
    assert "thread (4, 0, 0)" in message


@backends
def test_unsupported_element_type_is_a_located_compile_error(backend: str) -> None:
    func = kernel("""
kernel.func @wide(%a: memref<?xf80>) {
  %i = kernel.thread_id x
  %x = memref.load %a[%i] : memref<?xf80>
  %y = math.exp %x : f80
  memref.store %y, %a[%i] : memref<?xf80>
  kernel.return
}""")
    with pytest.raises(KernelError) as caught:
        compile_kernel(func, backend)
    message = str(caught.value)
    assert message.startswith(
        "<string>:5:3: error: in kernel @wide: values of type f80 are not supported "
        "by the kernel backends"
    )


def test_unknown_backend_lists_the_choices() -> None:
    with pytest.raises(
        DevplanError, match="unknown kernel backend 'cuda'; choose one of numpy, numba"
    ):
        compile_kernel(kernel(VECTOR_ADD), "cuda")


def test_argument_of_the_wrong_dtype_is_rejected() -> None:
    a, b, c = vectors(8)
    with pytest.raises(DevplanError, match=r"argument 2 \(%c\) is an array of float64"):
        run(kernel(VECTOR_ADD), "numpy", (1, 1, 1), (8, 1, 1), [a, b, c.astype(np.float64)])


def test_compile_kernel_compiles_each_kernel_once_per_backend() -> None:
    func = kernel(VECTOR_ADD)
    assert compile_kernel(func, "numpy") is compile_kernel(func, "numpy")
    assert compile_kernel(func, "numba") is not compile_kernel(func, "numpy")


def test_numba_compiles_the_checked_path_at_the_first_launch_that_needs_it() -> None:
    """A launch whose blocks all pass the fast test compiles the fast path alone; the
    first launch with a partial block compiles the checked path; later launches of the
    compiled kernel compile nothing."""
    launch = compile_kernel(kernel(VECTOR_ADD), "numba")
    compiled: list[list[str]] = []
    for n in (64, 40, 40, 64):
        a, b, c = vectors(n)
        before = len(compile_clock.compiles())
        launch(grid=(2, 1, 1), block=(32, 1, 1), args=[a, b, c])
        assert np.array_equal(c, a + b)
        compiled.append([what for what, _ in compile_clock.compiles()[before:]])
    what = "compiling kernel @add (numba)"
    assert compiled == [[what], [f"{what}, with bounds checks"], [], []]


def test_numba_compiles_a_kernel_once_for_writable_and_read_only_inputs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The executor passes a program's inputs read-only and what other kernels wrote
    writable; Numba compiles a function once per argument types, read-only arrays apart."""
    namespaces: list[dict[str, Any]] = []
    generate = numba_backend._namespace  # pyright: ignore[reportPrivateUsage]

    def recorded(*args: Any) -> Any:
        generated = generate(*args)
        namespaces.append(generated[0])
        return generated

    monkeypatch.setattr(numba_backend, "_namespace", recorded)
    a, b, c = vectors(40)
    run(kernel(VECTOR_ADD), "numba", (2, 1, 1), (32, 1, 1), [a, b, c])
    a.flags.writeable = b.flags.writeable = False
    c[:] = 0
    run(kernel(VECTOR_ADD), "numba", (2, 1, 1), (32, 1, 1), [a, b, c])
    assert np.array_equal(c, a + b)
    assert [len(n["blocks_fast"].signatures) for n in namespaces] == [1, 1]


# ---------------------------------------------------------------- launch shapes and boxes

COORDS = """
kernel.func @coords(%out: memref<?x?x?x6xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %tx = kernel.thread_id x
  %ty = kernel.thread_id y
  %tz = kernel.thread_id z
  %bx = kernel.block_id x
  %by = kernel.block_id y
  %bz = kernel.block_id z
  %dx = kernel.block_dim x
  %dy = kernel.block_dim y
  %dz = kernel.block_dim z
  %gx = kernel.grid_dim x
  %x0 = arith.muli %bx, %dx : index
  %x = arith.addi %x0, %tx : index
  %y0 = arith.muli %by, %dy : index
  %y = arith.addi %y0, %ty : index
  %z0 = arith.muli %bz, %dz : index
  %z = arith.addi %z0, %tz : index
  memref.store %tx, %out[%z, %y, %x, %c0] : memref<?x?x?x6xindex>
  memref.store %ty, %out[%z, %y, %x, %c1] : memref<?x?x?x6xindex>
  memref.store %tz, %out[%z, %y, %x, %c2] : memref<?x?x?x6xindex>
  memref.store %bx, %out[%z, %y, %x, %c3] : memref<?x?x?x6xindex>
  memref.store %by, %out[%z, %y, %x, %c4] : memref<?x?x?x6xindex>
  memref.store %gx, %out[%z, %y, %x, %c5] : memref<?x?x?x6xindex>
  kernel.return
}
"""


@backends
def test_thread_and_block_indices_in_three_dimensions(backend: str) -> None:
    grid, block = (3, 2, 2), (4, 3, 2)
    shape = (grid[2] * block[2], grid[1] * block[1], grid[0] * block[0], 6)
    out = np.full(shape, -1, dtype=np.int64)
    run(kernel(COORDS), backend, grid, block, [out])
    z, y, x = np.meshgrid(*(np.arange(n) for n in shape[:3]), indexing="ij")
    np.testing.assert_array_equal(out[..., 0], x % block[0])
    np.testing.assert_array_equal(out[..., 1], y % block[1])
    np.testing.assert_array_equal(out[..., 2], z % block[2])
    np.testing.assert_array_equal(out[..., 3], x // block[0])
    np.testing.assert_array_equal(out[..., 4], y // block[1])
    np.testing.assert_array_equal(out[..., 5], np.full(shape[:3], grid[0]))


@pytest.mark.parametrize("box_lanes", [1, 64, 200, 1 << 20])
def test_numpy_backend_runs_blocks_in_boxes_of_any_size(
    box_lanes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from devplan.runtime.kernels import lanes

    monkeypatch.setattr(lanes, "BOX_LANES", box_lanes)
    rng = np.random.default_rng(4)
    a = rng.integers(-4, 5, (19, 11)).astype(np.float32)
    b = rng.integers(-4, 5, (11, 26)).astype(np.float32)
    c = np.zeros((19, 26), dtype=np.float32)
    run(kernel(TILED_MATMUL), "numpy", (4, 3, 1), (8, 8, 1), [a, b, c])
    np.testing.assert_array_equal(c, a @ b)
    x = rng.integers(-50, 50, 700).astype(np.float32)
    out = np.zeros(11, dtype=np.float32)
    run(kernel(BLOCK_SUM), "numpy", (11, 1, 1), (64, 1, 1), [x, out])
    padded = np.zeros(11 * 64, dtype=np.float32)
    padded[:700] = x
    np.testing.assert_array_equal(out, padded.reshape(11, 64).sum(axis=1))


BLOCK_UNIFORM_BARRIER = f"""
kernel.func @some_blocks_sync(%a: memref<?xf32>) {{
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f32
  %s = kernel.alloc_shared : memref<8xf32, {SHARED}>
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %early = arith.cmpi ult, %bx, %c2 : index
  scf.if %early {{
    memref.store %one, %s[%tx] : memref<8xf32, {SHARED}>
    kernel.barrier
    %c7 = arith.constant 7 : index
    %x = memref.load %s[%c7] : memref<8xf32, {SHARED}>
    %i0 = arith.constant 8 : index
    %i1 = arith.muli %bx, %i0 : index
    %i = arith.addi %i1, %tx : index
    memref.store %x, %a[%i] : memref<?xf32>
  }}
  kernel.return
}}
"""


@backends
def test_barrier_taken_by_whole_blocks_only_is_not_divergent(backend: str) -> None:
    a = np.zeros(32, dtype=np.float32)
    run(kernel(BLOCK_UNIFORM_BARRIER), backend, (4, 1, 1), (8, 1, 1), [a])
    np.testing.assert_array_equal(a, np.r_[np.ones(16), np.zeros(16)].astype(np.float32))


SHARED_OOB = f"""
kernel.func @spill(%a: memref<?xf32>) {{
  %c60 = arith.constant 60 : index
  %one = arith.constant 1.0 : f32
  %s = kernel.alloc_shared : memref<64xf32, {SHARED}>
  %tx = kernel.thread_id x
  %i = arith.addi %tx, %c60 : index
  memref.store %one, %s[%i] : memref<64xf32, {SHARED}>
  kernel.return
}}
"""


@backends
def test_out_of_bounds_shared_memory_store_names_the_shared_buffer(backend: str) -> None:
    message = fault_of(SHARED_OOB, backend, (2, 1, 1), (8, 1, 1), [np.zeros(1, np.float32)])
    assert "out-of-bounds store to shared memory %s: index [64] is outside shape (64)" in message
    assert "(block (0, 0, 0), thread (4, 0, 0))" in message


SCALARS = """
kernel.func @scale(%a: memref<f32>, %flag: i1, %k: i32) {
  %x = memref.load %a[] : memref<f32>
  %kf = arith.sitofp %k : i32 to f32
  %y = arith.mulf %x, %kf : f32
  %z = arith.select %flag, %y, %x : f32
  memref.store %z, %a[] : memref<f32>
  kernel.return
}
"""


@backends
def test_scalar_arguments_and_rank_zero_memrefs(backend: str) -> None:
    a = np.array(3.0, dtype=np.float32)
    run(kernel(SCALARS), backend, (1, 1, 1), (1, 1, 1), [a, True, 5])
    run(kernel(SCALARS), backend, (1, 1, 1), (1, 1, 1), [a, False, 7])
    assert a == np.float32(15.0)


def test_scalar_argument_out_of_range_is_rejected_not_wrapped() -> None:
    a = np.array(3.0, dtype=np.float32)
    with pytest.raises(DevplanError, match=r"argument 2 \(%k\) = 4294967296 does not fit in i32"):
        run(kernel(SCALARS), "numpy", (1, 1, 1), (1, 1, 1), [a, True, 2**32])


def test_wrong_argument_count_and_bad_grid_are_rejected() -> None:
    a = np.array(3.0, dtype=np.float32)
    with pytest.raises(DevplanError, match="expected 3 arguments, got 1"):
        run(kernel(SCALARS), "numpy", (1, 1, 1), (1, 1, 1), [a])
    with pytest.raises(DevplanError, match=r"grid must be three non-negative integers"):
        run(kernel(SCALARS), "numpy", (1, -1, 1), (1, 1, 1), [a, True, 1])
    # CUDA's limits hold for kernels launched directly too, as for device.launch.
    with pytest.raises(DevplanError, match=r"65536 blocks along y, more than the limit of 65535"):
        run(kernel(SCALARS), "numba", (1, 65536, 1), (1, 1, 1), [a, True, 1])
    with pytest.raises(DevplanError, match=r"2147483648 blocks along x, more than the limit"):
        run(kernel(SCALARS), "numpy", (2**31, 1, 1), (1, 1, 1), [a, True, 1])


LAST_WINS = """
kernel.func @collide(%a: memref<?xf32>, %out: memref<?xf32>, %k: f32) {
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %bd = kernel.block_dim x
  %i0 = arith.muli %bx, %bd : index
  %i = arith.addi %i0, %tx : index
  %x = memref.load %a[%i] : memref<?xf32>
  %y = arith.mulf %x, %k : f32
  memref.store %y, %out[%bx] : memref<?xf32>
  %z = arith.mulf %x, %k : f32
  memref.store %z, %a[%i] : memref<?xf32>
  kernel.return
}
"""


@backends
def test_colliding_stores_keep_the_last_threads_value_and_scaled_stores_compute_in_place(
    backend: str,
) -> None:
    a = np.arange(12, dtype=np.float32)
    out = np.zeros(3, dtype=np.float32)
    run(kernel(LAST_WINS), backend, (3, 1, 1), (4, 1, 1), [a, out, 2.0])
    np.testing.assert_array_equal(out, np.array([6.0, 14.0, 22.0], dtype=np.float32))
    np.testing.assert_array_equal(a, np.arange(12, dtype=np.float32) * 2)


def nested_loops(kinds: list[str]) -> str:
    """Loops nested in the order of `kinds` ("for" or "while"), two iterations each, the
    innermost adding 1 to a[0] atomically: a[0] ends at 2^len(kinds) per thread."""
    lines = [
        "kernel.func @nest(%a: memref<?xi32>) {",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        "  %c2 = arith.constant 2 : index",
        "  %zero = arith.constant 0 : i32",
        "  %one = arith.constant 1 : i32",
        "  %two = arith.constant 2 : i32",
    ]
    for k, kind in enumerate(kinds):
        if kind == "for":
            lines.append(f"  scf.for %i{k} = %c0 to %c2 step %c1 {{")
        else:
            lines += [
                f"  %r{k} = scf.while (%x{k} = %zero) : (i32) -> i32 {{",
                f"    %p{k} = arith.cmpi slt, %x{k}, %two : i32",
                f"    scf.condition(%p{k}) %x{k} : i32",
                f"  }} do {{\n  ^bb0(%y{k}: i32):",
            ]
    lines.append("  %old = memref.atomic_rmw addi %one, %a[%c0] : (i32, memref<?xi32>) -> i32")
    for k, kind in reversed(list(enumerate(kinds))):
        if kind == "while":
            lines += [f"    %n{k} = arith.addi %y{k}, %one : i32", f"    scf.yield %n{k} : i32"]
        lines.append("  }")
    return "\n".join([*lines, "  kernel.return", "}"])


@backends
def test_loops_nested_twelve_deep_run_and_a_thirteenth_is_a_located_error(backend: str) -> None:
    """Each loop is a loop of the generated Python, whose compiler nests at most 20
    blocks: both backends run 12 nested loops and refuse a 13th at the loop (16 deep, the
    numba backend's source was a SyntaxError traceback, the numpy backend's ran)."""
    a = np.zeros(1, np.int32)
    run(kernel(nested_loops(["for", "while"] * 6)), backend, (1, 1, 1), (2, 1, 1), [a])
    assert a.tolist() == [2 * 2**12]
    message = fault_of(nested_loops(["while", "for"] * 8), backend, (1, 1, 1), (2, 1, 1), [a])
    assert message.startswith(
        "<string>:45:3: error: in kernel @nest: 'scf.while' is nested in 12 loops; the "
        "kernel backends run loops nested at most 12 deep"
    )
    assert "%r12 = scf.while" in message


def nested_ifs(depth: int) -> str:
    """`depth` `scf.if`s nested in one another on a condition read from `flag`, the
    innermost storing 1 to a[0]. (On a constant condition, the numba backend's fast path
    tests each guard for being the same in every thread, a test that grows with the
    square of the depth: 64 such guards took 7.5 CPU-s to compile, 0.7 when read.)"""
    lines = [
        "kernel.func @deep(%a: memref<?xi32>, %flag: memref<i1>) {",
        "  %c0 = arith.constant 0 : index",
        "  %one = arith.constant 1 : i32",
        "  %true = memref.load %flag[] : memref<i1>",
        *["  scf.if %true {"] * depth,
        "  memref.store %one, %a[%c0] : memref<?xi32>",
        *["  }"] * depth,
    ]
    return "\n".join([*lines, "  kernel.return", "}"])


@backends
def test_ops_with_regions_nest_64_deep_and_a_65th_is_a_located_error(backend: str) -> None:
    """Each region is an indented block of the generated Python, whose tokenizer indents
    at most 100 levels (100 nested `scf.if`s were an IndentationError traceback)."""
    a, flag = np.zeros(1, np.int32), np.array(True)
    run(kernel(nested_ifs(64)), backend, (1, 1, 1), (1, 1, 1), [a, flag])
    assert a.tolist() == [1]
    message = fault_of(nested_ifs(100), backend, (1, 1, 1), (1, 1, 1), [a, flag])
    assert message.startswith(
        "<string>:70:3: error: in kernel @deep: 'scf.if' is nested in 64 ops with regions; "
        "the kernel backends run at most 64 nested"
    )


def test_a_large_loop_free_launch_runs_in_parallel_only_with_a_core_to_spare(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """2^20 threads of a vector add on 2 cores: their blocks run in parallel while nothing
    but this process's threads is runnable (the launching thread, and a worker still
    spinning after a parallel launch), in order when another process's work is runnable
    on the other core or the load cannot be read; the sum is the same either way."""
    assert numba_backend.numba.get_num_threads() >= 2, "blocks never run in parallel here"
    launches: list[int] = []
    chunk_size = numba_backend._set_chunksize  # pyright: ignore[reportPrivateUsage]

    def recording(size: int) -> int:
        launches.append(size)
        return chunk_size(size)

    monkeypatch.setattr(numba_backend, "_set_chunksize", recording)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    func = kernel(VECTOR_ADD)
    cases = [(1, "RS", True), (2, "RS", False), (2, "RRS", True), (3, "RRS", False)]
    for runnable, states, parallel in [*cases, (None, "R", False)]:
        load = tmp_path / f"loadavg-{runnable}"
        if runnable is not None:
            load.write_text(f"3.10 2.00 1.50 {runnable}/412 9876\n")
        tasks = tmp_path / f"task-{runnable}-{states}"
        for tid, state in enumerate(states, start=700):
            (tasks / str(tid)).mkdir(parents=True)
            # (a thread's name may hold spaces and parentheses)
            (tasks / str(tid) / "stat").write_text(f"{tid} (numba (omp) {tid}) {state} 1 1 0\n")
        monkeypatch.setattr(numba_backend, "OWN_THREADS", tasks)
        monkeypatch.setattr(numba_backend, "LOAD_FILE", load)
        monkeypatch.setattr(numba_backend, "_load_read_at", -numba_backend.SPARE_CORE_SECONDS)
        a, b, c = vectors(1 << 20, seed=2)
        launches.clear()
        run(func, "numba", (4096, 1, 1), (256, 1, 1), [a, b, c])
        np.testing.assert_array_equal(c, a + b)
        assert bool(launches) == parallel, (runnable, states)
