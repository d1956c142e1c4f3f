// RUN: not devplan-opt %s --split-input-file 2>&1 | filecheck %s

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.alloc' result memref<?x4x?xf32, #vdev.device<"cuda", 0>> has 2 '?' dimension(s) but 0 dynamic size(s) were given (one index per '?', in order)
  %a = device.alloc() : memref<?x4x?xf32, #vdev.device<"cuda", 0>>
  func.return
}

// -----

func.func @f(%n: index) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.alloc_workspace' result memref<4xf32, #vdev.device<"cuda", 0>> has 0 '?' dimension(s) but 1 dynamic size(s) were given (one index per '?', in order)
  %w = device.alloc_workspace(%n) : memref<4xf32, #vdev.device<"cuda", 0>>
  func.return
}

// -----

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.alloc' allocates device memory, but memref<4xf32> is host memory (no memory space); allocate host memory with memref.alloc
  %a = device.alloc() : memref<4xf32>
  func.return
}

// -----

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.alloc' result memref<4xf32, #vdev.device<"cuda">>: device #vdev.device<"cuda"> needs a device type and an id, e.g. #vdev.device<"cuda", 0>
  %a = device.alloc() : memref<4xf32, #vdev.device<"cuda">>
  func.return
}

// -----

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.alloc' cannot allocate memref<4xf32, #vdev.device<"cuda", 0, ?, "shared">>: scope "shared" exists only inside a kernel (use kernel.alloc_shared there)
  %a = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, ?, "shared">>
  func.return
}

// -----

func.func @f(%h: memref<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.free' frees device memory, but memref<4xf32> is host memory (no memory space); free host memory with memref.dealloc
  device.free %h : memref<4xf32>
  func.return
}

// -----

func.func @f(%h: memref<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.free_workspace' returns device memory, but memref<4xf32> is host memory (no memory space); only workspaces from device.alloc_workspace go back to the pool
  device.free_workspace %h : memref<4xf32>
  func.return
}

// -----

func.func @f(%h: memref<16xf32>, %d: memref<16xf64, #vdev.device<"cuda", 0>>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.copy' cannot copy memref<16xf32> to memref<16xf64, #vdev.device<"cuda", 0>>: element type f32 differs from f64
  device.copy %h to %d : memref<16xf32> to memref<16xf64, #vdev.device<"cuda", 0>>
  func.return
}

// -----

func.func @f(%h: memref<16xf32>, %d: memref<4x4xf32, #vdev.device<"cuda", 0>>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.copy' cannot copy memref<16xf32> to memref<4x4xf32, #vdev.device<"cuda", 0>>: rank 1 differs from rank 2
  device.copy %h to %d : memref<16xf32> to memref<4x4xf32, #vdev.device<"cuda", 0>>
  func.return
}

// -----

func.func @f(%h: memref<?x16xf32>, %d: memref<4x8xf32, #vdev.device<"cuda", 0>>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.copy' cannot copy memref<?x16xf32> to memref<4x8xf32, #vdev.device<"cuda", 0>>: dimension 1 is 16 in the source and 8 in the destination
  device.copy %h to %d : memref<?x16xf32> to memref<4x8xf32, #vdev.device<"cuda", 0>>
  func.return
}

// -----

func.func @f(%h: memref<16xf32>, %d: memref<8xf32, #vdev.device<"cuda", 0>>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.copy_async' cannot copy memref<8xf32, #vdev.device<"cuda", 0>> to memref<16xf32>: dimension 0 is 8 in the source and 16 in the destination
  %t = device.copy_async [] %d to %h : memref<8xf32, #vdev.device<"cuda", 0>> to memref<16xf32>
  func.return
}

// -----

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @add(%a: memref<?xf32>) {
    kernel.return
  }
}
kernel.module @more target #target.target<"cuda"> {
  kernel.func @mul(%a: memref<?xf32>) {
    kernel.return
  }
}

func.func @f(%a: memref<?xf32, #vdev.device<"cuda", 0>>) {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' kernel @kernels::@sub not found; known kernels: @kernels::@add, @more::@mul
  device.launch @kernels::@sub on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a) : memref<?xf32, #vdev.device<"cuda", 0>>
  func.return
}

// -----

func.func @helper() {
  func.return
}

func.func @f() {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' @helper is 'func.func', not a kernel.func inside a kernel.module
  device.launch @helper on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args()
  func.return
}

// -----

kernel.module @cpu_kernels target #target.target<"llvm"> {
  kernel.func @k() {
    kernel.return
  }
}

func.func @f() {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' kernel @cpu_kernels::@k is compiled for #target.target<"llvm"> (device type "cpu") but launched on #vdev.device<"cuda", 0> (device type "cuda")
  device.launch @cpu_kernels::@k on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args()
  func.return
}

// -----

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @k() {
    kernel.return
  }
}

func.func @f() {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' launch device #vdev.device<"cuda"> needs a device type and an id, e.g. #vdev.device<"cuda", 0>
  device.launch @kernels::@k on #vdev.device<"cuda"> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args()
  func.return
}

