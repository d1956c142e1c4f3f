func.func @main(%x: tensor<2xf32>, %v: f32) -> tensor<4xf32> {
  // A pad of 1 before two elements makes three, not four (tensor_pad.mlir).
  %p = tensor.pad %x low[1] high[0] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  } : tensor<2xf32> to tensor<4xf32>
  return %p : tensor<4xf32>
}
