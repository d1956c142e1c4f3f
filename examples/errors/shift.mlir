// A kernel that reads one element past the end: %a[%i + 1] over 1024 elements.
kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @shift(%a: memref<?xf32>, %c: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %i0 = arith.muli %bx, %bd : index
    %i = arith.addi %i0, %tx : index
    %j = arith.addi %i, %c1 : index
    %x = memref.load %a[%j] : memref<?xf32>
    memref.store %x, %c[%i] : memref<?xf32>
    kernel.return
  }
}

func.func @main(%a: memref<1024xf32>) -> memref<1024xf32> {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %da = device.alloc() : memref<1024xf32, #vdev.device<"cuda", 0, ?, "global">>
  %dc = device.alloc() : memref<1024xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.copy %a to %da : memref<1024xf32> to memref<1024xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.launch @kernels::@shift on #vdev.device<"cuda", 0> grid(%c4, %c1, %c1) block(%c256, %c1, %c1) args(%da, %dc) : memref<1024xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<1024xf32, #vdev.device<"cuda", 0, ?, "global">>
  %c = memref.alloc() : memref<1024xf32>
  device.copy %dc to %c : memref<1024xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<1024xf32>
  device.free %da : memref<1024xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.free %dc : memref<1024xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return %c : memref<1024xf32>
}
