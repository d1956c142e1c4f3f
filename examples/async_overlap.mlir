// Asynchronous copies overlapped with kernels: two vectors go host -> cuda:0 on the
// copy engine while the GPU already works on the first one. The dependencies are
// explicit tokens:
//
//   copy a ──► scale a ──► copy a back
//   copy b ─────────► scale b ──► copy b back      (copy b runs during scale a, ...)
//
// `device.wait` blocks the host until both results are back. With `--stats` the
// report's cost-model time is below the sum of the parts, and `--trace t.json`
// shows the copy and compute tracks overlapping (open it in https://ui.perfetto.dev).
//
//   devplan-run examples/async_overlap.mlir --random-args 0 --stats --trace t.json

!host = memref<1048576xf32>
!dev = memref<1048576xf32, #vdev.device<"cuda", 0, ?, "global">>

kernel.module @kernels target #target.target<"cuda"> {
  // x[i] = x[i] * k + 1
  kernel.func @axpb(%x: memref<?xf32>, %k: f32) {
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
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
      %t = arith.addf %s, %one : f32
      memref.store %t, %x[%i] : memref<?xf32>
    }
    kernel.return
  }
}

func.func @main(%a: !host, %b: !host, %k: f32) -> (!host, !host) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c4096 = arith.constant 4096 : index
  %da = device.alloc() : !dev
  %db = device.alloc() : !dev
  %ra = memref.alloc() : !host
  %rb = memref.alloc() : !host

  %ta = device.copy_async [] %a to %da : !host to !dev
  %tb = device.copy_async [] %b to %db : !host to !dev
  %ka = device.launch async [%ta] @kernels::@axpb on #vdev.device<"cuda", 0> grid(%c4096, %c1, %c1) block(%c256, %c1, %c1) args(%da, %k) : !dev, f32
  %kb = device.launch async [%tb] @kernels::@axpb on #vdev.device<"cuda", 0> grid(%c4096, %c1, %c1) block(%c256, %c1, %c1) args(%db, %k) : !dev, f32
  %ca = device.copy_async [%ka] %da to %ra : !dev to !host
  %cb = device.copy_async [%kb] %db to %rb : !dev to !host
  device.wait %ca, %cb

  device.free %da : !dev
  device.free %db : !dev
  func.return %ra, %rb : !host, !host
}
