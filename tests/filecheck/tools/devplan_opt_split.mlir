// Diagnostics in later chunks of --split-input-file keep the file's line numbers and quote the line.
// RUN: devplan-opt %s --split-input-file --parsing-diagnostics 2>&1 | filecheck %s

// CHECK: func.func @first
func.func @first() {
  func.return
}

// -----

func.func @second() {
  // CHECK: devplan_opt_split.mlir:[[# @LINE + 3]]:8: error: Operation arith.bogus is not registered
  // CHECK-NEXT: {{^}}  %x = arith.bogus : i32
  // CHECK-NEXT: {{^}}       ^^^^^^^^^^^
  %x = arith.bogus : i32
  func.return
}
