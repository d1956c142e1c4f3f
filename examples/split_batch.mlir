// Data parallelism at level 1: a batch of 8 rows is split in two halves
// (`tensor.extract_slice`), each half goes through the same dense layer on its own GPU,
// and the CPU concatenates the two results (`tensor.concat`). The batch and the weights
// live on the CPU; plan-devices keeps each slice where its source lives and copies only
// the slice to its GPU: 1 KiB a half, not the 2 KiB batch, and 512 B back from each.
//
//   devplan-run examples/split_batch.mlir --random-args 0 --stats

!cpu = #vdev.device<"cpu", 0>

func.func @main(%x: tensor<8x64xf32> {vdev.device = !cpu}, %w: tensor<64x32xf32> {vdev.device = !cpu})
    -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %top = tensor.extract_slice %x[0, 0] [4, 64] [1, 1] : tensor<8x64xf32> to tensor<4x64xf32>
  %bottom = tensor.extract_slice %x[4, 0] [4, 64] [1, 1] : tensor<8x64xf32> to tensor<4x64xf32>

  %e0 = tensor.empty() : tensor<4x32xf32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %y0 = linalg.matmul ins(%top, %w : tensor<4x64xf32>, tensor<64x32xf32>) outs(%acc0 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h0 = vdev.on_device %y0 to #vdev.device<"cuda", 0> : tensor<4x32xf32>

  %e1 = tensor.empty() : tensor<4x32xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %y1 = linalg.matmul ins(%bottom, %w : tensor<4x64xf32>, tensor<64x32xf32>) outs(%acc1 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h1 = vdev.on_device %y1 to #vdev.device<"cuda", 1> : tensor<4x32xf32>

  %y = tensor.concat dim(0) %h0, %h1 : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<8x32xf32>
  %r = vdev.on_device %y to !cpu : tensor<8x32xf32>
  func.return %r : tensor<8x32xf32>
}
