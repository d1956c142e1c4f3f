// scf.while and scf.index_switch in a kernel, in MLIR's form: each thread halves its
// value until it is 1, leaving the loop after its own number of iterations, then picks
// what to store by an scf.index_switch on that count. Both CPU kernel backends print
// the same.
// RUN: devplan-opt %s | devplan-opt | filecheck %s --check-prefix=SYNTAX
// RUN: devplan-run %s | filecheck %s
// RUN: devplan-run %s --kernel-backend numba | filecheck %s

// SYNTAX:      %n, %c = scf.while (%x = %v, %k = %z) : (i32, i32) -> (i32, i32) {
// SYNTAX:        scf.condition(%go) %x, %k : i32, i32
// SYNTAX:      } do {
// SYNTAX:      %r = scf.index_switch %s -> i32
// SYNTAX-NEXT: case 0 {

// CHECK: [-1,  1,  1,  333,  6,  20,  2,  -1]
func.func @main() {
  %in = memref.alloc() : memref<8xi32>
  %out = memref.alloc() : memref<8xi32>
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %v0 = arith.constant 1 : i32
  %i0 = arith.constant 0 : index
  memref.store %v0, %in[%i0] : memref<8xi32>
  %v1 = arith.constant 2 : i32
  %i1 = arith.constant 1 : index
  memref.store %v1, %in[%i1] : memref<8xi32>
  %v2 = arith.constant 3 : i32
  %i2 = arith.constant 2 : index
  memref.store %v2, %in[%i2] : memref<8xi32>
  %v3 = arith.constant 8 : i32
  %i3 = arith.constant 3 : index
  memref.store %v3, %in[%i3] : memref<8xi32>
  %v4 = arith.constant 100 : i32
  %i4 = arith.constant 4 : index
  memref.store %v4, %in[%i4] : memref<8xi32>
  %v5 = arith.constant 1048576 : i32
  %i5 = arith.constant 5 : index
  memref.store %v5, %in[%i5] : memref<8xi32>
  %v6 = arith.constant 7 : i32
  %i6 = arith.constant 6 : index
  memref.store %v6, %in[%i6] : memref<8xi32>
  %v7 = arith.constant 0 : i32
  %i7 = arith.constant 7 : index
  memref.store %v7, %in[%i7] : memref<8xi32>
  %u = memref.cast %out : memref<8xi32> to memref<*xi32>
  %ui = memref.cast %in : memref<8xi32> to memref<*xi32>
  gpu.host_register %u : memref<*xi32>
  gpu.host_register %ui : memref<*xi32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %in[%tx] : memref<8xi32>
    %one = arith.constant 1 : i32
    %z = arith.constant 0 : i32
    %n, %c = scf.while (%x = %v, %k = %z) : (i32, i32) -> (i32, i32) {
      %go = arith.cmpi sgt, %x, %one : i32
      scf.condition(%go) %x, %k : i32, i32
    } do {
    ^bb0(%y: i32, %j: i32):
      %h = arith.shrsi %y, %one : i32
      %j1 = arith.addi %j, %one : i32
      scf.yield %h, %j1 : i32, i32
    }
    %s = arith.index_cast %c : i32 to index
    %r = scf.index_switch %s -> i32
    case 0 {
      %m = arith.constant -1 : i32
      scf.yield %m : i32
    }
    case 3 {
      %m = arith.constant 333 : i32
      scf.yield %m : i32
    }
    default {
      scf.yield %c : i32
    }
    memref.store %r, %out[%tx] : memref<8xi32>
    gpu.terminator
  }
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}
func.func private @printMemrefI32(memref<*xi32>)
