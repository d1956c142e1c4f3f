// Two hints that pin %b to different devices (xdsl_opt_plugin.mlir runs it).
builtin.module {
  func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
    %b = vdev.on_device %a to #vdev.device<"cuda", 0> {constrain_result} : tensor<4xf32>
    %c = vdev.on_device %b to #vdev.device<"cpu", 0> {constrain_result} : tensor<4xf32>
    func.return %c : tensor<4xf32>
  }
}
