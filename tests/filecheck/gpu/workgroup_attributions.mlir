// A gpu.func's workgroup attributions are read and printed in MLIR's form
// (`workgroup(...)` after the inputs); convert-gpu-to-device turns each
// workgroup attribution into block-shared memory, so threads of a block exchange values
// through it (here each thread writes its index and reads its mirror's after a barrier).
// RUN: devplan-opt %s | devplan-opt | filecheck %s --check-prefix=SYNTAX
// RUN: devplan-opt %s --print-op-generic | devplan-opt | filecheck %s --check-prefix=SYNTAX
// RUN: devplan-opt %s -p convert-gpu-to-device | filecheck %s --check-prefix=CONVERTED
// RUN: devplan-run %s | filecheck %s
// RUN: devplan-run %s --kernel-backend numba | filecheck %s

// SYNTAX:      gpu.func @mirror(%out: memref<8xf32>) workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>, %unused: memref<2xi32, 3 : i64>) kernel attributes {note = "two attributions"} {

// CONVERTED:      kernel.func @mirror(%out: memref<8xf32>) {
// CONVERTED-NEXT:   %tile = kernel.alloc_shared : memref<8xf32, #vdev.device<?, ?, ?, "shared">>
// CONVERTED-NEXT:   %unused = kernel.alloc_shared : memref<2xi32, #vdev.device<?, ?, ?, "shared">>

// CHECK: [7,  6,  5,  4,  3,  2,  1,  0]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @mirror(%out: memref<8xf32>) workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>, %unused: memref<2xi32, 3>) kernel attributes {note = "two attributions"} {
      %t = gpu.thread_id x
      %n = gpu.block_dim x
      %c1 = arith.constant 1 : index
      %i = arith.index_cast %t : index to i32
      %f = arith.sitofp %i : i32 to f32
      memref.store %f, %tile[%t] : memref<8xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %last = arith.subi %n, %c1 : index
      %m = arith.subi %last, %t : index
      %v = memref.load %tile[%m] : memref<8xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%t] : memref<8xf32>
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %h = memref.alloc() : memref<8xf32>
    %u = memref.cast %h : memref<8xf32> to memref<*xf32>
    gpu.host_register %u : memref<*xf32>
    gpu.launch_func @kernels::@mirror blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%h : memref<8xf32>)
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}
