func.func @main(%a: tensor<3x5xi32>, %d: tensor<3x2x2x3xi32>) -> tensor<3x2x2x3xi32> {
  // 3 rows in tiles of 2 make 2 tiles, not 3 (linalg_pack.mlir).
  %z = arith.constant 0 : i32
  %p = linalg.pack %a padding_value(%z : i32) inner_dims_pos = [0, 1] inner_tiles = [2, 3] into %d : tensor<3x5xi32> -> tensor<3x2x2x3xi32>
  return %p : tensor<3x2x2x3xi32>
}
