// tensor.expand_shape in both of MLIR's syntaxes: with output_shape, and the older one
// without it, where each group's one dynamic size is the source's size divided by the
// group's static sizes. Each prints as it was written.
// RUN: devplan-opt %s | filecheck %s --check-prefix=IR
// RUN: devplan-run %s --dynamic-size 6 --random-args 0 2>&1 | filecheck %s
// RUN: not devplan-opt %S/inputs/tensor_expand_shape_two_dynamic.mlir 2>&1 | filecheck %s --check-prefix=BAD

// IR: tensor.expand_shape %x {{\[\[}}0 : i64, 1 : i64, 2 : i64]] : tensor<?xf32> into tensor<1x?x2xf32>
// IR: tensor.expand_shape %x {{\[\[}}0 : i64, 1 : i64]] output_shape [3, %n] : tensor<?xf32> into tensor<3x?xf32>

// CHECK: random-args: %x : tensor<?xf32> is 6
// CHECK: result 0: float32[1x3x2]
// CHECK: result 1: float32[3x2]
func.func @main(%x: tensor<?xf32>) -> (tensor<1x?x2xf32>, tensor<3x?xf32>) {
  %old = tensor.expand_shape %x [[0, 1, 2]] : tensor<?xf32> into tensor<1x?x2xf32>
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %size = tensor.dim %x, %c0 : tensor<?xf32>
  %n = arith.divui %size, %c3 : index
  %new = tensor.expand_shape %x [[0, 1]] output_shape [3, %n] : tensor<?xf32> into tensor<3x?xf32>
  return %old, %new : tensor<1x?x2xf32>, tensor<3x?xf32>
}

// BAD: tensor_expand_shape_two_dynamic.mlir:3:3: error: 'tensor.expand_shape' group 0 has dynamic sizes at [0, 1]: without output_shape a group may have one
