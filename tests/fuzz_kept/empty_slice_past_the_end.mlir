// A view of no element past the end of its buffer: an empty slice at column 1 of a
// 0x1 pad (the NumPy array of the view failed: 'strides is incompatible').
func.func @main(%x: tensor<0x0xf32>, %y: tensor<0x0xf32>, %w: tensor<0x0xf32>, %n: index, %flag: i1) -> (tensor<0x0xf32> {vdev.device = #vdev.device<"cuda", 0>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %t1 = arith.constant 0.0 : f32
  %t4 = tensor.pad %x low[0, 1] high[0, 0] {
  ^bb0(%t2: index, %t3: index):
    tensor.yield %t1 : f32
  } : tensor<0x0xf32> to tensor<0x1xf32>
  %t5 = tensor.extract_slice %t4[0, 1] [0, 0] [1, 1] : tensor<0x1xf32> to tensor<0x0xf32>
  func.return %t5 : tensor<0x0xf32>
}
