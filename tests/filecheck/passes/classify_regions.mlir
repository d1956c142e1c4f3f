// RUN: devplan-opt %s --split-input-file -p classify-regions | filecheck %s
// RUN: devplan-opt %s --split-input-file -p 'classify-regions{explain=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=EXPLAIN
// RUN: devplan-opt %s --split-input-file -p 'classify-regions{explain=true}' 2>&1 >/dev/null | grep -c remark: | filecheck %s --check-prefix=COUNT --match-full-lines

// The EXPLAIN lines are every remark there is (COUNT): device programs get none.
// COUNT: 13

// RFC example (a): a CPU part allocates and fills host memory, copies it to CUDA
// and launches two kernels: mixed. The remark points at the op that first puts
// device work beside the host work.

kernel.module @k target #target.target<"cuda", {arch = "sm_80"}> {
  kernel.func @scale(%a: memref<16xf32>) {
    kernel.return
  }
  kernel.func @shift(%a: memref<16xf32>) {
    kernel.return
  }
}

// CHECK-LABEL: func.func @rfc_a_mixed
// CHECK-SAME: attributes {device.region = "mixed"} {
func.func @rfc_a_mixed() -> memref<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  %h = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    memref.store %one, %h[%i] : memref<16xf32>
  }
  // EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:3: remark: @rfc_a_mixed is mixed: 'device.alloc' allocates memory of cuda:0, beside work on host memory
  %d = device.alloc() : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.copy %h to %d : memref<16xf32> to memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.launch @k::@scale on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%d) : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.launch @k::@shift on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%d) : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.copy %d to %h : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<16xf32>
  device.free %d : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return %h : memref<16xf32>
}

// -----

// RFC example (b): allocate global memory and launch two kernels: a device program,
// annotated with the cuda target (that of its kernel.module) with the llvm host.
// Launch parameters computed from device.attr and scalar arith are allowed.

kernel.module @k target #target.target<"cuda", {arch = "sm_80"}> {
  kernel.func @init(%a: memref<?xf32>) {
    kernel.return
  }
  kernel.func @scale(%a: memref<?xf32>) {
    kernel.return
  }
}

// CHECK-LABEL: func.func @rfc_b_device
// CHECK-SAME: attributes {device.region = "device", device.target = #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm">>} {
func.func @rfc_b_device(%n: index) {
  %c1 = arith.constant 1 : index
  %tpb = device.attr "max_threads_per_block" of #vdev.device<"cuda", 0> : index
  %bx = arith.minui %n, %tpb : index
  %nm1 = arith.subi %n, %c1 : index
  %q = arith.divui %nm1, %bx : index
  %gx = arith.addi %q, %c1 : index
  %a = device.alloc(%n) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.launch @k::@init on #vdev.device<"cuda", 0> grid(%gx, %c1, %c1) block(%bx, %c1, %c1) args(%a) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.launch @k::@scale on #vdev.device<"cuda", 0> grid(%gx, %c1, %c1) block(%bx, %c1, %c1) args(%a) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.free %a : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return
}

// -----

// The target written on the device wins; the module's host device gives the host.

builtin.module attributes {vdev.host_device = #vdev.device<"cpu", 0, #target.target<"llvm", {mcpu = "skylake"}>, "global">} {
  // CHECK-LABEL: func.func @written_target
  // CHECK-SAME: device.target = #target.target<"cuda", {arch = "sm_86"}, host = #target.target<"llvm", {mcpu = "skylake"}>>
  func.func @written_target() {
    %a = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, #target.target<"cuda", {arch = "sm_86"}>, "global">>
    device.free %a : memref<4xf32, #vdev.device<"cuda", 0, #target.target<"cuda", {arch = "sm_86"}>, "global">>
    func.return
  }
}

// -----

// Without a written target, the module's vdev.targets entry for the device type.

