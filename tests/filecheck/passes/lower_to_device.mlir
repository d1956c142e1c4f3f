// RUN: not devplan-opt %s --split-input-file -p lower-to-device 2>&1 | filecheck %s

// Hand-planned input: what plan-devices writes (every tensor op carries `vdev.device`,
// arguments and results their placement, vdev.device_copy where values cross devices).

// Elementwise ops: a generated kernel per (op, types, rank) in one kernel.module per
// target, launched over ceil(n / 256) blocks; the host device's values are host memory
// and its kernels launch on cpu:0; copies become alloc + device.copy; every buffer is
// freed after its last use, the returned one is not.

// CHECK:      kernel.module @cuda_kernels target #target.target<"cuda"> {
// CHECK-NEXT:   kernel.func @add_f32(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
// CHECK-NEXT:     %0 = kernel.thread_id x
// CHECK-NEXT:     %1 = kernel.block_id x
// CHECK-NEXT:     %2 = kernel.block_dim x
// CHECK-NEXT:     %3 = arith.muli %1, %2 : index
// CHECK-NEXT:     %4 = arith.addi %3, %0 : index
// CHECK-NEXT:     %5 = arith.constant 0 : index
// CHECK-NEXT:     %6 = memref.dim %out, %5 : memref<?xf32>
// CHECK-NEXT:     %7 = arith.cmpi ult, %4, %6 : index
// CHECK-NEXT:     scf.if %7 {
// CHECK-NEXT:       %8 = memref.load %in0[%4] : memref<?xf32>
// CHECK-NEXT:       %9 = memref.load %in1[%4] : memref<?xf32>
// CHECK-NEXT:       %10 = arith.addf %8, %9 : f32
// CHECK-NEXT:       memref.store %10, %out[%4] : memref<?xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:     kernel.return
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NEXT: kernel.module @cpu_kernels target #target.target<"llvm"> {
// CHECK-NEXT:   kernel.func @mul_f32(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
// CHECK-LABEL: func.func @split(%a: memref<1000xf32>, %b: memref<1000xf32>) -> memref<1000xf32> {
// CHECK-NEXT:    %0 = arith.constant 4 : index
// CHECK-NEXT:    %1 = arith.constant 1 : index
// CHECK-NEXT:    %2 = arith.constant 256 : index
// CHECK-NEXT:    %a1 = device.alloc() : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.copy %a to %a1 : memref<1000xf32> to memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %b1 = device.alloc() : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.copy %b to %b1 : memref<1000xf32> to memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %c = device.alloc() : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.launch @cuda_kernels::@add_f32 on #vdev.device<"cuda", 0> grid(%0, %1, %1) block(%2, %1, %1) args(%a1, %b1, %c)
// CHECK-NEXT:    device.free %b1
// CHECK-NEXT:    %d = device.alloc() : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.launch @cuda_kernels::@add_f32 on #vdev.device<"cuda", 0> grid(%0, %1, %1) block(%2, %1, %1) args(%c, %a1, %d)
// CHECK-NEXT:    device.free %a1
// CHECK-NEXT:    device.free %c
// CHECK-NEXT:    %d1 = memref.alloc() : memref<1000xf32>
// CHECK-NEXT:    device.copy %d to %d1 : memref<1000xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<1000xf32>
// CHECK-NEXT:    device.free %d
// CHECK-NEXT:    %e = memref.alloc() : memref<1000xf32>
// CHECK-NEXT:    device.launch @cpu_kernels::@mul_f32 on #vdev.device<"cpu", 0> grid(%0, %1, %1) block(%2, %1, %1) args(%d1, %b, %e) {device.work = array<i64: 1000, 12000>} : memref<1000xf32>, memref<1000xf32>, memref<1000xf32>
// CHECK-NEXT:    memref.dealloc %d1 : memref<1000xf32>
// CHECK-NEXT:    func.return %e : memref<1000xf32>
// CHECK-NEXT:  }
func.func @split(%a: tensor<1000xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">},
                 %b: tensor<1000xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">})
    -> (tensor<1000xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %a1 = vdev.device_copy %a from #vdev.device<"cpu", 0, #target.target<"llvm">, "global"> to #vdev.device<"cuda", 0, #target.target<"cuda">, "global"> : tensor<1000xf32>
  %b1 = vdev.device_copy %b from #vdev.device<"cpu", 0, #target.target<"llvm">, "global"> to #vdev.device<"cuda", 0, #target.target<"cuda">, "global"> : tensor<1000xf32>
  %c = arith.addf %a1, %b1 {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<1000xf32>
  %d = arith.addf %c, %a1 {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<1000xf32>
  %d1 = vdev.device_copy %d from #vdev.device<"cuda", 0, #target.target<"cuda">, "global"> to #vdev.device<"cpu", 0, #target.target<"llvm">, "global"> : tensor<1000xf32>
  %e = arith.mulf %d1, %b {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<1000xf32>
  func.return %e : tensor<1000xf32>
}

// -----

// Any rank and dynamic shapes: the kernel recovers each index from the linear one with
// memref.dim of its output; the host computes the grid from the sizes at run time, after
// a cf.assert per dynamic dimension that the operands agree (static ones need none).
// Selects (on a scalar condition) and casts are kernels too, named for what they compute.

// CHECK-LABEL: kernel.func @maximumf_f32_3d(%in0: memref<?x?x?xf32>, %in1: memref<?x?x?xf32>, %out: memref<?x?x?xf32>) {
// CHECK:         %{{.*}} = memref.dim %out, %{{.*}} : memref<?x?x?xf32>
// CHECK:         scf.if
// CHECK-NEXT:      %[[R2:.*]] = arith.remui %{{.*}}, %[[D2:.*]] : index
// CHECK-NEXT:      %[[Q2:.*]] = arith.divui %{{.*}}, %[[D2]] : index
// CHECK-NEXT:      %[[R1:.*]] = arith.remui %[[Q2]], %{{.*}} : index
// CHECK-NEXT:      %[[Q1:.*]] = arith.divui %[[Q2]], %{{.*}} : index
// CHECK-NEXT:      %{{.*}} = memref.load %in0[%[[Q1]], %[[R1]], %[[R2]]] : memref<?x?x?xf32>
// CHECK:           arith.maximumf
// CHECK-LABEL: kernel.func @extf_f32_f64_3d(%in0: memref<?x?x?xf32>, %out: memref<?x?x?xf64>) {
// CHECK-LABEL: kernel.func @select_f32_3d(%in0: i1, %in1: memref<?x?x?xf32>, %in2: memref<?x?x?xf32>, %out: memref<?x?x?xf32>) {
// CHECK:         %{{.*}} = arith.select %in0, %{{.*}}, %{{.*}} : f32
// CHECK-LABEL: func.func @shapes(
// CHECK:         %[[N:.*]] = memref.dim %x, %{{.*}} : memref<?x4x?xf32, #vdev.device<"cuda", 1, ?, "global">>
// CHECK:         %[[M:.*]] = memref.dim %x, %{{.*}} : memref<?x4x?xf32, #vdev.device<"cuda", 1, ?, "global">>
// CHECK:         cf.assert %{{.*}}, "'arith.maximumf' on tensors of different shapes: dimension 0 of operand 1 differs from dimension 0 of operand 0"
// CHECK:         cf.assert %{{.*}}, "'arith.maximumf' on tensors of different shapes: dimension 2 of operand 1 differs from dimension 2 of operand 0"
// CHECK-NEXT:    %max = device.alloc(%[[N]], %[[M]]) : memref<?x4x?xf32, #vdev.device<"cuda", 1, ?, "global">>
// CHECK:         arith.muli
// CHECK-NEXT:    %[[COUNT:.*]] = arith.muli
// CHECK-NEXT:    %[[BLOCKS:.*]] = arith.ceildivui %[[COUNT]], %{{.*}} : index
// CHECK-NEXT:    %[[GRID:.*]] = arith.maxui %[[BLOCKS]], %{{.*}} : index
// CHECK-NEXT:    device.launch @cuda_kernels::@maximumf_f32_3d on #vdev.device<"cuda", 1> grid(%[[GRID]], %{{.*}}, %{{.*}}) block(
// CHECK:         device.launch @cuda_kernels::@extf_f32_f64_3d
// CHECK:         device.launch @cuda_kernels::@select_f32_3d
func.func @shapes(%x: tensor<?x4x?xf32> {vdev.device = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">},
                  %y: tensor<?x4x?xf32> {vdev.device = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">},
                  %flag: i1)
    -> (tensor<?x4x?xf32> {vdev.device = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">},
        tensor<?x4x?xf64> {vdev.device = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">},
        tensor<?x4x?xf32> {vdev.device = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">}) {
  %max = arith.maximumf %x, %y {vdev.device = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">} : tensor<?x4x?xf32>
  %f = arith.extf %x {vdev.device = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">} : tensor<?x4x?xf32> to tensor<?x4x?xf64>
  %pick = arith.select %flag, %x, %y {vdev.device = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">} : tensor<?x4x?xf32>
  func.return %max, %f, %pick : tensor<?x4x?xf32>, tensor<?x4x?xf64>, tensor<?x4x?xf32>
}

// -----

// Comparisons on tensors give i1 buffers; a select on such a condition, and casts
// (whose result element type differs from the operand's), are kernels named for both
// types; on the host device the same ops run as cpu kernels on host memory.

// CHECK:      kernel.module @cuda_kernels target #target.target<"cuda"> {
// CHECK-NEXT:   kernel.func @cmpf_olt_f32(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xi1>) {
// CHECK:          %[[L:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:     memref.store %[[L]], %out[%{{.*}}] : memref<?xi1>
// CHECK:        kernel.func @select_f32(%in0: memref<?xi1>, %in1: memref<?xf32>, %in2: memref<?xf32>, %out: memref<?xf32>) {
// CHECK:          %[[C:.*]] = memref.load %in0[%{{.*}}] : memref<?xi1>
// CHECK:          %{{.*}} = arith.select %[[C]], %{{.*}}, %{{.*}} : f32
// CHECK:      kernel.module @cpu_kernels target #target.target<"llvm"> {
// CHECK-NEXT:   kernel.func @cmpi_slt_i32(%in0: memref<?xi32>, %in1: memref<?xi32>, %out: memref<?xi1>) {
// CHECK:          arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK:        kernel.func @extui_i1_i32(%in0: memref<?xi1>, %out: memref<?xi32>) {
// CHECK:          arith.extui %{{.*}} : i1 to i32
// CHECK:        kernel.func @trunci_i32_i8(%in0: memref<?xi32>, %out: memref<?xi8>) {
// CHECK:          arith.trunci %{{.*}} : i32 to i8
// CHECK-LABEL: func.func @masks(
// CHECK:         %less = device.alloc() : memref<8xi1, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.launch @cuda_kernels::@cmpf_olt_f32 on #vdev.device<"cuda", 0> {{.*}} args(%a, %b, %less)
// CHECK-NEXT:    %low = device.alloc() : memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.launch @cuda_kernels::@select_f32 on #vdev.device<"cuda", 0> {{.*}} args(%less, %a, %b, %low)
// CHECK-NEXT:    device.free %less
// CHECK-NEXT:    %neg = memref.alloc() : memref<8xi1>
// CHECK-NEXT:    device.launch @cpu_kernels::@cmpi_slt_i32 on #vdev.device<"cpu", 0> {{.*}} args(%i, %i, %neg)
// CHECK-NEXT:    %bits = memref.alloc() : memref<8xi32>
// CHECK-NEXT:    device.launch @cpu_kernels::@extui_i1_i32 on #vdev.device<"cpu", 0> {{.*}} args(%neg, %bits)
// CHECK-NEXT:    memref.dealloc %neg : memref<8xi1>
// CHECK-NEXT:    %byte = memref.alloc() : memref<8xi8>
// CHECK-NEXT:    device.launch @cpu_kernels::@trunci_i32_i8 on #vdev.device<"cpu", 0> {{.*}} args(%i, %byte)
func.func @masks(%a: tensor<8xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">},
                 %b: tensor<8xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">},
                 %i: tensor<8xi32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">})
    -> (tensor<8xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">},
        tensor<8xi8> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">},
        tensor<8xi32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %less = arith.cmpf olt, %a, %b {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<8xf32>
  %low = arith.select %less, %a, %b {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<8xi1>, tensor<8xf32>
  %neg = arith.cmpi slt, %i, %i {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<8xi32>
  %bits = arith.extui %neg {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<8xi1> to tensor<8xi32>
  %byte = arith.trunci %i {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<8xi32> to tensor<8xi8>
  func.return %low, %byte, %bits : tensor<8xf32>, tensor<8xi8>, tensor<8xi32>
}

// -----

// linalg.fill is a fill kernel over a flat view of its buffer, one thread an element
// (a tensor.empty only a fill writes over allocates nothing), tensor.empty an allocation, linalg.matmul a kernel where each thread
// computes 8 rows of one column (reads clamped to the last row and column, no step over
// k for a result with no rows or columns; k in steps of 4 with one math.fma per row and
// step, then the steps left one by one, each loop followed by a barrier; then the
// guarded stores), launched with blocks of 8 rows along x and 1-D blocks along y of
// all the columns when at most min(W, max_num_threads) (W: 1024 on a CPU, 256 on a
// GPU, as here), else of the widest block of at least 256 that divides them, else 256.

// CHECK-LABEL: kernel.module @cuda_kernels target #target.target<"cuda"> {
// CHECK:         kernel.func @fill_f32(%out: memref<?xf32>, %value: f32) {
// CHECK:           memref.store %value, %out[
// CHECK:         kernel.func @matmul_f32_rows8(%lhs: memref<?x?xf32>, %rhs: memref<?x?xf32>, %acc: memref<?x?xf32>, %out: memref<?x?xf32>) {
// CHECK:           %[[LAST_COL:.*]] = arith.minsi
// CHECK-COUNT-8:   arith.minsi
// CHECK-NEXT:      %[[NO_ROWS:.*]] = arith.cmpi eq, %{{.*}}, %[[C0:.*]] : index
// CHECK-NEXT:      %[[NO_COLS:.*]] = arith.cmpi eq, %{{.*}}, %[[C0]] : index
// CHECK-NEXT:      %[[EMPTY:.*]] = arith.ori %[[NO_ROWS]], %[[NO_COLS]] : i1
// CHECK-NEXT:      %[[STEPS:.*]] = arith.select %[[EMPTY]], %[[C0]], %{{.*}} : index
// CHECK-NEXT:      %[[FOURS:.*]] = arith.divsi %[[STEPS]], %[[C4:.*]] : index
// CHECK-NEXT:      %[[WHOLE:.*]] = arith.muli %[[FOURS]], %[[C4]] : index
// CHECK-NEXT:      {{(%[0-9]+, ){7}%[0-9]+}} = scf.for %[[K:.*]] = %[[C0]] to %[[WHOLE]] step %[[C4]] iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NEXT:        memref.load %rhs[%[[K]], %[[LAST_COL]]]
// CHECK-NEXT:        memref.load %lhs[%{{.*}}, %[[K]]]
// CHECK-NEXT:        math.fma
// CHECK-COUNT-31:    math.fma
// CHECK:             scf.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      kernel.barrier
// CHECK-NEXT:      {{(%[0-9]+, ){7}%[0-9]+}} = scf.for %[[K1:.*]] = %[[WHOLE]] to %[[STEPS]] step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NEXT:        memref.load %rhs[%[[K1]], %[[LAST_COL]]]
// CHECK-COUNT-8:     math.fma
// CHECK:           kernel.barrier
// CHECK-COUNT-8:   scf.if
// CHECK-LABEL: kernel.module @cuda_kernels_1 target #target.target<"cuda", {max_num_threads = 64}> {
// CHECK:         kernel.func @matmul_i32_rows8(
// CHECK:           arith.muli
// CHECK-NEXT:      arith.addi
// CHECK-LABEL: func.func @matmul(
// CHECK-NOT:     %e = device.alloc
// CHECK:         %z = device.alloc() : memref<40x24xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[FLAT:.*]] = device.view %z offset(%{{.*}}) sizes(%{{.*}}) strides(%{{.*}}) : memref<40x24xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<960xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.launch @cuda_kernels::@fill_f32 on #vdev.device<"cuda", 0> grid(%{{.*}}, %{{.*}}, %{{.*}}) block(%{{.*}}, %{{.*}}, %{{.*}}) args(%[[FLAT]], %zero)
// CHECK-NEXT:    %m = device.alloc() : memref<40x24xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.launch @cuda_kernels::@matmul_f32_rows8 on #vdev.device<"cuda", 0> grid(%[[FIVE:.*]], %[[ONE:.*]], %[[ONE]]) block(%[[COLUMNS:.*]], %[[ONE]], %[[ONE]]) args(%a, %b, %z, %m)
// CHECK-NEXT:    device.free %z
// CHECK-LABEL: func.func @empty_as_accumulator(
// CHECK:         %e = device.alloc() : memref<2x2xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK:         device.launch @cuda_kernels::@matmul_f32_rows8 {{.*}} args(%a, %a, %e, %m)
// CHECK-NEXT:    device.free %e
// CHECK-LABEL: func.func @small_blocks(
// CHECK:         device.launch @cuda_kernels_1::@matmul_i32_rows8 on #vdev.device<"cuda", 0> grid({{.*}}) block(%[[EIGHT:.*]], %[[ONE:.*]], %[[ONE]])
func.func @matmul(%a: tensor<40x30xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">},
                  %b: tensor<30x24xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">})
    -> (tensor<40x24xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<40x24xf32>
  %z = linalg.fill {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} ins(%zero : f32) outs(%e : tensor<40x24xf32>) -> tensor<40x24xf32>
  %m = linalg.matmul {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} ins(%a, %b : tensor<40x30xf32>, tensor<30x24xf32>) outs(%z : tensor<40x24xf32>) -> tensor<40x24xf32>
  func.return %m : tensor<40x24xf32>
}
func.func @empty_as_accumulator(%a: tensor<2x2xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">})
    -> (tensor<2x2xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %e = tensor.empty() {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<2x2xf32>
  %m = linalg.matmul {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} ins(%a, %a : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %m : tensor<2x2xf32>
}
func.func @small_blocks(%a: tensor<8x8xi32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda", {max_num_threads = 64}>, "global">})
    -> (tensor<8x8xi32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda", {max_num_threads = 64}>, "global">}) {
  %m = linalg.matmul {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda", {max_num_threads = 64}>, "global">} ins(%a, %a : tensor<8x8xi32>, tensor<8x8xi32>) outs(%a : tensor<8x8xi32>) -> tensor<8x8xi32>
  func.return %m : tensor<8x8xi32>
}

// -----

// The same kernel for a contraction behind a batch loop (linalg.batch_matmul: every
// operand indexed by the batch, one batch a block along z, none stored past the last
// batch) and for one whose second input is read transposed (`q k^T` as a generic,
// B[n, k]): chosen from the maps and body, as for linalg.matmul. The transposed input is
// copied by a copy kernel (B[k, n] = in[n, k]) into a scratch buffer in the kernel's
// layout, freed after the launch.

// CHECK-LABEL: kernel.func @batch_matmul_f32_rows8(%lhs: memref<?x?x?xf32>, %rhs: memref<?x?x?xf32>, %acc: memref<?x?x?xf32>, %out: memref<?x?x?xf32>) {
// CHECK:           %[[BATCH:.*]] = kernel.block_id z
// CHECK:           %[[BATCHES:.*]] = memref.dim %out, %{{.*}} : memref<?x?x?xf32>
// CHECK:           memref.load %rhs[%[[BATCH]], %{{.*}}, %{{.*}}] : memref<?x?x?xf32>
// CHECK-NEXT:      memref.load %lhs[%[[BATCH]], %{{.*}}, %{{.*}}] : memref<?x?x?xf32>
// CHECK:           %[[IN_BATCH:.*]] = arith.cmpi ult, %[[BATCH]], %[[BATCHES]] : index
// CHECK:           memref.store %{{.*}}, %out[%[[BATCH]], %{{.*}}, %{{.*}}] : memref<?x?x?xf32>
// CHECK-LABEL: kernel.func @copy_f32_{{[0-9a-f]+}}(%in0: memref<?x?xf32>, %out: memref<?x?xf32>) {
// CHECK:           %[[V:.*]] = memref.load %in0[%[[N:.*]], %[[K:.*]]] : memref<?x?xf32>
// CHECK-NEXT:      memref.store %[[V]], %out[%[[K]], %[[N]]] : memref<?x?xf32>
// CHECK-LABEL: kernel.func @matmul_f32_rows8(%lhs: memref<?x?xf32>, %rhs: memref<?x?xf32>, %acc: memref<?x?xf32>, %out: memref<?x?xf32>) {
// CHECK-LABEL: func.func @batch_and_transposed(
// CHECK:         device.launch @cuda_kernels::@batch_matmul_f32_rows8 on #vdev.device<"cuda", 0> grid(%[[THREE:.*]], %[[ONE:.*]], %[[THREE]]) block(%[[FIVE:.*]], %[[ONE]], %[[ONE]]) args(%a, %b, %z, %m)
// CHECK:         %[[PACKED:.*]] = device.alloc() : memref<6x20xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.launch @cuda_kernels::@copy_f32_{{[0-9a-f]+}} on #vdev.device<"cuda", 0> {{.*}} args(%q, %[[PACKED]]) {device.work = array<i64: 0, 960>}
// CHECK-NEXT:    device.launch @cuda_kernels::@matmul_f32_rows8 on #vdev.device<"cuda", 0> grid(%[[THREE]], %[[ONE]], %[[ONE]]) block(%{{.*}}, %[[ONE]], %[[ONE]]) args(%q, %[[PACKED]], %zs, %s)
// CHECK-NEXT:    device.free %[[PACKED]]
func.func @batch_and_transposed(%a: tensor<3x20x6xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">},
                                %b: tensor<3x6x5xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">},
                                %q: tensor<20x6xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">})
    -> (tensor<3x20x5xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, tensor<20x20xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<3x20x5xf32>
  %z = linalg.fill {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} ins(%zero : f32) outs(%e : tensor<3x20x5xf32>) -> tensor<3x20x5xf32>
  %m = linalg.batch_matmul {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} ins(%a, %b : tensor<3x20x6xf32>, tensor<3x6x5xf32>) outs(%z : tensor<3x20x5xf32>) -> tensor<3x20x5xf32>
  %es = tensor.empty() {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<20x20xf32>
  %zs = linalg.fill {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} ins(%zero : f32) outs(%es : tensor<20x20xf32>) -> tensor<20x20xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %q : tensor<20x6xf32>, tensor<20x6xf32>) outs(%zs : tensor<20x20xf32>) attrs = {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<20x20xf32>
  func.return %m, %s : tensor<3x20x5xf32>, tensor<20x20xf32>
}

// -----

// A convolution is a contraction too (chosen from its maps and body): an implicit GEMM
// of output channels x output pixels summed over channels x window, on the matmul
// kernel. The filter and the output are views (no copy); the image is copied once, as
// a strided view with a row of the window per output pixel (strides 81, 9, 1 for the
// channel and window, 18 and 2 for the stride-2 pixels), into a scratch buffer freed
// after the launch. A read at a map that is no strided view (`d2 mod 4`) is copied by
// a kernel instead.

// CHECK-LABEL: kernel.func @copy_f32_{{[0-9a-f]+}}(%in0: memref<?x?xf32>, %out: memref<?x?xf32>) {
// CHECK:           arith.remsi
// CHECK-LABEL: func.func @conv_as_matmul(
// CHECK:         %[[FILTER:.*]] = device.view %f offset(%{{.*}}) sizes(%{{.*}}, %{{.*}}) strides(%{{.*}}, %{{.*}}) : memref<4x3x3x3xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<4x27xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[WINDOWS:.*]] = device.view %img offset(%{{.*}}) sizes({{.*}}) strides({{.*}}) : memref<1x3x9x9xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<3x3x3x4x4xf32, strided<[81, 9, 1, 18, 2]>, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[COLUMNS:.*]] = device.alloc() : memref<3x3x3x4x4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.copy %[[WINDOWS]] to %[[COLUMNS]]
// CHECK-NEXT:    %[[RHS:.*]] = device.view %[[COLUMNS]] {{.*}} to memref<27x16xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[ACC:.*]] = device.view %z {{.*}} to memref<4x16xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[OUT:.*]] = device.view %c {{.*}} to memref<4x16xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.launch @cuda_kernels::@matmul_f32_rows8 on #vdev.device<"cuda", 0> {{.*}} args(%[[FILTER]], %[[RHS]], %[[ACC]], %[[OUT]]) {device.work = array<i64: 3456, 1916>}
// CHECK-NEXT:    device.free %[[COLUMNS]]
// CHECK:         %[[PACKED:.*]] = device.alloc() : memref<4x5xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.launch @cuda_kernels::@copy_f32_{{[0-9a-f]+}} on #vdev.device<"cuda", 0> {{.*}} args(%b, %[[PACKED]]) {device.work = array<i64: 0, 160>}
// CHECK-NEXT:    device.launch @cuda_kernels::@matmul_f32_rows8 on #vdev.device<"cuda", 0> {{.*}} args(%a, %[[PACKED]], %zm, %m) {device.work = array<i64: 240, 416>}
// CHECK-NEXT:    device.free %[[PACKED]]
func.func @conv_as_matmul(%img: tensor<1x3x9x9xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">},
                          %f: tensor<4x3x3x3xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">},
                          %a: tensor<6x4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">},
                          %b: tensor<4x5xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">})
    -> (tensor<1x4x4x4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, tensor<6x5xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<1x4x4x4xf32>
  %z = linalg.fill {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>, vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} ins(%img, %f : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%z : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %em = tensor.empty() {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<6x5xf32>
  %zm = linalg.fill {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} ins(%zero : f32) outs(%em : tensor<6x5xf32>) -> tensor<6x5xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2 mod 4, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<6x4xf32>, tensor<4x5xf32>) outs(%zm : tensor<6x5xf32>) attrs = {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<6x5xf32>
  func.return %c, %m : tensor<1x4x4x4xf32>, tensor<6x5xf32>
}

// -----

// Dense constants, one per consuming device as planned: a splat is a fill launch on
// its device; other data is a memref.global copied to a buffer on its device (xDSL
// prints memref.global in the generic form).

// CHECK:       "memref.global"() <{sym_name = "constant_3xf32", type = memref<3xf32>, initial_value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>, sym_visibility = "private", constant}> : () -> ()
// CHECK-LABEL: func.func @constants(
// CHECK:         %k = device.alloc() : memref<3xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[DATA:.*]] = memref.get_global @constant_3xf32 : memref<3xf32>
// CHECK-NEXT:    device.copy %[[DATA]] to %k : memref<3xf32> to memref<3xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %k1 = device.alloc() : memref<3xf32, #vdev.device<"cuda", 1, ?, "global">>
// CHECK-NEXT:    %[[DATA1:.*]] = memref.get_global @constant_3xf32 : memref<3xf32>
// CHECK-NEXT:    device.copy %[[DATA1]] to %k1
// CHECK-NEXT:    %s = memref.alloc() : memref<3xf32>
// CHECK-NEXT:    %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    device.launch @cpu_kernels::@fill_f32 on #vdev.device<"cpu", 0> grid({{.*}}) block({{.*}}) args(%s, %[[HALF]])
func.func @constants() -> (tensor<3xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">},
                           tensor<3xf32> {vdev.device = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">},
                           tensor<3xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %k = arith.constant {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %k1 = arith.constant {vdev.device = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">} dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %s = arith.constant {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} dense<0.5> : tensor<3xf32>
  func.return %k, %k1, %s : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// func.call: arguments are borrowed, results owned by the caller. A function that
// returns its argument (twice) returns fresh copies, so each buffer has one owner.
// A copy into another memory scope of the same device is a device.copy too.

// CHECK-LABEL: func.func @twice(%x: memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>) -> (memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>) {
// CHECK-NEXT:    %0 = device.alloc() : memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.copy %x to %0
// CHECK-NEXT:    %1 = device.alloc() : memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.copy %x to %1
// CHECK-NEXT:    func.return %0, %1
// CHECK-LABEL: func.func @caller(
// CHECK:         %r, %r_1 = func.call @twice(%x) : (memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>) -> (memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>, memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>)
// CHECK-NEXT:    device.free %r_1
// CHECK-NEXT:    %h = device.alloc() : memref<8xf32, #vdev.device<"cuda", 0, ?, "host">>
// CHECK-NEXT:    device.copy %r to %h : memref<8xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<8xf32, #vdev.device<"cuda", 0, ?, "host">>
// CHECK-NEXT:    device.free %r
// CHECK-NEXT:    func.return %h
func.func @twice(%x: tensor<8xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">})
    -> (tensor<8xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">},
        tensor<8xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  func.return %x, %x : tensor<8xf32>, tensor<8xf32>
}
func.func @caller(%x: tensor<8xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">})
    -> (tensor<8xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "host">}) {
  %r:2 = func.call @twice(%x) {vdev.device = [#vdev.device<"cuda", 0, #target.target<"cuda">, "global">, #vdev.device<"cuda", 0, #target.target<"cuda">, "global">]} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  %h = vdev.device_copy %r#0 from #vdev.device<"cuda", 0, #target.target<"cuda">, "global"> to #vdev.device<"cuda", 0, #target.target<"cuda">, "host"> : tensor<8xf32>
  func.return %h : tensor<8xf32>
}

// -----

// scf.if: a branch yielding a value from outside yields a copy (the outer value is
// freed after the if, its last use). scf.for: an init value nothing else reads moves
// into the loop; each iteration frees the buffer it no longer needs and yields a fresh one.

// CHECK-LABEL: func.func @control(
// CHECK:         %s = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK:         %r = scf.if %flag -> (memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>) {
// CHECK-NEXT:      %t = device.alloc()
// CHECK-NEXT:      device.launch @cuda_kernels::@mul_f32 {{.*}} args(%s, %s, %t)
// CHECK-NEXT:      scf.yield %t
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[COPY:.*]] = device.alloc()
// CHECK-NEXT:      device.copy %s to %[[COPY]]
// CHECK-NEXT:      scf.yield %[[COPY]]
// CHECK-NEXT:    }
// CHECK-NEXT:    device.free %s
// CHECK-NEXT:    %l = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %r) -> (memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>) {
// CHECK-NEXT:      %next = device.alloc()
// CHECK-NEXT:      device.launch @cuda_kernels::@add_f32 {{.*}} args(%acc, %x, %next)
// CHECK-NEXT:      device.free %acc
// CHECK-NEXT:      scf.yield %next
// CHECK-NEXT:    }
// CHECK-NOT:     device.free %r
// CHECK:         func.return %l
func.func @control(%x: tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, %flag: i1, %n: index)
    -> (tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = arith.addf %x, %x {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<4xf32>
  %r = scf.if %flag -> (tensor<4xf32>) {
    %t = arith.mulf %s, %s {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  } else {
    scf.yield %s : tensor<4xf32>
  } {vdev.device = [#vdev.device<"cuda", 0, #target.target<"cuda">, "global">]}
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %r) -> (tensor<4xf32>) {
    %next = arith.addf %acc, %x {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<4xf32>
    scf.yield %next : tensor<4xf32>
  } {vdev.device = [#vdev.device<"cuda", 0, #target.target<"cuda">, "global">]}
  func.return %l : tensor<4xf32>
}

// -----

// CHECK: lower_to_device.mlir:[[# @LINE + 2]]:3: error: 'arith.addf' has no 'vdev.device' placement; lower-to-device lowers planned modules: run plan-devices first
func.func @unplanned(%x: tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %y = arith.addf %x, %x : tensor<4xf32>
  func.return
}

// -----

// CHECK: lower_to_device.mlir:[[# @LINE + 2]]:3: error: 'vdev.on_device' is left in the module; lower-to-device lowers planned modules: run plan-devices first
func.func @hint(%x: tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %y = vdev.on_device %x to #vdev.device<"cuda", 0> : tensor<4xf32>
  func.return
}

// -----

// CHECK: lower_to_device.mlir:[[# @LINE + 2]]:3: error: 'arith.addf' runs on #vdev.device<"cuda", 0, #target.target<"cuda">, "global"> but its operand 0 lives on #vdev.device<"cpu", 0, #target.target<"llvm">, "global">; lower-to-device lowers planned modules: run plan-devices first (it inserts a vdev.device_copy)
func.func @crossing(%x: tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %y = arith.addf %x, %x {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<4xf32>
  func.return
}

// -----

// Operands whose sizes are dynamic must agree at run time: a cf.assert checks each such
// dimension before the launch (a kernel sized by operand 0 would cut or overrun operand 1).

// CHECK-LABEL: func.func @dynamic_add(
// CHECK:         %[[A:.*]] = memref.dim %a, %[[C0:.*]] : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[A:.*]] = memref.dim %a, %[[C0:.*]] : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[B:.*]] = memref.dim %b, %[[C0]] : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[SAME:.*]] = arith.cmpi eq, %[[A]], %[[B]] : index
// CHECK-NEXT:    cf.assert %[[SAME]], "'arith.addf' on tensors of different shapes: dimension 0 of operand 1 differs from dimension 0 of operand 0"
// CHECK:         device.launch @cuda_kernels::@add_f32
func.func @dynamic_add(%a: tensor<?xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, %b: tensor<?xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) -> (tensor<?xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %c = arith.addf %a, %b {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<?xf32>
  func.return %c : tensor<?xf32>
}

// -----

// linalg.generic: one thread per point of the parallel loops (split row-major from the
// linear index), each input loaded at its map of the indices, each output stored at its
// map. A permutation: the transpose reads in0[d1, d0] and writes out[d0, d1].

// CHECK-LABEL: kernel.func @copy_f32_{{[0-9a-f]+}}(%in0: memref<?x?xf32>, %out: memref<?x?xf32>) {
// CHECK:         scf.if
// CHECK-NEXT:      %[[D1:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      %[[D0:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      %[[X:.*]] = memref.load %in0[%[[D1]], %[[D0]]] : memref<?x?xf32>
// CHECK-NEXT:      memref.store %[[X]], %out[%[[D0]], %[[D1]]] : memref<?x?xf32>
// CHECK-LABEL: func.func @permutation(
// CHECK:         %p = memref.alloc() : memref<6x4xf32>
// CHECK-NEXT:    device.launch @cpu_kernels::@copy_f32_{{[0-9a-f]+}} on #vdev.device<"cpu", 0> grid(%{{.*}}) block(%{{.*}}) args(%x, %p)

func.func @permutation(%x: tensor<4x6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) -> (tensor<6x4xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %t = tensor.empty() {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<6x4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%t : tensor<6x4xf32>) attrs = {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<6x4xf32>
  func.return %p : tensor<6x4xf32>
}

// -----

// A broadcast (a bias over rows): in1 is read at d1 alone; the body's ops (a ReLU of the
// sum) run on scalars and name the kernel, with a hash of the maps.

// CHECK-LABEL: kernel.func @add_maximumf_f32_{{[0-9a-f]+}}(%in0: memref<?x?xf32>, %in1: memref<?xf32>, %out: memref<?x?xf32>) {
// CHECK:           %[[D1:.*]] = arith.remui
// CHECK-NEXT:      %[[D0:.*]] = arith.divui
// CHECK-NEXT:      %[[X:.*]] = memref.load %in0[%[[D0]], %[[D1]]] : memref<?x?xf32>
// CHECK-NEXT:      %[[B:.*]] = memref.load %in1[%[[D1]]] : memref<?xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK:           %[[M:.*]] = arith.maximumf %[[S]], %{{.*}} : f32
// CHECK-NEXT:      memref.store %[[M]], %out[%[[D0]], %[[D1]]] : memref<?x?xf32>

func.func @broadcast(%x: tensor<4x6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}, %b: tensor<6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) -> (tensor<4x6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %t = tensor.empty() {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<4x6xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x6xf32>, tensor<6xf32>) outs(%t : tensor<4x6xf32>) attrs = {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<4x6xf32>
  func.return %r : tensor<4x6xf32>
}

// -----

// A projection with a reduction (row sums): the reduction dimension is a loop in each
// thread, from 0 to the extent of in0's dimension 1, carrying the output's value from its
// init (the output is read, so the kernel takes %init and %out).

// CHECK-LABEL: kernel.func @add_f32_{{[0-9a-f]+}}(%in0: memref<?x?xf32>, %init: memref<?xf32>, %out: memref<?xf32>) {
// CHECK:         %[[K:.*]] = memref.dim %in0, %[[C1:.*]] : memref<?x?xf32>
// CHECK:         scf.if
// CHECK-NEXT:      %[[START:.*]] = memref.load %init[%[[I:.*]]] : memref<?xf32>
// CHECK-NEXT:      %[[SUM:.*]] = scf.for %[[J:.*]] = %{{.*}} to %[[K]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[START]]) -> (f32) {
// CHECK-NEXT:        %[[X:.*]] = memref.load %in0[%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK-NEXT:        scf.yield %[[S]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %[[SUM]], %out[%[[I]]] : memref<?xf32>
// CHECK-LABEL: func.func @row_sum(
// CHECK:         device.launch @cpu_kernels::@add_f32_{{[0-9a-f]+}} on #vdev.device<"cpu", 0> grid(%{{.*}}) block(%{{.*}}) args(%x, %init, %r)

func.func @row_sum(%x: tensor<4x6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}, %init: tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) -> (tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x6xf32>) outs(%init : tensor<4xf32>) attrs = {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// A constant in a map: column 0 of in0.

// CHECK-LABEL: kernel.func @copy_f32_{{[0-9a-f]+}}(%in0: memref<?x?xf32>, %out: memref<?xf32>) {
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:           %{{.*}} = memref.load %in0[%[[I:.*]], %[[C0]]] : memref<?x?xf32>

func.func @column(%x: tensor<4x6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) -> (tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %t = tensor.empty() {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4x6xf32>) outs(%t : tensor<4xf32>) attrs = {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// An affine sum with a constant coefficient (a strided 1-D convolution, d0 * 2 + d1):
// the index is computed in the loop.

// CHECK-LABEL: kernel.func @mul_add_f32_{{[0-9a-f]+}}(%in0: memref<?xf32>, %in1: memref<?xf32>, %init: memref<?xf32>, %out: memref<?xf32>) {
// CHECK:         %[[C2:.*]] = arith.constant 2 : index
// CHECK:           scf.for %[[K:.*]] = {{.*}} iter_args
// CHECK-NEXT:        %[[SCALED:.*]] = arith.muli %[[I:.*]], %[[C2]] : index
// CHECK-NEXT:        %[[AT:.*]] = arith.addi %[[SCALED]], %[[K]] : index
// CHECK-NEXT:        %{{.*}} = memref.load %in0[%[[AT]]] : memref<?xf32>
// CHECK-NEXT:        %{{.*}} = memref.load %in1[%[[K]]] : memref<?xf32>

func.func @strided_conv(%s: tensor<9xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}, %w: tensor<3xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}, %init: tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) -> (tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 * 2 + d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s, %w : tensor<9xf32>, tensor<3xf32>) outs(%init : tensor<4xf32>) attrs = {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %t = arith.addf %o, %m : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Several outputs, and linalg.index: the index is the thread's loop index. Neither
// output's init is read, so the tensor.empty results are only shapes (nothing allocated
// for them).

// CHECK-LABEL: kernel.func @index_cast_sitofp_mul_f32_{{[0-9a-f]+}}(%in0: memref<?x?xf32>, %out0: memref<?x?xf32>, %out1: memref<?x?xf32>) {
// CHECK:           %[[D1:.*]] = arith.remui
// CHECK-NEXT:      %[[D0:.*]] = arith.divui
// CHECK-NEXT:      %[[X:.*]] = memref.load %in0[%[[D0]], %[[D1]]] : memref<?x?xf32>
// CHECK-NEXT:      %{{.*}} = arith.index_cast %[[D1]] : index to i32
// CHECK:           memref.store %[[X]], %out0[%[[D0]], %[[D1]]] : memref<?x?xf32>
// CHECK-NEXT:      memref.store %{{.*}}, %out1[%[[D0]], %[[D1]]] : memref<?x?xf32>
// CHECK-LABEL: func.func @two_outputs(
// CHECK-NEXT:    %{{.*}} = arith.constant
// CHECK-NEXT:    %{{.*}} = arith.constant
// CHECK-NEXT:    %r = memref.alloc() : memref<4x6xf32>
// CHECK-NEXT:    %r_1 = memref.alloc() : memref<4x6xf32>
// CHECK-NEXT:    device.launch @cpu_kernels::@index_cast_sitofp_mul_f32_{{[0-9a-f]+}} {{.*}} args(%x, %r, %r_1)

func.func @two_outputs(%x: tensor<4x6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) -> (tensor<4x6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}, tensor<4x6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %t = tensor.empty() {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<4x6xf32>
  %u = tensor.empty() {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<4x6xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%t, %u : tensor<4x6xf32>, tensor<4x6xf32>) attrs = {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} {
  ^bb0(%a: f32, %o: f32, %p: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %m = arith.mulf %a, %jf : f32
    linalg.yield %a, %m : f32, f32
  } -> tensor<4x6xf32>, tensor<4x6xf32>
  func.return %r#0, %r#1 : tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// Dynamic shapes: the output is sized by the tensor.empty, and a cf.assert checks at run
// time that it agrees with the input giving the same loop dimension.

// CHECK-LABEL: func.func @dynamic(
// CHECK:         %r = memref.alloc(%n) : memref<?x6xf32>
// CHECK-NEXT:    %[[Y:.*]] = memref.dim %y, %[[C0:.*]] : memref<?x6xf32>
// CHECK-NEXT:    %[[R:.*]] = memref.dim %r, %[[C0]] : memref<?x6xf32>
// CHECK-NEXT:    %[[SAME:.*]] = arith.cmpi eq, %[[Y]], %[[R]] : index
// CHECK-NEXT:    cf.assert %[[SAME]], "'linalg.generic' on tensors of different shapes: dimension 0 of outs[0] differs from dimension 0 of ins[0]"

func.func @dynamic(%y: tensor<?x6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}, %b: tensor<6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}, %n: index) -> (tensor<?x6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %t = tensor.empty(%n) {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<?x6xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %b : tensor<?x6xf32>, tensor<6xf32>) outs(%t : tensor<?x6xf32>) attrs = {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<?x6xf32>
  func.return %r : tensor<?x6xf32>
}

// -----

// A contraction like matmul (maps (d0, d2), (d2, d1), (d0, d1); body out + in0 * in1) is
// recognised from its shape and runs the register-tiled matmul kernel.

// CHECK-LABEL: kernel.func @matmul_f32_rows8(
// CHECK-LABEL: func.func @contraction(
// CHECK:         device.launch @cpu_kernels::@matmul_f32_rows8 {{.*}} args(%a, %b, %c, %r)

func.func @contraction(%a: tensor<4x6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}, %b: tensor<6x5xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}, %c: tensor<4x5xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) -> (tensor<4x5xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<4x6xf32>, tensor<6x5xf32>) outs(%c : tensor<4x5xf32>) attrs = {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  func.return %r : tensor<4x5xf32>
}

// -----

// Every op that cannot be lowered is reported, each at its place, in one run.

// CHECK: lower_to_device.mlir:[[# @LINE + 6]]:3: error: 'linalg.generic' is not lowered by lower-to-device: the map of output 0 ((d0, d1) -> (d0)) is not a permutation of the parallel dimensions
// CHECK: lower_to_device.mlir:[[# @LINE + 10]]:3: error: 'tensor.cast' from an unranked tensor is not lowered (a ranked tensor cast to an unranked one is: what MLIR's runner printers take)
// CHECK: lower_to_device.mlir:[[# @LINE + 10]]:3: error: 'linalg.generic' is not lowered by lower-to-device: iterator d1 is 'window' (parallel and reduction are)

func.func @unsupported(%x: tensor<4x6xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}, %i: index) -> (tensor<4xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %t = tensor.empty() {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%t : tensor<4xf32>) attrs = {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %e = tensor.cast %x : tensor<4x6xf32> to tensor<*xf32>
  %f = tensor.cast %e {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} : tensor<*xf32> to tensor<4x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "window"]} ins(%x : tensor<4x6xf32>) outs(%t : tensor<4xf32>) attrs = {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// -----

// A long reduction into few elements (a dot product of 4096): one block per output
// element; each thread sums a strided share from the identity, the partials meet in
// shared memory and halve level by level, a barrier after each; thread 0 adds the init.

// CHECK-LABEL: kernel.func @block_mul_add_f32_{{[0-9a-f]+}}(%in0: memref<?xf32>, %in1: memref<?xf32>, %init: memref<f32>, %out: memref<f32>) {
// CHECK-NEXT:    %[[SHARED:.*]] = kernel.alloc_shared : memref<256xf32, #vdev.device<?, ?, ?, "shared">>
// CHECK-NEXT:    %[[T:.*]] = kernel.thread_id x
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[STEP:.*]] = arith.constant 256 : index
// CHECK-NEXT:    %[[PART:.*]] = scf.for %{{.*}} = %[[T]] to %{{.*}} step %[[STEP]] iter_args(%{{.*}} = %[[ZERO]]) -> (f32) {
// CHECK:         memref.store %[[PART]], %[[SHARED]][%[[T]]]
// CHECK-NEXT:    kernel.barrier
// CHECK-NEXT:    %[[HALF:.*]] = arith.constant 128 : index
// CHECK-NEXT:    %[[BELOW:.*]] = arith.cmpi ult, %[[T]], %[[HALF]] : index
// CHECK-NEXT:    scf.if %[[BELOW]] {
// CHECK:           arith.addf
// CHECK:         kernel.barrier
// CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %{{.*}} : index
// CHECK-NEXT:    scf.if %[[FIRST]] {
// CHECK-NEXT:      %[[INIT:.*]] = memref.load %init[] : memref<f32>
// CHECK-NEXT:      %[[SUM:.*]] = memref.load %[[SHARED]][%{{.*}}]
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[INIT]], %[[SUM]] : f32
// CHECK-NEXT:      memref.store %[[R]], %out[] : memref<f32>
// CHECK-LABEL: func.func @dot(
// CHECK:         device.launch @cpu_kernels::@block_mul_add_f32_{{[0-9a-f]+}} on #vdev.device<"cpu", 0> grid(%[[ONE:.*]], %[[ONE]], %[[ONE]]) block(%{{.*}}, %[[ONE]], %[[ONE]]) args(%a, %b, %init, %r)
func.func @dot(%a: tensor<4096xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}, %b: tensor<4096xf32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}, %init: tensor<f32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) -> (tensor<f32> {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">}) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%a, %b : tensor<4096xf32>, tensor<4096xf32>) outs(%init : tensor<f32>) attrs = {vdev.device = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// Data movement: a slice with a dynamic offset and a stride is a view of its source
// (offset 1 * 6 + %i, strides 2 * 6 and 1: no allocation, no kernel); concat writes each
// operand at its offset, its window kernel reading the strided view directly.

// CHECK-LABEL: func.func @slice_and_concat
// CHECK:         %[[O:.*]] = arith.addi %{{.*}}, %i : index
// CHECK-NEXT:    %[[S:.*]] = device.view %x offset(%[[O]]) sizes(%{{.*}}, %{{.*}}) strides(%{{.*}}, %{{.*}}) : memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<2x3xf32, strided<[12, 1], offset: ?>, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[C:.*]] = device.alloc() : memref<4x3xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.launch @cuda_kernels::@insert_slice_f32_2d {{.*}} args(%[[C]], %[[S]],
// CHECK-NEXT:    device.launch @cuda_kernels::@insert_slice_f32_2d {{.*}} args(%[[C]], %[[S]],
// CHECK-NOT:     device.free %[[S]]

func.func @slice_and_concat(%x: tensor<4x6xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, %i: index) -> (tensor<4x3xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %s = tensor.extract_slice %x[1, %i] [2, 3] [2, 1] {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<4x6xf32> to tensor<2x3xf32>
  %c = tensor.concat dim(0) %s, %s {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %c : tensor<4x3xf32>
}

// -----

// Reshapes and ranked casts of a row-major buffer are views of it (offset 0, row-major
// strides); a slice of a slice, and a cast of a slice, views the first one's source; a reshape of a contiguous
// slice (whole rows) views the slice's source at the slice's offset, a reshape of a
// strided slice is a reshape kernel into a fresh buffer. Views are never freed: their source is, after
// the last use of any view of it, and a returned view is cloned first.

// CHECK-LABEL: func.func @views
// CHECK:         %[[F:.*]] = device.view %x offset(%{{.*}}) sizes(%{{.*}}) strides(%{{.*}}) : memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<24xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[E:.*]] = device.view %[[F]] offset(%{{.*}}) sizes(%{{.*}}, %{{.*}}) strides(%{{.*}}, %{{.*}}) : memref<24xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<2x12xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[D:.*]] = device.view %[[E]] offset(%{{.*}}) sizes(%{{.*}}, %{{.*}}) strides(%{{.*}}, %{{.*}}) : memref<2x12xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<?x12xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[S:.*]] = device.view %[[E]] offset(%{{.*}}) sizes(%{{.*}}, %{{.*}}) strides(%{{.*}}, %{{.*}}) : memref<2x12xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<2x4xf32, strided<[12, 2], offset: 1>, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[T:.*]] = device.view %[[E]] offset(%{{.*}}) sizes(%{{.*}}) strides(%{{.*}}) : memref<2x12xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<4xf32, strided<[2], offset: 13>, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[R:.*]] = device.alloc() : memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK:         device.launch @cuda_kernels::@reshape_f32_2d_to_1d {{.*}} args(%[[S]], %[[R]])
// CHECK-NEXT:    device.view %x offset(%{{.*}}) sizes(%{{.*}}, %{{.*}}) strides(%{{.*}}, %{{.*}}) : memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<2x6xf32, strided<[6, 1], offset: 6>, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[Q:.*]] = device.view %x offset(%{{.*}}) sizes(%{{.*}}, %{{.*}}, %{{.*}}) strides(%{{.*}}, %{{.*}}, %{{.*}}) : memref<4x6xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<2x3x2xf32, strided<[6, 2, 1], offset: 6>, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %[[SUM:.*]] = device.alloc() : memref<2x3x2xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.launch @cuda_kernels::@add_f32_3d {{.*}} args(%[[Q]], %[[Q]], %[[SUM]])
// CHECK:         %[[SC:.*]] = device.view %[[E]] offset(%{{.*}}) sizes(%{{.*}}, %{{.*}}) strides(%{{.*}}, %{{.*}}) : memref<2x12xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<2x?xf32, strided<[12, 2], offset: 1>, #vdev.device<"cuda", 0, ?, "global">>
// CHECK:         device.launch @cuda_kernels::@neg_f32_2d {{.*}} args(%[[SC]],
// CHECK:         %[[B:.*]] = device.alloc(%{{.*}}) : memref<?x12xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.copy %[[D]] to %[[B]]
// CHECK-NEXT:    %[[C:.*]] = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.copy %[[T]] to %[[C]] : memref<4xf32, strided<[2], offset: 13>, #vdev.device<"cuda", 0, ?, "global">> to memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    func.return %[[B]], %[[R]], %[[C]], %[[SUM]], %{{.*}} :
// CHECK-NOT:     device.free

func.func @views(%x: tensor<4x6xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) -> (tensor<?x12xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, tensor<8xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, tensor<4xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, tensor<2x3x2xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}, tensor<2x?xf32> {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">}) {
  %f = tensor.collapse_shape %x [[0, 1]] {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<4x6xf32> into tensor<24xf32>
  %e = tensor.expand_shape %f [[0, 1]] output_shape [2, 12] {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<24xf32> into tensor<2x12xf32>
  %d = tensor.cast %e {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<2x12xf32> to tensor<?x12xf32>
  %s = tensor.extract_slice %e[0, 1] [2, 4] [1, 2] {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<2x12xf32> to tensor<2x4xf32>
  %t = tensor.extract_slice %s[1, 0] [1, 4] [1, 1] {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<2x4xf32> to tensor<4xf32>
  %r = tensor.collapse_shape %s [[0, 1]] {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<2x4xf32> into tensor<8xf32>
  %rows = tensor.extract_slice %x[1, 0] [2, 6] [1, 1] {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<4x6xf32> to tensor<2x6xf32>
  %q = tensor.expand_shape %rows [[0], [1, 2]] output_shape [2, 3, 2] {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<2x6xf32> into tensor<2x3x2xf32>
  %sum = arith.addf %q, %q {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<2x3x2xf32>
  %sc = tensor.cast %s {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<2x4xf32> to tensor<2x?xf32>
  %neg = arith.negf %sc {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} : tensor<2x?xf32>
  func.return %d, %r, %t, %sum, %neg : tensor<?x12xf32>, tensor<8xf32>, tensor<4xf32>, tensor<2x3x2xf32>, tensor<2x?xf32>
}
