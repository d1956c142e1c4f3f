// RUN: DEVPLAN_ROUNDTRIP
// RUN: devplan-opt %s --split-input-file | filecheck %s

// Every device op, printed back in its pinned syntax.

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {
    kernel.return
  }
  kernel.func @fill(%a: memref<16xf32, #vdev.device<"cuda", 0>>, %v: f32, %n: index) {
    kernel.return
  }
  kernel.func @nothing() {
    kernel.return
  }
}

// CHECK-LABEL: func.func @memory
func.func @memory(%n: index, %h: memref<16xf32>) {
  // CHECK: %[[A:.*]] = device.alloc(%{{.*}}) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  %a = device.alloc(%n) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  // CHECK-NEXT: %[[D:.*]] = device.alloc() : memref<16xf32, #vdev.device<"cuda", 0>>
  %d = device.alloc() : memref<16xf32, #vdev.device<"cuda", 0>>
  // CHECK-NEXT: %[[M:.*]] = device.alloc(%{{.*}}, %{{.*}}) : memref<?x4x?xi32, #vdev.device<"cuda", 1, #target.target<"cuda">, "global">>
  %m = device.alloc(%n, %n) : memref<?x4x?xi32, #vdev.device<"cuda", 1, #target.target<"cuda">, "global">>
  // CHECK-NEXT: %[[W:.*]] = device.alloc_workspace(%{{.*}}) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  %w = device.alloc_workspace(%n) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  // CHECK-NEXT: device.copy %{{.*}} to %[[D]] : memref<16xf32> to memref<16xf32, #vdev.device<"cuda", 0>>
  device.copy %h to %d : memref<16xf32> to memref<16xf32, #vdev.device<"cuda", 0>>
  // CHECK-NEXT: device.copy %[[D]] to %[[A]] : memref<16xf32, #vdev.device<"cuda", 0>> to memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.copy %d to %a : memref<16xf32, #vdev.device<"cuda", 0>> to memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  // CHECK-NEXT: device.free_workspace %[[W]] : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.free_workspace %w : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  // CHECK-NEXT: device.free %[[M]] : memref<?x4x?xi32, #vdev.device<"cuda", 1, #target.target<"cuda">, "global">>
  device.free %m : memref<?x4x?xi32, #vdev.device<"cuda", 1, #target.target<"cuda">, "global">>
  // CHECK-NEXT: device.free %[[D]] : memref<16xf32, #vdev.device<"cuda", 0>>
  device.free %d : memref<16xf32, #vdev.device<"cuda", 0>>
  // CHECK-NEXT: device.free %[[A]] : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.free %a : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return
}

// CHECK-LABEL: func.func @views
func.func @views(%d: memref<64xf32, #vdev.device<"cuda", 0>>, %h: memref<4x4xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  // CHECK: device.view %{{.*}} offset(%{{.*}}) sizes(%{{.*}}, %{{.*}}) strides(%{{.*}}, %{{.*}}) : memref<64xf32, #vdev.device<"cuda", 0>> to memref<4x8xf32, strided<[16, 1], offset: 8>, #vdev.device<"cuda", 0>>
  %v = device.view %d offset(%c8) sizes(%c4, %c8) strides(%c16, %c1) : memref<64xf32, #vdev.device<"cuda", 0>> to memref<4x8xf32, strided<[16, 1], offset: 8>, #vdev.device<"cuda", 0>>
  // CHECK-NEXT: device.view %{{.*}} offset(%{{.*}}) sizes(%{{.*}}) strides(%{{.*}}) : memref<64xf32, #vdev.device<"cuda", 0>> to memref<?xf32, strided<[1], offset: ?>, #vdev.device<"cuda", 0>>
  %w = device.view %d offset(%n) sizes(%n) strides(%c1) : memref<64xf32, #vdev.device<"cuda", 0>> to memref<?xf32, strided<[1], offset: ?>, #vdev.device<"cuda", 0>>
  // CHECK-NEXT: device.view %{{.*}} offset(%{{.*}}) sizes(%{{.*}}) strides(%{{.*}}) : memref<4x4xf32> to memref<16xf32>
  %f = device.view %h offset(%c1) sizes(%c16) strides(%c1) : memref<4x4xf32> to memref<16xf32>
  func.return
}

// CHECK-LABEL: func.func @asynchronous
func.func @asynchronous(%h: memref<16xf32>, %d: memref<16xf32, #vdev.device<"cuda", 0>>, %t0: !device.token) {
  // CHECK: %[[T1:.*]] = device.copy_async [] %{{.*}} to %{{.*}} : memref<16xf32> to memref<16xf32, #vdev.device<"cuda", 0>>
  %t1 = device.copy_async [] %h to %d : memref<16xf32> to memref<16xf32, #vdev.device<"cuda", 0>>
  // CHECK-NEXT: %[[T2:.*]] = device.copy_async [%{{.*}}, %[[T1]]] %{{.*}} to %{{.*}} : memref<16xf32, #vdev.device<"cuda", 0>> to memref<16xf32>
  %t2 = device.copy_async [%t0, %t1] %d to %h : memref<16xf32, #vdev.device<"cuda", 0>> to memref<16xf32>
  // CHECK-NEXT: device.wait %[[T1]], %[[T2]]
  device.wait %t1, %t2
  // CHECK-NEXT: device.wait all{{$}}
  device.wait all
  // CHECK-NEXT: device.wait all {note = "hi"}{{$}}
  device.wait all {note = "hi"}
  // A result defined on the line after a wait is not one of its tokens.
  // CHECK-NEXT: device.wait %[[T1]]{{$}}
  // CHECK-NEXT: %{{.*}} = arith.constant
  device.wait %t1
  %c = arith.constant 0 : index
  func.return
}

