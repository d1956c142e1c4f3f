// Tiled matrix multiply C = A x B on a GPU (64x48 times 48x80, f32). Each block of
// 16x16 threads computes one 16x16 tile of C; it walks the K dimension in steps of
// 16, staging a tile of A and a tile of B in shared memory (`kernel.barrier` after
// loading and after using them) so each element of A and B is read from global
// memory once per block. All sizes must be multiples of 16.
//
//   devplan-run examples/matmul.mlir --random-args 0 --stats

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @matmul(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %zero = arith.constant 0.0 : f32
    %tx = kernel.thread_id x
    %ty = kernel.thread_id y
    %bx = kernel.block_id x
    %by = kernel.block_id y
    %row0 = arith.muli %by, %c16 : index
    %row = arith.addi %row0, %ty : index
    %col0 = arith.muli %bx, %c16 : index
    %col = arith.addi %col0, %tx : index
    %k = memref.dim %A, %c1 : memref<?x?xf32>
    %As = kernel.alloc_shared : memref<16x16xf32, #vdev.device<?, ?, ?, "shared">>
    %Bs = kernel.alloc_shared : memref<16x16xf32, #vdev.device<?, ?, ?, "shared">>
    %sum = scf.for %t = %c0 to %k step %c16 iter_args(%acc = %zero) -> (f32) {
      %acol = arith.addi %t, %tx : index
      %brow = arith.addi %t, %ty : index
      %a = memref.load %A[%row, %acol] : memref<?x?xf32>
      %b = memref.load %B[%brow, %col] : memref<?x?xf32>
      memref.store %a, %As[%ty, %tx] : memref<16x16xf32, #vdev.device<?, ?, ?, "shared">>
      memref.store %b, %Bs[%ty, %tx] : memref<16x16xf32, #vdev.device<?, ?, ?, "shared">>
      kernel.barrier
      %tile = scf.for %kk = %c0 to %c16 step %c1 iter_args(%inner = %acc) -> (f32) {
        %x = memref.load %As[%ty, %kk] : memref<16x16xf32, #vdev.device<?, ?, ?, "shared">>
        %y = memref.load %Bs[%kk, %tx] : memref<16x16xf32, #vdev.device<?, ?, ?, "shared">>
        %xy = arith.mulf %x, %y : f32
        %next = arith.addf %inner, %xy : f32
        scf.yield %next : f32
      }
      kernel.barrier
      scf.yield %tile : f32
    }
    memref.store %sum, %C[%row, %col] : memref<?x?xf32>
    kernel.return
  }
}

func.func @main(%a: memref<64x48xf32>, %b: memref<48x80xf32>) -> memref<64x80xf32> {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c16 = arith.constant 16 : index
  %da = device.alloc() : memref<64x48xf32, #vdev.device<"cuda", 0, ?, "global">>
  %db = device.alloc() : memref<48x80xf32, #vdev.device<"cuda", 0, ?, "global">>
  %dc = device.alloc() : memref<64x80xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.copy %a to %da : memref<64x48xf32> to memref<64x48xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.copy %b to %db : memref<48x80xf32> to memref<48x80xf32, #vdev.device<"cuda", 0, ?, "global">>
  // grid: 80 / 16 = 5 tiles along x (columns), 64 / 16 = 4 along y (rows)
  device.launch @kernels::@matmul on #vdev.device<"cuda", 0> grid(%c5, %c4, %c1) block(%c16, %c16, %c1) args(%da, %db, %dc) : memref<64x48xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<48x80xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<64x80xf32, #vdev.device<"cuda", 0, ?, "global">>
  %c = memref.alloc() : memref<64x80xf32>
  device.copy %dc to %c : memref<64x80xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<64x80xf32>
  device.free %da : memref<64x48xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.free %db : memref<48x80xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.free %dc : memref<64x80xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return %c : memref<64x80xf32>
}
