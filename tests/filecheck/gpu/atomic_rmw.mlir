// memref.atomic_rmw in a kernel: each thread reads the value the previous one left
// (threads of a launch update one after another) on both kernel backends.
// RUN: devplan-run %s --entry main | filecheck %s --match-full-lines
// RUN: devplan-run %s --entry main --kernel-backend numba | filecheck %s --match-full-lines
// RUN: env NUMBA_ENABLE_CUDASIM=1 devplan-run %s --entry main --kernel-backend numba-cuda | filecheck %s --match-full-lines

// 16 threads: a counter (addi), the largest old counter value (maxs), the or of the
// thread ids (ori), and a float sum (addf).
// CHECK: Unranked Memref base@ = {{.*}} rank = 1 offset = 0 sizes = [3] strides = [1] data =
// CHECK-NEXT: [16,  15,  7]
// CHECK-NEXT: Unranked Memref base@ = {{.*}} rank = 1 offset = 0 sizes = [1] strides = [1] data =
// CHECK-NEXT: [8]
func.func @main() {
  %m = memref.alloc() : memref<3xi32>
  %u = memref.cast %m : memref<3xi32> to memref<*xi32>
  gpu.host_register %u : memref<*xi32>
  %f = memref.alloc() : memref<1xf32>
  %fu = memref.cast %f : memref<1xf32> to memref<*xf32>
  gpu.host_register %fu : memref<*xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %k1 = arith.constant 1 : index
    %k2 = arith.constant 2 : index
    %one = arith.constant 1 : i32
    %v = arith.index_cast %tx : index to i32
    %old = memref.atomic_rmw addi %one, %m[%c0] : (i32, memref<3xi32>) -> i32
    %mx = memref.atomic_rmw maxs %old, %m[%k1] : (i32, memref<3xi32>) -> i32
    %x = memref.atomic_rmw ori %v, %m[%k2] : (i32, memref<3xi32>) -> i32
    %h = arith.constant 0.5 : f32
    %s = memref.atomic_rmw addf %h, %f[%c0] : (f32, memref<1xf32>) -> f32
    gpu.terminator
  }
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  call @printMemrefF32(%fu) : (memref<*xf32>) -> ()
  return
}
func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)
