// RUN: devplan-opt %s --split-input-file -p 'convert-gpu-to-device{device="cuda:0"},classify-regions' | filecheck %s
// RUN: devplan-opt %s --split-input-file -p 'convert-gpu-to-device{device="cuda:1"}' | filecheck %s --check-prefix=CUDA1

// xDSL's gpu dialect parses only in generic form, so the inputs are written that way.

// A synchronous program: alloc, copy in, launch with i32 sizes, copy out, dealloc.
// Kernel parameters and the allocation live in the device's global memory.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<16xf32>, f32) -> (), kernel}> ({
    ^bb0(%a: memref<16xf32>, %k: f32):
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %bx = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
      %bd = "gpu.block_dim"() <{dimension = #gpu<dim z>}> : () -> index
      %gd = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
      %v = memref.load %a[%tx] : memref<16xf32>
      %s = arith.mulf %v, %k : f32
      "gpu.barrier"() : () -> ()
      memref.store %s, %a[%tx] : memref<16xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "scale"} : () -> ()
  }) : () -> ()
  func.func @main(%h: memref<16xf32>, %k: f32) -> memref<16xf32> {
    %one = arith.constant 1 : i32
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %d = "gpu.alloc"() <{operandSegmentSizes = array<i32: 0, 0, 0>}> : () -> memref<16xf32>
    "gpu.memcpy"(%d, %h) {operandSegmentSizes = array<i32: 0, 1, 1>} : (memref<16xf32>, memref<16xf32>) -> ()
    "gpu.launch_func"(%one, %one, %one, %c16, %c1, %c1, %d, %k) <{kernel = @kernels::@scale, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (i32, i32, i32, index, index, index, memref<16xf32>, f32) -> ()
    "gpu.memcpy"(%h, %d) {operandSegmentSizes = array<i32: 0, 1, 1>} : (memref<16xf32>, memref<16xf32>) -> ()
    "gpu.dealloc"(%d) {operandSegmentSizes = array<i32: 0, 1>} : (memref<16xf32>) -> ()
    func.return %h : memref<16xf32>
  }
}

// CHECK:       builtin.module {
// CHECK-NEXT:    kernel.module @kernels target #target.target<"cuda"> {
// CHECK-NEXT:      kernel.func @scale(%a: memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>, %k: f32) {
// CHECK-NEXT:        %tx = kernel.thread_id x
// CHECK-NEXT:        %bx = kernel.block_id y
// CHECK-NEXT:        %bd = kernel.block_dim z
// CHECK-NEXT:        %gd = kernel.grid_dim x
// CHECK-NEXT:        %v = memref.load %a[%tx] : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:        %s = arith.mulf %v, %k : f32
// CHECK-NEXT:        kernel.barrier
// CHECK-NEXT:        memref.store %s, %a[%tx] : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:        kernel.return
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @main(%h: memref<16xf32>, %k: f32) -> memref<16xf32> attributes {device.region = "mixed"} {
// CHECK-NEXT:      %one = arith.constant 1 : i32
// CHECK-NEXT:      %c1 = arith.constant 1 : index
// CHECK-NEXT:      %c16 = arith.constant 16 : index
// CHECK-NEXT:      %d = device.alloc() : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:      device.copy %h to %d : memref<16xf32> to memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:      %[[GX:.*]] = arith.index_cast %one : i32 to index
// CHECK-NEXT:      %[[GY:.*]] = arith.index_cast %one : i32 to index
// CHECK-NEXT:      %[[GZ:.*]] = arith.index_cast %one : i32 to index
// CHECK-NEXT:      device.launch @kernels::@scale on #vdev.device<"cuda", 0> grid(%[[GX]], %[[GY]], %[[GZ]]) block(%c16, %c1, %c1) args(%d, %k) : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>, f32
// CHECK-NEXT:      device.copy %d to %h : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<16xf32>
// CHECK-NEXT:      device.free %d : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:      func.return %h : memref<16xf32>

// CUDA1: kernel.func @scale(%a: memref<16xf32, #vdev.device<"cuda", 1, ?, "global">>, %k: f32)
// CUDA1: device.launch @kernels::@scale on #vdev.device<"cuda", 1>

// -----

// Async tokens: each gpu token becomes the device tokens it stands for. An async
// gpu.wait only joins; ops devplan has only synchronously (alloc, dealloc) wait for
// their dependencies first. gpu.global_id expands to block_id * block_dim + thread_id.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<?xf32>) -> (), kernel}> ({
    ^bb0(%a: memref<?xf32>):
      %i = "gpu.global_id"() <{dimension = #gpu<dim x>}> : () -> index
      %v = memref.load %a[%i] : memref<?xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %a[%i] : memref<?xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "double"} : () -> ()
  }) : () -> ()
  func.func @main(%h: memref<?xf32>, %g: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %t0 = "gpu.wait"() : () -> !gpu.async.token
    %d, %t1 = "gpu.alloc"(%t0, %n) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (!gpu.async.token, index) -> (memref<?xf32>, !gpu.async.token)
    %t2 = "gpu.memcpy"(%t1, %d, %h) {operandSegmentSizes = array<i32: 1, 1, 1>} : (!gpu.async.token, memref<?xf32>, memref<?xf32>) -> !gpu.async.token
    %t3 = "gpu.memcpy"(%t1, %g, %h) {operandSegmentSizes = array<i32: 1, 1, 1>} : (!gpu.async.token, memref<?xf32>, memref<?xf32>) -> !gpu.async.token
    %t4 = "gpu.wait"(%t2, %t3) : (!gpu.async.token, !gpu.async.token) -> !gpu.async.token
    %t5 = "gpu.launch_func"(%t4, %n, %c1, %c1, %c1, %c1, %c1, %d) <{kernel = @kernels::@double, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (!gpu.async.token, index, index, index, index, index, index, memref<?xf32>) -> !gpu.async.token
    %t6 = "gpu.memcpy"(%t5, %h, %d) {operandSegmentSizes = array<i32: 1, 1, 1>} : (!gpu.async.token, memref<?xf32>, memref<?xf32>) -> !gpu.async.token
    %t7 = "gpu.dealloc"(%t6, %d) {operandSegmentSizes = array<i32: 1, 1>} : (!gpu.async.token, memref<?xf32>) -> !gpu.async.token
    "gpu.wait"(%t7) : (!gpu.async.token) -> ()
    func.return
  }
}