builtin.module attributes {vdev.targets = [#target.target<"llvm">, #target.target<"rocm", {mcpu = "gfx90a"}>]} {
  // CHECK-LABEL: func.func @module_target
  // CHECK-SAME: device.target = #target.target<"rocm", {mcpu = "gfx90a"}, host = #target.target<"llvm">>
  func.func @module_target() {
    %a = device.alloc() : memref<4xf32, #vdev.device<"rocm", 1, ?, "global">>
    device.copy %a to %a : memref<4xf32, #vdev.device<"rocm", 1, ?, "global">> to memref<4xf32, #vdev.device<"rocm", 1, ?, "global">>
    device.free %a : memref<4xf32, #vdev.device<"rocm", 1, ?, "global">>
    func.return
  }
}

// -----

// Host functions: no device work at all (scalar only, or host memory only).

// CHECK-LABEL: func.func @scalar_only
// CHECK-SAME: attributes {device.region = "host"}
// EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:1: remark: @scalar_only is host: it does no device work
func.func @scalar_only(%a: index, %b: index) -> index {
  %s = arith.addi %a, %b : index
  func.return %s : index
}

// CHECK-LABEL: func.func @host_memory_only
// CHECK-SAME: attributes {device.region = "host"}
// EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:1: remark: @host_memory_only is host: it does no device work (it works on host memory only)
func.func @host_memory_only(%h: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %h[%c0] : memref<4xf32>
  memref.store %x, %h[%c0] : memref<4xf32>
  func.return
}

// Querying a device attribute is not device work.
// CHECK-LABEL: func.func @query_only
// CHECK-SAME: attributes {device.region = "host"}
// EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:1: remark: @query_only is host: it does no device work
func.func @query_only() -> index {
  %w = device.attr "warp_size" of #vdev.device<"cuda", 0> : index
  func.return %w : index
}

// -----

// Nested calls: a device program calling device programs for the same device is one;
// a scalar host helper does not change that; host work around the call makes it mixed.

kernel.module @k target #target.target<"cuda"> {
  kernel.func @touch(%a: memref<8xf32>) {
    kernel.return
  }
}

// CHECK-LABEL: func.func @block_size
// CHECK-SAME: device.region = "host"
// EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:1: remark: @block_size is host: it does no device work
func.func @block_size(%n: index) -> index {
  %c32 = arith.constant 32 : index
  %b = arith.minui %n, %c32 : index
  func.return %b : index
}

// CHECK-LABEL: func.func @leaf
// CHECK-SAME: device.region = "device", device.target = #target.target<"cuda", host = #target.target<"llvm">>
func.func @leaf(%a: memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %b = func.call @block_size(%c8) : (index) -> index
  device.launch @k::@touch on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%b, %c1, %c1) args(%a) : memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return
}

// CHECK-LABEL: func.func @middle
// CHECK-SAME: device.region = "device", device.target = #target.target<"cuda", host = #target.target<"llvm">>
func.func @middle() {
  %a = device.alloc() : memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.call @leaf(%a) : (memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>) -> ()
  func.call @leaf(%a) : (memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>) -> ()
  device.free %a : memref<8xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return
}

// CHECK-LABEL: func.func @outer
// CHECK-SAME: device.region = "mixed"
func.func @outer(%h: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %h[%c0] : memref<8xf32>
  // EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:3: remark: @outer is mixed: 'func.call' calls @middle, which is a device program for cuda:0, beside work on host memory
  func.call @middle() : () -> ()
  func.return
}

// -----

// Recursion: a fixed point over the call graph. @countdown launches and calls itself;
// @ping and @pong are mutually recursive and @pong writes host memory, so both are mixed.

kernel.module @k target #target.target<"cuda"> {
  kernel.func @step(%a: memref<4xf32>) {
    kernel.return
  }
}

// CHECK-LABEL: func.func @countdown
// CHECK-SAME: device.region = "device"
func.func @countdown(%n: index, %a: memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %more = arith.cmpi ugt, %n, %c0 : index
  scf.if %more {
    device.launch @k::@step on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a) : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
    %m = arith.subi %n, %c1 : index
    func.call @countdown(%m, %a) : (index, memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>) -> ()
  }
  func.return
}

// CHECK-LABEL: func.func @ping
// CHECK-SAME: device.region = "mixed"
func.func @ping(%n: index, %h: memref<4xf32>, %a: memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>) {
  %c1 = arith.constant 1 : index
  device.launch @k::@step on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a) : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  // EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:3: remark: @ping is mixed: 'func.call' calls @pong, which is mixed (cuda:0 and host memory), beside work on cuda:0
  func.call @pong(%n, %h, %a) : (index, memref<4xf32>, memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>) -> ()
  func.return
}

// CHECK-LABEL: func.func @pong
// CHECK-SAME: device.region = "mixed"
func.func @pong(%n: index, %h: memref<4xf32>, %a: memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>) {
  %c0 = arith.constant 0 : index
  %more = arith.cmpi ugt, %n, %c0 : index
  scf.if %more {
    %f = arith.constant 2.0 : f32
    memref.store %f, %h[%c0] : memref<4xf32>
    %c1 = arith.constant 1 : index
    %m = arith.subi %n, %c1 : index
    // EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:5: remark: @pong is mixed: 'func.call' calls @ping, which is mixed (cuda:0 and host memory), beside work on host memory
    func.call @ping(%m, %h, %a) : (index, memref<4xf32>, memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>) -> ()
  }
  func.return
}

