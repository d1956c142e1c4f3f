// gpu.all_reduce over a 2-D block, every reduction kind and the region form, run
// through shared memory on both kernel backends; every thread gets the result. Three
// launches, not one: the numba backend's compile time grows faster than a kernel's size
// (one launch of all thirteen took about 35 CPU-s to compile, a third of them 7.5).
// RUN: devplan-run %s --entry main | filecheck %s
// RUN: devplan-run %s --entry main --kernel-backend numba | filecheck %s

// Values 1..6 (threads 3x2); f32: add, mul, minnumf, maxnumf; i32: and, or, xor,
// minsi, maxsi, minui, maxui (of -1..-6: 0xffffffff prints as -1), a region (max of squares).
// CHECK: [21,  720,  1,  6]
// CHECK: [0,  7,  7,  -6,  -1,  1,  -1,  36]
func.func @main() {
  %f = memref.alloc() : memref<4xf32>
  %i = memref.alloc() : memref<8xi32>
  %fu = memref.cast %f : memref<4xf32> to memref<*xf32>
  %iu = memref.cast %i : memref<8xi32> to memref<*xi32>
  gpu.host_register %fu : memref<*xf32>
  gpu.host_register %iu : memref<*xi32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c3, %sy = %c2, %sz = %c1) {
    %k0 = arith.constant 0 : index
    %k1 = arith.constant 1 : index
    %k2 = arith.constant 2 : index
    %k3 = arith.constant 3 : index
    %row = arith.muli %ty, %sx : index
    %lin = arith.addi %row, %tx : index
    %n = arith.addi %lin, %k1 : index
    %v = arith.index_cast %n : index to i32
    %x = arith.sitofp %v : i32 to f32
    %s = gpu.all_reduce add %x uniform {} : (f32) -> (f32)
    %p = gpu.all_reduce mul %x {} : (f32) -> (f32)
    %lo = gpu.all_reduce minnumf %x {} : (f32) -> (f32)
    %hi = gpu.all_reduce maxnumf %x {} : (f32) -> (f32)
    memref.store %s, %f[%k0] : memref<4xf32>
    memref.store %p, %f[%k1] : memref<4xf32>
    memref.store %lo, %f[%k2] : memref<4xf32>
    memref.store %hi, %f[%k3] : memref<4xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c3, %sy = %c2, %sz = %c1) {
    %k0 = arith.constant 0 : index
    %k1 = arith.constant 1 : index
    %k2 = arith.constant 2 : index
    %k3 = arith.constant 3 : index
    %k4 = arith.constant 4 : index
    %row = arith.muli %ty, %sx : index
    %lin = arith.addi %row, %tx : index
    %n = arith.addi %lin, %k1 : index
    %v = arith.index_cast %n : index to i32
    %zero = arith.constant 0 : i32
    %neg = arith.subi %zero, %v : i32
    %a = gpu.all_reduce and %v {} : (i32) -> (i32)
    %o = gpu.all_reduce or %v {} : (i32) -> (i32)
    %xo = gpu.all_reduce xor %v {} : (i32) -> (i32)
    %mn = gpu.all_reduce minsi %neg {} : (i32) -> (i32)
    %mx = gpu.all_reduce maxsi %neg {} : (i32) -> (i32)
    memref.store %a, %i[%k0] : memref<8xi32>
    memref.store %o, %i[%k1] : memref<8xi32>
    memref.store %xo, %i[%k2] : memref<8xi32>
    memref.store %mn, %i[%k3] : memref<8xi32>
    memref.store %mx, %i[%k4] : memref<8xi32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c3, %sy = %c2, %sz = %c1) {
    %k1 = arith.constant 1 : index
    %k5 = arith.constant 5 : index
    %k6 = arith.constant 6 : index
    %k7 = arith.constant 7 : index
    %row = arith.muli %ty, %sx : index
    %lin = arith.addi %row, %tx : index
    %n = arith.addi %lin, %k1 : index
    %v = arith.index_cast %n : index to i32
    %zero = arith.constant 0 : i32
    %neg = arith.subi %zero, %v : i32
    %mnu = gpu.all_reduce minui %v {} : (i32) -> (i32)
    %mxu = gpu.all_reduce maxui %neg {} : (i32) -> (i32)
    %sq = arith.muli %v, %v : i32
    %r = gpu.all_reduce %sq {
    ^bb0(%l: i32, %rr: i32):
      %m = arith.maxsi %l, %rr : i32
      gpu.yield %m : i32
    } : (i32) -> (i32)
    memref.store %mnu, %i[%k5] : memref<8xi32>
    memref.store %mxu, %i[%k6] : memref<8xi32>
    memref.store %r, %i[%k7] : memref<8xi32>
    gpu.terminator
  }
  call @printMemrefF32(%fu) : (memref<*xf32>) -> ()
  call @printMemrefI32(%iu) : (memref<*xi32>) -> ()
  return
}

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI32(memref<*xi32>)
