// devplan-run: every user error is one located message and exit status 1.
// RUN: not devplan-run %s 2>&1 | filecheck %s
// RUN: not devplan-run %s --entry nope 2>&1 | filecheck %s --check-prefix=ENTRY
// RUN: not devplan-run %s.missing 2>&1 | filecheck %s --check-prefix=MISSING

// CHECK:      devplan_run_errors.mlir:[[# @LINE + 8]]:3: error: 'memref.load' in host code reads memory of #vdev.device<"cuda", 0>: host code cannot access buffer %d
// CHECK-NEXT: {{^}}  %v = memref.load %d[%c0] : memref<4xf32, #vdev.device<"cuda", 0>>
// CHECK-NOT:  Traceback
// ENTRY:      error: no function @nope to run (functions: @main)
// MISSING:    error: cannot read '{{.*}}devplan_run_errors.mlir.missing': No such file or directory
func.func @main() -> f32 {
  %c0 = arith.constant 0 : index
  %d = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0>>
  %v = memref.load %d[%c0] : memref<4xf32, #vdev.device<"cuda", 0>>
  device.free %d : memref<4xf32, #vdev.device<"cuda", 0>>
  func.return %v : f32
}
