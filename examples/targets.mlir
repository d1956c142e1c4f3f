// Targets: how to compile for each device (TVM's Target, as an xDSL attribute).
// `devplan-opt examples/targets.mlir` prints them canonically: defaults dropped,
// attributes sorted, kinds and tags kept as written.

// A kind with its defaults (cuda: arch sm_50, 1024 threads, warp 32, keys cuda, gpu).
"test.op"() {plain_gpu = #target.target<"cuda">} : () -> ()
// A kind with attributes; max_num_threads = 1024 is cuda's default and is dropped.
"test.op"() {ampere = #target.target<"cuda", {max_num_threads = 1024, arch = "sm_80"}>} : () -> ()
// A CPU with LLVM options; names that are not identifiers are quoted.
"test.op"() {arm_cpu = #target.target<"llvm", {mtriple = "aarch64-linux-gnu", mcpu = "cortex-a72", mattr = ["+neon"], "num-cores" = 4}>} : () -> ()
// A tag: a named configuration (arch sm_80, 48 KiB shared memory, 40 MiB L2, ...).
"test.op"() {a100 = #target.target<"nvidia/nvidia-a100">} : () -> ()
// A tag with overrides.
"test.op"() {a100_small_blocks = #target.target<"nvidia/nvidia-a100", {max_num_threads = 512}>} : () -> ()
// A device target with its host.
"test.op"() {gpu_with_host = #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm", {mcpu = "skylake"}>>} : () -> ()
// A tag that carries its own host (an aarch64 CPU), and the same device without it.
"test.op"() {orin = #target.target<"nvidia/jetson-agx-orin-64gb">} : () -> ()
"test.op"() {orin_device_only = #target.target<"nvidia/jetson-agx-orin-64gb", host = none>} : () -> ()
// A DSP (Qualcomm Hexagon v68) and a Vulkan GPU with float16.
"test.op"() {dsp = #target.target<"qcom/hexagon-v68">} : () -> ()
"test.op"() {vulkan_fp16 = #target.target<"vulkan", {supports_float16 = true, supports_float32 = true}>} : () -> ()
