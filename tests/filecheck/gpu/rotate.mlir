// gpu.rotate: lane k of each subgroup (32 lanes, the target's warp size) reads lane
// (k + offset) mod width of its segment of `width` lanes; the result is valid for the
// subgroup's first `width` lanes only (-1 below marks an invalid lane). 40 threads make
// two subgroups, the second of 8 lanes.
// RUN: devplan-opt %s | devplan-opt | filecheck %s --check-prefix=SYNTAX
// RUN: devplan-run %s | filecheck %s
// RUN: devplan-run %s --kernel-backend numba | filecheck %s

// SYNTAX: %r, %ok = gpu.rotate %v, 3, 8 : i32

// CHECK: [3,  4,  5,  6,  7,  0,  1,  2,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  35,  36,  37,  38,  39,  32,  33,  34]
func.func @main() {
  %out = memref.alloc() : memref<40xi32>
  %u = memref.cast %out : memref<40xi32> to memref<*xi32>
  gpu.host_register %u : memref<*xi32>
  %c1 = arith.constant 1 : index
  %c40 = arith.constant 40 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c40, %sy = %c1, %sz = %c1) {
    %v = arith.index_cast %tx : index to i32
    %r, %ok = gpu.rotate %v, 3, 8 : i32
    %m1 = arith.constant -1 : i32
    %w = arith.select %ok, %r, %m1 : i32
    memref.store %w, %out[%tx] : memref<40xi32>
    gpu.terminator
  }
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}
func.func private @printMemrefI32(memref<*xi32>)
