// linalg.pack and linalg.unpack as MLIR defines them: parsed and printed in MLIR's
// syntax, planned like any op on tensors, and lowered as pad + expand_shape + a
// transpose (pack) and a transpose + collapse_shape + extract_slice (unpack).
// RUN: devplan-opt %s | filecheck %s --check-prefix=IR
// RUN: devplan-run %s --print-full | filecheck %s
// RUN: not devplan-opt %S/inputs/linalg_pack_wrong_shape.mlir 2>&1 | filecheck %s --check-prefix=BAD

// IR: linalg.pack %a padding_value(%pad : i32) outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [2, %t] into %d : tensor<3x5xi32> -> tensor<2x2x2x?xi32>
// IR: linalg.unpack %p outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [2, %t] into %e : tensor<2x2x2x?xi32> -> tensor<3x5xi32>

// A[r][c] = 5r + c tiled 2 x 3, the outer dimensions swapped: tile (a, b) holds rows
// 2b, 2b+1 and columns 3a .. 3a+2; 99 where a tile runs past A.
// CHECK:      result 0: int32[2x2x2x3]
// CHECK-NEXT: {{\[\[\[\[}}0, 1, 2],
// CHECK-NEXT:    [5, 6, 7]],
// CHECK-NEXT:   {{\[\[}}10, 11, 12],
// CHECK-NEXT:    [99, 99, 99]]],
// CHECK-NEXT:  {{\[\[\[}}3, 4, 99],
// CHECK-NEXT:    [8, 9, 99]],
// CHECK-NEXT:   {{\[\[}}13, 14, 99],
// CHECK-NEXT:    [99, 99, 99]]]]
// Unpacking gives A back.
// CHECK:      result 1: int32[3x5]
// CHECK-NEXT: {{\[\[}}0, 1, 2, 3, 4],
// CHECK-NEXT:  [5, 6, 7, 8, 9],
// CHECK-NEXT:  [10, 11, 12, 13, 14]]
func.func @main() -> (tensor<2x2x2x?xi32>, tensor<3x5xi32>) {
  %a = arith.constant dense<[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14]]> : tensor<3x5xi32>
  %pad = arith.constant 99 : i32
  %t = arith.constant 3 : index
  %d = tensor.empty(%t) : tensor<2x2x2x?xi32>
  %p = linalg.pack %a padding_value(%pad : i32) outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [2, %t] into %d : tensor<3x5xi32> -> tensor<2x2x2x?xi32>
  %e = tensor.empty() : tensor<3x5xi32>
  %u = linalg.unpack %p outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [2, %t] into %e : tensor<2x2x2x?xi32> -> tensor<3x5xi32>
  return %p, %u : tensor<2x2x2x?xi32>, tensor<3x5xi32>
}

// BAD: linalg_pack_wrong_shape.mlir:4:3: error: 'linalg.pack' packed dimension 0 is 3, expected 2
