// `make demo` prints examples/targets.mlir canonically; this keeps it parsing and canonical.
// RUN: devplan-opt %S/../../../../examples/targets.mlir | filecheck %s

// CHECK: plain_gpu = #target.target<"cuda">
// CHECK: ampere = #target.target<"cuda", {arch = "sm_80"}>
// CHECK: arm_cpu = #target.target<"llvm", {mattr = ["+neon"], mcpu = "cortex-a72", mtriple = "aarch64-linux-gnu", "num-cores" = 4}>
// CHECK: a100 = #target.target<"nvidia/nvidia-a100">
// CHECK: a100_small_blocks = #target.target<"nvidia/nvidia-a100", {max_num_threads = 512}>
// CHECK: gpu_with_host = #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm", {mcpu = "skylake"}>>
// CHECK: orin = #target.target<"nvidia/jetson-agx-orin-64gb">
// CHECK: orin_device_only = #target.target<"nvidia/jetson-agx-orin-64gb", host = none>
// CHECK: dsp = #target.target<"qcom/hexagon-v68">
// CHECK: vulkan_fp16 = #target.target<"vulkan", {supports_float16 = true}>
