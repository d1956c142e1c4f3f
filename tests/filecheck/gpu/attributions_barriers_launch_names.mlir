// MLIR's forms read and printed back: a gpu.func's workgroup attributions
// (`workgroup(...)`, block-shared memory, in #gpu.address_space<workgroup> or space 3),
// a gpu.barrier's fenced memory (`memfence [...]`) and a gpu.launch naming the kernel it
// is outlined into (`module(@m) function(@f)`). convert-gpu-to-device turns each
// workgroup attribution into kernel.alloc_shared, a fenced barrier into a full block
// barrier (which fences at least as much), and outlines the launch under its names.
// RUN: devplan-opt %s | devplan-opt | filecheck %s --check-prefix=SYNTAX
// RUN: devplan-opt %s --print-op-generic | devplan-opt | filecheck %s --check-prefix=SYNTAX
// RUN: devplan-opt %s -p convert-gpu-to-device | filecheck %s --check-prefix=IR
// RUN: devplan-run %s | filecheck %s
// RUN: devplan-run %s --kernel-backend numba | filecheck %s

// SYNTAX:      gpu.func @neighbour(%out: memref<4xi32>) workgroup(%tile: memref<4xi32, #gpu.address_space<workgroup>>, %unused: memref<2xi32, 3 : i64>) kernel attributes {note = "two attributions"} {
// SYNTAX:      gpu.barrier memfence [#gpu.address_space<workgroup>]{{$}}
// SYNTAX:      gpu.barrier memfence []{{$}}
// SYNTAX:      module(@rotations) function(@rotate_left) {

// IR:      kernel.func @neighbour(%out: memref<4xi32>) attributes {note = "two attributions"} {
// IR-NEXT:   %tile = kernel.alloc_shared : memref<4xi32, #vdev.device<?, ?, ?, "shared">>
// IR-NEXT:   %unused = kernel.alloc_shared : memref<2xi32, #vdev.device<?, ?, ?, "shared">>
// IR:        kernel.barrier
// IR:        kernel.barrier
// IR:      device.launch @rotations::@rotate_left on #vdev.device<"cuda", 0>
// IR:      kernel.module @rotations
// IR-NEXT:   kernel.func @rotate_left(

// The named launch zeroes the output; then each of 4 threads stores its index in
// workgroup memory and, after the barrier, reads its right neighbour's (wrapping).
// CHECK: [1,  2,  3,  0]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @neighbour(%out: memref<4xi32>) workgroup(%tile: memref<4xi32, #gpu.address_space<workgroup>>, %unused: memref<2xi32, 3>) kernel attributes {note = "two attributions"} {
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
