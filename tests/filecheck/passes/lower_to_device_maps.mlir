// RUN: devplan-opt %s --split-input-file -p lower-to-device | filecheck %s --match-full-lines

// The kernel lower-to-device generates for each kind of indexing map and iterator of a
// linalg.generic, line for line: one thread per point of the parallel loops (the
// linear index split row-major over the output's extents, read with memref.dim), a
// bounds guard, the reduction loops inside the thread carrying the outputs' values from
// their inits, loads and stores at the maps' indices; and the launch over
// ceil(points / 256) blocks of at most 256 threads (fewer for fewer points). Inputs are
// planned by hand, every value on cuda:0.

// A permutation of three loops: in0 is read at (d1, d2, d0); 400 points are two
// blocks of 256.

// CHECK-LABEL: kernel.module @cuda_kernels target #target.target<"cuda"> {
// CHECK-NEXT:  kernel.func @copy_f32_{{[0-9a-f]+}}(%in0: memref<?x?x?xf32>, %out: memref<?x?x?xf32>) {
// CHECK-NEXT:    %0 = kernel.thread_id x
// CHECK-NEXT:    %1 = kernel.block_id x
// CHECK-NEXT:    %2 = kernel.block_dim x
// CHECK-NEXT:    %3 = arith.muli %1, %2 : index
// CHECK-NEXT:    %4 = arith.addi %3, %0 : index
// CHECK-NEXT:    %5 = arith.constant 0 : index
// CHECK-NEXT:    %6 = memref.dim %out, %5 : memref<?x?x?xf32>
// CHECK-NEXT:    %7 = arith.constant 1 : index
// CHECK-NEXT:    %8 = memref.dim %out, %7 : memref<?x?x?xf32>
// CHECK-NEXT:    %9 = arith.constant 2 : index
// CHECK-NEXT:    %10 = memref.dim %out, %9 : memref<?x?x?xf32>
// CHECK-NEXT:    %11 = arith.muli %6, %8 : index
// CHECK-NEXT:    %12 = arith.muli %11, %10 : index
// CHECK-NEXT:    %13 = arith.cmpi ult, %4, %12 : index
// CHECK-NEXT:    scf.if %13 {
// CHECK-NEXT:      %14 = arith.remui %4, %10 : index
// CHECK-NEXT:      %15 = arith.divui %4, %10 : index
// CHECK-NEXT:      %16 = arith.remui %15, %8 : index
// CHECK-NEXT:      %17 = arith.divui %15, %8 : index
// CHECK-NEXT:      %18 = memref.load %in0[%16, %14, %17] : memref<?x?x?xf32>
// CHECK-NEXT:      memref.store %18, %out[%17, %16, %14] : memref<?x?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @permutation(%x: memref<8x10x5xf32, #vdev.device<"cuda", 0, ?, "global">>) -> memref<5x8x10xf32, #vdev.device<"cuda", 0, ?, "global">> {
// CHECK-NEXT:  %0 = arith.constant 2 : index
// CHECK-NEXT:  %1 = arith.constant 1 : index
// CHECK-NEXT:  %2 = arith.constant 256 : index
// CHECK-NEXT:  %p = device.alloc() : memref<5x8x10xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  device.launch @cuda_kernels::@copy_f32_{{[0-9a-f]+}} on #vdev.device<"cuda", 0> grid(%0, %1, %1) block(%2, %1, %1) args(%x, %p) {device.work = array<i64: 0, 3200>} : memref<8x10x5xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<5x8x10xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  func.return %p : memref<5x8x10xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  }

