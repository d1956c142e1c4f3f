// RUN: devplan-opt %s --split-input-file -p plan-devices | filecheck %s
// Idempotence: planning the planned output changes nothing.
// RUN: devplan-opt %s --split-input-file -p plan-devices -o %t.once.mlir
// RUN: devplan-opt %t.once.mlir --split-input-file -p plan-devices -o %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// The same through plain xdsl-opt (devplan's passes are in xDSL's universe). It prints
// generic form: its own tensor.empty would drop the placement in custom form.
// RUN: xdsl-opt %s --split-input-file -p plan-devices --print-op-generic | devplan-opt --split-input-file | filecheck %s
// RUN: devplan-opt %s --split-input-file -p plan-devices --print-op-generic | filecheck %s --check-prefix=GENERIC
// Remarks say what decided each argument and each copy:
// RUN: devplan-opt %s --split-input-file -p 'plan-devices{explain=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=EXPLAIN

// Devices in the checks: [[CPU]] is the host device (cpu:0 with its llvm target),
// [[GPU]] the default device of most cases (cuda:0, its target from vdev.targets).

// No hints: everything on the default device.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @plain(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.addf %x, %y : tensor<4xf32>
    %b = arith.subf %a, %z : tensor<4xf32>
    func.return %b : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @plain(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[GPU:#vdev.device<"cuda", 0, #target.target<"cuda">, "global">]]}, %y: tensor<4xf32> {vdev.device = [[GPU]]}, %z: tensor<4xf32> {vdev.device = [[GPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  %b = arith.subf %a, %z {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %b : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// Left add on the CPU (TVM's normal on_device): %a is computed on the CPU, its result
// may be used elsewhere, so one copy to the default device follows its definition.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @left_add_on_cpu(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.addf %x, %y : tensor<4xf32>
    %h = vdev.on_device %a to #vdev.device<"cpu"> : tensor<4xf32>
    %b = arith.subf %h, %z : tensor<4xf32>
    func.return %b : tensor<4xf32>
  }
}

