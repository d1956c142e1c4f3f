// RUN: devplan-opt %s --split-input-file -p outline-device-regions,classify-regions | filecheck %s
// Idempotent: outlining again changes nothing.
// RUN: devplan-opt %s --split-input-file -p outline-device-regions,outline-device-regions,classify-regions | filecheck %s

// RFC example (a). The host fill and the copies stay in @rfc_a; the device allocation,
// the two launches (with the constants only they use) and the free become device
// programs. A copy between host and device memory is host work, so it splits runs.

!host = memref<16xf32>
!dev = memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>

kernel.module @k target #target.target<"cuda", {arch = "sm_80"}> {
  kernel.func @scale(%a: memref<16xf32>) {
    kernel.return
  }
  kernel.func @shift(%a: memref<16xf32>) {
    kernel.return
  }
}

func.func @rfc_a(%f: f32) -> !host {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %h = memref.alloc() : !host
  scf.for %i = %c0 to %c16 step %c1 {
    memref.store %f, %h[%i] : !host
  }
  %d = device.alloc() : !dev
  device.copy %h to %d : !host to !dev
  %g = arith.constant 1 : index
  %b = arith.constant 16 : index
  device.launch @k::@scale on #vdev.device<"cuda", 0> grid(%g, %c1, %c1) block(%b, %c1, %c1) args(%d) : !dev
  device.launch @k::@shift on #vdev.device<"cuda", 0> grid(%g, %c1, %c1) block(%b, %c1, %c1) args(%d) : !dev
  device.copy %d to %h : !dev to !host
  device.free %d : !dev
  func.return %h : !host
}

// CHECK-LABEL: func.func @rfc_a(%f: f32) -> memref<16xf32> attributes {device.region = "mixed"} {
// CHECK:         scf.for
// CHECK-NEXT:      memref.store
// CHECK-NEXT:    }
// CHECK-NEXT:    %d = func.call @rfc_a_cuda0() : () -> memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    device.copy %h to %d
// CHECK-NEXT:    func.call @rfc_a_cuda0_1(%c1, %d) : (index, memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>) -> ()
// CHECK-NEXT:    device.copy %d to %h
// CHECK-NEXT:    func.call @rfc_a_cuda0_2(%d)
// CHECK-NEXT:    func.return %h : memref<16xf32>

// CHECK-LABEL: func.func @rfc_a_cuda0() -> memref<16xf32, #vdev.device<"cuda", 0, ?, "global">> attributes {device.region = "device", device.target = #target.target<"cuda", {arch = "sm_80"}, host = #target.target<"llvm">>} {
// CHECK-NEXT:    %d = device.alloc() : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    func.return %d

// CHECK-LABEL: func.func @rfc_a_cuda0_1(%c1: index, %d: memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>) attributes {device.region = "device"
// CHECK-NEXT:    %g = arith.constant 1 : index
// CHECK-NEXT:    %b = arith.constant 16 : index
// CHECK-NEXT:    device.launch @k::@scale on #vdev.device<"cuda", 0> grid(%g, %c1, %c1) block(%b, %c1, %c1) args(%d)
// CHECK-NEXT:    device.launch @k::@shift on #vdev.device<"cuda", 0> grid(%g, %c1, %c1) block(%b, %c1, %c1) args(%d)
// CHECK-NEXT:    func.return

// CHECK-LABEL: func.func @rfc_a_cuda0_2(%d: memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>) attributes {device.region = "device"
// CHECK-NEXT:    device.free %d
// CHECK-NEXT:    func.return

// -----

// Device programs and host functions are left alone; a run inside a loop body that
// also works on host memory is outlined inside the loop, with the induction variable
// as an argument; values computed in the run and used later become results.

!dev = memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>

kernel.module @k target #target.target<"cuda"> {
  kernel.func @step(%a: memref<?xf32>, %i: index) {
    kernel.return
  }
}

// CHECK-LABEL: func.func @already_device(%a: memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>) attributes {device.region = "device"
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    device.launch
func.func @already_device(%a: !dev) {
  %c1 = arith.constant 1 : index
  device.launch @k::@step on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a, %c1) : !dev, index
  func.return
}

