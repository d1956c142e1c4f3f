// RUN: devplan-opt %s -p convert-elementwise-to-linalg | filecheck %s

// An elementwise op on tensors becomes a linalg.generic over identity maps writing over
// a tensor.empty (its dynamic sizes from tensor.dim of the first tensor operand); a
// scalar operand gets the map of no results; the op's vdev.device stays on both.

// CHECK-LABEL: func.func @elementwise(
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:.*]] = tensor.dim %a, %[[C0]] : tensor<?x4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty(%[[N]]) {vdev.device = #vdev.device<"cuda", 0>} : tensor<?x4xi1>
// CHECK-NEXT:    %lt = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<?x4xf32>, tensor<?x4xf32>) outs(%[[E]] : tensor<?x4xi1>) attrs = {vdev.device = #vdev.device<"cuda", 0>} {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT:      %[[R:.*]] = arith.cmpf olt, %[[X]], %[[Y]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : i1
// CHECK-NEXT:    } -> tensor<?x4xi1>
// CHECK:         %pick = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c, %a, %b : i1, tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK:           arith.select
func.func @elementwise(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %c: i1) -> (tensor<?x4xi1>, tensor<?x4xf32>) {
  %lt = arith.cmpf olt, %a, %b {vdev.device = #vdev.device<"cuda", 0>} : tensor<?x4xf32>
  %pick = arith.select %c, %a, %b : tensor<?x4xf32>
  func.return %lt, %pick : tensor<?x4xi1>, tensor<?x4xf32>
}
