// A copy between memrefs of different shapes: devplan-opt names the dimension.
func.func @f(%h: memref<16xf32>, %d: memref<8xf32, #vdev.device<"cuda", 0>>) {
  device.copy %h to %d : memref<16xf32> to memref<8xf32, #vdev.device<"cuda", 0>>
  func.return
}