func.func @permutation(%x: tensor<8x10x5xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) -> (tensor<5x8x10xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %t = tensor.empty() {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<5x8x10xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<8x10x5xf32>) outs(%t : tensor<5x8x10xf32>) attrs = {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<5x8x10xf32>
  func.return %p : tensor<5x8x10xf32>
}

// -----

// A projection: the reduction loop d1 sits between the parallel d0 and d2; the thread
// of output point (d0, d2) sums in0[d0, d1, d2] over d1 (extent from in0's dimension
// 1), starting from the init it reads.

// CHECK-LABEL: kernel.module @cuda_kernels target #target.target<"cuda"> {
// CHECK-NEXT:  kernel.func @add_f32_{{[0-9a-f]+}}(%in0: memref<?x?x?xf32>, %init: memref<?x?xf32>, %out: memref<?x?xf32>) {
// CHECK-NEXT:    %0 = kernel.thread_id x
// CHECK-NEXT:    %1 = kernel.block_id x
// CHECK-NEXT:    %2 = kernel.block_dim x
// CHECK-NEXT:    %3 = arith.muli %1, %2 : index
// CHECK-NEXT:    %4 = arith.addi %3, %0 : index
// CHECK-NEXT:    %5 = arith.constant 0 : index
// CHECK-NEXT:    %6 = memref.dim %out, %5 : memref<?x?xf32>
// CHECK-NEXT:    %7 = arith.constant 1 : index
// CHECK-NEXT:    %8 = memref.dim %in0, %7 : memref<?x?x?xf32>
// CHECK-NEXT:    %9 = memref.dim %out, %7 : memref<?x?xf32>
// CHECK-NEXT:    %10 = arith.muli %6, %9 : index
// CHECK-NEXT:    %11 = arith.cmpi ult, %4, %10 : index
// CHECK-NEXT:    scf.if %11 {
// CHECK-NEXT:      %12 = arith.remui %4, %9 : index
// CHECK-NEXT:      %13 = arith.divui %4, %9 : index
// CHECK-NEXT:      %14 = memref.load %init[%13, %12] : memref<?x?xf32>
// CHECK-NEXT:      %15 = scf.for %16 = %5 to %8 step %7 iter_args(%17 = %14) -> (f32) {
// CHECK-NEXT:        %18 = memref.load %in0[%13, %16, %12] : memref<?x?x?xf32>
// CHECK-NEXT:        %s = arith.addf %17, %18 : f32
// CHECK-NEXT:        scf.yield %s : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %15, %out[%13, %12] : memref<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @middle_sum(%x: memref<4x6x5xf32, #vdev.device<"cuda", 0, ?, "global">>, %init: memref<4x5xf32, #vdev.device<"cuda", 0, ?, "global">>) -> memref<4x5xf32, #vdev.device<"cuda", 0, ?, "global">> {
// CHECK-NEXT:  %0 = arith.constant 1 : index
// CHECK-NEXT:  %1 = arith.constant 20 : index
// CHECK-NEXT:  %r = device.alloc() : memref<4x5xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  device.launch @cuda_kernels::@add_f32_{{[0-9a-f]+}} on #vdev.device<"cuda", 0> grid(%0, %0, %0) block(%1, %0, %0) args(%x, %init, %r) {device.work = array<i64: 120, 640>} : memref<4x6x5xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4x5xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4x5xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  func.return %r : memref<4x5xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  }

func.func @middle_sum(%x: tensor<4x6x5xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, %init: tensor<4x5xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) -> (tensor<4x5xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<4x6x5xf32>) outs(%init : tensor<4x5xf32>) attrs = {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  func.return %r : tensor<4x5xf32>
}

// -----

// A broadcast along the rows: in1 is read at d0 alone (a scale per row).

// CHECK-LABEL: kernel.module @cuda_kernels target #target.target<"cuda"> {
// CHECK-NEXT:  kernel.func @mul_f32_{{[0-9a-f]+}}(%in0: memref<?x?xf32>, %in1: memref<?xf32>, %out: memref<?x?xf32>) {
// CHECK-NEXT:    %0 = kernel.thread_id x
// CHECK-NEXT:    %1 = kernel.block_id x
// CHECK-NEXT:    %2 = kernel.block_dim x
// CHECK-NEXT:    %3 = arith.muli %1, %2 : index
// CHECK-NEXT:    %4 = arith.addi %3, %0 : index
// CHECK-NEXT:    %5 = arith.constant 0 : index
// CHECK-NEXT:    %6 = memref.dim %out, %5 : memref<?x?xf32>
// CHECK-NEXT:    %7 = arith.constant 1 : index
// CHECK-NEXT:    %8 = memref.dim %out, %7 : memref<?x?xf32>
// CHECK-NEXT:    %9 = arith.muli %6, %8 : index
// CHECK-NEXT:    %10 = arith.cmpi ult, %4, %9 : index
// CHECK-NEXT:    scf.if %10 {
// CHECK-NEXT:      %11 = arith.remui %4, %8 : index
// CHECK-NEXT:      %12 = arith.divui %4, %8 : index
// CHECK-NEXT:      %13 = memref.load %in0[%12, %11] : memref<?x?xf32>
// CHECK-NEXT:      %14 = memref.load %in1[%12] : memref<?xf32>
// CHECK-NEXT:      %m = arith.mulf %13, %14 : f32
// CHECK-NEXT:      memref.store %m, %out[%12, %11] : memref<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @row_scale(%x: memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">>, %s: memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>) -> memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">> {
// CHECK-NEXT:  %0 = arith.constant 1 : index
// CHECK-NEXT:  %1 = arith.constant 24 : index
// CHECK-NEXT:  %r = device.alloc() : memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  device.launch @cuda_kernels::@mul_f32_{{[0-9a-f]+}} on #vdev.device<"cuda", 0> grid(%0, %0, %0) block(%1, %0, %0) args(%x, %s, %r) {device.work = array<i64: 24, 208>} : memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  func.return %r : memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  }

func.func @row_scale(%x: tensor<4x6xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, %s: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) -> (tensor<4x6xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %t = tensor.empty() {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<4x6xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<4x6xf32>, tensor<4xf32>) outs(%t : tensor<4x6xf32>) attrs = {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x6xf32>
  func.return %r : tensor<4x6xf32>
}

// -----

// A constant in a map: in0 is read at column 2 of row d0.

// CHECK-LABEL: kernel.module @cuda_kernels target #target.target<"cuda"> {
// CHECK-NEXT:  kernel.func @copy_f32_{{[0-9a-f]+}}(%in0: memref<?x?xf32>, %out: memref<?xf32>) {
// CHECK-NEXT:    %0 = kernel.thread_id x
// CHECK-NEXT:    %1 = kernel.block_id x
// CHECK-NEXT:    %2 = kernel.block_dim x
// CHECK-NEXT:    %3 = arith.muli %1, %2 : index
// CHECK-NEXT:    %4 = arith.addi %3, %0 : index
// CHECK-NEXT:    %5 = arith.constant 0 : index
// CHECK-NEXT:    %6 = memref.dim %out, %5 : memref<?xf32>
// CHECK-NEXT:    %7 = arith.constant 2 : index
// CHECK-NEXT:    %8 = arith.cmpi ult, %4, %6 : index
// CHECK-NEXT:    scf.if %8 {
// CHECK-NEXT:      %9 = memref.load %in0[%4, %7] : memref<?x?xf32>
// CHECK-NEXT:      memref.store %9, %out[%4] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @column(%x: memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">>) -> memref<4xf32, #vdev.device<"cuda", 0, ?, "global">> {
// CHECK-NEXT:  %0 = arith.constant 1 : index
// CHECK-NEXT:  %1 = arith.constant 4 : index
// CHECK-NEXT:  %r = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  device.launch @cuda_kernels::@copy_f32_{{[0-9a-f]+}} on #vdev.device<"cuda", 0> grid(%0, %0, %0) block(%1, %0, %0) args(%x, %r) {device.work = array<i64: 0, 32>} : memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  func.return %r : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  }

func.func @column(%x: tensor<4x6xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) -> (tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %t = tensor.empty() {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 2)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4x6xf32>) outs(%t : tensor<4xf32>) attrs = {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Affine sums with a constant coefficient (a strided 2-D window, as a convolution's
// d0 * 2 + d4): two reduction loops, nested in loop order, their extents from the
// window in1, the indices into in0 computed in the innermost loop.

// CHECK-LABEL: kernel.module @cuda_kernels target #target.target<"cuda"> {
// CHECK-NEXT:  kernel.func @mul_add_f32_{{[0-9a-f]+}}(%in0: memref<?x?xf32>, %in1: memref<?x?xf32>, %init: memref<?x?xf32>, %out: memref<?x?xf32>) {
// CHECK-NEXT:    %0 = kernel.thread_id x
// CHECK-NEXT:    %1 = kernel.block_id x
// CHECK-NEXT:    %2 = kernel.block_dim x
// CHECK-NEXT:    %3 = arith.muli %1, %2 : index
// CHECK-NEXT:    %4 = arith.addi %3, %0 : index
// CHECK-NEXT:    %5 = arith.constant 0 : index
// CHECK-NEXT:    %6 = memref.dim %out, %5 : memref<?x?xf32>
// CHECK-NEXT:    %7 = arith.constant 1 : index
// CHECK-NEXT:    %8 = memref.dim %out, %7 : memref<?x?xf32>
// CHECK-NEXT:    %9 = memref.dim %in1, %5 : memref<?x?xf32>
// CHECK-NEXT:    %10 = memref.dim %in1, %7 : memref<?x?xf32>
// CHECK-NEXT:    %11 = arith.constant 2 : index
// CHECK-NEXT:    %12 = arith.muli %6, %8 : index
// CHECK-NEXT:    %13 = arith.cmpi ult, %4, %12 : index
// CHECK-NEXT:    scf.if %13 {
// CHECK-NEXT:      %14 = arith.remui %4, %8 : index
// CHECK-NEXT:      %15 = arith.divui %4, %8 : index
// CHECK-NEXT:      %16 = memref.load %init[%15, %14] : memref<?x?xf32>
// CHECK-NEXT:      %17 = scf.for %18 = %5 to %9 step %7 iter_args(%19 = %16) -> (f32) {
// CHECK-NEXT:        %20 = scf.for %21 = %5 to %10 step %7 iter_args(%22 = %19) -> (f32) {
// CHECK-NEXT:          %23 = arith.muli %15, %11 : index
// CHECK-NEXT:          %24 = arith.addi %23, %18 : index
// CHECK-NEXT:          %25 = arith.muli %14, %11 : index
// CHECK-NEXT:          %26 = arith.addi %25, %21 : index
// CHECK-NEXT:          %27 = memref.load %in0[%24, %26] : memref<?x?xf32>
// CHECK-NEXT:          %28 = memref.load %in1[%18, %21] : memref<?x?xf32>
// CHECK-NEXT:          %m = arith.mulf %27, %28 : f32
// CHECK-NEXT:          %s = arith.addf %22, %m : f32
// CHECK-NEXT:          scf.yield %s : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        scf.yield %20 : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %17, %out[%15, %14] : memref<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @strided_window(%x: memref<9x9xf32, #vdev.device<"cuda", 0, ?, "global">>, %w: memref<3x3xf32, #vdev.device<"cuda", 0, ?, "global">>, %init: memref<4x4xf32, #vdev.device<"cuda", 0, ?, "global">>) -> memref<4x4xf32, #vdev.device<"cuda", 0, ?, "global">> {
// CHECK-NEXT:  %0 = arith.constant 1 : index
// CHECK-NEXT:  %1 = arith.constant 16 : index
// CHECK-NEXT:  %r = device.alloc() : memref<4x4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  device.launch @cuda_kernels::@mul_add_f32_{{[0-9a-f]+}} on #vdev.device<"cuda", 0> grid(%0, %0, %0) block(%1, %0, %0) args(%x, %w, %init, %r) {device.work = array<i64: 288, 488>} : memref<9x9xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<3x3xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4x4xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4x4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  func.return %r : memref<4x4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  }

func.func @strided_window(%x: tensor<9x9xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, %w: tensor<3x3xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, %init: tensor<4x4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) -> (tensor<4x4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0 * 2 + d2, d1 * 2 + d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<9x9xf32>, tensor<3x3xf32>) outs(%init : tensor<4x4xf32>) attrs = {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}

// -----

// Several outputs: one reduction loop carries both (a row's sum and maximum), each
// from its own init, each stored at its map; the host allocates both results.

// CHECK-LABEL: kernel.module @cuda_kernels target #target.target<"cuda"> {
// CHECK-NEXT:  kernel.func @add_maximumf_f32_{{[0-9a-f]+}}(%in0: memref<?x?xf32>, %init0: memref<?xf32>, %init1: memref<?xf32>, %out0: memref<?xf32>, %out1: memref<?xf32>) {
// CHECK-NEXT:    %0 = kernel.thread_id x
// CHECK-NEXT:    %1 = kernel.block_id x
// CHECK-NEXT:    %2 = kernel.block_dim x
// CHECK-NEXT:    %3 = arith.muli %1, %2 : index
// CHECK-NEXT:    %4 = arith.addi %3, %0 : index
// CHECK-NEXT:    %5 = arith.constant 0 : index
// CHECK-NEXT:    %6 = memref.dim %out0, %5 : memref<?xf32>
// CHECK-NEXT:    %7 = arith.constant 1 : index
// CHECK-NEXT:    %8 = memref.dim %in0, %7 : memref<?x?xf32>
// CHECK-NEXT:    %9 = arith.cmpi ult, %4, %6 : index
// CHECK-NEXT:    scf.if %9 {
// CHECK-NEXT:      %10 = memref.load %init0[%4] : memref<?xf32>
// CHECK-NEXT:      %11 = memref.load %init1[%4] : memref<?xf32>
// CHECK-NEXT:      %12, %13 = scf.for %14 = %5 to %8 step %7 iter_args(%15 = %10, %16 = %11) -> (f32, f32) {
// CHECK-NEXT:        %17 = memref.load %in0[%4, %14] : memref<?x?xf32>
// CHECK-NEXT:        %s1 = arith.addf %15, %17 : f32
// CHECK-NEXT:        %m1 = arith.maximumf %16, %17 : f32
// CHECK-NEXT:        scf.yield %s1, %m1 : f32, f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %12, %out0[%4] : memref<?xf32>
// CHECK-NEXT:      memref.store %13, %out1[%4] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @row_stats(%x: memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">>, %s0: memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>, %m0: memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>) -> (memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>) {
// CHECK-NEXT:  %0 = arith.constant 1 : index
// CHECK-NEXT:  %1 = arith.constant 4 : index
// CHECK-NEXT:  %r = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  %r_1 = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  device.launch @cuda_kernels::@add_maximumf_f32_{{[0-9a-f]+}} on #vdev.device<"cuda", 0> grid(%0, %0, %0) block(%1, %0, %0) args(%x, %s0, %m0, %r, %r_1) {device.work = array<i64: 48, 160>} : memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  func.return %r, %r_1 : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  }

func.func @row_stats(%x: tensor<4x6xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, %s0: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, %m0: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) -> (tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x6xf32>) outs(%s0, %m0 : tensor<4xf32>, tensor<4xf32>) attrs = {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} {
  ^bb0(%a: f32, %s: f32, %m: f32):
    %s1 = arith.addf %s, %a : f32
    %m1 = arith.maximumf %m, %a : f32
    linalg.yield %s1, %m1 : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Dynamic shapes: the host checks at run time that in0 and the init agree on the
// parallel dimension, sizes the result by the init, and computes the grid from the
// result's extent: max(ceil(n / 256), 1) blocks.

// CHECK-LABEL: kernel.module @cuda_kernels target #target.target<"cuda"> {
// CHECK-NEXT:  kernel.func @add_f32_{{[0-9a-f]+}}(%in0: memref<?x?xf32>, %init: memref<?xf32>, %out: memref<?xf32>) {
// CHECK-NEXT:    %0 = kernel.thread_id x
// CHECK-NEXT:    %1 = kernel.block_id x
// CHECK-NEXT:    %2 = kernel.block_dim x
// CHECK-NEXT:    %3 = arith.muli %1, %2 : index
// CHECK-NEXT:    %4 = arith.addi %3, %0 : index
// CHECK-NEXT:    %5 = arith.constant 0 : index
// CHECK-NEXT:    %6 = memref.dim %out, %5 : memref<?xf32>
// CHECK-NEXT:    %7 = arith.constant 1 : index
// CHECK-NEXT:    %8 = memref.dim %in0, %7 : memref<?x?xf32>
// CHECK-NEXT:    %9 = arith.cmpi ult, %4, %6 : index
// CHECK-NEXT:    scf.if %9 {
// CHECK-NEXT:      %10 = memref.load %init[%4] : memref<?xf32>
// CHECK-NEXT:      %11 = scf.for %12 = %5 to %8 step %7 iter_args(%13 = %10) -> (f32) {
// CHECK-NEXT:        %14 = memref.load %in0[%4, %12] : memref<?x?xf32>
// CHECK-NEXT:        %s = arith.addf %13, %14 : f32
// CHECK-NEXT:        scf.yield %s : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %11, %out[%4] : memref<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @dynamic_rows(%x: memref<?x?xf32, #vdev.device<"cuda", 0, ?, "global">>, %init: memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>) -> memref<?xf32, #vdev.device<"cuda", 0, ?, "global">> {
// CHECK-NEXT:  %0 = arith.constant 0 : index
// CHECK-NEXT:  %1 = arith.constant 256 : index
// CHECK-NEXT:  %2 = arith.constant 1 : index
// CHECK-NEXT:  %3 = memref.dim %x, %0 : memref<?x?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  %4 = memref.dim %init, %0 : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  %5 = arith.cmpi eq, %3, %4 : index
// CHECK-NEXT:  cf.assert %5, "'linalg.generic' on tensors of different shapes: dimension 0 of outs[0] differs from dimension 0 of ins[0]"
// CHECK-NEXT:  %6 = memref.dim %init, %0 : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  %r = device.alloc(%6) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  %7 = memref.dim %r, %0 : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  %8 = arith.ceildivui %7, %1 : index
// CHECK-NEXT:  %9 = arith.maxui %8, %2 : index
// CHECK-NEXT:  device.launch @cuda_kernels::@add_f32_{{[0-9a-f]+}} on #vdev.device<"cuda", 0> grid(%9, %2, %2) block(%1, %2, %2) args(%x, %init, %r) : memref<?x?xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  func.return %r : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  }

func.func @dynamic_rows(%x: tensor<?x?xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, %init: tensor<?xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) -> (tensor<?xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%init : tensor<?xf32>) attrs = {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

// -----

// An output whose static rows are at least 32 long runs as rows: a 2-D grid, the output's
// last dimension (d2) a global id along x (no division per element: the Numba backend
// vectorises the row and runs blocks in parallel), the other parallel dimensions (d0, d1)
// split from the global id along y, one row of blocks per row of the output (2 x 3 rows
// of 64, blocks of 64 threads).

// CHECK-LABEL: kernel.module @cuda_kernels target #target.target<"cuda"> {
// CHECK-NEXT:  kernel.func @add_f32_{{[0-9a-f]+}}(%in0: memref<?x?x?xf32>, %in1: memref<?xf32>, %out: memref<?x?x?xf32>) {
// CHECK-NEXT:    %0 = kernel.thread_id x
// CHECK-NEXT:    %1 = kernel.block_id x
// CHECK-NEXT:    %2 = kernel.block_dim x
// CHECK-NEXT:    %3 = arith.muli %1, %2 : index
// CHECK-NEXT:    %4 = arith.addi %3, %0 : index
// CHECK-NEXT:    %5 = kernel.thread_id y
// CHECK-NEXT:    %6 = kernel.block_id y
// CHECK-NEXT:    %7 = kernel.block_dim y
// CHECK-NEXT:    %8 = arith.muli %6, %7 : index
// CHECK-NEXT:    %9 = arith.addi %8, %5 : index
// CHECK-NEXT:    %10 = arith.constant 0 : index
// CHECK-NEXT:    %11 = memref.dim %out, %10 : memref<?x?x?xf32>
// CHECK-NEXT:    %12 = arith.constant 1 : index
// CHECK-NEXT:    %13 = memref.dim %out, %12 : memref<?x?x?xf32>
// CHECK-NEXT:    %14 = arith.constant 2 : index
// CHECK-NEXT:    %15 = memref.dim %out, %14 : memref<?x?x?xf32>
// CHECK-NEXT:    %16 = arith.muli %11, %13 : index
// CHECK-NEXT:    %17 = arith.cmpi ult, %4, %15 : index
// CHECK-NEXT:    %18 = arith.cmpi ult, %9, %16 : index
// CHECK-NEXT:    %19 = arith.andi %17, %18 : i1
// CHECK-NEXT:    scf.if %19 {
// CHECK-NEXT:      %20 = arith.remsi %9, %13 : index
// CHECK-NEXT:      %21 = arith.divsi %9, %13 : index
// CHECK-NEXT:      %22 = memref.load %in0[%21, %20, %4] : memref<?x?x?xf32>
// CHECK-NEXT:      %23 = memref.load %in1[%4] : memref<?xf32>
// CHECK-NEXT:      %s = arith.addf %22, %23 : f32
// CHECK-NEXT:      memref.store %s, %out[%21, %20, %4] : memref<?x?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @rows(%x: memref<2x3x64xf32, #vdev.device<"cuda", 0, ?, "global">>, %b: memref<64xf32, #vdev.device<"cuda", 0, ?, "global">>) -> memref<2x3x64xf32, #vdev.device<"cuda", 0, ?, "global">> {
// CHECK-NEXT:  %0 = arith.constant 1 : index
// CHECK-NEXT:  %1 = arith.constant 6 : index
// CHECK-NEXT:  %2 = arith.constant 64 : index
// CHECK-NEXT:  %r = device.alloc() : memref<2x3x64xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  device.launch @cuda_kernels::@add_f32_{{[0-9a-f]+}} on #vdev.device<"cuda", 0> grid(%0, %1, %0) block(%2, %0, %0) args(%x, %b, %r) {device.work = array<i64: 384, 3328>} : memref<2x3x64xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<64xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<2x3x64xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  func.return %r : memref<2x3x64xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:  }

func.func @rows(%x: tensor<2x3x64xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, %b: tensor<64xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) -> (tensor<2x3x64xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %t = tensor.empty() {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<2x3x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %b : tensor<2x3x64xf32>, tensor<64xf32>) outs(%t : tensor<2x3x64xf32>) attrs = {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x3x64xf32>
  func.return %r : tensor<2x3x64xf32>
}