func.func @loop(%n: index, %h: memref<4xindex>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = device.alloc(%n) : !dev
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
    %tpb = device.attr "max_threads_per_block" of #vdev.device<"cuda", 0> : index
    device.launch @k::@step on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a, %i) : !dev, index
    %next = arith.addi %acc, %tpb : index
    memref.store %next, %h[%c0] : memref<4xindex>
    scf.yield %next : index
  }
  device.free %a : !dev
  func.return %r : index
}

// CHECK-LABEL: func.func @loop(%n: index, %h: memref<4xindex>) -> index attributes {device.region = "mixed"} {
// CHECK:         %a = func.call @loop_cuda0(%n) : (index) -> memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
// CHECK-NEXT:    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
// CHECK-NEXT:      %tpb = device.attr "max_threads_per_block"
// CHECK-NEXT:      func.call @loop_cuda0_1(%c1, %a, %i) : (index, memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>, index) -> ()
// CHECK-NEXT:      %next = arith.addi %acc, %tpb : index
// CHECK-NEXT:      memref.store %next, %h[%c0]
// CHECK-NEXT:      scf.yield %next : index
// CHECK-NEXT:    }
// CHECK-NEXT:    func.call @loop_cuda0_2(%a)
// CHECK-NEXT:    func.return %r : index

// CHECK-LABEL: func.func @loop_cuda0(%n: index) -> memref<?xf32, #vdev.device<"cuda", 0, ?, "global">> attributes {device.region = "device"
// CHECK-LABEL: func.func @loop_cuda0_1(%c1: index, %a: memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>, %i: index) attributes {device.region = "device"
// CHECK-NEXT:    device.launch @k::@step
// CHECK-LABEL: func.func @loop_cuda0_2(%a: memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>) attributes {device.region = "device"

// -----

// Multi-device: each device's work becomes its own device program; the copy from
// one device through the host to the other stays in the glue.

!host = memref<4xf32>
!g0 = memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>
!g1 = memref<4xf32, #vdev.device<"cuda", 1, ?, "global">>

kernel.module @k target #target.target<"cuda"> {
  kernel.func @inc(%a: memref<4xf32>) {
    kernel.return
  }
}

func.func @two_gpus(%h: !host) {
  %c1 = arith.constant 1 : index
  %a = device.alloc() : !g0
  device.copy %h to %a : !host to !g0
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a) : !g0
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%a) : !g0
  device.copy %a to %h : !g0 to !host
  device.free %a : !g0
  %b = device.alloc() : !g1
  device.copy %h to %b : !host to !g1
  device.launch @k::@inc on #vdev.device<"cuda", 1> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%b) : !g1
  device.copy %b to %h : !g1 to !host
  device.free %b : !g1
  func.return
}

// CHECK-LABEL: func.func @two_gpus(%h: memref<4xf32>) attributes {device.region = "multi-device"} {
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %a = func.call @two_gpus_cuda0()
// CHECK-NEXT:    device.copy %h to %a
// CHECK-NEXT:    func.call @two_gpus_cuda0_1(%c1, %a)
// CHECK-NEXT:    device.copy %a to %h
// CHECK-NEXT:    func.call @two_gpus_cuda0_2(%a)
// CHECK-NEXT:    %b = func.call @two_gpus_cuda1()
// CHECK-NEXT:    device.copy %h to %b
// CHECK-NEXT:    func.call @two_gpus_cuda1_1(%c1, %b)
// CHECK-NEXT:    device.copy %b to %h
// CHECK-NEXT:    func.call @two_gpus_cuda1_2(%b)
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @two_gpus_cuda0() -> memref<4xf32, #vdev.device<"cuda", 0, ?, "global">> attributes {device.region = "device"
// CHECK-LABEL: func.func @two_gpus_cuda0_1(
// CHECK-NEXT:    device.launch @k::@inc on #vdev.device<"cuda", 0>
// CHECK-NEXT:    device.launch @k::@inc on #vdev.device<"cuda", 0>
// CHECK-LABEL: func.func @two_gpus_cuda0_2(
// CHECK-NEXT:    device.free %a
// CHECK-LABEL: func.func @two_gpus_cuda1() -> memref<4xf32, #vdev.device<"cuda", 1, ?, "global">> attributes {device.region = "device"
// CHECK-LABEL: func.func @two_gpus_cuda1_1(
// CHECK-NEXT:    device.launch @k::@inc on #vdev.device<"cuda", 1>
// CHECK-LABEL: func.func @two_gpus_cuda1_2(
// CHECK-NEXT:    device.free %b

