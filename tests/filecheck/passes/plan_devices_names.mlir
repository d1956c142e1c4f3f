// RUN: devplan-opt %s -p 'plan-devices{explain=true}' -o /dev/null 2>&1 | filecheck %s
// RUN: devplan-opt %s -p plan-devices | filecheck %s --check-prefix=PLAN
// (Not in plan_devices.mlir: plain xdsl-opt, which that file also runs, cannot parse a
// linalg.generic with two results, `-> (t, t)`, in xDSL 0.74.)

// An op with two results: the remarks name it as defined (%two:2) and each result as used
// (%two#0).
#id2 = affine_map<(d0, d1) -> (d0, d1)>
builtin.module attributes {vdev.default_device = #vdev.device<"cpu", 0>, vdev.targets = [#target.target<"cuda">]} {
  func.func @two_results(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
    %t5 = tensor.empty() : tensor<4x6xf32>
    %t6 = tensor.empty() : tensor<4x6xf32>
    %two:2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%t5, %t6 : tensor<4x6xf32>, tensor<4x6xf32>) {
    ^bb0(%a: f32, %o: f32, %p: f32):
      %n = arith.negf %a : f32
      linalg.yield %a, %n : f32, f32
    } -> (tensor<4x6xf32>, tensor<4x6xf32>)
    %n = arith.negf %two#0 : tensor<4x6xf32>
    %g = vdev.on_device %two#1 to #vdev.device<"cuda", 0> : tensor<4x6xf32>
    func.return %n, %g : tensor<4x6xf32>, tensor<4x6xf32>
  }
}

// CHECK:       plan_devices_names.mlir:[[# @LINE - 11]]:5: remark: 'linalg.generic' (%two:2) is on cuda:0/global: decided by the 'vdev.on_device' hint at line [[# @LINE - 5]] (target and scope by default)
// CHECK:       plan_devices_names.mlir:[[# @LINE - 7]]:5: remark: 'arith.negf' (%n) is on cuda:0/global: decided by the 'vdev.on_device' hint at line [[# @LINE - 6]], through dataflow: %two#0 is operand 0 of 'arith.negf' at line [[# @LINE - 7]] (target and scope by default)

// The op with two results gets one device for each of them, as a primitive op: one device.
// PLAN:       %two, %two_1 = linalg.generic
// PLAN-SAME:  attrs =  {vdev.device = [[[GPU:#vdev.device<"cuda", 0, #target.target<"cuda">, "global">]], [[GPU]]]} {
