// A trait must be a dictionary (linalg_generic_trait.mlir).
#maps = [affine_map<(i) -> (i)>]
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic #maps ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
