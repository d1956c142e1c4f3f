// RUN: not devplan-opt %s --split-input-file 2>&1 | filecheck %s
// RUN: not devplan-opt %s 2>&1 | filecheck %s --check-prefix=FIRST

// Every error names the offending word and points at it (file:line:col and a caret).

// Unknown kind: the nearest name is suggested and the known kinds listed.
// CHECK: invalid.mlir:[[# @LINE + 2]]:33: error: unknown target kind 'cdua' (did you mean 'cuda'?); known kinds: c, composite, cuda, ext_dev, hexagon, llvm, metal, nvptx, opencl, rocm, vulkan, webgpu
// FIRST: invalid.mlir:[[# @LINE + 1]]:33: error: unknown target kind 'cdua'
"test.op"() {t = #target.target<"cdua">} : () -> ()

// -----

// Unknown tag.
// CHECK: invalid.mlir:[[# @LINE + 1]]:33: error: unknown target tag 'nvidia/nvidia-a1000' (did you mean 'nvidia/nvidia-a100'?); list_tags() gives the {{[0-9]+}} known tags
"test.op"() {t = #target.target<"nvidia/nvidia-a1000">} : () -> ()

// -----

// Unknown attribute: the caret is on its name; the kind's attributes are listed.
// CHECK: invalid.mlir:[[# @LINE + 3]]:58: error: target kind 'cuda' has no attribute 'arc' (did you mean 'arch'?); its attributes are: arch, device, keys, l2_cache_size_bytes, libs, max_num_threads, max_shared_memory_per_block, max_threads_per_block, mcpu, model, registers_per_block, target_device_type, thread_warp_size
// CHECK-NEXT: {{^}}"test.op"() {t = #target.target<"cuda", {arch = "sm_80", arc = "sm_80"}>} : () -> ()
// CHECK-NEXT: {{^ {57}\^{3}$}}
"test.op"() {t = #target.target<"cuda", {arch = "sm_80", arc = "sm_80"}>} : () -> ()

// -----

// Wrong type: a string for an integer.
// CHECK: invalid.mlir:[[# @LINE + 1]]:60: error: attribute 'max_num_threads' of target kind 'cuda' expects an integer, got the string "many"
"test.op"() {t = #target.target<"cuda", {max_num_threads = "many"}>} : () -> ()

// -----

// Wrong type: an integer for a string.
// CHECK: invalid.mlir:[[# @LINE + 1]]:49: error: attribute 'arch' of target kind 'cuda' expects a string, got the integer 80
"test.op"() {t = #target.target<"cuda", {arch = 80}>} : () -> ()

// -----

// Wrong type: a boolean for an integer.
// CHECK: invalid.mlir:[[# @LINE + 1]]:61: error: attribute 'max_num_threads' of target kind 'metal' expects an integer, got the boolean true
"test.op"() {t = #target.target<"metal", {max_num_threads = true}>} : () -> ()

// -----

// Wrong type: a list element.
// CHECK: invalid.mlir:[[# @LINE + 1]]:50: error: attribute 'mattr' of target kind 'llvm' expects a list of strings, got a list whose element 1 is the integer 3
"test.op"() {t = #target.target<"llvm", {mattr = ["+neon", 3]}>} : () -> ()

// -----

// Wrong type: a float.
// CHECK: invalid.mlir:[[# @LINE + 1]]:56: error: attribute 'num-cores' of target kind 'llvm' expects an integer, got the float 4.0
"test.op"() {t = #target.target<"llvm", {"num-cores" = 4.0}>} : () -> ()

// -----

// A host must be of a host-capable kind.
// CHECK: invalid.mlir:[[# @LINE + 1]]:48: error: target kind 'rocm' (device type 'rocm') cannot be a host; host-capable kinds: c, hexagon, llvm
"test.op"() {t = #target.target<"cuda", host = #target.target<"rocm">>} : () -> ()

// -----

// A host must be a target.
// CHECK: invalid.mlir:[[# @LINE + 1]]:48: error: a host must be a #target.target<...> or none, got "llvm"
"test.op"() {t = #target.target<"cuda", host = "llvm">} : () -> ()

// -----

// The host is given once.
// CHECK: invalid.mlir:[[# @LINE + 1]]:54: error: 'host' is given twice
"test.op"() {t = #target.target<"cuda", host = none, host = none>} : () -> ()

// -----

// The host is not an attribute.
// CHECK: invalid.mlir:[[# @LINE + 1]]:42: error: 'host' is written after the attributes: #target.target<"cuda", {...}, host = ...>
"test.op"() {t = #target.target<"cuda", {host = "llvm"}>} : () -> ()

// -----

// Neither is the tag.
// CHECK: invalid.mlir:[[# @LINE + 1]]:42: error: 'tag' is the first parameter of a target, e.g. #target.target<"cuda">
"test.op"() {t = #target.target<"cuda", {tag = "nvidia/nvidia-a100"}>} : () -> ()

// -----

// An attribute is given once.
// CHECK: invalid.mlir:[[# @LINE + 1]]:58: error: attribute 'arch' is given twice
"test.op"() {t = #target.target<"cuda", {arch = "sm_80", arch = "sm_86"}>} : () -> ()

// -----

// After the kind: attributes or a host.
// CHECK: invalid.mlir:[[# @LINE + 1]]:41: error: expected an attribute dictionary '{...}' or 'host = ...'
"test.op"() {t = #target.target<"cuda", 5>} : () -> ()

// -----

// The kind or tag is a string.
// CHECK: invalid.mlir:[[# @LINE + 1]]:33: error: expected the target kind or tag as a string, e.g. #target.target<"cuda">
"test.op"() {t = #target.target<cuda>} : () -> ()

// -----

// cuda: arch is sm_<version>.
// CHECK: invalid.mlir:[[# @LINE + 1]]:49: error: invalid CUDA arch 'compute_80' for target kind 'cuda': expected 'sm_' followed by the compute capability, e.g. 'sm_80'
"test.op"() {t = #target.target<"cuda", {arch = "compute_80"}>} : () -> ()

// -----

// nvptx: mcpu is sm_<version>.
// CHECK: invalid.mlir:[[# @LINE + 1]]:50: error: invalid CUDA arch 'gfx900' for target kind 'nvptx': expected 'sm_' followed by the compute capability, e.g. 'sm_80'
"test.op"() {t = #target.target<"nvptx", {mcpu = "gfx900"}>} : () -> ()

// -----

// nvptx: the triple is fixed.
// CHECK: invalid.mlir:[[# @LINE + 1]]:53: error: target kind 'nvptx' requires mtriple 'nvptx64-nvidia-cuda', got 'nvptx-nvidia-cuda'
"test.op"() {t = #target.target<"nvptx", {mtriple = "nvptx-nvidia-cuda"}>} : () -> ()

// -----

// rocm: mcpu is gfx<version>.
// CHECK: invalid.mlir:[[# @LINE + 1]]:49: error: invalid ROCm GFX version 'sm_80' for target kind 'rocm': expected 'gfx' followed by the GPU version, e.g. 'gfx900'
"test.op"() {t = #target.target<"rocm", {mcpu = "sm_80"}>} : () -> ()

// -----

// webgpu: a warp wider than 1 needs subgroups.
// CHECK: invalid.mlir:[[# @LINE + 1]]:63: error: a WebGPU target with thread_warp_size=32 requires supports_subgroups=true
"test.op"() {t = #target.target<"webgpu", {thread_warp_size = 32}>} : () -> ()

// -----

// A tag's checks apply to its overrides.
// CHECK: invalid.mlir:[[# @LINE + 1]]:63: error: invalid CUDA arch '80' for target kind 'cuda': expected 'sm_' followed by the compute capability, e.g. 'sm_80'
"test.op"() {t = #target.target<"nvidia/nvidia-a100", {arch = "80"}>} : () -> ()

// -----

// No hardware is queried.
// CHECK: invalid.mlir:[[# @LINE + 1]]:56: error: attribute 'from_device' would read attributes from a physical device, which devplan never queries so that targets mean the same on every machine; give the attributes explicitly
"test.op"() {t = #target.target<"cuda", {from_device = 0}>} : () -> ()

// -----

// target_device_type is a DLPack code.
// CHECK: invalid.mlir:[[# @LINE + 1]]:63: error: attribute 'target_device_type' must be a DLPack device type code, got 3; known codes: 1 (cpu), 2 (cuda), 4 (opencl), 7 (vulkan), 8 (metal), 10 (rocm), 12 (ext_dev), 15 (webgpu), 16 (hexagon)
"test.op"() {t = #target.target<"llvm", {target_device_type = 3}>} : () -> ()

// -----

// An error inside a nested target points into it.
// CHECK: invalid.mlir:[[# @LINE + 1]]:97: error: unknown target kind 'tpu'; known kinds: c, composite, cuda, ext_dev, hexagon, llvm, metal, nvptx, opencl, rocm, vulkan, webgpu
"test.op"() {t = #target.target<"composite", {devices = [#target.target<"cuda">, #target.target<"tpu">]}>} : () -> ()
