// --disable-verify prints IR that does not verify; without it the same IR is one located error.
// RUN: devplan-opt %s --disable-verify | filecheck %s --check-prefix=OFF
// RUN: not devplan-opt %s 2>&1 | filecheck %s --check-prefix=ON

// OFF: device.copy %{{.*}} to %{{.*}} : memref<16xf32> to memref<8xf32, #vdev.device<"cuda", 0>>
// ON:  devplan_opt_disable_verify.mlir:[[# @LINE + 4]]:3: error: 'device.copy' cannot copy memref<16xf32> to memref<8xf32, #vdev.device<"cuda", 0>>
// ON-NOT: error
func.func @f(%h: memref<16xf32>) {
  %d = device.alloc() : memref<8xf32, #vdev.device<"cuda", 0>>
  device.copy %h to %d : memref<16xf32> to memref<8xf32, #vdev.device<"cuda", 0>>
  func.return
}
