// A level-1 (tensor) program is refused with a located message saying what it needs.
// RUN: not devplan-run %s --random-args 0 2>&1 | filecheck %s

// CHECK:      devplan_run_level1.mlir:[[# @LINE + 3]]:1: error: @main is a level-1 (tensor) function; level-1 programs need the default-pipeline (plan-devices, lower-to-device), which this build does not have yet
// CHECK-NEXT: {{^}}func.func @main
// CHECK-NOT:  Traceback
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = arith.addf %a, %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}
