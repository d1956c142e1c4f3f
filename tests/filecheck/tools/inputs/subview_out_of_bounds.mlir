// A window past the end of its source is a located error (devplan_run_buffer_linalg.mlir).
func.func @main() {
  %c3 = arith.constant 3 : index
  %a = memref.alloc() : memref<4xf32>
  %v = memref.subview %a[%c3] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: ?>>
  memref.dealloc %a : memref<4xf32>
  return
}
