// MLIR's custom assembly of the gpu ops, memref.cast, memref.atomic_rmw, scf.while and
// vector.print is read and printed back the same way; generic form reads too.
// RUN: devplan-opt %s | filecheck %s
// RUN: devplan-opt %s --print-op-generic | devplan-opt | filecheck %s

// CHECK-LABEL: gpu.module @kernels {
// CHECK-NEXT:    gpu.func @k(%a: memref<?xf32>, %n: i32) kernel {
// CHECK-NEXT:      %t = gpu.thread_id x
// CHECK-NEXT:      %b = gpu.block_id y
// CHECK-NEXT:      %d = gpu.block_dim z
// CHECK-NEXT:      %g = gpu.grid_dim x
// CHECK-NEXT:      %x = memref.load %a[%t] : memref<?xf32>
// CHECK-NEXT:      %s = gpu.all_reduce add %x uniform {
// CHECK-NEXT:      } : (f32) -> (f32)
// CHECK-NEXT:      %r = gpu.all_reduce %n {
// CHECK-NEXT:      ^bb0(%l: i32, %rr: i32):
// CHECK-NEXT:        %m = arith.addi %l, %rr : i32
// CHECK-NEXT:        gpu.yield %m : i32
// CHECK-NEXT:      } : (i32) -> (i32)
// CHECK-NEXT:      %sh, %ok = gpu.shuffle down %x, %n, %n : f32
// CHECK-NEXT:      %sr = gpu.subgroup_reduce maxnumf %x cluster(size = 4) : (f32) -> (f32)
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      gpu.printf "%f %d\0A", %x, %n : f32, i32
// CHECK-NEXT:      %old = memref.atomic_rmw addf %x, %a[%t] : (f32, memref<?xf32>) -> f32
// CHECK-NEXT:      gpu.return
// CHECK-NEXT:    }
// CHECK-NEXT:  }
gpu.module @kernels {
  gpu.func @k(%a: memref<?xf32>, %n: i32) kernel {
    %t = gpu.thread_id x
    %b = gpu.block_id y
    %d = gpu.block_dim z
    %g = gpu.grid_dim x
    %x = memref.load %a[%t] : memref<?xf32>
    %s = gpu.all_reduce add %x uniform {} : (f32) -> (f32)
    %r = gpu.all_reduce %n {
    ^bb0(%l: i32, %rr: i32):
      %m = arith.addi %l, %rr : i32
      gpu.yield %m : i32
    } : (i32) -> (i32)
    %sh, %ok = gpu.shuffle down %x, %n, %n : f32
    %sr = gpu.subgroup_reduce maxnumf %x cluster(size = 4) : (f32) -> (f32)
    gpu.barrier
    gpu.printf "%f %d\n", %x, %n : f32, i32
    %old = memref.atomic_rmw addf %x, %a[%t] : (f32, memref<?xf32>) -> f32
    gpu.return
  }
}

// CHECK-LABEL: func.func @host(
// CHECK:         %m = gpu.alloc (%n) : memref<?xf32>
// CHECK-NEXT:    %h, %ht = gpu.alloc async [%t0] host_shared () : memref<4xf32>
// CHECK-NEXT:    %u = memref.cast %m : memref<?xf32> to memref<*xf32>
// CHECK-NEXT:    gpu.host_register %u : memref<*xf32>
// CHECK-NEXT:    gpu.memcpy %m, %m : memref<?xf32>, memref<?xf32>
// CHECK-NEXT:    %t1 = gpu.memset async [%t0] %m, %f : memref<?xf32>, f32
// CHECK-NEXT:    %t2 = gpu.launch_func async [%t1] @kernels::@k blocks in (%n, %n, %n) threads in (%n, %n, %n) args(%m : memref<?xf32>, %i : i32)
// CHECK-NEXT:    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %n, %gz = %n) threads(%tx, %ty, %tz) in (%sx = %n, %sy = %n, %sz = %n) {
// CHECK-NEXT:      gpu.terminator
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.wait [%t2, %ht]
// CHECK-NEXT:    gpu.dealloc %m : memref<?xf32>
// CHECK-NEXT:    vector.print %f : f32
func.func @host(%n: index, %f: f32, %i: i32, %t0: !gpu.async.token) {
  %m = gpu.alloc (%n) : memref<?xf32>
  %h, %ht = gpu.alloc async [%t0] host_shared () : memref<4xf32>
  %u = memref.cast %m : memref<?xf32> to memref<*xf32>
  gpu.host_register %u : memref<*xf32>
  gpu.memcpy %m, %m : memref<?xf32>, memref<?xf32>
  %t1 = gpu.memset async [%t0] %m, %f : memref<?xf32>, f32
  %t2 = gpu.launch_func async [%t1] @kernels::@k blocks in (%n, %n, %n) threads in (%n, %n, %n) args(%m : memref<?xf32>, %i : i32)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %n, %gz = %n) threads(%tx, %ty, %tz) in (%sx = %n, %sy = %n, %sz = %n) {
    gpu.terminator
  }
  gpu.wait [%t2, %ht]
  gpu.dealloc %m : memref<?xf32>
  vector.print %f : f32
  return
}

