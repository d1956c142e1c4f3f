// Conflicting hard constraints: one error at the later constraint, a note at the other.
// RUN: not devplan-opt %s --split-input-file -p plan-devices 2>&1 | filecheck %s
// RUN: not devplan-opt %s --split-input-file -p 'plan-devices{specialize=false}' 2>&1 | filecheck %s --check-prefix=NOSPEC
// Exit status 1 and no traceback from the first case alone:
// RUN: not devplan-opt %s -p plan-devices 2>&1 | filecheck %s --check-prefix=STATUS
// STATUS: error: conflicting placement
// STATUS-NOT: Traceback

// An argument attribute against a {constrain_result} hint on that argument.
func.func @arg_vs_hint(%x: tensor<4xf32> {vdev.device = #vdev.device<"cpu">}) -> tensor<4xf32> {
  %h = vdev.on_device %x to #vdev.device<"cuda", 0> {constrain_result} : tensor<4xf32>
  func.return %h : tensor<4xf32>
}

// CHECK:      plan_devices_invalid.mlir:[[# @LINE - 4]]:3: error: conflicting placement: the 'vdev.on_device' hint places %x on #vdev.device<"cuda", 0>, but it is already placed on #vdev.device<"cpu">
// CHECK-NEXT: {{^}}  %h = vdev.on_device %x to
// CHECK-NEXT: {{^}}  ^
// CHECK-NEXT: plan_devices_invalid.mlir:[[# @LINE - 8]]:1: note: the vdev.device attribute of argument 0 of @arg_vs_hint places it on #vdev.device<"cpu">
// CHECK-NEXT: {{^}}func.func @arg_vs_hint

// -----

// Two {constrain_result} hints on one value to different devices.
func.func @two_hints(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = arith.negf %x : tensor<4xf32>
  %h1 = vdev.on_device %a to #vdev.device<"cpu"> {constrain_result} : tensor<4xf32>
  %h2 = vdev.on_device %a to #vdev.device<"cuda"> {constrain_result} : tensor<4xf32>
  func.return %h1, %h2 : tensor<4xf32>, tensor<4xf32>
}

// CHECK:      plan_devices_invalid.mlir:[[# @LINE - 4]]:3: error: conflicting placement: the 'vdev.on_device' hint places %a on #vdev.device<"cuda">, but it is already placed on #vdev.device<"cpu">
// CHECK:      plan_devices_invalid.mlir:[[# @LINE - 6]]:3: note: the 'vdev.on_device' hint places it on #vdev.device<"cpu">

// -----

// A call whose callee pins its parameter elsewhere than the caller pins the argument.
func.func @on_gpu(%p: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}) -> tensor<4xf32> {
  func.return %p : tensor<4xf32>
}
func.func @caller(%x: tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0>}) -> tensor<4xf32> {
  %r = func.call @on_gpu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// CHECK:      plan_devices_invalid.mlir:[[# @LINE - 4]]:3: error: conflicting placement: this call to @on_gpu places its argument 0 on #vdev.device<"cpu", 0> (by the vdev.device attribute of argument 0 of @caller at line [[# @LINE - 5]]), but @on_gpu's argument 0 is placed on #vdev.device<"cuda", 0>
// CHECK-NEXT: {{^}}  %r = func.call @on_gpu(%x)
// CHECK-NEXT: {{^}}  ^
// CHECK-NEXT: plan_devices_invalid.mlir:[[# @LINE - 11]]:1: note: the vdev.device attribute of argument 0 of @on_gpu places it on #vdev.device<"cuda", 0>

// -----

// A function called from two device contexts: specialised by default (no error),
// a conflict with specialize=false that names the cure.
func.func @sq(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.mulf %x, %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @two_contexts(%p: tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0>}, %q: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = func.call @sq(%p) : (tensor<4xf32>) -> tensor<4xf32>
  %s = func.call @sq(%q) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r, %s : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @sq_cuda0
// NOSPEC:      plan_devices_invalid.mlir:[[# @LINE - 5]]:3: error: conflicting placement: this call to @sq places its argument 0 on #vdev.device<"cuda", 0> (by the vdev.device attribute of argument 1 of @two_contexts at line [[# @LINE - 7]]), but @sq's argument 0 is placed on #vdev.device<"cpu", 0> by another call; plan-devices{specialize=true} would clone @sq for this call
// NOSPEC:      plan_devices_invalid.mlir:[[# @LINE - 8]]:1: note: the vdev.device attribute of argument 0 of @two_contexts places it on #vdev.device<"cpu", 0>

// -----

// A device type with no target anywhere: say where one can come from.
func.func @no_target(%x: tensor<4xf32> {vdev.device = #vdev.device<"dsp", 0>}) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// CHECK:      plan_devices_invalid.mlir:[[# @LINE - 4]]:1: error: no target for device type 'dsp': add one to the module's vdev.targets, describe the device in the system description (vdev.system), or write the target on the #vdev.device

// -----

// A copy's 'from' device against where its operand is pinned.
func.func @copy_from_elsewhere(%x: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}) -> tensor<4xf32> {
  %c = vdev.device_copy %x from #vdev.device<"cpu"> to #vdev.device<"cuda", 1> : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// CHECK:      plan_devices_invalid.mlir:[[# @LINE - 4]]:3: error: conflicting placement: the 'from' device of 'vdev.device_copy' places %x on #vdev.device<"cpu">, but it is already placed on #vdev.device<"cuda", 0>
// CHECK:      plan_devices_invalid.mlir:[[# @LINE - 6]]:1: note: the vdev.device attribute of argument 0 of @copy_from_elsewhere places it on #vdev.device<"cuda", 0>

// -----

// A hint on a scalar: scalars live on the host; the hint was silently dropped before.
func.func @scalar_hint(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  %t = vdev.on_device %s to #vdev.device<"cuda", 0> {constrain_result} : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%t : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  func.return %f : tensor<4xf32>
}

// CHECK:      plan_devices_invalid.mlir:[[# @LINE - 6]]:3: error: 'vdev.on_device' of f32: plan-devices places tensors; scalars live on the host device (place the tensor op that uses the scalar instead)

// -----

func.func @scalar_copy(%n: index) -> index {
  %m = vdev.device_copy %n from #vdev.device<"cpu", 0> to #vdev.device<"cuda", 0> : index
  func.return %m : index
}

// CHECK:      plan_devices_invalid.mlir:[[# @LINE - 4]]:3: error: 'vdev.device_copy' of index: plan-devices places tensors; scalars live on the host device (place the tensor op that uses the scalar instead)


// -----

// A scalar argument placed away from the host.
func.func @scalar_argument_on_gpu(%p: i1 {vdev.device = #vdev.device<"cuda", 0>}, %x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// CHECK:      plan_devices_invalid.mlir:[[# @LINE - 4]]:1: error: argument 0 of @scalar_argument_on_gpu is a scalar (i1) placed on #vdev.device<"cuda", 0>: scalars live on the host device #vdev.device<"cpu", 0, #target.target<"llvm">, "global">; remove the vdev.device attribute or place it there
