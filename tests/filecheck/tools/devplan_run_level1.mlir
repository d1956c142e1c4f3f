// A level-1 (tensor) program runs through default-pipeline (plan-devices, elide-copies,
// lower-to-device, elide-copies, classify-regions); --print-pipeline-ir shows the
// program that runs.
// RUN: devplan-run %s --arg 3 --args 1.5 --strict | filecheck %s
// RUN: devplan-run %s --arg 3 --args 1.5 --print-pipeline-ir | filecheck %s --check-prefix=IR

// %k = 1.5 fills a tensor; the sum runs on cuda:0, the product on the CPU (the host):
// (1.5 + 1.5) * 1.5 = 4.5. %n is unused.
// CHECK:      result 0: float32[4]  (min 4.5, max 4.5, mean 4.5)
// CHECK-NEXT: [4.5, 4.5, 4.5, 4.5]
// CHECK-NOT:  warning

// IR:         kernel.module @cuda_kernels target #target.target<"nvidia/nvidia-a100"> {
// IR:           kernel.func @fill_f32(
// IR:           kernel.func @add_f32(
// IR:         kernel.module @cpu_kernels target #target.target<"llvm"> {
// IR:           kernel.func @mul_f32(
// IR-LABEL:   func.func @main(%n: index, %k: f32) -> memref<4xf32> attributes {device.region = "multi-device"} {
// IR:           device.launch @cuda_kernels::@add_f32 on #vdev.device<"cuda", 0>
// IR:           device.copy %{{.*}} to %{{.*}} : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<4xf32>
// IR:           device.launch @cpu_kernels::@mul_f32 on #vdev.device<"cpu", 0>
// IR:           func.return
func.func @main(%n: index, %k: f32) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.fill ins(%k : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = arith.addf %a, %a : tensor<4xf32>
  %g = vdev.on_device %s to #vdev.device<"cuda", 0> : tensor<4xf32>
  %p = arith.mulf %g, %a : tensor<4xf32>
  %h = vdev.on_device %p to #vdev.device<"cpu", 0> : tensor<4xf32>
  func.return %h : tensor<4xf32>
}
