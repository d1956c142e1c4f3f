// RUN: DEVPLAN_ROUNDTRIP
// #vdev.device prints in its shortest form: trailing ? fields are omitted, and a target
// stores the device type it implies.

// CHECK-LABEL: "test.op"() {
// CHECK-SAME: full = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">
// CHECK-SAME: short = #vdev.device<"cuda", 0>
// CHECK-SAME: holes = #vdev.device<"cpu", ?, ?, "global">
// CHECK-SAME: open = #vdev.device<?>
// CHECK-SAME: trailing = #vdev.device<"cuda", 1>
// CHECK-SAME: scope_only = #vdev.device<?, ?, ?, "shared">
// CHECK-SAME: derived = #vdev.device<"cuda", 2, #target.target<"cuda">>
// CHECK-SAME: derived_cpu = #vdev.device<"cpu", ?, #target.target<"llvm">>
// CHECK-SAME: texture = #vdev.device<"opencl", 0, ?, "global.texture">
// CHECK-SAME: user = #vdev.device<"dsp", 3, ?, "vtcm">
"test.op"() {
  full = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">,
  short = #vdev.device<"cuda", 0>,
  holes = #vdev.device<"cpu", ?, ?, "global">,
  open = #vdev.device<?>,
  trailing = #vdev.device<"cuda", 1, ?, ?>,
  scope_only = #vdev.device<?, ?, ?, "shared">,
  derived = #vdev.device<?, 2, #target.target<"cuda">>,
  derived_cpu = #vdev.device<?, ?, #target.target<"llvm">>,
  texture = #vdev.device<"opencl", 0, ?, "global.texture">,
  user = #vdev.device<"dsp", 3, ?, "vtcm">
} : () -> ()

// -----

// A #vdev.device is a memref memory space.
// CHECK-LABEL: func.func @spaces
// CHECK-SAME: (%a: memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>,
// CHECK-SAME: %b: memref<?x4xf32, #vdev.device<"cuda", 1, #target.target<"cuda">, "host">>,
// CHECK-SAME: %c: memref<8xi32, #vdev.device<?, ?, ?, "shared">>,
// CHECK-SAME: %d: memref<8xi32>)
func.func @spaces(%a: memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>,
                  %b: memref<?x4xf32, #vdev.device<?, 1, #target.target<"cuda">, "host">>,
                  %c: memref<8xi32, #vdev.device<?, ?, ?, "shared">>,
                  %d: memref<8xi32>) {
  func.return
}

// -----

// Placement attributes on modules, functions and ops.
// CHECK: builtin.module attributes {
// CHECK-SAME: vdev.host_device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">
// CHECK-SAME: vdev.default_device = #vdev.device<"cuda", 0>
// CHECK-SAME: vdev.targets = [#target.target<"cuda">, #target.target<"llvm">]
builtin.module attributes {
  vdev.host_device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">,
  vdev.default_device = #vdev.device<"cuda", 0>,
  vdev.targets = [#target.target<"cuda">, #target.target<"llvm">]
} {
  // CHECK: func.func @f(%a: tensor<4xf32> {vdev.device = #vdev.device<"cpu">}) -> (tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>})
  func.func @f(%a: tensor<4xf32> {vdev.device = #vdev.device<"cpu">}) -> (tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}) {
    // CHECK: "test.op"(%a) {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}
    %b = "test.op"(%a) {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : (tensor<4xf32>) -> tensor<4xf32>
    func.return %b : tensor<4xf32>
  }
}

// -----

// A module may carry its own system description, or name its file (relative to the IR file).
// CHECK: builtin.module attributes {vdev.system = "inputs/sys.toml"}
builtin.module attributes {vdev.system = "inputs/sys.toml"} {
}
