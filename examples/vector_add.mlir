// Vector add on a GPU: copy two vectors host -> cuda:0, add them there with one
// thread per element, copy the sum back to host memory and return it.
//
//   devplan-run examples/vector_add.mlir --random-args 0 --stats
//
// 1000 elements do not fill the last block of 256 threads: the kernel guards with
// `%i < %n`, so the extra threads of that block do nothing.

kernel.module @kernels target #target.target<"cuda"> {
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
}

func.func @main(%a: memref<1000xf32>, %b: memref<1000xf32>) -> memref<1000xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %n = memref.dim %a, %c0 : memref<1000xf32>
  %blocks = arith.ceildivui %n, %c256 : index

  %da = device.alloc() : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
  %db = device.alloc() : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
  %dc = device.alloc() : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.copy %a to %da : memref<1000xf32> to memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.copy %b to %db : memref<1000xf32> to memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>

  device.launch @kernels::@add on #vdev.device<"cuda", 0> grid(%blocks, %c1, %c1) block(%c256, %c1, %c1) args(%da, %db, %dc) : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>

  %c = memref.alloc() : memref<1000xf32>
  device.copy %dc to %c : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<1000xf32>
  device.free %da : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.free %db : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.free %dc : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return %c : memref<1000xf32>
}
