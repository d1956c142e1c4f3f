// A gpu.launch with a body is outlined into a kernel; gpu.host_register makes the
// host allocation the device's host memory, so the kernel writes what the host prints.
// The launch's constant sizes become the kernel's known_block_size/known_grid_size, as
// MLIR's outliner records them.
// RUN: devplan-run %s --entry main | filecheck %s
// RUN: devplan-run %s --entry main --kernel-backend numba | filecheck %s
// RUN: devplan-opt %s -p convert-gpu-to-device | filecheck %s --check-prefix=IR

// CHECK:      Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}0,   1,   2],
// CHECK-NEXT:  [10,   11,   12]]

// IR:      device.alloc() : memref<2x3xi32, #vdev.device<"cuda", 0, ?, "host">>
// IR:      device.launch @main_kernel::@main_kernel on #vdev.device<"cuda", 0>
// IR:      kernel.module @main_kernel
// IR-NEXT:   kernel.func @main_kernel(%m: memref<2x3xi32>) attributes {known_block_size = array<i32: 3, 1, 1>, known_grid_size = array<i32: 2, 1, 1>}
func.func @main() {
  %m = memref.alloc() : memref<2x3xi32>
  %u = memref.cast %m : memref<2x3xi32> to memref<*xi32>
  gpu.host_register %u : memref<*xi32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c3, %sy = %c1, %sz = %c1) {
    %ten = arith.constant 10 : index
    %row = arith.muli %bx, %ten : index
    %v = arith.addi %row, %tx : index
    %i = arith.index_cast %v : index to i32
    memref.store %i, %m[%bx, %tx] : memref<2x3xi32>
    gpu.terminator
  }
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}

func.func private @printMemrefI32(memref<*xi32>)
