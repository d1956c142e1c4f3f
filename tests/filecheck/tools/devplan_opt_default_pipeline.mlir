// `devplan-opt -p default-pipeline` plans, lowers and classifies a level-1 module:
// the output is a level-2 program with kernels, copies and frees.
// RUN: not devplan-opt %s --split-input-file -p default-pipeline 2>&1 | filecheck %s

// CHECK:       kernel.module @cuda_kernels target #target.target<"nvidia/nvidia-a100"> {
// CHECK:         kernel.func @exp_f32(
// CHECK-LABEL: func.func @main(%x: memref<16xf32>) -> memref<16xf32> attributes {device.region = "mixed"} {
// CHECK:         %[[G:.*]] = device.alloc() : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.copy %x to %[[G]]
// CHECK:         device.launch @cuda_kernels::@exp_f32 on #vdev.device<"cuda", 0>
// CHECK:         device.copy %{{.*}} to %[[H:.*]] : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<16xf32>
// CHECK:         func.return %[[H]] : memref<16xf32>
func.func @main(%x: tensor<16xf32> {vdev.device = #vdev.device<"cpu", 0>}) -> (tensor<16xf32> {vdev.device = #vdev.device<"cpu", 0>}) {
  %e = math.exp %x : tensor<16xf32>
  %g = vdev.on_device %e to #vdev.device<"cuda", 0> : tensor<16xf32>
  func.return %g : tensor<16xf32>
}

// -----

// A planning error stops the pipeline with plan-devices' located message.
// CHECK: devplan_opt_default_pipeline.mlir:[[# @LINE + 2]]:3: error: conflicting placement: the 'vdev.on_device' hint places %x on #vdev.device<"cuda", 0>, but it is already placed on #vdev.device<"cpu", 0>
func.func @main(%x: tensor<16xf32> {vdev.device = #vdev.device<"cpu", 0>}) -> tensor<16xf32> {
  %g = vdev.on_device %x to #vdev.device<"cuda", 0> : tensor<16xf32>
  func.return %g : tensor<16xf32>
}
