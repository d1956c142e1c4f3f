// With --split-input-file, devplan-opt runs every chunk, as mlir-opt does: a chunk's
// error is reported and the next chunk still runs; the exit status is 1 if any failed.
// RUN: not devplan-opt %s --split-input-file -p convert-gpu-to-device 2>&1 | filecheck %s

// CHECK: devplan_opt_split_every_chunk.mlir:[[# @LINE + 2]]:8: error: Operation arith.bogus is not registered
func.func @parse_error() {
  %x = arith.bogus : i32
  func.return
}

// -----

// CHECK: func.func @fine()
func.func @fine() {
  func.return
}

// -----

// CHECK: devplan_opt_split_every_chunk.mlir:[[# @LINE + 2]]:3: error: 'gpu.thread_id' is outside a gpu.func; it can only be converted inside a kernel
func.func @pass_error() {
  %t = gpu.thread_id x
  func.return
}
