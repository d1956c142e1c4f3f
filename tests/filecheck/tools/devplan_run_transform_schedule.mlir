// A transform schedule (MLIR's tiling and vectorisation scripts) is read and set aside
// with a remark at its place: the payload runs as written. Both forms parse: the
// current named sequence in a module of its own, and the older `transform.sequence`
// over `!pdl.operation`.
// RUN: devplan-run %s 2>&1 | filecheck %s
// RUN: not devplan-run %S/inputs/transform_schedule_unbalanced.mlir 2>&1 | filecheck %s --check-prefix=BAD

// CHECK: devplan_run_transform_schedule.mlir:10:3: remark: the transform schedule 'transform.named_sequence @__transform_main' is not applied: devplan runs the payload as written
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["linalg.generic"]} in %root
        : (!transform.any_op) -> !transform.any_op
    %1, %loop = transform.structured.tile_using_for %0 tile_sizes [2]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// CHECK: devplan_run_transform_schedule.mlir:20:1: remark: the transform schedule 'transform.sequence' is not applied
transform.sequence failures(propagate) {
  ^bb0(%arg1: !pdl.operation):
    %0 = transform.structured.match ops{["linalg.generic"]} in %arg1 : (!pdl.operation) -> !pdl.operation
    %1, %loops:1 = transform.structured.tile %0 [2] : (!pdl.operation) -> (!pdl.operation, !pdl.operation)
}

// CHECK:      result 0: float32[4]
// CHECK-NEXT: [2., 4., 6., 8.]
func.func @main() -> tensor<4xf32> {
  %a = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = arith.addf %a, %a : tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// BAD: transform_schedule_unbalanced.mlir:3:16: error: 'transform.named_sequence': unbalanced ']' in the schedule
