// MLIR's tests print a tensor by casting it to unranked and calling a runner printer.
// The cast's operand lives on the host (plan-devices copies a device value there); the
// cast is a host buffer of its own, read by the printer and freed after it.
// RUN: devplan-run %s --strict | filecheck %s
// RUN: devplan-opt %s -p plan-devices | filecheck %s --check-prefix=PLAN

// PLAN:      %[[G:.*]] = arith.addf {{.*}} #vdev.device<"cuda", 0
// PLAN:      %[[H:.*]] = vdev.device_copy %[[G]] from #vdev.device<"cuda", 0, {{.*}}> to #vdev.device<"cpu", 0
// PLAN:      tensor.cast %[[H]] : tensor<3xf32> to tensor<*xf32>

// CHECK:      Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 1 offset = 0 sizes = [3] strides = [1] data =
// CHECK-NEXT: [2,  4,  6]
// A buffer's copy read only through an unranked cast is kept (it was elided before).
// CHECK:      Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 1 offset = 0 sizes = [3] strides = [1] data =
// CHECK-NEXT: [1,  2,  3]
func.func @main() {
  %a = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %s = arith.addf %a, %a : tensor<3xf32>
  %g = vdev.on_device %s to #vdev.device<"cuda", 0> {constrain_result} : tensor<3xf32>
  %u = tensor.cast %g : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  %d = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf64>
  %b = bufferization.to_buffer %d : tensor<3xf64> to memref<3xf64>
  %v = memref.cast %b : memref<3xf64> to memref<*xf64>
  call @printMemrefF64(%v) : (memref<*xf64>) -> ()
  return
}
func.func private @printMemrefF32(%ptr : tensor<*xf32>)
func.func private @printMemrefF64(memref<*xf64>)
