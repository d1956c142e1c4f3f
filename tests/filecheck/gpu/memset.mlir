// gpu.memset fills every element, whatever the rank (a fill kernel launched over the
// elements); the async form orders like any other async gpu op.
// RUN: devplan-run %s | filecheck %s
// RUN: devplan-run %s --kernel-backend numba | filecheck %s
// RUN: devplan-opt %s -p convert-gpu-to-device | filecheck %s --check-prefix=IR

// IR:      %t1 = device.launch async [] @memset_kernels::@fill_1 on #vdev.device<"cuda", 0>
// IR:      kernel.module @memset_kernels
// IR-NEXT:   kernel.func @fill_0(%dst: memref<?x5xf32>, %value: f32)

// CHECK:      data =
// CHECK-NEXT: {{\[\[}}2.5,   2.5,   2.5,   2.5,   2.5],
// CHECK-NEXT:  [2.5,   2.5,   2.5,   2.5,   2.5],
// CHECK-NEXT:  [2.5,   2.5,   2.5,   2.5,   2.5]]
// CHECK:      data =
// CHECK-NEXT: [7,  7,  7,  7]
// CHECK:      data =
// CHECK-NEXT: [-1]
func.func @main() {
  %c3 = arith.constant 3 : index
  %h = memref.alloc(%c3) : memref<?x5xf32>
  %hu = memref.cast %h : memref<?x5xf32> to memref<*xf32>
  gpu.host_register %hu : memref<*xf32>
  %v = arith.constant 2.5 : f32
  gpu.memset %h, %v : memref<?x5xf32>, f32
  call @printMemrefF32(%hu) : (memref<*xf32>) -> ()

  %d = gpu.alloc () : memref<4xi32>
  %t0 = gpu.wait async
  %seven = arith.constant 7 : i32
  %t1 = gpu.memset async [%t0] %d, %seven : memref<4xi32>, i32
  %r = memref.alloc() : memref<4xi32>
  gpu.memcpy [%t1] %r, %d : memref<4xi32>, memref<4xi32>
  %ru = memref.cast %r : memref<4xi32> to memref<*xi32>
  call @printMemrefI32(%ru) : (memref<*xi32>) -> ()
  gpu.dealloc %d : memref<4xi32>

  %s = gpu.alloc host_shared () : memref<i64>
  %m1 = arith.constant -1 : i64
  gpu.memset %s, %m1 : memref<i64>, i64
  %su = memref.cast %s : memref<i64> to memref<*xi64>
  call @printMemrefI64(%su) : (memref<*xi64>) -> ()
  gpu.dealloc %s : memref<i64>
  return
}
func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefI64(memref<*xi64>)