// -----

// A host load of device memory between two launches on that memory is a real
// dependence: the second launch on %d writes what the load reads, so it stays after
// the load. The launch on %e (another allocation) conflicts with neither the load
// nor the host store, so it moves up into the first device program: two device
// programs instead of three.

!host = memref<4xf32>
!dev = memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>

kernel.module @k target #target.target<"cuda"> {
  kernel.func @inc(%a: memref<4xf32>) {
    kernel.return
  }
}

func.func @host_load_between(%i: index, %h: !host) {
  %c1 = arith.constant 1 : index
  %d = device.alloc() : !dev
  %e = device.alloc() : !dev
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : !dev
  %x = memref.load %d[%i] : !dev
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%e) : !dev
  memref.store %x, %h[%i] : !host
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%d) : !dev
  func.return
}

// CHECK-LABEL: func.func @host_load_between(%i: index, %h: memref<4xf32>) attributes {device.region = "mixed"} {
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %d = func.call @host_load_between_cuda0(%c1)
// CHECK-NEXT:    %x = memref.load %d[%i]
// CHECK-NEXT:    memref.store %x, %h[%i]
// CHECK-NEXT:    func.call @host_load_between_cuda0_1(%c1, %d)
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @host_load_between_cuda0(%c1: index) -> memref<4xf32, #vdev.device<"cuda", 0, ?, "global">> attributes {device.region = "device"
// CHECK-NEXT:    %d = device.alloc()
// CHECK-NEXT:    %e = device.alloc()
// CHECK-NEXT:    device.launch @k::@inc {{.*}} args(%d)
// CHECK-NEXT:    device.launch @k::@inc {{.*}} args(%e)
// CHECK-NEXT:    func.return %d
// CHECK-LABEL: func.func @host_load_between_cuda0_1(%c1: index, %d: memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>) attributes {device.region = "device"
// CHECK-NEXT:    device.launch @k::@inc {{.*}} args(%d)
// CHECK-NEXT:    func.return

// -----

// Function arguments may alias: the copy reads %q, which may be the memory the
// launches on %p write, so neither launch moves across it (two device programs).
// With %q a fresh `device.alloc` instead (@distinct_alloc), the second launch does
// not conflict with the copy and joins the first: one device program.
// (No `device.free %q`: it would need the copy first and make a second program.)

!host = memref<4xf32>
!dev = memref<4xf32, #vdev.device<"cuda", 0, ?, "global">>

kernel.module @k target #target.target<"cuda"> {
  kernel.func @inc(%a: memref<4xf32>) {
    kernel.return
  }
}

func.func @aliasing_args(%p: !dev, %q: !dev, %h: !host) {
  %c1 = arith.constant 1 : index
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%p) : !dev
  device.copy %q to %h : !dev to !host
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%p) : !dev
  func.return
}

// CHECK-LABEL: func.func @aliasing_args(
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    func.call @aliasing_args_cuda0(%c1, %p)
// CHECK-NEXT:    device.copy %q to %h
// CHECK-NEXT:    func.call @aliasing_args_cuda0_1(%c1, %p)
// CHECK-NEXT:    func.return

func.func @distinct_alloc(%p: !dev, %h: !host) {
  %c1 = arith.constant 1 : index
  %q = device.alloc() : !dev
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%p) : !dev
  device.copy %q to %h : !dev to !host
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c1, %c1, %c1) args(%p) : !dev
  func.return
}

// CHECK-LABEL: func.func @distinct_alloc(
// CHECK-NEXT:    %q = func.call @distinct_alloc_cuda0(%p)
// CHECK-NEXT:    device.copy %q to %h
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @distinct_alloc_cuda0(
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %q = device.alloc()
// CHECK-NEXT:    device.launch @k::@inc {{.*}} args(%p)
// CHECK-NEXT:    device.launch @k::@inc {{.*}} args(%p)
// CHECK-NEXT:    func.return %q
