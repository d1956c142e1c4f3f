// A two-layer perceptron at level 1: tensors, and three placement hints saying where
// each layer runs. plan-devices places every other value and plans the copies;
// lower-to-device turns it into kernels, copies and frees.
//
//   devplan-run examples/mlp.mlir --random-args 0 --stats
//   devplan-run examples/mlp.mlir --random-args 0 --print-pipeline-ir
//
// Layer 1 (matmul + bias) is pinned to cuda:0, the ReLU to the CPU, layer 2 to cuda:1;
// the result comes back to the host. `make demo` walks through the plan.

#rows = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>

func.func @main(%x: tensor<32x64xf32>, %w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
                %w2: tensor<128x10xf32>) -> tensor<32x10xf32> {
  %zero = arith.constant 0.0 : f32

  // Layer 1 on cuda:0: h = x w1 + b1, the bias vector broadcast over the rows
  %e1 = tensor.empty() : tensor<32x128xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x128xf32>) -> tensor<32x128xf32>
  %xw = linalg.matmul ins(%x, %w1 : tensor<32x64xf32>, tensor<64x128xf32>) outs(%z1 : tensor<32x128xf32>) -> tensor<32x128xf32>
  %h = linalg.generic {indexing_maps = [#rows, #bias, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%xw, %b1 : tensor<32x128xf32>, tensor<128xf32>) outs(%e1 : tensor<32x128xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<32x128xf32>
  %h0 = vdev.on_device %h to #vdev.device<"cuda", 0> : tensor<32x128xf32>

  // ReLU on the CPU
  %e2 = tensor.empty() : tensor<32x128xf32>
  %r = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : tensor<32x128xf32>) outs(%e2 : tensor<32x128xf32>) {
  ^bb0(%v: f32, %o: f32):
    %c0 = arith.constant 0.0 : f32
    %m = arith.maximumf %v, %c0 : f32
    linalg.yield %m : f32
  } -> tensor<32x128xf32>
  %rc = vdev.on_device %r to #vdev.device<"cpu", 0> : tensor<32x128xf32>

  // Layer 2 on cuda:1: y = r w2
  %e3 = tensor.empty() : tensor<32x10xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<32x10xf32>) -> tensor<32x10xf32>
  %y = linalg.matmul ins(%rc, %w2 : tensor<32x128xf32>, tensor<128x10xf32>) outs(%z2 : tensor<32x10xf32>) -> tensor<32x10xf32>
  %y1 = vdev.on_device %y to #vdev.device<"cuda", 1> : tensor<32x10xf32>
  func.return %y1 : tensor<32x10xf32>
}
