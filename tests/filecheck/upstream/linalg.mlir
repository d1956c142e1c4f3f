// RUN: DEVPLAN_ROUNDTRIP

// CHECK-LABEL: func.func @contractions
func.func @contractions(%a: tensor<2x4x8xf32>, %b: tensor<2x8x3xf32>, %c: tensor<2x4x3xf32>, %h: tensor<4x8xf16>, %g: tensor<8x2xf16>, %y: tensor<4x2xf32>, %v: tensor<8xf32>, %s: tensor<f32>) -> (tensor<2x4x3xf32>, tensor<4x2xf32>, tensor<f32>) {
  // CHECK-NEXT: %0 = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%c : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%c : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  // CHECK-NEXT: %1 = linalg.matmul ins(%h, %g : tensor<4x8xf16>, tensor<8x2xf16>) outs(%y : tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = linalg.matmul ins(%h, %g : tensor<4x8xf16>, tensor<8x2xf16>) outs(%y : tensor<4x2xf32>) -> tensor<4x2xf32>
  // CHECK-NEXT: %2 = linalg.dot ins(%v, %v : tensor<8xf32>, tensor<8xf32>) outs(%s : tensor<f32>) -> tensor<f32>
  %2 = linalg.dot ins(%v, %v : tensor<8xf32>, tensor<8xf32>) outs(%s : tensor<f32>) -> tensor<f32>
  func.return %0, %1, %2 : tensor<2x4x3xf32>, tensor<4x2xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @windows
func.func @windows(%i: tensor<1x5x5x3xf32>, %k: tensor<2x2x3xf32>, %o: tensor<1x2x2x3xf32>, %w: tensor<2x2xf32>, %x: tensor<6x6xf32>, %k2: tensor<3x3xf32>, %o2: tensor<4x4xf32>) -> (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>, tensor<4x4xf32>) {
  // CHECK-NEXT: %0 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%i, %k : tensor<1x5x5x3xf32>, tensor<2x2x3xf32>) outs(%o : tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  %0 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%i, %k : tensor<1x5x5x3xf32>, tensor<2x2x3xf32>) outs(%o : tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  // CHECK-NEXT: %1 = linalg.pooling_nhwc_max {strides = dense<2> : tensor<2xi64>} ins(%i, %w : tensor<1x5x5x3xf32>, tensor<2x2xf32>) outs(%o : tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  %1 = linalg.pooling_nhwc_max {strides = dense<2> : tensor<2xi64>} ins(%i, %w : tensor<1x5x5x3xf32>, tensor<2x2xf32>) outs(%o : tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  // CHECK-NEXT: %2 = linalg.conv_2d ins(%x, %k2 : tensor<6x6xf32>, tensor<3x3xf32>) outs(%o2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = linalg.conv_2d ins(%x, %k2 : tensor<6x6xf32>, tensor<3x3xf32>) outs(%o2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %0, %1, %2 : tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>, tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @two_results
func.func @two_results(%x: tensor<4x8xf32>, %a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK-NEXT: %r, %r_1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%a, %a : tensor<4xf32>, tensor<4xf32>) {
  // CHECK:      } -> (tensor<4xf32>, tensor<4xf32>)
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%a, %a : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%v: f32, %s: f32, %m: f32):
    %s1 = arith.addf %s, %v : f32
    %m1 = arith.maximumf %m, %v : f32
    linalg.yield %s1, %m1 : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
