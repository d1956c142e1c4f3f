// RUN: not devplan-opt %s --split-input-file 2>&1 | filecheck %s

kernel.module @k target #target.target<"cuda"> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'kernel.func' kernel.func @f declares results (i32); kernels return nothing (write results to a memref parameter)
  kernel.func @f() -> i32 {
    kernel.return
  }
}

// -----

kernel.module @k target #target.target<"cuda"> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'kernel.func' kernel.func @f: parameter 1 has type tensor<4xf32>; kernel parameters are memrefs, index, integers and floats
  kernel.func @f(%a: memref<4xf32>, %t: tensor<4xf32>) {
    kernel.return
  }
}

// -----

kernel.module @k target #target.target<"cuda"> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'kernel.func' kernel.func @f: parameter 1 has type memref<4xf32, 1 : i64>, whose memory space 1 : i64 is not a #vdev.device; a kernel memref has no memory space or a #vdev.device, e.g. memref<4xf32, #vdev.device<"cuda", 0>>
  kernel.func @f(%a: memref<4xf32>, %b: memref<4xf32, 1 : i64>) {
    kernel.return
  }
}

// -----

kernel.module @k target #target.target<"cuda"> {
  kernel.func @f(%n: index) {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'memref.alloc' is not allowed in kernel.func @f; kernel bodies may use arith.*, math.*, memref.load, memref.store, memref.dim, memref.atomic_rmw, scf.for, scf.if, scf.yield, scf.while, scf.condition, scf.index_switch, kernel.return, kernel.thread_id, kernel.block_id, kernel.block_dim, kernel.grid_dim, kernel.barrier, kernel.alloc_shared, kernel.printf, kernel.assert
    %m = memref.alloc() : memref<4xf32>
    kernel.return
  }
}

// -----

kernel.module @k target #target.target<"cuda"> {
  kernel.func @f(%b: i1) {
    scf.if %b {
      // CHECK: invalid.mlir:[[# @LINE + 1]]:7: error: 'func.call' is not allowed in kernel.func @f; kernel bodies may use arith.*
      func.call @g() : () -> ()
    }
    kernel.return
  }
}

// -----

kernel.module @k target #target.target<"cuda"> {
  kernel.func @f(%b: i1) {
    scf.if %b {
      // CHECK: invalid.mlir:[[# @LINE + 1]]:7: error: 'kernel.alloc_shared' must be in the top-level block of kernel.func @f, not nested in a loop or branch
      %s = kernel.alloc_shared : memref<4xf32, #vdev.device<?, ?, ?, "shared">>
    }
    kernel.return
  }
}

// -----

kernel.module @k target #target.target<"cuda"> {
  kernel.func @f() {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'kernel.alloc_shared' result memref<4xf32, #vdev.device<"cuda", 0, ?, "global">> must live in shared memory, e.g. memref<256xf32, #vdev.device<?, ?, ?, "shared">>
    %s = kernel.alloc_shared : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
    kernel.return
  }
}

// -----

kernel.module @k target #target.target<"cuda"> {
  kernel.func @f() {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'kernel.alloc_shared' result memref<4xf32> must live in shared memory
    %s = kernel.alloc_shared : memref<4xf32>
    kernel.return
  }
}

// -----

kernel.module @k target #target.target<"cuda"> {
  kernel.func @f() {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'kernel.alloc_shared' shared memory needs a static shape, got memref<?xf32, #vdev.device<?, ?, ?, "shared">>
    %s = kernel.alloc_shared : memref<?xf32, #vdev.device<?, ?, ?, "shared">>
    kernel.return
  }
}

// -----

func.func @host() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'kernel.thread_id' is only valid inside a kernel.func
  %t = kernel.thread_id x
  func.return
}

// -----

func.func @host() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'kernel.barrier' is only valid inside a kernel.func
  kernel.barrier
  func.return
}

// -----

func.func @host() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'kernel.alloc_shared' is only valid inside a kernel.func
  %s = kernel.alloc_shared : memref<4xf32, #vdev.device<?, ?, ?, "shared">>
  func.return
}

// -----

kernel.module @k target #target.target<"cuda"> {
  kernel.func @f() {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:27: error: expected a dimension, one of x, y, z
    %t = kernel.block_dim w
    kernel.return
  }
}

// -----

kernel.module @k target #target.target<"cuda"> {
  kernel.func @f() {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'kernel.grid_dim' dimension 'w' is not one of x, y, z
    %t = "kernel.grid_dim"() <{dimension = "w"}> : () -> index
    kernel.return
  }
}

// -----

kernel.module @k target #target.target<"cuda"> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'func.func' is not allowed in kernel.module @k; a kernel.module holds only kernel.func ops
  func.func @f() {
    func.return
  }
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'kernel.func' 'kernel.func' expects parent op 'kernel.module'
kernel.func @f() {
  kernel.return
}

// -----

func.func @host() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'kernel.return' 'kernel.return' expects parent op 'kernel.func'
  kernel.return
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'kernel.module' Redefinition of symbol "f"
kernel.module @k target #target.target<"cuda"> {
  kernel.func @f() {
    kernel.return
  }
  kernel.func @f() {
    kernel.return
  }
}

// -----

kernel.module @k target #target.target<"cuda"> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'kernel.func' kernel.func @f: entry block argument types (index) differ from the signature (f32)
  "kernel.func"() <{sym_name = "f", function_type = (f32) -> ()}> ({
  ^bb0(%x: index):
    "kernel.return"() : () -> ()
  }) : () -> ()
}

// -----

kernel.module @k target #target.target<"cuda"> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'kernel.func' kernel.func @f: known_grid_size is array<i32: 0, 1, 1>; it must be three sizes of at least 1, e.g. array<i32: 128, 1, 1>
  kernel.func @f() attributes {known_grid_size = array<i32: 0, 1, 1>} {
    kernel.return
  }
}

// -----

kernel.module @k target #target.target<"cuda"> {
  kernel.func @f(%a: memref<4xf32>) {
    %tx = kernel.thread_id x
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'arith.addf' operand #0 does not dominate this use: it is defined after it
    %y = arith.addf %x, %x : f32
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: note: operand defined here
    %x = memref.load %a[%tx] : memref<4xf32>
    memref.store %y, %a[%tx] : memref<4xf32>
    kernel.return
  }
}

// -----

func.func @f(%n: index) -> index {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'scf.for' operand #2 does not dominate this use: it is defined after it
  %r = scf.for %i = %c1 to %n step %s iter_args(%acc = %c1) -> (index) {
    %next = arith.addi %acc, %i : index
    scf.yield %next : index
  }
  %s = arith.constant 2 : index
  func.return %r : index
}