// CHECK-LABEL: kernel.func @double(%a: memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>) {
// CHECK-NEXT:    %[[B:.*]] = kernel.block_id x
// CHECK-NEXT:    %[[D:.*]] = kernel.block_dim x
// CHECK-NEXT:    %[[T:.*]] = kernel.thread_id x
// CHECK-NEXT:    %[[BD:.*]] = arith.muli %[[B]], %[[D]] : index
// CHECK-NEXT:    %i = arith.addi %[[BD]], %[[T]] : index
// CHECK-NEXT:    %v = memref.load %a[%i]

// CHECK-LABEL: func.func @main(%h: memref<?xf32>, %g: memref<?xf32>, %n: index)
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %d = device.alloc(%n) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %t2 = device.copy_async [] %h to %d : memref<?xf32> to memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %t3 = device.copy_async [] %h to %g : memref<?xf32> to memref<?xf32>
// CHECK-NEXT:    %t5 = device.launch async [%t2, %t3] @kernels::@double on #vdev.device<"cuda", 0> grid(%n, %c1, %c1) block(%c1, %c1, %c1) args(%d)
// CHECK-NEXT:    %t6 = device.copy_async [%t5] %d to %h
// CHECK-NEXT:    device.wait %t6
// CHECK-NEXT:    device.free %d
// CHECK-NEXT:    func.return

// -----

// Memory spaces propagate: a host function's parameter passed to a kernel becomes
// device memory (and so does its caller's argument, a gpu.alloc here); an allocation
// returned by a helper changes the helper's result type and its callers' call types.

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<8xi32, 1>) -> (), kernel}> ({
    ^bb0(%a: memref<8xi32, 1>):
      "gpu.return"() : () -> ()
    }) {sym_name = "touch"} : () -> ()
  }) : () -> ()
  func.func @make() -> memref<8xi32, 1> {
    %d = "gpu.alloc"() <{operandSegmentSizes = array<i32: 0, 0, 0>}> : () -> memref<8xi32, 1>
    func.return %d : memref<8xi32, 1>
  }
  func.func @run(%a: memref<8xi32, 1>) {
    %c1 = arith.constant 1 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1, %a) <{kernel = @kernels::@touch, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<8xi32, 1>) -> ()
    func.return
  }
  func.func @main() {
    %d = func.call @make() : () -> memref<8xi32, 1>
    func.call @run(%d) : (memref<8xi32, 1>) -> ()
    "gpu.dealloc"(%d) {operandSegmentSizes = array<i32: 0, 1>} : (memref<8xi32, 1>) -> ()
    func.return
  }
}

// CHECK-LABEL: kernel.func @touch(%a: memref<8xi32, #vdev.device<"cuda", 0, ?, "global">>)
// CHECK-LABEL: func.func @make() -> memref<8xi32, #vdev.device<"cuda", 0, ?, "global">> attributes {device.region = "device"
// CHECK-LABEL: func.func @run(%a: memref<8xi32, #vdev.device<"cuda", 0, ?, "global">>) attributes {device.region = "device"
// CHECK-LABEL: func.func @main() attributes {device.region = "device"
// CHECK-NEXT:    %d = func.call @make() : () -> memref<8xi32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    func.call @run(%d) : (memref<8xi32, #vdev.device<"cuda", 0, ?, "global">>) -> ()
// CHECK-NEXT:    device.free %d
