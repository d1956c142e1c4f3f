// RUN: not devplan-opt %s --split-input-file 2>&1 | filecheck %s

func.func @strides_on_conv_2d(%x: tensor<6x6xf32>, %k: tensor<3x3xf32>, %o: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK: linalg_invalid.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_2d' takes no 'strides' attribute (MLIR's op has none)
  %0 = linalg.conv_2d {strides = dense<1> : tensor<2xi64>} ins(%x, %k : tensor<6x6xf32>, tensor<3x3xf32>) outs(%o : tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}

// -----

func.func @short_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x3xf32>, %c: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  // CHECK: linalg_invalid.mlir:[[# @LINE + 1]]:3: error: 'linalg.batch_matmul' inferred input/output operand #1 has shape's dimension #0 to be 2, but found 3
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<3x8x3xf32>) outs(%c : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  func.return %0 : tensor<2x4x3xf32>
}
