// gpu.printf prints from every thread in a defined order; a failing cf.assert in a
// kernel stops the run with CUDA's line per failing thread (block and thread named).
// RUN: devplan-run %s --entry main | filecheck %s
// RUN: devplan-run %s --entry main --kernel-backend numba | filecheck %s --check-prefix=NUMBA
// RUN: not devplan-run %s --entry fails 2>&1 | filecheck %s --check-prefix=ASSERT
// RUN: not devplan-run %s --entry fails --kernel-backend numba 2>&1 | filecheck %s --check-prefixes=NUMBA-ASSERT,ASSERT

// The NumPy backend runs each op for all threads (blocks then threads, in order)...
// CHECK:      block 0 thread 0: 7 2.500000 x=0x2a
// CHECK-NEXT: block 0 thread 1: 7 2.500000 x=0x2a
// CHECK-NEXT: block 1 thread 0: 7 2.500000 x=0x2a
// CHECK-NEXT: block 1 thread 1: 7 2.500000 x=0x2a
// CHECK-NEXT: 100%
// CHECK-NEXT: 100%

// ... the Numba backend runs each thread to its end before the next.
// NUMBA:      block 0 thread 0: 7 2.500000 x=0x2a
// NUMBA-NEXT: 100%
// NUMBA-NEXT: block 0 thread 1: 7 2.500000 x=0x2a
// NUMBA-NEXT: 100%
// NUMBA-NEXT: block 1 thread 0

// The NumPy backend stops every thread at the failing assertion; the Numba backend
// stops each failing thread there and runs the others on.
// NUMBA-ASSERT: thread 1 passed
// NUMBA-ASSERT: thread 3 passed
// ASSERT: printf_assert.mlir:41:5: error: in kernel @fails_kernel: device-side assertion failed in 2 threads:
// ASSERT-NEXT: printf_assert.mlir:41: fails_kernel: block: [0,0,0], thread: [0,0,0] Assertion `odd thread` failed.
// ASSERT-NEXT: printf_assert.mlir:41: fails_kernel: block: [0,0,0], thread: [2,0,0] Assertion `odd thread` failed.
// ASSERT-NOT: thread 0 passed
// ASSERT-NOT: thread 2 passed
func.func @fails() {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %two = arith.constant 2 : index
    %zero = arith.constant 0 : index
    %r = arith.remui %tx, %two : index
    %odd = arith.cmpi ne, %r, %zero : index
    cf.assert %odd, "odd thread"
    gpu.printf "thread %lld passed\n", %tx : index
    gpu.terminator
  }
  return
}

func.func @main() {
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c2, %sy = %c1, %sz = %c1) {
    %n = arith.constant 7 : i16
    %f = arith.constant 2.5 : f32
    %x = arith.constant 42 : i64
    gpu.printf "block %lld thread %lld: %hd %f x=%#llx\n", %bx, %tx, %n, %f, %x : index, index, i16, f32, i64
    gpu.printf "100%%\n"
    gpu.terminator
  }
  return
}
