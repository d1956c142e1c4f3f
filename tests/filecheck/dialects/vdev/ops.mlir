// RUN: DEVPLAN_ROUNDTRIP

// CHECK-LABEL: func.func @on_device
func.func @on_device(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %y = vdev.on_device %x to #vdev.device<"cuda", 0> : tensor<4xf32>
  %y = vdev.on_device %x to #vdev.device<"cuda", 0> : tensor<4xf32>
  // CHECK-NEXT: %z = vdev.on_device %y to #vdev.device<"cuda"> {constrain_result} : tensor<4xf32>
  %z = vdev.on_device %y to #vdev.device<"cuda"> {constrain_result} : tensor<4xf32>
  // CHECK-NEXT: %r = vdev.on_device %z to #vdev.device<"cpu", 0, ?, "global"> {constrain_body = false, constrain_result} : tensor<4xf32>
  %r = vdev.on_device %z to #vdev.device<"cpu", 0, ?, "global"> {constrain_body = false, constrain_result} : tensor<4xf32>
  // CHECK-NEXT: %free = vdev.on_device %r to #vdev.device<?> {constrain_body = false} : tensor<4xf32>
  %free = vdev.on_device %r to #vdev.device<?> {constrain_body = false} : tensor<4xf32>
  // CHECK-NEXT: %t = vdev.on_device %free to #vdev.device<"cuda", 0, #target.target<"cuda">> : tensor<4xf32>
  %t = vdev.on_device %free to #vdev.device<?, 0, #target.target<"cuda">> : tensor<4xf32>
  func.return %t : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @scalar
func.func @scalar(%x: f32) -> f32 {
  // CHECK-NEXT: %s = vdev.on_device %x to #vdev.device<"cuda", 0> {constrain_body = true} : f32
  %s = vdev.on_device %x to #vdev.device<"cuda", 0> {constrain_body = true} : f32
  func.return %s : f32
}

// -----

// CHECK-LABEL: func.func @device_copy
func.func @device_copy(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %y = vdev.device_copy %x from #vdev.device<"cpu", 0> to #vdev.device<"cuda", 0> : tensor<4xf32>
  %y = vdev.device_copy %x from #vdev.device<"cpu", 0> to #vdev.device<"cuda", 0> : tensor<4xf32>
  // CHECK-NEXT: %z = vdev.device_copy %y from #vdev.device<"cuda", 0, #target.target<"cuda">, "global"> to #vdev.device<"cuda", 0, ?, "host"> : tensor<4xf32>
  %z = vdev.device_copy %y from #vdev.device<"cuda", 0, #target.target<"cuda">, "global"> to #vdev.device<"cuda", 0, ?, "host"> : tensor<4xf32>
  // CHECK-NEXT: %w = vdev.device_copy %z from #vdev.device<"cuda"> to #vdev.device<"cpu"> : tensor<4xf32>
  %w = vdev.device_copy %z from #vdev.device<"cuda"> to #vdev.device<"cpu"> : tensor<4xf32>
  func.return %w : tensor<4xf32>
}
