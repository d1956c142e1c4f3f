// Sum of 4096 floats on a GPU: each block of 256 threads loads its slice into shared
// memory and halves it eight times (a tree, `kernel.barrier` between the steps);
// thread 0 writes the block's sum to `%partial`. The host adds the 16 partial sums
// in host code (scf.for over memref.load) and returns the total.
//
//   devplan-run examples/reduction.mlir --random-args 0

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @block_sum(%x: memref<?xf32>, %partial: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %tile = kernel.alloc_shared : memref<256xf32, #vdev.device<?, ?, ?, "shared">>
    %base = arith.muli %bx, %bd : index
    %i = arith.addi %base, %tx : index
    %v = memref.load %x[%i] : memref<?xf32>
    memref.store %v, %tile[%tx] : memref<256xf32, #vdev.device<?, ?, ?, "shared">>
    kernel.barrier
    scf.for %step = %c0 to %c8 step %c1 {
      %stride = arith.shrui %c128, %step : index
      %active = arith.cmpi ult, %tx, %stride : index
      scf.if %active {
        %j = arith.addi %tx, %stride : index
        %mine = memref.load %tile[%tx] : memref<256xf32, #vdev.device<?, ?, ?, "shared">>
        %other = memref.load %tile[%j] : memref<256xf32, #vdev.device<?, ?, ?, "shared">>
        %s = arith.addf %mine, %other : f32
        memref.store %s, %tile[%tx] : memref<256xf32, #vdev.device<?, ?, ?, "shared">>
      }
      kernel.barrier
    }
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %total = memref.load %tile[%c0] : memref<256xf32, #vdev.device<?, ?, ?, "shared">>
      memref.store %total, %partial[%bx] : memref<?xf32>
    }
    kernel.return
  }
}

func.func @main(%x: memref<4096xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %dx = device.alloc() : memref<4096xf32, #vdev.device<"cuda", 0, ?, "global">>
  %dp = device.alloc() : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.copy %x to %dx : memref<4096xf32> to memref<4096xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.launch @kernels::@block_sum on #vdev.device<"cuda", 0> grid(%c16, %c1, %c1) block(%c256, %c1, %c1) args(%dx, %dp) : memref<4096xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
  %partial = memref.alloc() : memref<16xf32>
  device.copy %dp to %partial : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<16xf32>
  device.free %dx : memref<4096xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.free %dp : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
  %sum = scf.for %b = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
    %p = memref.load %partial[%b] : memref<16xf32>
    %next = arith.addf %acc, %p : f32
    scf.yield %next : f32
  }
  memref.dealloc %partial : memref<16xf32>
  func.return %sum : f32
}
