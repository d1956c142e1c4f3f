// RUN: DEVPLAN_ROUNDTRIP
// RUN: devplan-opt %s --split-input-file | filecheck %s

// Every kernel op, printed back in its pinned syntax.

// CHECK:      kernel.module @kernels target #target.target<"cuda"> {
// CHECK-NEXT:   kernel.func @add(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>) {
// CHECK-NEXT:     %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:     %{{.*}} = kernel.thread_id x
// CHECK-NEXT:     %{{.*}} = kernel.block_id x
// CHECK-NEXT:     %{{.*}} = kernel.block_dim x
// CHECK:          %{{.*}} = memref.dim
// CHECK:          scf.if %{{.*}} {
// CHECK:            memref.store
// CHECK:          }
// CHECK-NEXT:     kernel.return
// CHECK-NEXT:   }
kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %tx = kernel.thread_id x
    %bx = kernel.block_id x
    %bd = kernel.block_dim x
    %i0 = arith.muli %bx, %bd : index
    %i = arith.addi %i0, %tx : index
    %n = memref.dim %a, %c0 : memref<?xf32>
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {
      %x = memref.load %a[%i] : memref<?xf32>
      %y = memref.load %b[%i] : memref<?xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %c[%i] : memref<?xf32>
    }
    kernel.return
  }

  // CHECK-LABEL: kernel.func @reduce
  // CHECK-SAME:    (%{{.*}}: memref<256xf32, #vdev.device<"cuda", 0>>, %{{.*}}: memref<1xf32, #vdev.device<"cuda", 0, ?, "global">>, %{{.*}}: index, %{{.*}}: f32, %{{.*}}: i32)
  // CHECK-NEXT:  %[[S:.*]] = kernel.alloc_shared : memref<256xf32, #vdev.device<?, ?, ?, "shared">>
  // CHECK-NEXT:  %{{.*}} = kernel.thread_id y
  // CHECK-NEXT:  %{{.*}} = kernel.thread_id z
  // CHECK-NEXT:  %{{.*}} = kernel.block_id y
  // CHECK-NEXT:  %{{.*}} = kernel.block_id z
  // CHECK-NEXT:  %{{.*}} = kernel.block_dim y
  // CHECK-NEXT:  %{{.*}} = kernel.block_dim z
  // CHECK-NEXT:  %{{.*}} = kernel.grid_dim x
  // CHECK-NEXT:  %{{.*}} = kernel.grid_dim y
  // CHECK-NEXT:  %{{.*}} = kernel.grid_dim z
  // CHECK-NEXT:  %{{.*}} = math.sqrt %{{.*}} : f32
  // CHECK-NEXT:  kernel.barrier
  // CHECK:       scf.for
  // CHECK:         kernel.barrier
  // CHECK:       kernel.return
  kernel.func @reduce(%in: memref<256xf32, #vdev.device<"cuda", 0>>, %out: memref<1xf32, #vdev.device<"cuda", 0, ?, "global">>, %n: index, %k: f32, %m: i32) {
    %s = kernel.alloc_shared : memref<256xf32, #vdev.device<?, ?, ?, "shared">>
    %ty = kernel.thread_id y
    %tz = kernel.thread_id z
    %by = kernel.block_id y
    %bz = kernel.block_id z
    %dy = kernel.block_dim y
    %dz = kernel.block_dim z
    %gx = kernel.grid_dim x
    %gy = kernel.grid_dim y
    %gz = kernel.grid_dim z
    %r = math.sqrt %k : f32
    kernel.barrier
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %in[%j] : memref<256xf32, #vdev.device<"cuda", 0>>
      memref.store %v, %s[%j] : memref<256xf32, #vdev.device<?, ?, ?, "shared">>
      kernel.barrier
    }
    kernel.return
  }

  // CHECK-LABEL: kernel.func @empty() {
  // CHECK-NEXT:    kernel.return
  kernel.func @empty() {
    kernel.return
  }
}

// -----

// CHECK: kernel.module @other target #target.target<"llvm"> attributes {note = 1 : i64} {
// CHECK-NEXT: }
kernel.module @other target #target.target<"llvm"> attributes {note = 1} {
}
