// What devplan refuses around async regions: one located error each. (Kernels that wait
// for each other run: see concurrent_handshake.mlir.)
// RUN: not devplan-opt %s -p convert-gpu-to-device --split-input-file 2>&1 | filecheck %s

// A token used by an op other than async.execute / async.await.
// CHECK: async_region_errors.mlir:[[# @LINE + 5]]:3: error: 'test.op' uses the !async.token of an async.execute; devplan runs async regions on the host and supports only async.execute and async.await as their users
func.func @token_escapes() {
  %t = async.execute {
    async.yield
  }
  "test.op"(%t) : (!async.token) -> ()
  func.return
}

// -----

// An async value that no async.execute in sight produces.
// CHECK: async_region_errors.mlir:[[# @LINE + 2]]:3: error: this !async.value<f32> does not come from an async.execute in this function; devplan runs only async.execute regions it can see
func.func @from_parameter(%v: !async.value<f32>) -> f32 {
  %x = async.await %v : !async.value<f32>
  func.return %x : f32
}

// -----

// A body of several blocks.
// CHECK: async_region_errors.mlir:[[# @LINE + 2]]:3: error: async.execute with 2 blocks cannot be run; its body must be one block
func.func @branches() {
  %t = async.execute {
    cf.br ^next
  ^next:
    async.yield
  }
  func.return
}
