// gpu.subgroup_reduce reduces over each subgroup (the target's warp size, 32, or a
// cluster); a host_shared gpu.alloc is memory host code and kernels both use.
// RUN: devplan-run %s --entry main | filecheck %s --match-full-lines
// RUN: devplan-run %s --entry main --kernel-backend numba | filecheck %s --match-full-lines

// 40 threads of value 1: subgroup 0 has 32 lanes, subgroup 1 has 8; clusters of 4.
// CHECK: 32
// CHECK-NEXT: 8
// CHECK-NEXT: 4
// CHECK-NEXT: 4
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @reduce(%out: memref<4xi32>) kernel {
      %tid = gpu.thread_id x
      %one = arith.constant 1 : i32
      %s = gpu.subgroup_reduce add %one uniform : (i32) -> (i32)
      %c = gpu.subgroup_reduce add %one cluster(size = 4) : (i32) -> (i32)
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c32 = arith.constant 32 : index
      %c36 = arith.constant 36 : index
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        memref.store %s, %out[%c0] : memref<4xi32>
        memref.store %c, %out[%c2] : memref<4xi32>
      }
      %second = arith.cmpi eq, %tid, %c32 : index
      scf.if %second {
        memref.store %s, %out[%c1] : memref<4xi32>
      }
      %last = arith.cmpi eq, %tid, %c36 : index
      scf.if %last {
        memref.store %c, %out[%c3] : memref<4xi32>
      }
      gpu.return
    }
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c40 = arith.constant 40 : index
    %out = gpu.alloc host_shared () : memref<4xi32>
    gpu.launch_func @kernels::@reduce blocks in (%c1, %c1, %c1) threads in (%c40, %c1, %c1)
        args(%out : memref<4xi32>)
    %a = memref.load %out[%c0] : memref<4xi32>
    vector.print %a : i32
    %b = memref.load %out[%c1] : memref<4xi32>
    vector.print %b : i32
    %c = memref.load %out[%c2] : memref<4xi32>
    vector.print %c : i32
    %d = memref.load %out[%c3] : memref<4xi32>
    vector.print %d : i32
    gpu.dealloc %out : memref<4xi32>
    return
  }
}
