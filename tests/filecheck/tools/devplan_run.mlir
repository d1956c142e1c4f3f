// devplan-run runs a level-2 program: outputs (shape, dtype, values) and, with
// --stats, the report per device and per link.
// RUN: devplan-run %s --arg 5 | filecheck %s
// RUN: devplan-run %s --arg 5 --stats | filecheck %s --check-prefix=STATS
// RUN: devplan-run %s --random-args 0 --kernel-backend numba | filecheck %s --check-prefix=RANDOM

// CHECK:      result 0: float32[4]  (min 5, max 8, mean 6.5)
// CHECK-NEXT: [5., 6., 7., 8.]
// CHECK-NEXT: result 1: int64 = 4
// CHECK-NOT:  run:

// STATS:      run: wall time {{.*}}, cost-model time {{.*}}
// STATS:      cuda:0 simulated 1 1 global 16 B 1 5.0 us
// STATS:      cpu:0<->cuda:0 2 32 B
// STATS:      leaked buffers: none

// RANDOM:     result 0: float32[4]
// RANDOM:     result 1: int64 = 4

kernel.module @kernels target #target.target<"cuda"> {
  // x[i] = i + k
  kernel.func @iota(%x: memref<?xf32>, %k: f32) {
    %i = kernel.thread_id x
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %v = arith.addf %f, %k : f32
    memref.store %v, %x[%i] : memref<?xf32>
    kernel.return
  }
}

func.func @main(%k: f32) -> (memref<4xf32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %d = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  %h = memref.alloc() : memref<4xf32>
  device.copy %h to %d : memref<4xf32> to memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.launch @kernels::@iota on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c4, %c1, %c1) args(%d, %k) : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>, f32
  device.copy %d to %h : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<4xf32>
  device.free %d : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  %n = memref.dim %h, %c0 : memref<4xf32>
  func.return %h, %n : memref<4xf32>, index
}
