// A function declared without a body that devplan does not provide (it provides MLIR's
// runner utilities) is an error at the call naming the function.
// RUN: not devplan-run %s 2>&1 | filecheck %s

// CHECK: external_function_error.mlir:9:3: error: 'func.call' calls @launchMissiles, an external function (declared without a body) that devplan does not provide; it provides MLIR's runner utilities @printMemrefF32, @printMemrefF64, @printMemrefF16, @printMemrefI32, @printMemrefI64
func.func private @launchMissiles(i32)
func.func @main() {
  %c = arith.constant 1 : i32
  call @launchMissiles(%c) : (i32) -> ()
  return
}