// -----

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @add(%a: memref<?xf32>, %b: memref<?xf32>) {
    kernel.return
  }
}

func.func @f(%a: memref<?xf32, #vdev.device<"cuda", 0>>) {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' kernel @kernels::@add takes 2 argument(s) (memref<?xf32>, memref<?xf32>) but the launch passes 1
  device.launch @kernels::@add on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a) : memref<?xf32, #vdev.device<"cuda", 0>>
  func.return
}

// -----

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @fill(%n: index) {
    kernel.return
  }
}

func.func @f(%n: i32) {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' argument 0 of kernel @kernels::@fill has type i32 but the kernel expects index
  device.launch @kernels::@fill on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%n) : i32
  func.return
}

// -----

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @k(%a: memref<8x?xf32>) {
    kernel.return
  }
}

func.func @f(%a: memref<4x4xf32, #vdev.device<"cuda", 0>>) {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' argument 0 of kernel @kernels::@k has type memref<4x4xf32, #vdev.device<"cuda", 0>> but the kernel expects memref<8x?xf32> (shape and element type must agree)
  device.launch @kernels::@k on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a) : memref<4x4xf32, #vdev.device<"cuda", 0>>
  func.return
}

// -----

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @k(%a: memref<?xf32>) {
    kernel.return
  }
}

func.func @f(%a: memref<?xf32, #vdev.device<"cuda", 1>>) {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' argument 0 of kernel @kernels::@k (memref<?xf32, #vdev.device<"cuda", 1>>) lives in #vdev.device<"cuda", 1>, which kernels on #vdev.device<"cuda", 0> cannot reach; copy it to the device first
  device.launch @kernels::@k on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a) : memref<?xf32, #vdev.device<"cuda", 1>>
  func.return
}

// -----

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @k(%a: memref<?xf32>) {
    kernel.return
  }
}

func.func @f(%h: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' argument 0 of kernel @kernels::@k (memref<?xf32>) lives in host memory, which kernels on #vdev.device<"cuda", 0> cannot reach; copy it to the device first
  device.launch @kernels::@k on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%h) : memref<?xf32>
  func.return
}

// -----

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @k(%a: memref<?xf32>) {
    kernel.return
  }
}

func.func @f(%a: memref<?xf32, #vdev.device<"cuda", 0, ?, "shared">>) {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' argument 0 of kernel @kernels::@k (memref<?xf32, #vdev.device<"cuda", 0, ?, "shared">>) lives in #vdev.device<"cuda", 0, ?, "shared">, which kernels on #vdev.device<"cuda", 0> cannot reach; shared and local memory exist only inside a kernel
  device.launch @kernels::@k on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a) : memref<?xf32, #vdev.device<"cuda", 0, ?, "shared">>
  func.return
}

// -----

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @k(%a: memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>) {
    kernel.return
  }
}

func.func @f(%a: memref<?xf32, #vdev.device<"cuda", 0, ?, "host">>) {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' argument 0 of kernel @kernels::@k lives in #vdev.device<"cuda", 0, ?, "host"> but the kernel expects memory #vdev.device<"cuda", 0, ?, "global">
  device.launch @kernels::@k on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a) : memref<?xf32, #vdev.device<"cuda", 0, ?, "host">>
  func.return
}

// -----

kernel.module @kernels target #target.target<"cuda", {max_num_threads = 256}> {
  kernel.func @k() {
    kernel.return
  }
}

func.func @f() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' block of 16x16x2 = 512 threads exceeds max_num_threads = 256 of #target.target<"cuda", {max_num_threads = 256}>
  device.launch @kernels::@k on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c16, %c2) args()
  func.return
}

// -----

// A kernel that declares its block size takes only launches of that block.
kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @k() attributes {known_block_size = array<i32: 32, 1, 1>} {
    kernel.return
  }
}

func.func @f(%n: index) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  // The launch with a size known only at run time is checked when it runs.
  device.launch @kernels::@k on #vdev.device<"cuda", 0> grid(%n, %c1, %c1) block(%c32, %c1, %c1) args()
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' block (64, 1, 1) has 64 along x, but kernel @kernels::@k declares known_block_size = array<i32: 32, 1, 1>: every launch of it must have that block
  device.launch @kernels::@k on #vdev.device<"cuda", 0> grid(%n, %c1, %c1) block(%c64, %c1, %c1) args()
  func.return
}

// -----

// The launch device's own target wins over the kernel.module's.
kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @k() {
    kernel.return
  }
}

func.func @f() {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' block of 128x1x1 = 128 threads exceeds max_num_threads = 64
  device.launch @kernels::@k on #vdev.device<"cuda", 0, #target.target<"cuda", {max_num_threads = 64}>> grid(%c1, %c1, %c1) block(%c128, %c1, %c1) args()
  func.return
}

// -----

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @k() {
    kernel.return
  }
}

func.func @f() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' grid size along y is 0; sizes must be at least 1
  device.launch @kernels::@k on #vdev.device<"cuda", 0> grid(%c1, %c0, %c1) block(%c1, %c1, %c1) args()
  func.return
}

// -----

