// gpu.shuffle in every mode with its valid flag, a subgroup of the target's warp size
// (32); branches between blocks (cf.cond_br / cf.br) in a kernel become scf.if.
// RUN: devplan-run %s --entry main | filecheck %s
// RUN: devplan-run %s --entry main --kernel-backend numba | filecheck %s

// 40 threads: lanes 0..31 form subgroup 0, lanes 32..39 subgroup 1 (8 lanes).
// xor 1, width 32:  pairs swap; in subgroup 1 too.
// CHECK: [1,  0,  3,  2
// down 4, width 8: lane + 4 inside each segment of 8, else -1.
// CHECK: [4,  5,  6,  7,  -1,  -1,  -1,  -1,  12
// up 1, width 32: lane - 1, invalid on each subgroup's lane 0.
// CHECK: [-1,  0,  1,  2
// CHECK-SAME: 30,  -1,  32,  33
// idx 2, width 32: every lane reads lane 2 of its subgroup.
// CHECK: [2,  2,  2
// CHECK-SAME: 2,  34,  34
func.func @main() {
  %out = memref.alloc() : memref<4x40xf32>
  %u = memref.cast %out : memref<4x40xf32> to memref<*xf32>
  gpu.host_register %u : memref<*xf32>
  %c1 = arith.constant 1 : index
  %c40 = arith.constant 40 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c40, %sy = %c1, %sz = %c1) {
    %i = arith.index_cast %tx : index to i32
    %v = arith.sitofp %i : i32 to f32
    %one = arith.constant 1 : i32
    %two = arith.constant 2 : i32
    %four = arith.constant 4 : i32
    %eight = arith.constant 8 : i32
    %w32 = arith.constant 32 : i32
    %r0 = arith.constant 0 : index
    %r1 = arith.constant 1 : index
    %r2 = arith.constant 2 : index
    %r3 = arith.constant 3 : index
    %a, %av = gpu.shuffle xor %v, %one, %w32 : f32
    %b, %bv = gpu.shuffle down %v, %four, %eight : f32
    %c, %cv = gpu.shuffle up %v, %one, %w32 : f32
    %d, %dv = gpu.shuffle idx %v, %two, %w32 : f32
    %m1 = arith.constant -1.0 : f32
    %a2 = arith.select %av, %a, %m1 : f32
    memref.store %a2, %out[%r0, %tx] : memref<4x40xf32>
    %d2 = arith.select %dv, %d, %m1 : f32
    memref.store %d2, %out[%r3, %tx] : memref<4x40xf32>
    cf.cond_br %bv, ^down_ok, ^down_bad
  ^down_ok:
    memref.store %b, %out[%r1, %tx] : memref<4x40xf32>
    cf.br ^up(%c, %cv : f32, i1)
  ^down_bad:
    memref.store %m1, %out[%r1, %tx] : memref<4x40xf32>
    cf.br ^up(%c, %cv : f32, i1)
  ^up(%cx: f32, %ok: i1):
    cf.cond_br %ok, ^store(%cx : f32), ^store(%m1 : f32)
  ^store(%val: f32):
    memref.store %val, %out[%r2, %tx] : memref<4x40xf32>
    gpu.terminator
  }
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func private @printMemrefF32(memref<*xf32>)
