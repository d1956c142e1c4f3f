// A two-layer MLP on a CPU and two GPUs whose link to the host is slow (2 GB/s) while
// the GPUs share a fast one (300 GB/s). The input and the result live on the host
// (argument and result attributes); the second layer is pinned to cuda:1 (a hint).
// The system is mlp_three_devices.toml, next to this file.
// Everything else is free. plan-devices' default strategy puts the free values on
// vdev.default_device (the CPU): the first layer's 256x512x512 matmul runs there.
// strategy=cost moves the free work to the GPUs, where the modelled time is least:
//
//   devplan-opt -p 'plan-devices{strategy=cost explain=true}' examples/mlp_three_devices.mlir

builtin.module attributes {
  vdev.default_device = #vdev.device<"cpu", 0>,
  vdev.system = "mlp_three_devices.toml"
} {
  func.func @main(%x: tensor<256x512xf32> {vdev.device = #vdev.device<"cpu", 0>},
                  %w1: tensor<512x512xf32>, %b1: tensor<256x512xf32>,
                  %w2: tensor<512x128xf32>, %b2: tensor<256x128xf32>)
      -> (tensor<256x128xf32> {vdev.device = #vdev.device<"cpu", 0>}) {
    // layer 1: tanh(x w1 + b1)
    %z1 = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<256x512xf32>
    %a1 = linalg.fill ins(%z1 : f32) outs(%e1 : tensor<256x512xf32>) -> tensor<256x512xf32>
    %m1 = linalg.matmul ins(%x, %w1 : tensor<256x512xf32>, tensor<512x512xf32>)
            outs(%a1 : tensor<256x512xf32>) -> tensor<256x512xf32>
    %s1 = arith.addf %m1, %b1 : tensor<256x512xf32>
    %h1 = math.tanh %s1 : tensor<256x512xf32>
    // layer 2 on cuda:1: h1 w2 + b2
    %e2 = tensor.empty() : tensor<256x128xf32>
    %a2 = linalg.fill ins(%z1 : f32) outs(%e2 : tensor<256x128xf32>) -> tensor<256x128xf32>
    %m2 = linalg.matmul ins(%h1, %w2 : tensor<256x512xf32>, tensor<512x128xf32>)
            outs(%a2 : tensor<256x128xf32>) -> tensor<256x128xf32>
    %p2 = vdev.on_device %m2 to #vdev.device<"cuda", 1> {constrain_result}
            : tensor<256x128xf32>
    %y = arith.addf %p2, %b2 : tensor<256x128xf32>
    func.return %y : tensor<256x128xf32>
  }
}
