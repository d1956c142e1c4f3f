"""`scf.while` and `scf.index_switch` in kernels and host code.

Each thread of a kernel runs an `scf.while` for as many iterations as its own condition
says (threads leave at different iterations, as with a per-thread `scf.if`), carrying
values through `scf.condition` and `scf.yield`; `scf.index_switch` runs, per thread, the
region of its case. Both CPU kernel backends give bitwise equal results, and a fault
inside a loop is the same located error naming the op, the block and the thread.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import devplan
from devplan.dialects.kernel import KernelFuncOp
from devplan.runtime.kernels.common import KernelError
from devplan.runtime.kernels.compile import BACKENDS, compile_kernel


def kernel_of(text: str) -> KernelFuncOp:
    module = devplan.parse(f'kernel.module @k target #target.target<"cuda"> {{\n{text}\n}}')
    return next(op for op in module.walk() if isinstance(op, KernelFuncOp))


# Per thread t < n: the Collatz sequence from a[t], repeated `rounds` times (an scf.for
# around the scf.while), under an scf.if; the step count picks a case of an
# scf.index_switch. Threads leave the while loop after 0 to 111 iterations.
COLLATZ = kernel_of("""
  kernel.func @collatz(%a: memref<?xi64>, %steps: memref<?xi32>, %peak: memref<?xi64>,
                       %kind: memref<?xf32>, %rounds: index) {
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %b0 = arith.muli %bx, %bd : index
    %i = arith.addi %b0, %tx : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1 : i64
    %two = arith.constant 2 : i64
    %three = arith.constant 3 : i64
    %z = arith.constant 0 : i32
    %z64 = arith.constant 0 : i64
    %inc = arith.constant 1 : i32
    %n = memref.dim %a, %c0 : memref<?xi64>
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {
      %x0 = memref.load %a[%i] : memref<?xi64>
      %total:2 = scf.for %r = %c0 to %rounds step %c1 iter_args(%s0 = %z, %p0 = %x0) -> (i32, i64) {
        %w:3 = scf.while (%x = %x0, %s = %s0, %p = %p0) : (i64, i32, i64) -> (i64, i32, i64) {
          %go = arith.cmpi sgt, %x, %one : i64
          scf.condition(%go) %x, %s, %p : i64, i32, i64
        } do {
        ^bb0(%y: i64, %t: i32, %q: i64):
          %rem = arith.remsi %y, %two : i64
          %even = arith.cmpi eq, %rem, %z64 : i64
          %next = scf.if %even -> (i64) {
            %h = arith.divsi %y, %two : i64
            scf.yield %h : i64
          } else {
            %m = arith.muli %y, %three : i64
            %m1 = arith.addi %m, %one : i64
            scf.yield %m1 : i64
          }
          %t1 = arith.addi %t, %inc : i32
          %q1 = arith.maxsi %q, %next : i64
          scf.yield %next, %t1, %q1 : i64, i32, i64
        }
        scf.yield %w#1, %w#2 : i32, i64
      }
      memref.store %total#0, %steps[%i] : memref<?xi32>
      memref.store %total#1, %peak[%i] : memref<?xi64>
      %sel = arith.index_cast %total#0 : i32 to index
      %f = scf.index_switch %sel -> f32
      case 0 {
        %v = arith.constant 0.5 : f32
        scf.yield %v : f32
      }
      case 16 {
        %v = arith.constant -2.0 : f32
        scf.yield %v : f32
      }
      default {
        %v = arith.sitofp %total#0 : i32 to f32
        %h = arith.constant 0.25 : f32
        %v1 = arith.addf %v, %h : f32
        scf.yield %v1 : f32
      }
      memref.store %f, %kind[%i] : memref<?xf32>
    }
    kernel.return
  }""")


def collatz(x: int) -> tuple[int, int]:
    steps, peak = 0, x
    while x > 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps, peak = steps + 1, max(peak, x)
    return steps, peak


def run_collatz(backend: str, start: np.ndarray[Any, Any], rounds: int) -> tuple[Any, ...]:
    n = start.size
    steps, peak, kind = np.zeros(n, np.int32), np.zeros(n, np.int64), np.zeros(n, np.float32)
    compile_kernel(COLLATZ, backend)((3, 1, 1), (32, 1, 1), [start, steps, peak, kind, rounds])
    return steps, peak, kind


def test_each_thread_leaves_a_while_loop_at_its_own_iteration() -> None:
    start = np.arange(1, 91, dtype=np.int64)  # 96 threads, 90 in range
    start[5] = 27  # 111 steps
    results = {b: run_collatz(b, start, 2) for b in BACKENDS}
    expected = [collatz(int(x)) for x in start]
    steps, peak, kind = results["numpy"]
    assert steps.tolist() == [2 * s for s, _ in expected]
    assert peak.tolist() == [p for _, p in expected]
    assert (steps[5], peak[5]) == (222, 9232)
    picked = {0: 0.5, 16: -2.0}
    assert kind.tolist() == [picked.get(int(s), float(s) + 0.25) for s in steps]
    for got, want in zip(results["numba"], results["numpy"], strict=True):
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes()


def test_a_while_loop_that_runs_zero_times_yields_its_initial_values() -> None:
    start = np.array([1, 0, -4, 1], dtype=np.int64)
    for backend in BACKENDS:
        steps, peak, kind = run_collatz(backend, start, 3)
        assert steps.tolist() == [0, 0, 0, 0]
        assert peak.tolist() == [1, 0, -4, 1]
        assert kind.tolist() == [0.5] * 4


# Thread t divides 100 by t - k for k = 0, 1, ... below t, except thread 5 of block 1,
# which goes one iteration further: a division by zero at its sixth iteration, after
# every other thread has left the loop.
DIVIDES = kernel_of("""
  kernel.func @divides(%out: memref<?xi32>) {
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %b0 = arith.muli %bx, %bd : index
    %i = arith.addi %b0, %tx : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %is5 = arith.cmpi eq, %tx, %c5 : index
    %b1 = arith.cmpi eq, %bx, %c1 : index
    %last = arith.andi %is5, %b1 : i1
    %extra = arith.extui %last : i1 to i32
    %t = arith.index_cast %tx : index to i32
    %limit = arith.addi %t, %extra : i32
    %z = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %hundred = arith.constant 100 : i32
    %r:2 = scf.while (%k = %z, %acc = %z) : (i32, i32) -> (i32, i32) {
      %go = arith.cmpi slt, %k, %limit : i32
      scf.condition(%go) %k, %acc : i32, i32
    } do {
    ^bb0(%k2: i32, %acc2: i32):
      %d = arith.subi %t, %k2 : i32
      %q = arith.divsi %hundred, %d : i32
      %acc3 = arith.addi %acc2, %q : i32
      %k3 = arith.addi %k2, %one : i32
      scf.yield %k3, %acc3 : i32, i32
    }
    memref.store %r#1, %out[%i] : memref<?xi32>
    kernel.return
  }""")


def test_a_fault_inside_a_while_loop_names_the_op_block_and_thread_on_both_backends() -> None:
    messages = []
    for backend in BACKENDS:
        with pytest.raises(KernelError) as caught:
            compile_kernel(DIVIDES, backend)((2, 1, 1), (6, 1, 1), [np.zeros(12, np.int32)])
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith(
        "<string>:26:7: error: in kernel @divides: 'arith.divsi' divides by zero "
        "(block (1, 0, 0), thread (5, 0, 0))"
    )


def test_a_while_loop_without_a_fault_agrees_bitwise() -> None:
    outs = {}
    for backend in BACKENDS:
        out = np.zeros(6, np.int32)
        compile_kernel(DIVIDES, backend)((1, 1, 1), (6, 1, 1), [out])
        outs[backend] = out
    assert outs["numpy"].tolist() == [sum(100 // (t - k) for k in range(t)) for t in range(6)]
    assert outs["numba"].tobytes() == outs["numpy"].tobytes()


# A kernel with shared memory and a barrier (the numba backend runs it phase by phase):
# each thread counts, with an scf.while, the halvings of its value down to 1, stores the
# count to shared memory, and after the barrier reads its neighbour's count through an
# scf.index_switch on its thread id.
NEIGHBOURS = kernel_of("""
  kernel.func @neighbours(%a: memref<?xi32>, %out: memref<?xi32>) {
    %tx = kernel.thread_id x
    %s = kernel.alloc_shared : memref<8xi32, #vdev.device<?, ?, ?, "shared">>
    %x0 = memref.load %a[%tx] : memref<?xi32>
    %one = arith.constant 1 : i32
    %z = arith.constant 0 : i32
    %n:2 = scf.while (%x = %x0, %c = %z) : (i32, i32) -> (i32, i32) {
      %go = arith.cmpi sgt, %x, %one : i32
      scf.condition(%go) %x, %c : i32, i32
    } do {
    ^bb0(%y: i32, %d: i32):
      %h = arith.shrsi %y, %one : i32
      %d1 = arith.addi %d, %one : i32
      scf.yield %h, %d1 : i32, i32
    }
    memref.store %n#1, %s[%tx] : memref<8xi32, #vdev.device<?, ?, ?, "shared">>
    kernel.barrier
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c7 = arith.constant 7 : index
    %j = scf.index_switch %tx -> index
    case 7 {
      scf.yield %c0 : index
    }
    default {
      %j1 = arith.addi %tx, %c1 : index
      scf.yield %j1 : index
    }
    %v = memref.load %s[%j] : memref<8xi32, #vdev.device<?, ?, ?, "shared">>
    memref.store %v, %out[%tx] : memref<?xi32>
    kernel.return
  }""")


def test_while_and_index_switch_in_a_kernel_with_barriers() -> None:
    a = np.array([1, 2, 3, 8, 100, 1 << 20, 7, 1 << 30], dtype=np.int32)
    counts = [int(x).bit_length() - 1 for x in a]
    for backend in BACKENDS:
        out = np.zeros(8, np.int32)
        compile_kernel(NEIGHBOURS, backend)((1, 1, 1), (8, 1, 1), [a, out])
        assert out.tolist() == counts[1:] + counts[:1], backend


def test_a_barrier_inside_a_while_loop_is_a_located_compile_error() -> None:
    func = kernel_of("""
  kernel.func @waits(%a: memref<?xi32>) {
    %z = arith.constant 0 : i32
    %r = scf.while (%x = %z) : (i32) -> i32 {
      %go = arith.cmpi slt, %x, %z : i32
      scf.condition(%go) %x : i32
    } do {
    ^bb0(%y: i32):
      kernel.barrier
      scf.yield %y : i32
    }
    kernel.return
  }""")
    for backend in BACKENDS:
        with pytest.raises(KernelError) as caught:
            compile_kernel(func, backend)
        assert str(caught.value).startswith(
            "<string>:5:5: error: in kernel @waits: a 'kernel.barrier' inside 'scf.while' "
            "is not supported by the kernel backends"
        )


def test_index_switch_in_host_code_runs_the_case_of_its_value() -> None:
    module = devplan.parse("""
    func.func @main(%i: index, %x: i32) -> i32 {
      %r = scf.index_switch %i -> i32
      case 0 {
        scf.yield %x : i32
      }
      case 3 {
        %c = arith.constant 30 : i32
        %m = arith.muli %x, %c : i32
        scf.yield %m : i32
      }
      default {
        %c = arith.constant -1 : i32
        scf.yield %c : i32
      }
      func.return %r : i32
    }
    """)
    got = [int(devplan.execute(module, [i, 7]).outputs[0]) for i in (0, 1, 3, -3)]
    assert got == [7, -1, 210, -1]