// EXPLAIN:      plan_devices.mlir:[[# @LINE - 8]]:3: remark: argument 0 of @left_add_on_cpu is on cpu:0/global: decided by the 'vdev.on_device' hint at line [[# @LINE - 6]], through dataflow: %x is operand 0 of 'arith.addf' at line [[# @LINE - 7]] (id, target and scope by default)
// EXPLAIN:      plan_devices.mlir:[[# @LINE - 9]]:3: remark: argument 2 of @left_add_on_cpu is on cuda:0/global: nothing constrains it, so it goes to vdev.default_device
// Every op that yields tensors says what decided its device; a copy follows the op it serves:
// EXPLAIN:      plan_devices.mlir:[[# @LINE - 10]]:5: remark: 'arith.addf' (%a) is on cpu:0/global: decided by the 'vdev.on_device' hint at line [[# @LINE - 9]] (id, target and scope by default)
// EXPLAIN:      plan_devices.mlir:[[# @LINE - 9]]:5: remark: 'arith.subf' (%b) is on cuda:0/global: nothing constrains it, so it goes to vdev.default_device
// EXPLAIN:      plan_devices.mlir:[[# @LINE - 10]]:5: remark: copy of %a from cpu:0/global to cuda:0/global for 'arith.subf': %a is on cpu:0/global, decided by the 'vdev.on_device' hint at line [[# @LINE - 11]] (id, target and scope by default); this use is on cuda:0/global, nothing constrains it, so it goes to vdev.default_device
// EXPLAIN-NEXT: {{^}}    %b = arith.subf %h, %z
// CHECK-LABEL: func.func @left_add_on_cpu(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU:#vdev.device<"cpu", 0, #target.target<"llvm">, "global">]]}, %y: tensor<4xf32> {vdev.device = [[CPU]]}, %z: tensor<4xf32> {vdev.device = [[GPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %0 = vdev.device_copy %a from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %b = arith.subf %0, %z {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %b : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// The same with an explicit copy: its endpoints are completed, no second copy appears.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @left_add_on_cpu_via_copy(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.addf %x, %y : tensor<4xf32>
    %c = vdev.device_copy %a from #vdev.device<"cpu"> to #vdev.device<"cuda"> : tensor<4xf32>
    %b = arith.subf %c, %z : tensor<4xf32>
    func.return %b : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @left_add_on_cpu_via_copy(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[CPU]]}, %z: tensor<4xf32> {vdev.device = [[GPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %c = vdev.device_copy %a from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %b = arith.subf %c, %z {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %b : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// Both adds on the CPU, the subtraction on the default device: one copy each.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @both_adds_on_cpu(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.addf %x, %y : tensor<4xf32>
    %ha = vdev.on_device %a to #vdev.device<"cpu"> : tensor<4xf32>
    %b = arith.addf %z, %w : tensor<4xf32>
    %hb = vdev.on_device %b to #vdev.device<"cpu"> : tensor<4xf32>
    %c = arith.subf %ha, %hb : tensor<4xf32>
    func.return %c : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @both_adds_on_cpu(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[CPU]]}, %z: tensor<4xf32> {vdev.device = [[CPU]]}, %w: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %0 = vdev.device_copy %a from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %b = arith.addf %z, %w {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %1 = vdev.device_copy %b from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %c = arith.subf %0, %1 {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %c : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// Sharing: a CPU value used twice on the GPU is copied once (TVM copies per use).
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @sharing(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.addf %x, %y : tensor<4xf32>
    %h = vdev.on_device %a to #vdev.device<"cpu"> : tensor<4xf32>
    %b = arith.subf %h, %h : tensor<4xf32>
    %c = arith.mulf %h, %b : tensor<4xf32>
    func.return %c : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @sharing(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %0 = vdev.device_copy %a from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %b = arith.subf %0, %0 {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  %c = arith.mulf %0, %b {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %c : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A function parameter on the CPU: the parameter stays there, its user runs where
// the parameter lives (its first placed operand) and the rest flows from there.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @param_on_cpu(%x: tensor<4xf32> {vdev.device = #vdev.device<"cpu">}, %y: tensor<4xf32>, %z: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}) -> tensor<4xf32> {
    %a = arith.addf %x, %y : tensor<4xf32>
    %b = arith.subf %z, %a : tensor<4xf32>
    func.return %b : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @param_on_cpu(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[CPU]]}, %z: tensor<4xf32> {vdev.device = [[GPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %0 = vdev.device_copy %a from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %b = arith.subf %z, %0 {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %b : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A function result on the CPU: the computation returning it runs there.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @result_on_cpu(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> (tensor<4xf32> {vdev.device = #vdev.device<"cpu">}) {
    %a = arith.addf %x, %y : tensor<4xf32>
    %ha = vdev.on_device %a to #vdev.device<"cuda"> : tensor<4xf32>
    %b = arith.subf %ha, %z : tensor<4xf32>
    func.return %b : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @result_on_cpu(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[GPU]]}, %y: tensor<4xf32> {vdev.device = [[GPU]]}, %z: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  %0 = vdev.device_copy %a from [[GPU]] to [[CPU]] : tensor<4xf32>
// CHECK-NEXT:  %b = arith.subf %0, %z {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %b : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A device copy and a constant: the constant is made on the device that uses it.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @copy_and_constant(%x: tensor<4xf32> {vdev.device = #vdev.device<"cpu">}) -> tensor<4xf32> {
    %c = vdev.device_copy %x from #vdev.device<"cpu"> to #vdev.device<"cuda", 0> : tensor<4xf32>
    %k = arith.constant dense<2.0> : tensor<4xf32>
    %a = arith.mulf %c, %k : tensor<4xf32>
    func.return %a : tensor<4xf32>
  }
}

// EXPLAIN:      plan_devices.mlir:[[# @LINE - 7]]:5: remark: 'vdev.device_copy' (%c) is on cuda:0/global: decided by the 'to' device of 'vdev.device_copy' at line [[# @LINE - 7]] (target and scope by default)
// EXPLAIN:      plan_devices.mlir:[[# @LINE - 7]]:5: remark: 'arith.constant' (%k) is on cuda:0/global: a dense constant is made on each device that uses it; this one where its first use runs, 'arith.mulf' at line [[# @LINE - 6]]
// EXPLAIN:      plan_devices.mlir:[[# @LINE - 7]]:5: remark: 'arith.mulf' (%a) is on cuda:0/global: decided by the 'to' device of 'vdev.device_copy' at line [[# @LINE - 9]], through dataflow: %c is operand 0 of 'arith.mulf' at line [[# @LINE - 7]] (target and scope by default)
// CHECK-LABEL: func.func @copy_and_constant(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %c = vdev.device_copy %x from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %k = arith.constant {vdev.device = [[GPU]]} dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:  %a = arith.mulf %c, %k {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %a : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A constant used on two devices is cloned, never copied.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @constant_on_two_devices(%x: tensor<4xf32> {vdev.device = #vdev.device<"cpu">}, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %k = arith.constant dense<2.0> : tensor<4xf32>
    %a = arith.mulf %k, %x : tensor<4xf32>
    %b = arith.mulf %k, %y : tensor<4xf32>
    %c = arith.addf %k, %y : tensor<4xf32>
    func.return %a, %b : tensor<4xf32>, tensor<4xf32>
  }
}

// EXPLAIN:      plan_devices.mlir:[[# @LINE - 8]]:5: remark: 'arith.constant' (%k) is on cuda:0/global: a clone of the dense constant for its use by 'arith.mulf' at line [[# @LINE - 6]], which runs there (a constant is made where it is used, not copied)
// CHECK-LABEL: func.func @constant_on_two_devices(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[GPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}, tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %k = arith.constant {vdev.device = [[CPU]]} dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:  %k_1 = arith.constant {vdev.device = [[GPU]]} dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:  %a = arith.mulf %k, %x {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %b = arith.mulf %k_1, %y {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  %c = arith.addf %k_1, %y {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %a, %b : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:  }

// -----

// Dynamic shapes: sizes are scalars on the host; tensor.empty and linalg ops placed.
// (xDSL 0.74 prints tensor.empty without its attribute dictionary; devplan restores
// MLIR's syntax, upstream/tensor.py. GENERIC checks the generic form too.)
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @dynamic(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %m: index, %n: index) -> tensor<?x?xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty(%m, %n) : tensor<?x?xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
    %p = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
    %h = vdev.on_device %p to #vdev.device<"cpu"> {constrain_result} : tensor<?x?xf32>
    func.return %h : tensor<?x?xf32>
  }
}

// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME:  %a: tensor<?x?xf32> {vdev.device = [[CPU]]}, %b: tensor<?x?xf32> {vdev.device = [[CPU]]}, %m: index {vdev.device = [[CPU]]}, %n: index {vdev.device = [[CPU]]}) -> (tensor<?x?xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  %e = tensor.empty(%m, %n) {vdev.device = [[CPU]]} : tensor<?x?xf32>
// GENERIC:      "tensor.empty"(%{{.*}}, %{{.*}}) {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : (index, index) -> tensor<?x?xf32>
// CHECK-NEXT:  %f = linalg.fill {vdev.device = [[CPU]]} ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:  %p = linalg.matmul {vdev.device = [[CPU]]} ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:  func.return %p : tensor<?x?xf32>
// CHECK-NEXT:  }

// -----

// Redundant annotations: the same hint twice on one value changes nothing, and its
// two uses on the GPU share one copy (TVM copies per use).
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @redundant(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.addf %x, %y : tensor<4xf32>
    %h1 = vdev.on_device %a to #vdev.device<"cpu"> : tensor<4xf32>
    %h2 = vdev.on_device %a to #vdev.device<"cpu"> : tensor<4xf32>
    %b = arith.subf %h2, %h1 : tensor<4xf32>
    %hb = vdev.on_device %b to #vdev.device<"cuda", 0> : tensor<4xf32>
    func.return %hb : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @redundant(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %0 = vdev.device_copy %a from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %b = arith.subf %0, %0 {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %b : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// Annotating an expression with {constrain_result}: its users run there too.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @annotate_expr(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.addf %x, %y : tensor<4xf32>
    %h = vdev.on_device %a to #vdev.device<"cpu"> {constrain_result} : tensor<4xf32>
    %b = arith.subf %h, %z : tensor<4xf32>
    func.return %b : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @annotate_expr(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[CPU]]}, %z: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %b = arith.subf %a, %z {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %b : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// Annotating everything: exactly the copies the annotations imply.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @annotate_all(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.addf %x, %y : tensor<4xf32>
    %ha = vdev.on_device %a to #vdev.device<"cpu"> {constrain_result} : tensor<4xf32>
    %b = arith.addf %ha, %z : tensor<4xf32>
    %hb = vdev.on_device %b to #vdev.device<"cpu"> {constrain_result} : tensor<4xf32>
    %c = arith.subf %hb, %ha : tensor<4xf32>
    %hc = vdev.on_device %c to #vdev.device<"cuda", 0> {constrain_result} : tensor<4xf32>
    func.return %hc : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @annotate_all(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[CPU]]}, %z: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %0 = vdev.device_copy %a from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %b = arith.addf %a, %z {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %1 = vdev.device_copy %b from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %c = arith.subf %1, %0 {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %c : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A hint propagates through a chain of unhinted ops, backwards and forwards.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @negations(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = math.absf %x : tensor<4xf32>
    %b = arith.negf %a : tensor<4xf32>
    %h = vdev.on_device %b to #vdev.device<"cpu"> {constrain_result} : tensor<4xf32>
    %c = arith.negf %h : tensor<4xf32>
    %d = arith.negf %c : tensor<4xf32>
    func.return %d : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @negations(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %a = math.absf %x {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %b = arith.negf %a {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %c = arith.negf %b {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %d = arith.negf %c {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %d : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// An unpropagatable graph: two hinted halves meet at a subtraction, which runs where
// its first operand lives; the other operand is copied.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @unpropagatable(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.addf %x, %y : tensor<4xf32>
    %ha = vdev.on_device %a to #vdev.device<"cpu"> {constrain_result} : tensor<4xf32>
    %b = arith.mulf %z, %w : tensor<4xf32>
    %hb = vdev.on_device %b to #vdev.device<"cuda", 0> {constrain_result} : tensor<4xf32>
    %c = arith.subf %ha, %hb : tensor<4xf32>
    func.return %c : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @unpropagatable(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[CPU]]}, %z: tensor<4xf32> {vdev.device = [[GPU]]}, %w: tensor<4xf32> {vdev.device = [[GPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %b = arith.mulf %z, %w {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  %0 = vdev.device_copy %b from [[GPU]] to [[CPU]] : tensor<4xf32>
// CHECK-NEXT:  %c = arith.subf %a, %0 {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %c : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A global function with a parameter pinned to the CPU: the caller computes the
// argument there (a call's operands unify with the callee's parameters).
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @callee(%p: tensor<4xf32> {vdev.device = #vdev.device<"cpu">}, %q: tensor<4xf32>) -> tensor<4xf32> {
    %r = arith.addf %p, %q : tensor<4xf32>
    func.return %r : tensor<4xf32>
  }
  func.func @caller(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.mulf %x, %y : tensor<4xf32>
    %b = arith.negf %y : tensor<4xf32>
    %r = func.call @callee(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = arith.subf %r, %b : tensor<4xf32>
    func.return %s : tensor<4xf32>
  }
}

// EXPLAIN:      plan_devices.mlir:[[# @LINE - 8]]:5: remark: 'arith.mulf' (%a) is on cpu:0/global: decided by the vdev.device attribute of argument 0 of @callee at line [[# @LINE - 13]], through the call to @callee at line [[# @LINE - 6]] (argument 0) (id, target and scope by default)
// CHECK-LABEL: func.func @callee(
// CHECK-SAME:  %p: tensor<4xf32> {vdev.device = [[CPU]]}, %q: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %r = arith.addf %p, %q {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %r : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @caller(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %a = arith.mulf %x, %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %b = arith.negf %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %r = func.call @callee(%a, %b) {vdev.device = [[[CPU]]]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:  %s = arith.subf %r, %b {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %s : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A free value consumed on the CPU and on the GPU (TVM issue 15019) lives where its
// first consumer in program order runs and is copied to the other.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @shared_by_cpu_and_gpu(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.addf %x, %y : tensor<4xf32>
    %b = arith.mulf %a, %z : tensor<4xf32>
    %hb = vdev.on_device %b to #vdev.device<"cpu"> : tensor<4xf32>
    %c = arith.subf %a, %z : tensor<4xf32>
    %hc = vdev.on_device %c to #vdev.device<"cuda", 0> : tensor<4xf32>
    %d = arith.addf %hb, %hc : tensor<4xf32>
    func.return %d : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @shared_by_cpu_and_gpu(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[CPU]]}, %z: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %0 = vdev.device_copy %z from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %1 = vdev.device_copy %a from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %b = arith.mulf %a, %z {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %2 = vdev.device_copy %b from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %c = arith.subf %1, %0 {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  %d = arith.addf %2, %c {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %d : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// An if with a pinned branch: the result lives where the first yield puts it; the
// other branch's value is copied inside its branch; the condition is a host scalar.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @if_pinned_branch(%c: i1, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %r = scf.if %c -> (tensor<4xf32>) {
      %a = arith.addf %x, %y : tensor<4xf32>
      %h = vdev.on_device %a to #vdev.device<"cpu"> {constrain_result} : tensor<4xf32>
      scf.yield %h : tensor<4xf32>
    } else {
      %b = arith.mulf %x, %y : tensor<4xf32>
      %hb = vdev.on_device %b to #vdev.device<"cuda", 0> {constrain_result} : tensor<4xf32>
      scf.yield %hb : tensor<4xf32>
    }
    func.return %r : tensor<4xf32>
  }
}

// EXPLAIN:      plan_devices.mlir:[[# @LINE - 13]]:5: remark: result 0 (%r) of 'scf.if' is on cpu:0/global: decided by the 'vdev.on_device' hint at line [[# @LINE - 11]], through control flow: %h is yielded at line [[# @LINE - 10]] as result 0 of the 'scf.if' at line [[# @LINE - 13]] (id, target and scope by default)
// CHECK-LABEL: func.func @if_pinned_branch(
// CHECK-SAME:  %c: i1 {vdev.device = [[CPU]]}, %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %0 = vdev.device_copy %x from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %1 = vdev.device_copy %y from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %r = scf.if %c -> (tensor<4xf32>) {
// CHECK-NEXT:  %a = arith.addf %x, %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  scf.yield %a : tensor<4xf32>
// CHECK-NEXT:  } else {
// CHECK-NEXT:  %b = arith.mulf %0, %1 {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  %2 = vdev.device_copy %b from [[GPU]] to [[CPU]] : tensor<4xf32>
// CHECK-NEXT:  scf.yield %2 : tensor<4xf32>
// CHECK-NEXT:  }{vdev.device = [[[CPU]]]}
// CHECK-NEXT:  func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A for loop whose carried value is pinned inside the body: init, block argument,
// yield and result share the pinned device; the init value is copied once before
// the loop (the body is planned before the loop's own operands).
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @for_pinned_carry(%x: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}, %n: index) -> tensor<4xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<4xf32>) {
      %s = arith.addf %acc, %acc : tensor<4xf32>
      %h = vdev.on_device %s to #vdev.device<"cpu"> {constrain_result} : tensor<4xf32>
      scf.yield %h : tensor<4xf32>
    }
    func.return %r : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @for_pinned_carry(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[GPU]]}, %n: index {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %0 = vdev.device_copy %x from [[GPU]] to [[CPU]] : tensor<4xf32>
// CHECK-NEXT:  %c0 = arith.constant 0 : index
// CHECK-NEXT:  %c1 = arith.constant 1 : index
// CHECK-NEXT:  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %0) -> (tensor<4xf32>) {
// CHECK-NEXT:  %s = arith.addf %acc, %acc {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  scf.yield %s : tensor<4xf32>
// CHECK-NEXT:  } {vdev.device = [[[CPU]]]}
// CHECK-NEXT:  func.return %r : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A scope change on one device is a copy too (global <-> global.texture on opencl:0).
builtin.module attributes {vdev.default_device = #vdev.device<"opencl", 0>} {
  func.func @scope_change(%x: tensor<4xf32> {vdev.device = #vdev.device<"opencl", 0, ?, "global">}) -> tensor<4xf32> {
    %a = arith.negf %x : tensor<4xf32>
    %t = vdev.on_device %a to #vdev.device<"opencl", 0, ?, "global.texture"> : tensor<4xf32>
    %c = arith.addf %x, %t : tensor<4xf32>
    func.return %c : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @scope_change(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = #vdev.device<"opencl", 0, #target.target<"opencl">, "global">}) -> (tensor<4xf32> {vdev.device = #vdev.device<"opencl", 0, #target.target<"opencl">, "global">}) {
// CHECK-NEXT:  %0 = vdev.device_copy %x from #vdev.device<"opencl", 0, #target.target<"opencl">, "global"> to #vdev.device<"opencl", 0, #target.target<"opencl">, "global.texture"> : tensor<4xf32>
// CHECK-NEXT:  %a = arith.negf %0 {vdev.device = #vdev.device<"opencl", 0, #target.target<"opencl">, "global.texture">} : tensor<4xf32>
// CHECK-NEXT:  %1 = vdev.device_copy %a from #vdev.device<"opencl", 0, #target.target<"opencl">, "global.texture"> to #vdev.device<"opencl", 0, #target.target<"opencl">, "global"> : tensor<4xf32>
// CHECK-NEXT:  %c = arith.addf %x, %1 {vdev.device = #vdev.device<"opencl", 0, #target.target<"opencl">, "global">} : tensor<4xf32>
// CHECK-NEXT:  func.return %c : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// Targets: vdev.targets first (cuda), then the system description (here the module's
// own, for rocm), then the registered kind named like the device type (metal).
builtin.module attributes {vdev.targets = [#target.target<"cuda", {arch = "sm_90"}>], vdev.system = "[[device]]\ntype = \"cpu\"\nid = 0\ntarget = { kind = \"llvm\" }\napi = \"cpu\"\nscopes = { global = \"1 GiB\" }\n[[device]]\ntype = \"rocm\"\nid = 0\ntarget = { kind = \"rocm\", mcpu = \"gfx90a\" }\napi = \"simulated\"\nscopes = { global = \"1 GiB\" }\n"} {
  func.func @targets(%x: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}, %y: tensor<4xf32> {vdev.device = #vdev.device<"rocm">}, %z: tensor<4xf32> {vdev.device = #vdev.device<"metal", 1>}) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @targets(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda", {arch = "sm_90"}>, "global">}, %y: tensor<4xf32> {vdev.device = #vdev.device<"rocm", 0, #target.target<"rocm", {mcpu = "gfx90a"}>, "global">}, %z: tensor<4xf32> {vdev.device = #vdev.device<"metal", 1, #target.target<"metal">, "global">}) -> (tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda", {arch = "sm_90"}>, "global">}) {
// CHECK-NEXT:  func.return %x : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A function called with arguments pinned to two devices is specialised for the
// second context; the first keeps the original.
builtin.module attributes {vdev.targets = [#target.target<"cuda">]} {
  func.func @sq(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = arith.mulf %x, %x : tensor<4xf32>
    func.return %y : tensor<4xf32>
  }
  func.func @main(%p: tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0>}, %q: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}) -> (tensor<4xf32>, tensor<4xf32>) {
    %r = func.call @sq(%p) : (tensor<4xf32>) -> tensor<4xf32>
    %s = func.call @sq(%q) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r, %s : tensor<4xf32>, tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @sq(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %y = arith.mulf %x, %x {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %y : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @sq_cuda0(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[GPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %y = arith.mulf %x, %x {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %y : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @main(
// CHECK-SAME:  %p: tensor<4xf32> {vdev.device = [[CPU]]}, %q: tensor<4xf32> {vdev.device = [[GPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}, tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %r = func.call @sq(%p) {vdev.device = [[[CPU]]]} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:  %s = func.call @sq_cuda0(%q) {vdev.device = [[[GPU]]]} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:  func.return %r, %s : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A planned op keeps its vdev.device; a multi-result call gets one device per result.
builtin.module attributes {vdev.targets = [#target.target<"cuda">]} {
  func.func @pair(%x: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}, %n: index) -> (tensor<4xf32>, index, tensor<4xf32>) {
    %y = arith.negf %x : tensor<4xf32>
    func.return %x, %n, %y : tensor<4xf32>, index, tensor<4xf32>
  }
  func.func @use_pair(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
    %a, %b, %c = func.call @pair(%x, %n) : (tensor<4xf32>, index) -> (tensor<4xf32>, index, tensor<4xf32>)
    %d = arith.addf %a, %c {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<4xf32>
    func.return %d : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @pair(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[GPU]]}, %n: index {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}, index, tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %y = arith.negf %x {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %x, %n, %y : tensor<4xf32>, index, tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @use_pair(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[GPU]]}, %n: index {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %a, %b, %c = func.call @pair(%x, %n) {vdev.device = [[[GPU]], [[CPU]], [[GPU]]]} : (tensor<4xf32>, index) -> (tensor<4xf32>, index, tensor<4xf32>)
// CHECK-NEXT:  %0 = vdev.device_copy %a from [[GPU]] to [[CPU]] : tensor<4xf32>
// CHECK-NEXT:  %1 = vdev.device_copy %c from [[GPU]] to [[CPU]] : tensor<4xf32>
// CHECK-NEXT:  %d = arith.addf %0, %1 {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %d : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// Specialisation through a call chain: @mid is called on the CPU and on cuda:0, so
// @mid and the @sq it calls get cuda:0 clones; the third call reuses @mid_cuda0.
builtin.module attributes {vdev.targets = [#target.target<"cuda">]} {
  func.func @sq(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = arith.mulf %x, %x : tensor<4xf32>
    func.return %y : tensor<4xf32>
  }
  func.func @mid(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = func.call @sq(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %z = arith.negf %y : tensor<4xf32>
    func.return %z : tensor<4xf32>
  }
  func.func @main(%p: tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0>}, %q: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}) -> (tensor<4xf32>, tensor<4xf32>) {
    %r = func.call @mid(%p) : (tensor<4xf32>) -> tensor<4xf32>
    %s = func.call @mid(%q) : (tensor<4xf32>) -> tensor<4xf32>
    %t = func.call @mid(%q) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %r, %t : tensor<4xf32>, tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @sq(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %y = arith.mulf %x, %x {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %y : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @sq_cuda0(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[GPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %y = arith.mulf %x, %x {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %y : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @mid(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %y = func.call @sq(%x) {vdev.device = [[[CPU]]]} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:  %z = arith.negf %y {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %z : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @mid_cuda0(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[GPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %y = func.call @sq_cuda0(%x) {vdev.device = [[[GPU]]]} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:  %z = arith.negf %y {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %z : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @main(
// CHECK-SAME:  %p: tensor<4xf32> {vdev.device = [[CPU]]}, %q: tensor<4xf32> {vdev.device = [[GPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}, tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %r = func.call @mid(%p) {vdev.device = [[[CPU]]]} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:  %s = func.call @mid_cuda0(%q) {vdev.device = [[[GPU]]]} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:  %t = func.call @mid_cuda0(%q) {vdev.device = [[[GPU]]]} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:  func.return %r, %t : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A clone serves one context: a call that disagrees with the clone it was sent to in an
// earlier round gets its own clone, named for every device it pins (@add_cuda0_cuda1),
// not the clone named for the argument that clashed first. (@add(%x, %x) puts both
// arguments of @add in one class, so %x follows whatever @add's callers pin.)
builtin.module attributes {vdev.targets = [#target.target<"cuda">]} {
  func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %s = arith.addf %a, %b : tensor<4xf32>
    func.return %s : tensor<4xf32>
  }
  func.func @main(%x: tensor<4xf32>, %p: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}, %q: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 1>}) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %r = func.call @add(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = func.call @add(%p, %q) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t = func.call @add(%q, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %r, %s, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @add(
// CHECK-SAME:  %a: tensor<4xf32> {vdev.device = [[GPU1:#vdev.device<"cuda", 1, #target.target<"cuda">, "global">]]}, %b: tensor<4xf32> {vdev.device = [[GPU1]]}) -> (tensor<4xf32> {vdev.device = [[GPU1]]}) {
// CHECK-NEXT:  %s = arith.addf %a, %b {vdev.device = [[GPU1]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %s : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @add_cuda1(
// CHECK-SAME:  %a: tensor<4xf32> {vdev.device = [[GPU1]]}, %b: tensor<4xf32> {vdev.device = [[GPU1]]}) -> (tensor<4xf32> {vdev.device = [[GPU1]]}) {
// CHECK-NEXT:  %s = arith.addf %a, %b {vdev.device = [[GPU1]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %s : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @add_cuda0_cuda1(
// CHECK-SAME:  %a: tensor<4xf32> {vdev.device = [[GPU]]}, %b: tensor<4xf32> {vdev.device = [[GPU1]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %0 = vdev.device_copy %b from [[GPU1]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %s = arith.addf %a, %0 {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %s : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @main(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[GPU1]]}, %p: tensor<4xf32> {vdev.device = [[GPU]]}, %q: tensor<4xf32> {vdev.device = [[GPU1]]})
// CHECK-NEXT:  %r = func.call @add(%x, %x) {vdev.device = [[[GPU1]]]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:  %s = func.call @add_cuda0_cuda1(%p, %q) {vdev.device = [[[GPU]]]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:  %t = func.call @add_cuda1(%q, %x) {vdev.device = [[[GPU1]]]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:  func.return %r, %s, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:  }
// -----

// A returned on_device pins the function's result (TVM phase 0); a free on_device
// goes where its operand is when nothing else places it.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @returned_hint(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.negf %x : tensor<4xf32>
    %h = vdev.on_device %a to #vdev.device<"cpu"> : tensor<4xf32>
    func.return %h : tensor<4xf32>
  }
  func.func @free_form(%x: tensor<4xf32> {vdev.device = #vdev.device<"cpu">}) -> tensor<4xf32> {
    %a = arith.negf %x : tensor<4xf32>
    %f = vdev.on_device %a to #vdev.device<?> {constrain_body = false} : tensor<4xf32>
    %b = arith.negf %f : tensor<4xf32>
    func.return %b : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @returned_hint(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %a = arith.negf %x {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %a : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @free_form(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %a = arith.negf %x {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %b = arith.negf %a {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %b : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A result-only hint ({constrain_body = false, constrain_result}): the operand, free,
// is computed where the result is pinned, so no copy is needed.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @result_only(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = arith.negf %x : tensor<4xf32>
    %r = vdev.on_device %a to #vdev.device<"cpu"> {constrain_body = false, constrain_result} : tensor<4xf32>
    %b = arith.negf %r : tensor<4xf32>
    func.return %b : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @result_only(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[CPU]]}) {
// CHECK-NEXT:  %a = arith.negf %x {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %b = arith.negf %a {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %b : tensor<4xf32>
// CHECK-NEXT:  }
// -----

// An op left open between two pinned operands runs where its result is pinned (the
// device most of its placed neighbours' bytes are on): one copy, not two. Scalar
// arguments live on the host device and say so.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @unify_with_result(%x: tensor<4xf32>, %y: tensor<4xf32>, %p: i1, %n: index, %s: f32) -> (tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}) {
    %1 = arith.negf %x : tensor<4xf32>
    %2 = vdev.on_device %1 to #vdev.device<"cpu"> {constrain_result} : tensor<4xf32>
    %4 = arith.negf %y : tensor<4xf32>
    %5 = vdev.on_device %4 to #vdev.device<"cuda", 0> {constrain_result} : tensor<4xf32>
    %6 = arith.addf %2, %5 : tensor<4xf32>
    func.return %6 : tensor<4xf32>
  }
}

// EXPLAIN:      plan_devices.mlir:[[# @LINE - 10]]:3: remark: argument 2 of @unify_with_result is on cpu:0/global: a scalar lives on the host device
// EXPLAIN:      plan_devices.mlir:[[# @LINE - 6]]:5: remark: 'arith.addf' is on cuda:0/global: decided by the vdev.device attribute of result 0 of @unify_with_result at line [[# @LINE - 11]], through dataflow: the value is returned at line [[# @LINE - 5]] (target and scope by default)
// CHECK-LABEL: func.func @unify_with_result(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[GPU]]}, %p: i1 {vdev.device = [[CPU]]}, %n: index {vdev.device = [[CPU]]}, %s: f32 {vdev.device = [[CPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %0 = arith.negf %x {vdev.device = [[CPU]]} : tensor<4xf32>
// CHECK-NEXT:  %1 = vdev.device_copy %0 from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %2 = arith.negf %y {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  %3 = arith.addf %1, %2 {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %3 : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A chain of open ops follows its pinned end: %b takes the result's device, then %a
// has more of its neighbours there (%y and %b) than on the CPU (%x): one copy.
builtin.module attributes {vdev.default_device = #vdev.device<"cuda", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @chain_follows_result(%x: tensor<4xf32> {vdev.device = #vdev.device<"cpu">}, %y: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}) -> (tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0>}) {
    %a = arith.addf %x, %y : tensor<4xf32>
    %b = arith.negf %a : tensor<4xf32>
    func.return %b : tensor<4xf32>
  }
}

// CHECK-LABEL: func.func @chain_follows_result(
// CHECK-SAME:  %x: tensor<4xf32> {vdev.device = [[CPU]]}, %y: tensor<4xf32> {vdev.device = [[GPU]]}) -> (tensor<4xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %0 = vdev.device_copy %x from [[CPU]] to [[GPU]] : tensor<4xf32>
// CHECK-NEXT:  %a = arith.addf %0, %y {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  %b = arith.negf %a {vdev.device = [[GPU]]} : tensor<4xf32>
// CHECK-NEXT:  func.return %b : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// Bytes decide, not operand order: the 64x64 right operand is on the GPU, so the matmul
// runs there and the 4x64 left operand is copied.
builtin.module attributes {vdev.default_device = #vdev.device<"cpu", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @bytes_decide(%a: tensor<4x64xf32> {vdev.device = #vdev.device<"cpu">}, %b: tensor<64x64xf32> {vdev.device = #vdev.device<"cuda", 0>}) -> tensor<4x64xf32> {
    %e = tensor.empty() : tensor<4x64xf32>
    %m = linalg.matmul ins(%a, %b : tensor<4x64xf32>, tensor<64x64xf32>) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
    func.return %m : tensor<4x64xf32>
  }
}

// CHECK-LABEL: func.func @bytes_decide(
// CHECK-SAME:  %a: tensor<4x64xf32> {vdev.device = [[CPU]]}, %b: tensor<64x64xf32> {vdev.device = [[GPU]]}) -> (tensor<4x64xf32> {vdev.device = [[GPU]]}) {
// CHECK-NEXT:  %0 = vdev.device_copy %a from [[CPU]] to [[GPU]] : tensor<4x64xf32>
// CHECK-NEXT:  %e = tensor.empty() {vdev.device = [[GPU]]} : tensor<4x64xf32>
// CHECK-NEXT:  %m = linalg.matmul {vdev.device = [[GPU]]} ins(%0, %b : tensor<4x64xf32>, tensor<64x64xf32>) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
// CHECK-NEXT:  func.return %m : tensor<4x64xf32>
// CHECK-NEXT:  }

// -----

// Shapes live on the host (TVM's rule): tensor.reshape runs on the GPU, its shape operand
// is built and read on the host, and one computed on the GPU is copied there.
builtin.module attributes {vdev.default_device = #vdev.device<"cpu", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @reshape_shape_on_host(%x: tensor<6xf32> {vdev.device = #vdev.device<"cuda", 0>}, %s: tensor<2xindex> {vdev.device = #vdev.device<"cuda", 0>}, %n: index) -> tensor<3x2xf32> {
    %shape = tensor.from_elements %n, %n : tensor<2xindex>
    %a = tensor.reshape %x(%shape) : (tensor<6xf32>, tensor<2xindex>) -> tensor<2x3xf32>
    %b = tensor.reshape %a(%s) : (tensor<2x3xf32>, tensor<2xindex>) -> tensor<3x2xf32>
    func.return %b : tensor<3x2xf32>
  }
}

// CHECK-LABEL: func.func @reshape_shape_on_host(
// CHECK:       %0 = vdev.device_copy %s from [[GPU]] to [[CPU]] : tensor<2xindex>
// CHECK-NEXT:  %shape = tensor.from_elements %n, %n {vdev.device = [[CPU]]} : tensor<2xindex>
// CHECK-NEXT:  %a = tensor.reshape {vdev.device = [[GPU]]} %x(%shape) : (tensor<6xf32>, tensor<2xindex>) -> tensor<2x3xf32>
// CHECK-NEXT:  %b = tensor.reshape {vdev.device = [[GPU]]} %a(%0) : (tensor<2x3xf32>, tensor<2xindex>) -> tensor<3x2xf32>
