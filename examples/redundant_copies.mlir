// Copies as a pass that inserts them for correctness leaves them: elide-copies removes
// those that change nothing and keeps the rest.
//
//   devplan-opt examples/redundant_copies.mlir -p 'elide-copies{stats=true explain=true}'
//   devplan-run examples/redundant_copies.mlir --random-args 0 --stats
//   devplan-run examples/redundant_copies.mlir --random-args 0 --stats --pipeline elide-copies
//
// @main stages its input on cuda:0 (%x), computes y = 2x + 1.5 there, and returns a
// copy of x and y. Of its 7 copies, 4 change nothing:
//   * %a -> %stage is overwritten (by %x -> %stage) before anything reads it: dead.
//   * %x -> %a copies back what %a -> %x copied, and neither changed since: copy-back.
//   * %x -> %stage and %x -> %view copy within one memory area (cuda:0's global
//     memory) into buffers that are only read while %x stays unchanged: their readers
//     read %x, and the two buffers go (forward).
// The executor's report shows 5 copies (5 KiB) over the cpu:0 <-> cuda:0 link and 2
// on cuda:0 before; 3 copies (3 KiB) and none on cuda:0 after.

!h = memref<256xf32>
!d = memref<256xf32, #vdev.device<"cuda", 0, ?, "global">>

kernel.module @k target #target.target<"cuda"> {
  // b = 2 * a
  kernel.func @twice(%a: memref<256xf32>, %b: memref<256xf32>) {
    %tx = kernel.thread_id x
    %v = memref.load %a[%tx] : memref<256xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %b[%tx] : memref<256xf32>
    kernel.return
  }
  // a += 1.5
  kernel.func @bump(%a: memref<256xf32>) {
    %tx = kernel.thread_id x
    %v = memref.load %a[%tx] : memref<256xf32>
    %one = arith.constant 1.5 : f32
    %w = arith.addf %v, %one : f32
    memref.store %w, %a[%tx] : memref<256xf32>
    kernel.return
  }
}

func.func @main(%a: !h) -> (!h, !h) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %x = device.alloc() : !d
  %y = device.alloc() : !d
  %stage = device.alloc() : !d
  %view = device.alloc() : !d
  device.copy %a to %stage : !h to !d
  device.copy %a to %x : !h to !d
  device.copy %x to %stage : !d to !d
  device.copy %x to %view : !d to !d
  device.launch @k::@twice on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c256, %c1, %c1) args(%view, %y) : !d, !d
  device.launch @k::@bump on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c256, %c1, %c1) args(%y) : !d
  device.copy %x to %a : !d to !h
  %rx = memref.alloc() : !h
  %ry = memref.alloc() : !h
  device.copy %stage to %rx : !d to !h
  device.copy %y to %ry : !d to !h
  device.free %x : !d
  device.free %y : !d
  device.free %stage : !d
  device.free %view : !d
  func.return %rx, %ry : !h, !h
}
