// RUN: devplan-opt %s --split-input-file -p plan-devices | filecheck %s
// Idempotence: planning the planned output changes nothing.
// RUN: devplan-opt %s --split-input-file -p plan-devices -o %t.once.mlir
// RUN: devplan-opt %t.once.mlir --split-input-file -p plan-devices -o %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: devplan-opt %s --split-input-file -p 'plan-devices{explain=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=EXPLAIN

// Data movement as TVM plans it. [[GPU0]] and [[GPU1]] are cuda:0 and cuda:1.

// A slice of a cuda:0 value whose result is pinned to cuda:1 runs on cuda:0, where its
// source lives, and only the slice (2x4, not the 8x4 source) is copied to cuda:1.
builtin.module attributes {vdev.targets = [#target.target<"cuda">]} {
  func.func @slice_to_other_gpu(%x: tensor<8x4xf32> {vdev.device = #vdev.device<"cuda", 0>}) -> (tensor<2x4xf32> {vdev.device = #vdev.device<"cuda", 1>}) {
    %s = tensor.extract_slice %x[2, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>
    %h = vdev.on_device %s to #vdev.device<"cuda", 1> {constrain_result} : tensor<2x4xf32>
    %y = arith.addf %h, %h : tensor<2x4xf32>
    func.return %y : tensor<2x4xf32>
  }
}

// EXPLAIN:      plan_devices_movement.mlir:[[# @LINE - 7]]:5: remark: 'tensor.extract_slice' (%s) is on cuda:0/global: decided by the device of %x, the source of the 'tensor.extract_slice' at line [[# @LINE - 7]] (a slice runs where its source lives)
// EXPLAIN:      plan_devices_movement.mlir:[[# @LINE - 6]]:5: remark: copy of %s from cuda:0/global to cuda:1/global for 'arith.addf'
// CHECK-LABEL: func.func @slice_to_other_gpu(
// CHECK-SAME:  %x: tensor<8x4xf32> {vdev.device = [[GPU0:#vdev.device<"cuda", 0, #target.target<"cuda">, "global">]]}) -> (tensor<2x4xf32> {vdev.device = [[GPU1:#vdev.device<"cuda", 1, #target.target<"cuda">, "global">]]}) {
// CHECK-NEXT:  %s = tensor.extract_slice %x[2, 0] [2, 4] [1, 1] {vdev.device = [[GPU0]]} : tensor<8x4xf32> to tensor<2x4xf32>
// CHECK-NEXT:  %0 = vdev.device_copy %s from [[GPU0]] to [[GPU1]] : tensor<2x4xf32>
// CHECK-NEXT:  %y = arith.addf %0, %0 {vdev.device = [[GPU1]]} : tensor<2x4xf32>
// CHECK-NEXT:  func.return %y : tensor<2x4xf32>

// -----

// The same when only its use is on cuda:1 (a rank-reducing, dynamic slice), and a slice
// of a slice follows its source; a slice pinned by its own vdev.device stays there.
builtin.module attributes {vdev.targets = [#target.target<"cuda">]} {
  func.func @slice_used_on_other_gpu(%x: tensor<8x4xf32> {vdev.device = #vdev.device<"cuda", 0>}, %i: index) -> (tensor<4xf32> {vdev.device = #vdev.device<"cuda", 1>}, tensor<2xf32> {vdev.device = #vdev.device<"cuda", 1>}, tensor<1x4xf32> {vdev.device = #vdev.device<"cuda", 1>}) {
    %s = tensor.extract_slice %x[%i, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<4xf32>
    %t = tensor.extract_slice %s[0] [2] [2] : tensor<4xf32> to tensor<2xf32>
    %p = tensor.extract_slice %x[0, 0] [1, 4] [1, 1] {vdev.device = #vdev.device<"cuda", 1>} : tensor<8x4xf32> to tensor<1x4xf32>
    func.return %s, %t, %p : tensor<4xf32>, tensor<2xf32>, tensor<1x4xf32>
  }
}

// CHECK-LABEL: func.func @slice_used_on_other_gpu(
// CHECK:       %0 = vdev.device_copy %x from [[GPU0]] to [[GPU1]] : tensor<8x4xf32>
// CHECK-NEXT:  %s = tensor.extract_slice %x[%i, 0] [1, 4] [1, 1] {vdev.device = [[GPU0]]} : tensor<8x4xf32> to tensor<4xf32>
// CHECK-NEXT:  %1 = vdev.device_copy %s from [[GPU0]] to [[GPU1]] : tensor<4xf32>
// CHECK-NEXT:  %t = tensor.extract_slice %s[0] [2] [2] {vdev.device = [[GPU0]]} : tensor<4xf32> to tensor<2xf32>
// CHECK-NEXT:  %2 = vdev.device_copy %t from [[GPU0]] to [[GPU1]] : tensor<2xf32>
// CHECK-NEXT:  %p = tensor.extract_slice %0[0, 0] [1, 4] [1, 1] {vdev.device = [[GPU1]]} : tensor<8x4xf32> to tensor<1x4xf32>
// CHECK-NEXT:  func.return %1, %2, %p : tensor<4xf32>, tensor<2xf32>, tensor<1x4xf32>

// -----

// A scalar read from a GPU tensor is a planned copy of the one element it reads, sliced
// where the tensor lives; a rank-0 tensor (one element) is copied whole, right after its
// definition as every planned copy.
builtin.module attributes {vdev.targets = [#target.target<"cuda">]} {
  func.func @extract_from_gpu(%x: tensor<8x4xf32> {vdev.device = #vdev.device<"cuda", 0>}, %i: index, %j: index, %z: tensor<f32> {vdev.device = #vdev.device<"cuda", 0>}) -> f32 {
    %e = tensor.extract %x[%i, %j] : tensor<8x4xf32>
    %f = tensor.extract %z[] : tensor<f32>
    %g = arith.addf %e, %f : f32
    func.return %g : f32
  }
}

// EXPLAIN: plan_devices_movement.mlir:[[# @LINE - 7]]:5: remark: copy of the element [%i, %j] of %x from cuda:0/global to cpu:0/global for 'tensor.extract': a scalar read lives on the host device; %x is on cuda:0/global, decided by the vdev.device attribute of argument 0 of @extract_from_gpu at line [[# @LINE - 8]] (target and scope by default)
// EXPLAIN: plan_devices_movement.mlir:[[# @LINE - 7]]:5: remark: copy of the element of %z from cuda:0/global to cpu:0/global for 'tensor.extract'
// CHECK-LABEL: func.func @extract_from_gpu(
// CHECK-NEXT:  %0 = vdev.device_copy %z from [[GPU0]] to [[CPU:#vdev.device<"cpu", 0, #target.target<"llvm">, "global">]] : tensor<f32>
// CHECK-NEXT:  %1 = tensor.extract_slice %x[%i, %j] [1, 1] [1, 1] {vdev.device = [[GPU0]]} : tensor<8x4xf32> to tensor<1x1xf32>
// CHECK-NEXT:  %2 = vdev.device_copy %1 from [[GPU0]] to [[CPU]] : tensor<1x1xf32>
// CHECK-NEXT:  %3 = arith.constant 0 : index
// CHECK-NEXT:  %e = tensor.extract %2[%3, %3] : tensor<1x1xf32>
// CHECK-NEXT:  %f = tensor.extract %0[] : tensor<f32>
