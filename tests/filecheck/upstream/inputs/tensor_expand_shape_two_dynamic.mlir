func.func @main(%x: tensor<?xf32>) -> tensor<?x?xf32> {
  // Two dynamic sizes in one group need output_shape (tensor_expand_shape.mlir).
  %e = tensor.expand_shape %x [[0, 1]] : tensor<?xf32> into tensor<?x?xf32>
  return %e : tensor<?x?xf32>
}
