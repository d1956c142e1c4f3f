// RUN: devplan-opt %s -p generalize-named-linalg-ops | filecheck %s

// A named linalg op becomes the linalg.generic of its maps, iterators and body, keeping
// its vdev.device.

// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<4x6xf32>, tensor<6x5xf32>) outs(%c : tensor<4x5xf32>) attrs = {vdev.device = #vdev.device<"cpu", 0>} {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[O:.*]]: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[O]], %[[P]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NEXT:    } -> tensor<4x5xf32>
func.func @matmul(%a: tensor<4x6xf32>, %b: tensor<6x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %m = linalg.matmul {vdev.device = #vdev.device<"cpu", 0>} ins(%a, %b : tensor<4x6xf32>, tensor<6x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %m : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @fill(
// CHECK-NEXT:    %f = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : f32) outs(%c : tensor<8xf32>) {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[X]] : f32
func.func @fill(%x: f32, %c: tensor<8xf32>) -> tensor<8xf32> {
  %f = linalg.fill ins(%x : f32) outs(%c : tensor<8xf32>) -> tensor<8xf32>
  func.return %f : tensor<8xf32>
}

// linalg.broadcast: the loops are the output's; the input is read at the dimensions
// `dimensions` does not add.
// CHECK-LABEL: func.func @broadcast(
// CHECK-NEXT:    %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v : tensor<2x3xf32>) outs(%e : tensor<2x4x3xf32>) {
// CHECK-NEXT:    ^bb0(%[[I:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[I]] : f32
func.func @broadcast(%v: tensor<2x3xf32>, %e: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %b = linalg.broadcast ins(%v : tensor<2x3xf32>) outs(%e : tensor<2x4x3xf32>) dimensions = [1]
  func.return %b : tensor<2x4x3xf32>
}

// linalg.reduce: the loops are the input's, `dimensions` reduction loops; the body
// (element, accumulator) is the generic's.
// CHECK-LABEL: func.func @reduce(
// CHECK-NEXT:    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction"]} ins(%a : tensor<2x4x3xf32>) outs(%init : tensor<4xf32>) {
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[IN]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
func.func @reduce(%a: tensor<2x4x3xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.reduce ins(%a : tensor<2x4x3xf32>) outs(%init : tensor<4xf32>) dimensions = [0, 2]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  func.return %r : tensor<4xf32>
}
