// RUN: not devplan-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: invalid.mlir:[[# @LINE + 1]]:31: error: invalid device type 'cu:da': expected an identifier such as 'cuda' (use ? for unconstrained)
"test.op"() {d = #vdev.device<"cu:da">} : () -> ()

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:45: error: invalid memory scope '': expected an identifier such as 'global' (use ? for unconstrained)
"test.op"() {d = #vdev.device<"cuda", 0, ?, "">} : () -> ()

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:39: error: invalid virtual id -1: expected 0 or more (? = unconstrained)
"test.op"() {d = #vdev.device<"cuda", -1>} : () -> ()

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:42: error: expected a #target.target or ? as the device's target, got "cuda"
"test.op"() {d = #vdev.device<"cuda", 0, "cuda">} : () -> ()

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:31: error: device type 'cpu' does not match the device type 'cuda' of target #target.target<"cuda">
"test.op"() {d = #vdev.device<"cpu", 0, #target.target<"cuda">>} : () -> ()

// -----

func.func @f(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vdev.on_device' places nothing: #vdev.device<?> is fully unconstrained (give at least a device type, or use {constrain_body = false} alone for the free form)
  %y = vdev.on_device %x to #vdev.device<?> : tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vdev.on_device' places nothing: #vdev.device<?> is fully unconstrained
  %y = vdev.on_device %x to #vdev.device<?> {constrain_result, constrain_body = false} : tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vdev.on_device' with neither constrain_body nor constrain_result is the free form, which places nothing; its device must be #vdev.device<?>, not #vdev.device<"cuda", 0>
  %y = vdev.on_device %x to #vdev.device<"cuda", 0> {constrain_body = false} : tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vdev.on_device' result type tensor<8xf32> differs from operand type tensor<4xf32>; placement never changes a value's type
  %y = "vdev.on_device"(%x) <{device = #vdev.device<"cuda", 0>}> : (tensor<4xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:29: error: expected a #vdev.device after 'to', got "cuda"
  %y = vdev.on_device %x to "cuda" : tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vdev.on_device' constrain_body must be true or false, got 1 : i32
  %y = vdev.on_device %x to #vdev.device<"cuda", 0> {constrain_body = 1 : i32} : tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vdev.on_device' constrain_result is a flag: write {constrain_result}, not constrain_result = true
  %y = vdev.on_device %x to #vdev.device<"cuda", 0> {constrain_result = true} : tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vdev.device_copy' 'from' device #vdev.device<?, 0> must name at least a device type, e.g. #vdev.device<"cuda", 0>
  %y = vdev.device_copy %x from #vdev.device<?, 0> to #vdev.device<"cuda", 0> : tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vdev.device_copy' 'to' device #vdev.device<?> must name at least a device type, e.g. #vdev.device<"cuda", 0>
  %y = vdev.device_copy %x from #vdev.device<"cpu"> to #vdev.device<?> : tensor<4xf32>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vdev.device_copy' result type tensor<4xf16> differs from operand type tensor<4xf32>; placement never changes a value's type
  %y = "vdev.device_copy"(%x) <{src_device = #vdev.device<"cpu">, dst_device = #vdev.device<"cuda">}> : (tensor<4xf32>) -> tensor<4xf16>
  func.return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:33: error: expected a #vdev.device after 'from', got 3 : i64
  %y = vdev.device_copy %x from 3 to #vdev.device<"cuda", 0> : tensor<4xf32>
  func.return
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: unknown attribute 'vdev.host' (valid: vdev.device, vdev.host_device, vdev.default_device, vdev.targets, vdev.system)
builtin.module attributes {vdev.host = #vdev.device<"cpu", 0>} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'vdev.host_device' must be a #vdev.device, got "cpu"
builtin.module attributes {vdev.host_device = "cpu"} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'vdev.host_device' #vdev.device<?, 0> must name a device type
builtin.module attributes {vdev.host_device = #vdev.device<?, 0>} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'vdev.host_device' #vdev.device<"cuda", 0> is a 'cuda' device, which cannot run host code (host device types: cpu, hexagon); name a host device such as #vdev.device<"cpu", 0>
builtin.module attributes {vdev.host_device = #vdev.device<"cuda", 0>} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'vdev.host_device' #vdev.device<"cpu", 0, #target.target<"composite">> has target kind 'composite', which cannot compile host code (host-capable kinds: c, hexagon, llvm)
builtin.module attributes {vdev.host_device = #vdev.device<"cpu", 0, #target.target<"composite">>} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'vdev.default_device' must be a #vdev.device, got 0 : i64
builtin.module attributes {vdev.default_device = 0} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'vdev.targets' must be an array of #target.target, got #target.target<"cuda">
builtin.module attributes {vdev.targets = #target.target<"cuda">} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'vdev.targets' must hold only #target.target, got "cuda"
builtin.module attributes {vdev.targets = [#target.target<"llvm">, "cuda"]} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'vdev.targets' has two targets for device type 'cuda': #target.target<"cuda"> and #target.target<"cuda", {arch = "sm_80"}> (at most one target per device type)
builtin.module attributes {vdev.targets = [#target.target<"cuda">, #target.target<"llvm">, #target.target<"cuda", {arch = "sm_80"}>]} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'vdev.system' must be a string (TOML text or a .toml path), got 1 : i64
builtin.module attributes {vdev.system = 1} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: cannot read system description '{{.*}}/no-such-dir/sys.toml': No such file or directory
builtin.module attributes {vdev.system = "no-such-dir/sys.toml"} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'vdev.host_device' is a module attribute; put it on the builtin.module
func.func @f() attributes {vdev.host_device = #vdev.device<"cpu", 0>} {
  func.return
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'vdev.device' of argument 1 must be a #vdev.device, got "cuda"
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32> {vdev.device = "cuda"}) {
  func.return
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'vdev.device' of result 0 must be a #vdev.device, got #target.target<"cuda">
func.func @f(%a: tensor<4xf32>) -> (tensor<4xf32> {vdev.device = #target.target<"cuda">}) {
  func.return %a : tensor<4xf32>
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: unknown argument attribute 'vdev.devices' of argument 0 (valid: vdev.device)
func.func @f(%a: tensor<4xf32> {vdev.devices = #vdev.device<"cpu">}) {
  func.return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vdev.device' must be a #vdev.device, got "cpu"
  %b = "test.op"(%a) {vdev.device = "cpu"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'func.func' memory space 1 : i64 of memref<4xf32, 1 : i64> is not a #vdev.device; a memref lives in host memory (no memory space) or on a device (a #vdev.device memory space such as #vdev.device<"cuda", 0>)
func.func @f(%a: memref<4xf32, 1 : i64>) {
  func.return
}

// -----

// A declaration has no block arguments: its function type names the memref.
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'func.func' memory space "gpu" of memref<4xf32, "gpu"> is not a #vdev.device
func.func private @g() -> memref<4xf32, "gpu">

// -----

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'test.op' memory space 1 : i64 of memref<4xf32, 1 : i64> is not a #vdev.device; a memref lives in host memory
  %m = "test.op"() : () -> memref<4xf32, 1 : i64>
  func.return
}

// -----

func.func @f(%h: memref<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.alloc' memory space "gpu" of memref<4xf32, "gpu"> is not a #vdev.device; a memref lives in host memory
  %d = device.alloc() : memref<4xf32, "gpu">
  device.copy %h to %d : memref<4xf32> to memref<4xf32, "gpu">
  func.return
}
