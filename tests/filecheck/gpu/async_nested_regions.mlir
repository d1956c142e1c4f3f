// async regions without any gpu op: devplan-run runs them too (async-to-host), an inner
// region inside an outer one included, and a region that takes an outer region's value
// runs after it.
// RUN: devplan-run %s | filecheck %s
// RUN: devplan-opt %s -p async-to-host | filecheck %s --check-prefix=IR

// CHECK: [10,  20,  30]

// IR-NOT: async.
// IR:     %s = arith.addi %a, %b : i32
// IR-NEXT: memref.store %s, %m[%c2] : memref<3xi32>
func.func @main() {
  %m = memref.alloc() : memref<3xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %outer, %v = async.execute -> !async.value<i32> {
    %a = arith.constant 10 : i32
    memref.store %a, %m[%c0] : memref<3xi32>
    %inner, %w = async.execute -> !async.value<i32> {
      %b = arith.constant 20 : i32
      memref.store %b, %m[%c1] : memref<3xi32>
      async.yield %b : i32
    }
    %bb = async.await %w : !async.value<i32>
    %s = arith.addi %a, %bb : i32
    async.yield %s : i32
  }
  %later = async.execute [%outer] (%v as %x : !async.value<i32>) {
    memref.store %x, %m[%c2] : memref<3xi32>
    async.yield
  }
  async.await %later : !async.token
  %u = memref.cast %m : memref<3xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}
func.func private @printMemrefI32(memref<*xi32>)
