// A level-1 (tensor) program runs through default-pipeline; without plan-devices in
// the build that is one clear message saying which pass is missing.
// RUN: not devplan-run %s --random-args 0 2>&1 | filecheck %s

// CHECK:      error: default-pipeline needs plan-devices, which this build does not have yet
// CHECK-NOT:  Traceback
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = arith.addf %a, %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}