// CHECK-LABEL: func.func @launches
func.func @launches(%a: memref<?xf32, #vdev.device<"cuda", 0>>, %b: memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>, %d: memref<16xf32, #vdev.device<"cuda", 0>>, %t: !device.token) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %gx = arith.constant 4 : index
  %v = arith.constant 2.0 : f32
  // CHECK: device.launch @kernels::@add on #vdev.device<"cuda", 0> grid(%{{.*}}, %{{.*}}, %{{.*}}) block(%{{.*}}, %{{.*}}, %{{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?xf32, #vdev.device<"cuda", 0>>, memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<?xf32, #vdev.device<"cuda", 0>>
  device.launch @kernels::@add on #vdev.device<"cuda", 0> grid(%gx, %c1, %c1) block(%c256, %c1, %c1) args(%a, %b, %a) : memref<?xf32, #vdev.device<"cuda", 0>>, memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<?xf32, #vdev.device<"cuda", 0>>
  // CHECK-NEXT: %[[T2:.*]] = device.launch async [%{{.*}}] @kernels::@fill on #vdev.device<"cuda", 0, #target.target<"cuda">> grid({{.*}}) block({{.*}}) args(%{{.*}}, %{{.*}}, %{{.*}}) : memref<16xf32, #vdev.device<"cuda", 0>>, f32, index
  %t2 = device.launch async [%t] @kernels::@fill on #vdev.device<"cuda", 0, #target.target<"cuda">> grid(%c1, %c1, %c1) block(%gx, %gx, %c1) args(%d, %v, %c256) : memref<16xf32, #vdev.device<"cuda", 0>>, f32, index
  // CHECK-NEXT: %[[T3:.*]] = device.launch async [] @kernels::@nothing on #vdev.device<"cuda", 0> grid({{.*}}) block({{.*}}) args(){{$}}
  %t3 = device.launch async [] @kernels::@nothing on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args()
  // CHECK-NEXT: device.launch @kernels::@nothing on #vdev.device<"cuda", 0> grid({{.*}}) block({{.*}}) args() {note = "hi"}{{$}}
  device.launch @kernels::@nothing on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args() {note = "hi"}
  device.wait %t2, %t3
  func.return
}

// CHECK-LABEL: func.func @attributes
func.func @attributes() -> (index, i32, i64) {
  // CHECK: device.attr "max_threads_per_block" of #vdev.device<"cuda", 0> : index
  %n = device.attr "max_threads_per_block" of #vdev.device<"cuda", 0> : index
  // CHECK-NEXT: device.attr "warp_size" of #vdev.device<"cuda", 1> : i32
  %w = device.attr "warp_size" of #vdev.device<"cuda", 1> : i32
  // CHECK-NEXT: device.attr "total_global_memory" of #vdev.device<"cpu", 0> : i64
  %m = device.attr "total_global_memory" of #vdev.device<"cpu", 0> : i64
  func.return %n, %w, %m : index, i32, i64
}

// -----

// A cpu launch may take plain host memory.
kernel.module @host_kernels target #target.target<"llvm"> {
  kernel.func @inc(%a: memref<8xi32>) {
    kernel.return
  }
}

// CHECK-LABEL: func.func @cpu_launch
// CHECK: device.launch @host_kernels::@inc on #vdev.device<"cpu", 0> grid
func.func @cpu_launch(%h: memref<8xi32>) {
  %c1 = arith.constant 1 : index
  device.launch @host_kernels::@inc on #vdev.device<"cpu", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%h) : memref<8xi32>
  func.return
}

// -----

// A kernel parameter with a memory space accepts memory that meets it (an unset
// scope is global); kernels reach their device's host-visible scope too.
kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @k(%a: memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>, %b: memref<4xf32>) {
    kernel.return
  }
}

// CHECK-LABEL: func.func @spaces
// CHECK: device.launch @kernels::@k on #vdev.device<"cuda", 0> grid
func.func @spaces(%a: memref<8xf32, #vdev.device<"cuda", 0>>, %b: memref<4xf32, #vdev.device<"cuda", 0, ?, "host">>) {
  %c1 = arith.constant 1 : index
  device.launch @kernels::@k on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a, %b) : memref<8xf32, #vdev.device<"cuda", 0>>, memref<4xf32, #vdev.device<"cuda", 0, ?, "host">>
  func.return
}
