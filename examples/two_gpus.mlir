// Two GPUs exchange data with device-to-device copies. cuda:0 scales `a` by 2 and
// cuda:1 scales `b` by 3; then each GPU sends its result to the other (a copy
// cuda:0 -> cuda:1 and one cuda:1 -> cuda:0, over the link between them) and both
// add what they have to what they received. Both returned vectors are 2a + 3b, one
// computed on each GPU.
//
//   devplan-run examples/two_gpus.mlir --random-args 0 --stats

!host = memref<512xf32>
!g0 = memref<512xf32, #vdev.device<"cuda", 0, ?, "global">>
!g1 = memref<512xf32, #vdev.device<"cuda", 1, ?, "global">>

kernel.module @kernels target #target.target<"cuda"> {
  // x[i] = x[i] * k
  kernel.func @scale(%x: memref<?xf32>, %k: f32) {
    %c0 = arith.constant 0 : index
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %i0 = arith.muli %bx, %bd : index
    %i = arith.addi %i0, %tx : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {
      %v = memref.load %x[%i] : memref<?xf32>
      %s = arith.mulf %v, %k : f32
      memref.store %s, %x[%i] : memref<?xf32>
    }
    kernel.return
  }
  // acc[i] = acc[i] + x[i]
  kernel.func @accumulate(%acc: memref<?xf32>, %x: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %i0 = arith.muli %bx, %bd : index
    %i = arith.addi %i0, %tx : index
    %n = memref.dim %acc, %c0 : memref<?xf32>
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {
      %a = memref.load %acc[%i] : memref<?xf32>
      %v = memref.load %x[%i] : memref<?xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc[%i] : memref<?xf32>
    }
    kernel.return
  }
}

func.func @main(%a: !host, %b: !host) -> (!host, !host) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32

  %x0 = device.alloc() : !g0
  %x1 = device.alloc() : !g1
  device.copy %a to %x0 : !host to !g0
  device.copy %b to %x1 : !host to !g1
  device.launch @kernels::@scale on #vdev.device<"cuda", 0> grid(%c2, %c1, %c1) block(%c256, %c1, %c1) args(%x0, %two) : !g0, f32
  device.launch @kernels::@scale on #vdev.device<"cuda", 1> grid(%c2, %c1, %c1) block(%c256, %c1, %c1) args(%x1, %three) : !g1, f32

  // The exchange: each GPU receives the other's vector, device to device.
  %from1 = device.alloc() : !g0
  %from0 = device.alloc() : !g1
  device.copy %x1 to %from1 : !g1 to !g0
  device.copy %x0 to %from0 : !g0 to !g1
  device.launch @kernels::@accumulate on #vdev.device<"cuda", 0> grid(%c2, %c1, %c1) block(%c256, %c1, %c1) args(%x0, %from1) : !g0, !g0
  device.launch @kernels::@accumulate on #vdev.device<"cuda", 1> grid(%c2, %c1, %c1) block(%c256, %c1, %c1) args(%x1, %from0) : !g1, !g1

  %r0 = memref.alloc() : !host
  %r1 = memref.alloc() : !host
  device.copy %x0 to %r0 : !g0 to !host
  device.copy %x1 to %r1 : !g1 to !host
  device.free %x0 : !g0
  device.free %x1 : !g1
  device.free %from1 : !g0
  device.free %from0 : !g1
  func.return %r0, %r1 : !host, !host
}
