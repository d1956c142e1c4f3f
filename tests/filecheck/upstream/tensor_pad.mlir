// tensor.pad verified as MLIR verifies it: pads given as SSA values may still meet a
// static result dimension (checked when it runs); with static source and pads the
// result must be their sum.
// RUN: devplan-run %s | filecheck %s
// RUN: not devplan-opt %S/inputs/tensor_pad_wrong_size.mlir 2>&1 | filecheck %s --check-prefix=BAD

// CHECK:      result 0: float32[1x4x5]
// CHECK:      {{\[\[\[}}2.3, 2.3, 2.3, 2.3, 2.3],
// CHECK-NEXT:   [2.3, 2.3, 2.3, 2.3, 2.3],
// CHECK-NEXT:   [1. , 2. , 3. , 2.3, 2.3],
// CHECK-NEXT:   [2. , 3. , 4. , 2.3, 2.3]]]
// CHECK:      result 1: float32[3]
// CHECK-NEXT: [0., 7., 7.]
func.func @main() -> (tensor<1x?x?xf32>, tensor<3xf32>) {
  %const = arith.constant dense<[[[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]]> : tensor<1x2x3xf32>
  %dynamic = tensor.cast %const : tensor<1x2x3xf32> to tensor<1x?x3xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %v = arith.constant 2.3 : f32
  %out = tensor.pad %dynamic low[%c0, %c2, %c0] high[%c0, %c0, %c2] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %v : f32
  } : tensor<1x?x3xf32> to tensor<1x?x?xf32>
  %seven = arith.constant dense<7.0> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %s = tensor.pad %seven low[%c1] high[%c0] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<2xf32> to tensor<3xf32>
  return %out, %s : tensor<1x?x?xf32>, tensor<3xf32>
}

// BAD: tensor_pad_wrong_size.mlir:3:3: error: 'tensor.pad' result dimension 0 is 4, but the source and pads give 3
