// What devplan refuses around async regions and kernels that wait for each other: one
// located error each.
// RUN: devplan-opt %s -p convert-gpu-to-device --split-input-file --verify-diagnostics | filecheck %s

// A token used by an op other than async.execute / async.await.
// CHECK: async_and_spin_wait_errors.mlir:[[# @LINE + 5]]:3: error: 'test.op' uses the !async.token of an async.execute; devplan runs async regions on the host and supports only async.execute and async.await as their users
func.func @token_escapes() {
  %t = async.execute {
    async.yield
  }
  "test.op"(%t) : (!async.token) -> ()
  func.return
}

// -----

// An async value that no async.execute in sight produces.
// CHECK: async_and_spin_wait_errors.mlir:[[# @LINE + 2]]:3: error: this !async.value<f32> does not come from an async.execute in this function; devplan runs only async.execute regions it can see
func.func @from_parameter(%v: !async.value<f32>) -> f32 {
  %x = async.await %v : !async.value<f32>
  func.return %x : f32
}

// -----

// A body of several blocks.
// CHECK: async_and_spin_wait_errors.mlir:[[# @LINE + 2]]:3: error: async.execute with 2 blocks cannot be run; its body must be one block
func.func @branches() {
  %t = async.execute {
    cf.br ^next
  ^next:
    async.yield
  }
  func.return
}

// -----

// A kernel that spins until another kernel changes memory: devplan never runs two at once.
// CHECK: async_and_spin_wait_errors.mlir:[[# @LINE + 5]]:7: error: this scf.while waits for memory that another thread or kernel changes (it carries no values and its body does nothing); devplan runs launches one after another and does not promise that threads make progress independently, so the wait might never end
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @wait_for_other(%flag: memref<i32>) kernel {
      %zero = arith.constant 0 : i32
      scf.while : () -> () {
        %seen = memref.atomic_rmw addi %zero, %flag[] : (i32, memref<i32>) -> i32
        %waiting = arith.cmpi eq, %seen, %zero : i32
        scf.condition(%waiting)
      } do {
        scf.yield
      }
      gpu.return
    }
  }
  func.func @main(%flag: memref<i32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@wait_for_other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%flag : memref<i32>)
    func.return
  }
}
