// linalg.generic with its attributes given as a trait (an alias of a dictionary), as
// MLIR's tests write `linalg.generic #matmul_trait ins(...)`: read as if written inline.
// RUN: devplan-opt %s | filecheck %s --check-prefix=IR
// RUN: devplan-run %s | filecheck %s
// RUN: not devplan-opt %S/inputs/linalg_generic_trait_not_a_dictionary.mlir 2>&1 | filecheck %s --check-prefix=BAD

// IR: linalg.generic {indexing_maps = [affine_map<(d0) -> (((d0 * -1) + 3))>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>)

// CHECK:      result 0: float32[4]
// CHECK-NEXT: [4., 3., 2., 1.]
#reverse = {
  indexing_maps = [affine_map<(i) -> (3 - i)>, affine_map<(i) -> (i)>],
  iterator_types = ["parallel"]
}
func.func @main() -> tensor<4xf32> {
  %x = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %r = linalg.generic #reverse ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// BAD: linalg_generic_trait_not_a_dictionary.mlir:4:23: error: 'linalg.generic' takes a dictionary of attributes, not
