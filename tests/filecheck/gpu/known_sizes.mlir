// A gpu.func's known_block_size / known_grid_size (MLIR's names, and xDSL's
// gpu.known_block_size) become a launch constraint of its kernel.func: a launch with
// exactly those sizes runs; one whose sizes are known only when it runs and differ is a
// located error then. Other discardable attributes of the gpu.func stay on the kernel.
// The executor checks the sizes before a kernel backend runs, so one backend suffices.
// RUN: devplan-run %s | filecheck %s
// RUN: not devplan-run %s --entry launch_of_three 2>&1 | filecheck %s --check-prefix=ERR
// RUN: devplan-opt %s -p convert-gpu-to-device | filecheck %s --check-prefix=IR

// IR:      kernel.func @iota(%out: memref<?xi32>) attributes {known_block_size = array<i32: 4, 1, 1>, known_grid_size = array<i32: 2, 1, 1>, origin = "known_sizes.mlir"}
// IR:      kernel.func @double(%out: memref<?xi32>) attributes {known_block_size = array<i32: 8, 1, 1>}

// CHECK:      data =
// CHECK-NEXT: [0,  2,  4,  6,  8,  10,  12,  14]

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @iota(%out: memref<?xi32>) kernel attributes {known_block_size = array<i32: 4, 1, 1>, known_grid_size = array<i32: 2, 1, 1>, origin = "known_sizes.mlir"} {
      %i = gpu.global_id x
      %v = arith.index_cast %i : index to i32
      memref.store %v, %out[%i] : memref<?xi32>
      gpu.return
    }
    gpu.func @double(%out: memref<?xi32>) kernel attributes {gpu.known_block_size = array<i32: 8, 1, 1>} {
      %i = gpu.thread_id x
      %v = memref.load %out[%i] : memref<?xi32>
      %w = arith.addi %v, %v : i32
      memref.store %w, %out[%i] : memref<?xi32>
      gpu.return
    }
  }

  func.func @launch_of_three() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %h = memref.alloc() : memref<3xi32>
    %out = memref.cast %h : memref<3xi32> to memref<?xi32>
    %n = memref.dim %out, %c0 : memref<?xi32>
    %u = memref.cast %out : memref<?xi32> to memref<*xi32>
    gpu.host_register %u : memref<*xi32>
    // ERR: known_sizes.mlir:[[# @LINE + 1]]:5: error: 'device.launch' block (3, 1, 1) has 3 along x, but kernel @kernels::@double declares known_block_size = array<i32: 8, 1, 1>: every launch of it must have that block
    gpu.launch_func @kernels::@double blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%out : memref<?xi32>)
    return
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %h = memref.alloc() : memref<8xi32>
    %out = memref.cast %h : memref<8xi32> to memref<?xi32>
    %n = memref.dim %out, %c0 : memref<?xi32>
    %u = memref.cast %out : memref<?xi32> to memref<*xi32>
    gpu.host_register %u : memref<*xi32>
    gpu.launch_func @kernels::@iota blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1) args(%out : memref<?xi32>)
    gpu.launch_func @kernels::@double blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%out : memref<?xi32>)
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }

  func.func private @printMemrefI32(memref<*xi32>)
}
