// MLIR's async.execute / async.await / async.yield: read and printed back in MLIR's
// syntax, and run on the host in program order (one order the dependencies allow),
// with the gpu ops and tokens they hold converted as any other host code.
// RUN: devplan-opt %s | devplan-opt | filecheck %s --check-prefix=SYNTAX
// RUN: devplan-run %s --entry main --strict | filecheck %s
// RUN: devplan-run %s --entry main --strict --kernel-backend numba | filecheck %s

// SYNTAX-LABEL: func.func @main
// SYNTAX:         %ready, %dev = async.execute -> !async.value<memref<4xf32>> {
// SYNTAX:           async.yield %d : memref<4xf32>
// SYNTAX:         %scaled, %factor, %same = async.execute [%ready] (%dev as %[[D:.*]] : !async.value<memref<4xf32>>) -> (!async.value<f32>, !async.value<memref<4xf32>>) {
// SYNTAX:           async.yield %k, %[[D]] : f32, memref<4xf32>
// SYNTAX:         %done = async.execute [%scaled] (%same as %{{.*}} : !async.value<memref<4xf32>>) {
// SYNTAX:           async.yield{{$}}
// SYNTAX:         async.await %done : !async.token
// SYNTAX:         %{{.*}} = async.await %factor : !async.value<f32>

// The first region copies to the device, the second doubles the copy there and yields
// the factor and the buffer, the third copies the buffer back and frees it; the awaited
// factor is the value the second region yields. Nothing leaks (--strict).
// CHECK:      Unranked Memref base@ = {{.*}} rank = 1 offset = 0 sizes = [4] strides = [1] data =
// CHECK-NEXT: [2,  4,  6,  8]
// CHECK-NEXT: 2
// CHECK-NOT:  leaked
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<4xf32>, %k: f32) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<4xf32>
      %w = arith.mulf %v, %k : f32
      memref.store %w, %x[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %host = memref.alloc() : memref<4xf32>
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0 : index
    scf.for %i = %zero to %c4 step %c1 {
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      %v = arith.addf %f, %one : f32
      memref.store %v, %host[%i] : memref<4xf32>
    }
    %ready, %dev = async.execute -> !async.value<memref<4xf32>> {
      %d = gpu.alloc () : memref<4xf32>
      gpu.memcpy %d, %host : memref<4xf32>, memref<4xf32>
      async.yield %d : memref<4xf32>
    }
    %scaled, %factor, %same = async.execute [%ready] (%dev as %d : !async.value<memref<4xf32>>) -> (!async.value<f32>, !async.value<memref<4xf32>>) {
      %k = arith.constant 2.0 : f32
      %t0 = gpu.wait async
      %t1 = gpu.launch_func async [%t0] @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%d : memref<4xf32>, %k : f32)
      gpu.wait [%t1]
      async.yield %k, %d : f32, memref<4xf32>
    }
    %done = async.execute [%scaled] (%same as %d : !async.value<memref<4xf32>>) {
      gpu.memcpy %host, %d : memref<4xf32>, memref<4xf32>
      gpu.dealloc %d : memref<4xf32>
      async.yield
    }
    async.await %done : !async.token
    %k = async.await %factor : !async.value<f32>
    %u = memref.cast %host : memref<4xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    vector.print %k : f32
    memref.dealloc %host : memref<4xf32>
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}
