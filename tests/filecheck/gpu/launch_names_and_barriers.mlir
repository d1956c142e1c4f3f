// A gpu.launch may name the kernel it is outlined into (`module(@m) function(@f)`), and a
// gpu.barrier may list the memory it fences (`memfence [...]`) and its scope; both read
// and print as in MLIR. A fenced barrier runs as a full block barrier, which fences at
// least as much (a barrier of subgroup scope is refused: unsupported_constructs.mlir).
// RUN: devplan-opt %s | devplan-opt | filecheck %s --check-prefix=SYNTAX
// RUN: devplan-opt %s -p convert-gpu-to-device | filecheck %s --check-prefix=IR
// RUN: devplan-run %s | filecheck %s
// RUN: devplan-run %s --kernel-backend numba | filecheck %s

// SYNTAX:      gpu.barrier memfence [#gpu.address_space<workgroup>]{{$}}
// SYNTAX:      gpu.barrier memfence []{{$}}
// SYNTAX:      module(@rotations) function(@rotate_left) {

// IR:      device.launch @rotations::@rotate_left on #vdev.device<"cuda", 0>
// IR:      kernel.module @rotations
// IR-NEXT:   kernel.func @rotate_left(

// Each of 4 threads stores its index in workgroup memory, then reads its right
// neighbour's (wrapping around) after the barrier.
// CHECK: [1,  2,  3,  0]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @neighbour(%out: memref<4xi32>) workgroup(%tile: memref<4xi32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %v = arith.index_cast %t : index to i32
      memref.store %v, %tile[%t] : memref<4xi32, #gpu.address_space<workgroup>>
      gpu.barrier memfence [#gpu.address_space<workgroup>]
      %next = arith.addi %t, %c1 : index
      %j = arith.remui %next, %c4 : index
      %w = memref.load %tile[%j] : memref<4xi32, #gpu.address_space<workgroup>>
      gpu.barrier memfence []
      memref.store %w, %out[%t] : memref<4xi32>
      gpu.return
    }
  }
  func.func @main() {
    %h = memref.alloc() : memref<4xi32>
    %u = memref.cast %h : memref<4xi32> to memref<*xi32>
    gpu.host_register %u : memref<*xi32>
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1)
               module(@rotations) function(@rotate_left) {
      %zero = arith.constant 0 : i32
      memref.store %zero, %h[%tx] : memref<4xi32>
      gpu.terminator
    }
    gpu.launch_func @kernels::@neighbour blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%h : memref<4xi32>)
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }
  func.func private @printMemrefI32(memref<*xi32>)
}