// scf.while without loop-carried values is written without the parenthesised list
// (MLIR's form, which xDSL's parser rejects); with them, as before.
// CHECK-LABEL: func.func @loops(
// CHECK-NEXT:    scf.while : () -> () {
// CHECK-NEXT:      scf.condition(%c)
// CHECK-NEXT:    } do {
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = scf.while (%x = %n) : (index) -> index {
// CHECK-NEXT:      scf.condition(%c) %x : index
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%y: index):
// CHECK-NEXT:      scf.yield %y : index
// CHECK-NEXT:    } attributes {note}
func.func @loops(%c: i1, %n: index) {
  scf.while: () -> () {
    scf.condition(%c)
  } do {
    scf.yield
  }
  %r = scf.while (%x = %n) : (index) -> index {
    scf.condition(%c) %x : index
  } do {
  ^bb0(%y: index):
    scf.yield %y : index
  } attributes {note}
  return
}

// gpu.func attributions and argument attributes, #gpu.address_space, gpu.module targets, and a gpu.memcpy
// between memory spaces (MLIR requires equal element types and shapes only).
// CHECK-LABEL: gpu.module @attributed <#target.target<"rocm">> [#target.target<"cuda">] {
// CHECK-NEXT:    gpu.func @k(%x: f32) workgroup(%w: memref<4xf32, #gpu.address_space<workgroup>>) private(%p: memref<2xf32, #gpu.address_space<private>>, %q: memref<1xi32, 5 : i64>) {
// CHECK:         gpu.func @with_arg_attrs(%a: memref<4xf32> {llvm.noalias}, %b: f32, %c: i32 {note = 1 : i64}) kernel {
// CHECK:       func.func @copy_between_spaces(%d: memref<4xf32>, %s: memref<4xf32, 1 : i64>) {
// CHECK-NEXT:    gpu.memcpy %d, %s : memref<4xf32>, memref<4xf32, 1 : i64>
gpu.module @attributed <#target.target<"rocm">> [#target.target<"cuda">] {
  gpu.func @k(%x: f32) workgroup(%w: memref<4xf32, #gpu.address_space<workgroup>>) private(%p: memref<2xf32, #gpu.address_space<private>>, %q: memref<1xi32, 5>) {
    gpu.return
  }
  gpu.func @with_arg_attrs(%a: memref<4xf32> {llvm.noalias}, %b: f32, %c: i32 {note = 1}) kernel {
    gpu.return
  }
}
func.func @copy_between_spaces(%d: memref<4xf32>, %s: memref<4xf32, 1>) {
  gpu.memcpy %d, %s : memref<4xf32>, memref<4xf32, 1>
  return
}

// A gpu.func body of several blocks (branches) prints; the signature comes from the entry
// block (printing failed with "only available for single-block regions" before).
// CHECK-LABEL: gpu.module @branching {
// CHECK-NEXT:    gpu.func @k(%a: memref<2xf32>, %p: i1) kernel {
// CHECK-NEXT:      %c0 = arith.constant 0 : index
// CHECK-NEXT:      cf.cond_br %p, ^[[THEN:[a-z0-9]+]], ^[[DONE:[a-z0-9]+]]
// CHECK-NEXT:    ^[[THEN]]:
// CHECK-NEXT:      %v = memref.load %a[%c0] : memref<2xf32>
// CHECK-NEXT:      cf.br ^[[DONE]]
// CHECK-NEXT:    ^[[DONE]]:
// CHECK-NEXT:      gpu.return
// CHECK-NEXT:    }
gpu.module @branching {
  gpu.func @k(%a: memref<2xf32>, %p: i1) kernel {
    %c0 = arith.constant 0 : index
    cf.cond_br %p, ^then, ^done
  ^then:
    %v = memref.load %a[%c0] : memref<2xf32>
    cf.br ^done
  ^done:
    gpu.return
  }
}
