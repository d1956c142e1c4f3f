// Two kernels that meet through an atomic counter: launched async on independent
// streams (no token orders them), each waits in an scf.while for the other's step, so
// neither can run to completion first. devplan runs them at once, on both CPU backends.
// RUN: devplan-run %s --entry main | filecheck %s
// RUN: devplan-run %s --entry main --kernel-backend numba | filecheck %s

// The turn ping saw when it left its wait, and the turn pong moved on from
// (both recorded atomically: the two unordered kernels meet only through atomics).
// CHECK:      [2,  1]
// A loop with carried values and results, whose trip count differs per thread
// (thread t sums 1..t): each thread stops at its own iteration.
// CHECK:      [0,  1,  3,  6,  10,  15,  21,  28]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Turn 0 -> 1, then waits for turn 2.
    gpu.func @ping(%turn: memref<i32>, %seen: memref<2xi32>) kernel {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %i0 = arith.constant 0 : index
      %before = memref.atomic_rmw addi %c1, %turn[] : (i32, memref<i32>) -> i32
      %last = scf.while (%prev = %before) : (i32) -> i32 {
        %now = memref.atomic_rmw addi %c0, %turn[] : (i32, memref<i32>) -> i32
        %waiting = arith.cmpi slt, %now, %c2 : i32
        scf.condition(%waiting) %now : i32
      } do {
      ^bb0(%now: i32):
        scf.yield %now : i32
      }
      %r0 = memref.atomic_rmw assign %last, %seen[%i0] : (i32, memref<2xi32>) -> i32
      gpu.return
    }
    // Waits for turn 1, then turn 1 -> 2.
    gpu.func @pong(%turn: memref<i32>, %seen: memref<2xi32>) kernel {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %i1 = arith.constant 1 : index
      scf.while : () -> () {
        %now = memref.atomic_rmw addi %c0, %turn[] : (i32, memref<i32>) -> i32
        %waiting = arith.cmpi slt, %now, %c1 : i32
        scf.condition(%waiting)
      } do {
        scf.yield
      }
      %was = memref.atomic_rmw addi %c1, %turn[] : (i32, memref<i32>) -> i32
      %r1 = memref.atomic_rmw assign %was, %seen[%i1] : (i32, memref<2xi32>) -> i32
      gpu.return
    }
    // Thread t sums 1..t in an scf.while carrying (i, sum).
    gpu.func @triangle(%out: memref<8xi32>) kernel {
      %tid = gpu.thread_id x
      %n = arith.index_cast %tid : index to i32
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %i, %sum = scf.while (%k = %c1, %acc = %c0) : (i32, i32) -> (i32, i32) {
        %more = arith.cmpi sle, %k, %n : i32
        scf.condition(%more) %k, %acc : i32, i32
      } do {
      ^bb0(%k: i32, %acc: i32):
        %next = arith.addi %k, %c1 : i32
        %added = arith.addi %acc, %k : i32
        scf.yield %next, %added : i32, i32
      }
      memref.store %sum, %out[%tid] : memref<8xi32>
      gpu.return
    }
  }

  func.func @main() {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %turn = gpu.alloc host_shared () : memref<i32>
    memref.store %c0, %turn[] : memref<i32>
    %seen = gpu.alloc host_shared () : memref<2xi32>
    %out = gpu.alloc host_shared () : memref<8xi32>
    %s0 = gpu.wait async
    %s1 = gpu.wait async
    %a = gpu.launch_func async [%s0] @kernels::@ping blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%turn : memref<i32>, %seen : memref<2xi32>)
    %b = gpu.launch_func async [%s1] @kernels::@pong blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%turn : memref<i32>, %seen : memref<2xi32>)
    gpu.wait [%a, %b]
    %u = memref.cast %seen : memref<2xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    gpu.launch_func @kernels::@triangle blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%out : memref<8xi32>)
    %v = memref.cast %out : memref<8xi32> to memref<*xi32>
    call @printMemrefI32(%v) : (memref<*xi32>) -> ()
    gpu.dealloc %turn : memref<i32>
    gpu.dealloc %seen : memref<2xi32>
    gpu.dealloc %out : memref<8xi32>
    return
  }
  func.func private @printMemrefI32(memref<*xi32>)
}