// -----

// Loops that launch stay device programs.

kernel.module @k target #target.target<"cuda"> {
  kernel.func @step(%a: memref<?xf32>, %i: index) {
    kernel.return
  }
}

// CHECK-LABEL: func.func @loop_of_launches
// CHECK-SAME: device.region = "device"
func.func @loop_of_launches(%n: index, %steps: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = device.alloc(%n) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  scf.for %i = %c0 to %steps step %c1 {
    device.launch @k::@step on #vdev.device<"cuda", 0> grid(%n, %c1, %c1) block(%c1, %c1, %c1) args(%a, %i) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>, index
  }
  device.free %a : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return
}

// -----

// A host read of device memory is host work on another device's memory: mixed.

// CHECK-LABEL: func.func @host_reads_device
// CHECK-SAME: device.region = "mixed"
func.func @host_reads_device() -> f32 {
  %c0 = arith.constant 0 : index
  %a = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  // EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:3: remark: @host_reads_device is mixed: 'memref.load' reads memory of cuda:0 on the host, beside work on cuda:0
  %x = memref.load %a[%c0] : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.free %a : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return %x : f32
}

// A call to a function whose body is unknown counts as host work.
// CHECK-LABEL: func.func private @print_f32(f32) -> () attributes {device.region = "host"}
// EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:1: remark: @print_f32 is host: it is a declaration, so calls to it count as host work
func.func private @print_f32(f32)

// CHECK-LABEL: func.func @calls_unknown
// CHECK-SAME: device.region = "mixed"
func.func @calls_unknown() {
  %a = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  %f = arith.constant 1.0 : f32
  // EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:3: remark: @calls_unknown is mixed: 'func.call' calls @print_f32, whose body is unknown (counted as host work), beside work on cuda:0
  func.call @print_f32(%f) : (f32) -> ()
  device.free %a : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return
}

// -----

// Work on two devices, moving data between them through the host: multi-device.

kernel.module @k target #target.target<"cuda"> {
  kernel.func @inc(%a: memref<4xf32>) {
    kernel.return
  }
}

// CHECK-LABEL: func.func @two_gpus
// CHECK-SAME: attributes {device.region = "multi-device"} {
func.func @two_gpus(%h: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %a = device.alloc() : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a) : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.copy %a to %h : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<4xf32>
  // EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:3: remark: @two_gpus is multi-device: 'device.alloc' allocates memory of cuda:1, beside work on cuda:0 and host memory
  %b = device.alloc() : memref<4xf32, #vdev.device<"cuda", 1, ?, "global">>
  device.copy %h to %b : memref<4xf32> to memref<4xf32, #vdev.device<"cuda", 1, ?, "global">>
  device.launch @k::@inc on #vdev.device<"cuda", 1> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%b) : memref<4xf32, #vdev.device<"cuda", 1, ?, "global">>
  device.free %a : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
  device.free %b : memref<4xf32, #vdev.device<"cuda", 1, ?, "global">>
  func.return
}

// A copy straight from one device to another is work on both.
// CHECK-LABEL: func.func @peer_copy
// CHECK-SAME: device.region = "multi-device"
func.func @peer_copy(%a: memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>, %b: memref<4xf32, #vdev.device<"cuda", 1, ?, "global">>) {
  // EXPLAIN: classify_regions.mlir:[[# @LINE + 1]]:3: remark: @peer_copy is multi-device: 'device.copy' copies from memory of cuda:0 to memory of cuda:1
  device.copy %a to %b : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<4xf32, #vdev.device<"cuda", 1, ?, "global">>
  func.return
}

// -----

// Copies between two scopes of one device stay in a device program.
builtin.module attributes {vdev.targets = [#target.target<"cuda">]} {
// CHECK-LABEL: func.func @scope_copy
// CHECK-SAME: device.region = "device"
func.func @scope_copy(%a: memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>, %b: memref<4xf32, #vdev.device<"cuda", 0, ?, "host">>) {
  device.copy %a to %b : memref<4xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<4xf32, #vdev.device<"cuda", 0, ?, "host">>
  func.return
}
}

// -----

// Kernels launched on the host device itself work on host memory, which is that
// device's own: a device program for cpu:0, whose target needs no separate host.

kernel.module @k target #target.target<"llvm"> {
  kernel.func @inc(%a: memref<4xf32>) {
    kernel.return
  }
}

// CHECK-LABEL: func.func @on_cpu
// CHECK-SAME: attributes {device.region = "device", device.target = #target.target<"llvm">} {
func.func @on_cpu(%h: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  device.launch @k::@inc on #vdev.device<"cpu", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%h) : memref<4xf32>
  func.return
}
