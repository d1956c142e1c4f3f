// RUN: DEVPLAN_ROUNDTRIP
// RUN: devplan-opt %s --split-input-file | devplan-opt --split-input-file | filecheck %s
// #target.target prints canonically: the kind or tag as written, then only the
// attributes that differ from what the kind or tag gives, sorted by name.

// Every built-in kind, bare.
// CHECK:      "test.op"() {t = #target.target<"llvm">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"c">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"cuda">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"nvptx">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"rocm">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"opencl">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"metal">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"vulkan">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"webgpu">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"hexagon">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"ext_dev">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"composite">} : () -> ()
"test.op"() {t = #target.target<"llvm">} : () -> ()
"test.op"() {t = #target.target<"c">} : () -> ()
"test.op"() {t = #target.target<"cuda">} : () -> ()
"test.op"() {t = #target.target<"nvptx">} : () -> ()
"test.op"() {t = #target.target<"rocm">} : () -> ()
"test.op"() {t = #target.target<"opencl">} : () -> ()
"test.op"() {t = #target.target<"metal">} : () -> ()
"test.op"() {t = #target.target<"vulkan">} : () -> ()
"test.op"() {t = #target.target<"webgpu">} : () -> ()
"test.op"() {t = #target.target<"hexagon">} : () -> ()
"test.op"() {t = #target.target<"ext_dev">} : () -> ()
"test.op"() {t = #target.target<"composite">} : () -> ()

// -----

// Defaults are dropped, attributes sorted, integers printed without a type.
// CHECK:      "test.op"() {t = #target.target<"cuda">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"cuda", {arch = "sm_80", max_num_threads = 512}>} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"cuda">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"cuda">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"nvptx", {mcpu = "sm_86"}>} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"rocm", {mcpu = "gfx90a"}>} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"vulkan", {supports_float16 = true, supports_float32 = false}>} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"webgpu", {supports_subgroups = true}>} : () -> ()
"test.op"() {t = #target.target<"cuda", {arch = "sm_50", max_num_threads = 1024, thread_warp_size = 32}>} : () -> ()
"test.op"() {t = #target.target<"cuda", {max_num_threads = 512 : i32, arch = "sm_80"}>} : () -> ()
"test.op"() {t = #target.target<"cuda", {}>} : () -> ()
"test.op"() {t = #target.target<"cuda", {keys = ["cuda", "gpu"]}>} : () -> ()
"test.op"() {t = #target.target<"nvptx", {mtriple = "nvptx64-nvidia-cuda", mcpu = "sm_86"}>} : () -> ()
"test.op"() {t = #target.target<"rocm", {mcpu = "gfx90a", thread_warp_size = 64}>} : () -> ()
"test.op"() {t = #target.target<"vulkan", {supports_float32 = false, supports_float16 = true, supports_int32 = true}>} : () -> ()
"test.op"() {t = #target.target<"webgpu", {thread_warp_size = 32, supports_subgroups = true}>} : () -> ()

// -----

// Strings, integers, booleans, arrays; names that are not identifiers are quoted.
// CHECK: "test.op"() {t = #target.target<"llvm", {"fast-math" = true, mattr = ["+neon", "+v8.2a"], mcpu = "cortex-a72", mtriple = "aarch64-linux-gnu", "num-cores" = 4}>} : () -> ()
"test.op"() {t = #target.target<"llvm", {mtriple = "aarch64-linux-gnu", mcpu = "cortex-a72", mattr = ["+neon", "+v8.2a"], "num-cores" = 4, "fast-math" = true}>} : () -> ()

// -----

// keys: a device is prepended to the derived keys; given keys replace them.
// CHECK:      "test.op"() {t = #target.target<"opencl", {device = "mali"}>} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"opencl", {device = "mali"}>} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"cuda", {keys = ["tensorcore"]}>} : () -> ()
"test.op"() {t = #target.target<"opencl", {device = "mali"}>} : () -> ()
"test.op"() {t = #target.target<"opencl", {device = "mali", keys = ["mali", "opencl", "gpu"]}>} : () -> ()
"test.op"() {t = #target.target<"cuda", {keys = ["tensorcore"]}>} : () -> ()

// -----

// Tags, tags with overrides; an override equal to the tag's value is dropped.
// CHECK:      "test.op"() {t = #target.target<"nvidia/nvidia-a100">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"nvidia/nvidia-a100", {max_num_threads = 512}>} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"nvidia/nvidia-a100">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"qcom/hexagon-v68", {"vtcm-capacity" = 2097152}>} : () -> ()
"test.op"() {t = #target.target<"nvidia/nvidia-a100">} : () -> ()
"test.op"() {t = #target.target<"nvidia/nvidia-a100", {max_num_threads = 512}>} : () -> ()
"test.op"() {t = #target.target<"nvidia/nvidia-a100", {arch = "sm_80", thread_warp_size = 32}>} : () -> ()
"test.op"() {t = #target.target<"qcom/hexagon-v68", {"vtcm-capacity" = 2097152}>} : () -> ()

// -----

// Hosts. A tag's own host is not printed; `host = none` removes it.
// CHECK:      "test.op"() {t = #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm", {mcpu = "skylake"}>>} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"cuda">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"apple/m1-gpu">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"apple/m1-gpu">} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"apple/m1-gpu", host = none>} : () -> ()
// CHECK-NEXT: "test.op"() {t = #target.target<"nvidia/jetson-nano", host = #target.target<"qcom/hexagon-v68">>} : () -> ()
"test.op"() {t = #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm", {mcpu = "skylake"}>>} : () -> ()
"test.op"() {t = #target.target<"cuda", host = none>} : () -> ()
"test.op"() {t = #target.target<"apple/m1-gpu">} : () -> ()
"test.op"() {t = #target.target<"apple/m1-gpu", host = #target.target<"llvm", {mcpu = "apple-m1", mtriple = "arm64-apple-macos"}>>} : () -> ()
"test.op"() {t = #target.target<"apple/m1-gpu", host = none>} : () -> ()
"test.op"() {t = #target.target<"nvidia/jetson-nano", host = #target.target<"qcom/hexagon-v68">>} : () -> ()

// -----

// composite: `devices` holds targets.
// CHECK: "test.op"() {t = #target.target<"composite", {devices = [#target.target<"cuda", {arch = "sm_80"}>, #target.target<"nvidia/nvidia-t4">]}, host = #target.target<"llvm">>} : () -> ()
"test.op"() {t = #target.target<"composite", {devices = [#target.target<"cuda", {arch = "sm_80", max_num_threads = 1024}>, #target.target<"nvidia/nvidia-t4">]}, host = #target.target<"llvm">>} : () -> ()