func.func @f(%n: index) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:61: error: grid takes three index values (x, y, z), got 2
  device.launch @kernels::@k on #vdev.device<"cuda", 0> grid(%n, %n) block(%n, %n, %n) args()
  func.return
}

// -----

func.func @f(%n: index, %a: memref<4xf32, #vdev.device<"cuda", 0>>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:96: error: args(...) lists 1 value(s) but 2 type(s)
  device.launch @kernels::@k on #vdev.device<"cuda", 0> grid(%n, %n, %n) block(%n, %n, %n) args(%a) : memref<4xf32, #vdev.device<"cuda", 0>>, index
  func.return
}

// -----

kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @k() {
    kernel.return
  }
}

func.func @f(%n: index, %t: !device.token) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.launch' dependencies are only allowed in the async form
  "device.launch"(%t, %n, %n, %n, %n, %n, %n) <{kernel = @kernels::@k, device = #vdev.device<"cuda", 0>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0>}> : (!device.token, index, index, index, index, index, index) -> ()
  func.return
}

// -----

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.attr' unknown device attribute "max_threads"; valid names: exist, max_threads_per_block, warp_size, max_shared_memory_per_block, compute_version, device_name, max_clock_rate, multi_processor_count, max_thread_dimensions, max_registers_per_block, gcn_arch, api_version, driver_version, l2_cache_size_bytes, total_global_memory, available_global_memory, image_pitch_alignment
  %n = device.attr "max_threads" of #vdev.device<"cuda", 0> : index
  func.return
}

// -----

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.attr' device attribute "device_name" is a string and cannot be an SSA value; numeric attributes: exist, max_threads_per_block,
  %n = device.attr "device_name" of #vdev.device<"cuda", 0> : index
  func.return
}

// -----

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.attr' result type !device.token is not a number; use index, an integer or a float
  %n = device.attr "warp_size" of #vdev.device<"cuda", 0> : !device.token
  func.return
}

// -----

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.attr' queried device #vdev.device<"cuda"> needs a device type and an id, e.g. #vdev.device<"cuda", 0>
  %n = device.attr "warp_size" of #vdev.device<"cuda"> : index
  func.return
}

// -----

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: expected the tokens to wait for (device.wait %t, %t1) or 'all'; write 'device.wait all' to wait for all outstanding work on every device{{$}}
  device.wait
  func.return
}

// -----

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: expected the tokens to wait for (device.wait %t, %t1) or 'all'; write 'device.wait all' to wait for all outstanding work on every device (%c begins the next op, it is not a token)
  device.wait
  %c = arith.constant 0 : index
  func.return
}

// -----

func.func @f() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: expected the tokens to wait for (device.wait %t, %t1) or 'all'; write 'device.wait all' to wait for all outstanding work on every device (%c begins the next op, it is not a token)
  device.wait
  %c:2 = "test.op"() : () -> (index, index)
  func.return
}

// -----

func.func @f(%t: !device.token) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.wait' takes no types: write device.wait %t, %t1
  device.wait %t : !device.token
  func.return
}

// -----

func.func @f(%a: memref<64xf32, #vdev.device<"cuda", 0>>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.view' cannot view memref<64xf32, #vdev.device<"cuda", 0>> as memref<8xf32, #vdev.device<"cuda", 0>>: size 0 is 4 but the result type says 8
  %v = device.view %a offset(%c1) sizes(%c4) strides(%c1) : memref<64xf32, #vdev.device<"cuda", 0>> to memref<8xf32, #vdev.device<"cuda", 0>>
  func.return
}

// -----

func.func @f(%a: memref<64xf32, #vdev.device<"cuda", 0>>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.view' cannot view memref<64xf32, #vdev.device<"cuda", 0>> as memref<4xf32, strided<[2], offset: 1>, #vdev.device<"cuda", 0>>: stride 0 is 1 but the result layout says 2
  %v = device.view %a offset(%c1) sizes(%c4) strides(%c1) : memref<64xf32, #vdev.device<"cuda", 0>> to memref<4xf32, strided<[2], offset: 1>, #vdev.device<"cuda", 0>>
  func.return
}

// -----

func.func @f(%a: memref<4xf32, strided<[2]>, #vdev.device<"cuda", 0>>) {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.view' cannot view memref<4xf32, strided<[2]>, #vdev.device<"cuda", 0>> as memref<1xf32, #vdev.device<"cuda", 0>>: the source must have the identity layout (view the buffer it views)
  %v = device.view %a offset(%c1) sizes(%c1) strides(%c1) : memref<4xf32, strided<[2]>, #vdev.device<"cuda", 0>> to memref<1xf32, #vdev.device<"cuda", 0>>
  func.return
}

// -----

func.func @f(%a: memref<64xf32, #vdev.device<"cuda", 0>>) {
  %c1 = arith.constant 1 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'device.view' cannot view memref<64xf32, #vdev.device<"cuda", 0>> as memref<1xf32>: the memory spaces differ
  %v = device.view %a offset(%c1) sizes(%c1) strides(%c1) : memref<64xf32, #vdev.device<"cuda", 0>> to memref<1xf32>
  func.return
}
