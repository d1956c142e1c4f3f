// RUN: devplan-opt %s --split-input-file -p elide-copies | filecheck %s
// RUN: devplan-opt %s --split-input-file -p 'elide-copies{explain=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=EXPLAIN
// RUN: devplan-opt %s --split-input-file -p elide-copies,elide-copies | filecheck %s
// RUN: devplan-opt %s --split-input-file -p elide-copies | devplan-opt --split-input-file -p "elide-copies{stats=true}" 2>&1 >/dev/null | filecheck %s --check-prefix=IDEMPOTENT

// A second run removes nothing (the pass is idempotent).
// IDEMPOTENT: elide-copies: removed 0 of
// IDEMPOTENT-NOT: removed {{[1-9]}}

// Level 1 (vdev.device_copy in planned modules). Placements are written in full, as
// plan-devices leaves them; the system is the default one (cpu:0, cuda:0, cuda:1;
// cpu:0/global and cuda:N/host are one memory area).

!t = tensor<4xf32>
#cpu = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">
#gpu = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">

// A copy whose source and destination are the same device and scope gives back its
// operand.
// CHECK-LABEL: func.func @same_device_and_scope
// CHECK-NEXT:    %r = arith.addf %a, %a
func.func @same_device_and_scope(%a: !t {vdev.device = #gpu}) -> (!t {vdev.device = #gpu}) {
  %b = vdev.device_copy %a from #gpu to #vdev.device<"cuda", 0, ?, "global"> : !t
  %r = arith.addf %b, %b {vdev.device = #gpu} : !t
  func.return %r : !t
}

// -----

!t = tensor<4xf32>
#cpu = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">
#gpu = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">

// A -> B -> A gives back the original value; the copy to B is then unused.
// CHECK-LABEL: func.func @round_trip
// CHECK-NOT:     vdev.device_copy
// CHECK:         %r = arith.addf %a, %a
func.func @round_trip(%a: !t {vdev.device = #cpu}) -> (!t {vdev.device = #cpu}) {
  %b = vdev.device_copy %a from #cpu to #gpu : !t
  %c = vdev.device_copy %b from #gpu to #cpu : !t
  %r = arith.addf %c, %c {vdev.device = #cpu} : !t
  func.return %r : !t
}

// -----

!t = tensor<4xf32>
#cpu = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">
#gpu = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">
#gpu1 = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">

// A chain whose middle value has no other use: one copy from the start instead of
// two.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %c = vdev.device_copy %a from #vdev.device<"cpu", 0, #target.target<"llvm">, "global"> to #vdev.device<"cuda", 1, #target.target<"cuda">, "global">
// CHECK-NEXT:    %r = arith.addf %c, %c
func.func @chain(%a: !t {vdev.device = #cpu}) -> (!t {vdev.device = #gpu1}) {
  %b = vdev.device_copy %a from #cpu to #gpu : !t
  %c = vdev.device_copy %b from #gpu to #gpu1 : !t
  %r = arith.addf %c, %c {vdev.device = #gpu1} : !t
  func.return %r : !t
}

// -----

!t = tensor<4xf32>
#cpu = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">
#gpu = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">
#gpu1 = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">

// The middle of a chain is used too: the last hop is rerouted when the system's
// links make it cheaper. cuda:0 -> cuda:1 (300 GB/s) beats cpu:0 -> cuda:1 (24 GB/s).
// CHECK-LABEL: func.func @chain_rerouted_to_faster_link
// CHECK-NEXT:    %b = vdev.device_copy %a from #vdev.device<"cuda", 0, #target.target<"cuda">, "global"> to #vdev.device<"cpu", 0, #target.target<"llvm">, "global">
// CHECK-NEXT:    %c = vdev.device_copy %a from #vdev.device<"cuda", 0, #target.target<"cuda">, "global"> to #vdev.device<"cuda", 1, #target.target<"cuda">, "global">
func.func @chain_rerouted_to_faster_link(%a: !t {vdev.device = #gpu}) -> (!t {vdev.device = #cpu}, !t {vdev.device = #gpu1}) {
  %b = vdev.device_copy %a from #gpu to #cpu : !t
  %c = vdev.device_copy %b from #cpu to #gpu1 : !t
  %x = arith.addf %b, %b {vdev.device = #cpu} : !t
  %y = arith.addf %c, %c {vdev.device = #gpu1} : !t
  func.return %x, %y : !t, !t
}

// The other way round the hop from the middle is the cheaper one: kept.
// CHECK-LABEL: func.func @chain_kept_when_the_middle_is_cheaper
// CHECK-NEXT:    %b = vdev.device_copy %a from #vdev.device<"cpu", 0, #target.target<"llvm">, "global"> to #vdev.device<"cuda", 0, #target.target<"cuda">, "global">
// CHECK-NEXT:    %c = vdev.device_copy %b from #vdev.device<"cuda", 0, #target.target<"cuda">, "global"> to #vdev.device<"cuda", 1, #target.target<"cuda">, "global">
func.func @chain_kept_when_the_middle_is_cheaper(%a: !t {vdev.device = #cpu}) -> (!t {vdev.device = #gpu}, !t {vdev.device = #gpu1}) {
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'vdev.device_copy': a transfer between distinct memories (cpu:0/global to cuda:0/global)
  %b = vdev.device_copy %a from #cpu to #gpu : !t
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'vdev.device_copy': a transfer between distinct memories (cuda:0/global to cuda:1/global); its operand has other uses and copying from cpu:0/global instead is not cheaper
  %c = vdev.device_copy %b from #gpu to #gpu1 : !t
  %x = arith.addf %b, %b {vdev.device = #gpu} : !t
  %y = arith.addf %c, %c {vdev.device = #gpu1} : !t
  func.return %x, %y : !t, !t
}

// -----

!t = tensor<4xf32>
#cpu = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">
#gpu = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">

// Two copies of one value to one place: the later uses the earlier, also inside a
// region the earlier dominates. A copy in a sibling region does not dominate.
// CHECK-LABEL: func.func @duplicates
// CHECK-NEXT:    %b = vdev.device_copy %a
// CHECK-NEXT:    %x = arith.addf %b, %b
// CHECK-NEXT:    %y = scf.if %p
// CHECK-NEXT:      %z = arith.mulf %b, %b
func.func @duplicates(%a: !t {vdev.device = #cpu}, %p: i1) -> (!t {vdev.device = #gpu}) {
  %b = vdev.device_copy %a from #cpu to #gpu : !t
  %b2 = vdev.device_copy %a from #cpu to #gpu : !t
  %x = arith.addf %b, %b2 {vdev.device = #gpu} : !t
  %y = scf.if %p -> (!t) {
    %b3 = vdev.device_copy %a from #cpu to #gpu : !t
    %z = arith.mulf %b3, %b3 {vdev.device = #gpu} : !t
    scf.yield %z : !t
  } else {
    scf.yield %x : !t
  } {vdev.device = [#gpu]}
  func.return %y : !t
}

// CHECK-LABEL: func.func @siblings_are_not_duplicates
// CHECK:         scf.if
// CHECK-NEXT:      vdev.device_copy %a
// CHECK:         } else {
// CHECK-NEXT:      vdev.device_copy %a
func.func @siblings_are_not_duplicates(%a: !t {vdev.device = #cpu}, %p: i1) -> (!t {vdev.device = #gpu}) {
  %y = scf.if %p -> (!t) {
    %b = vdev.device_copy %a from #cpu to #gpu : !t
    scf.yield %b : !t
  } else {
    %c = vdev.device_copy %a from #cpu to #gpu : !t
    %z = arith.mulf %c, %c {vdev.device = #gpu} : !t
    scf.yield %z : !t
  } {vdev.device = [#gpu]}
  func.return %y : !t
}

// -----

!t = tensor<4xf32>
#cpu = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">
#gpu = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">

// A copy whose result is unused goes.
// CHECK-LABEL: func.func @unused
// CHECK-NEXT:    func.return %a
func.func @unused(%a: !t {vdev.device = #cpu}) -> (!t {vdev.device = #cpu}) {
  %b = vdev.device_copy %a from #cpu to #gpu : !t
  func.return %a : !t
}

// -----

!t = tensor<4xf32>
#cpu = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">
#gpu = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">

// A copied constant is materialised on the destination instead (once: a second copy
// reuses it), and the original goes when nothing else uses it.
// CHECK-LABEL: func.func @constant
// CHECK-NEXT:    %k = arith.constant {vdev.device = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">} dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %x = arith.addf %k, %k
// CHECK-NEXT:    %y = arith.mulf %x, %k
func.func @constant() -> (!t {vdev.device = #gpu}) {
  %k = arith.constant {vdev.device = #cpu} dense<1.0> : !t
  %b = vdev.device_copy %k from #cpu to #gpu : !t
  %x = arith.addf %b, %b {vdev.device = #gpu} : !t
  %b2 = vdev.device_copy %k from #cpu to #gpu : !t
  %y = arith.mulf %x, %b2 {vdev.device = #gpu} : !t
  func.return %y : !t
}

// -----

!t = tensor<4xf32>
#cpu = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">
#gpu = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">
#pinned = #vdev.device<"cuda", 0, #target.target<"cuda">, "host">
#gpu1 = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">

// cpu:0/global and cuda:0/host are one memory area in the default system, but two
// places: lower-to-device gives each place its own buffer and kernels reach only their
// own device's, so at level 1 the copy stays (level 2 removes such copies where one
// buffer can serve). Judged for the whole pair, cpu:0 -> cuda:1 -> cuda:0/host needs
// no trip through cuda:1: it becomes the direct copy, a duplicate of the first.
// CHECK-LABEL: func.func @one_memory_area
// CHECK-NEXT:    %b = vdev.device_copy %a
// CHECK-NEXT:    %x = arith.addf %b, %b
// CHECK-NEXT:    %y = arith.mulf %b, %b
func.func @one_memory_area(%a: !t {vdev.device = #cpu}) -> (!t {vdev.device = #pinned}, !t {vdev.device = #pinned}) {
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'vdev.device_copy': cpu:0/global to cuda:0/host are one memory area, but two places: lower-to-device gives each place its own buffer, and kernels reach only their own device's (at level 2 the copy goes where one buffer can serve both)
  %b = vdev.device_copy %a from #cpu to #pinned : !t
  %x = arith.addf %b, %b {vdev.device = #pinned} : !t
  %c = vdev.device_copy %a from #cpu to #gpu1 : !t
  %d = vdev.device_copy %c from #gpu1 to #pinned : !t
  %y = arith.mulf %d, %d {vdev.device = #pinned} : !t
  func.return %x, %y : !t, !t
}

// -----

!t = tensor<4xf32>
#cpu = #vdev.device<"cpu", 0, #target.target<"llvm">, "global">
#gpu = #vdev.device<"cuda", 0, #target.target<"cuda">, "global">
#gpu1 = #vdev.device<"cuda", 1, #target.target<"cuda">, "global">

// The module's own system decides: here the CPU's link to cuda:1 is the fast one, so
// copying from cpu:0 stays (under the default system, cuda:0 -> cuda:1 is faster and
// the copy is rerouted, as in @chain_rerouted_to_faster_link).
// CHECK-LABEL: func.func @system_of_the_module
// CHECK:         %c = vdev.device_copy %b
module attributes {vdev.system = "[[device]]\ntype = \"cpu\"\nid = 0\ntarget = \"llvm\"\napi = \"cpu\"\nscopes = { global = \"1 GiB\" }\n[[device]]\ntype = \"cuda\"\nid = 0\ntarget = \"cuda\"\napi = \"simulated\"\nscopes = { global = \"1 GiB\" }\n[[device]]\ntype = \"cuda\"\nid = 1\ntarget = \"cuda\"\napi = \"simulated\"\nscopes = { global = \"1 GiB\" }\n[[link]]\nbetween = [\"cpu:0\", \"cuda:0\"]\nbandwidth = \"10 GB/s\"\nlatency = \"1 us\"\n[[link]]\nbetween = [\"cpu:0\", \"cuda:1\"]\nbandwidth = \"300 GB/s\"\nlatency = \"1 us\"\n[[link]]\nbetween = [\"cuda:0\", \"cuda:1\"]\nbandwidth = \"1 GB/s\"\nlatency = \"1 us\"\n"} {
  func.func @system_of_the_module(%a: !t {vdev.device = #gpu}) -> (!t {vdev.device = #cpu}, !t {vdev.device = #gpu1}) {
    %b = vdev.device_copy %a from #gpu to #cpu : !t
    %c = vdev.device_copy %b from #cpu to #gpu1 : !t
    %x = arith.addf %b, %b {vdev.device = #cpu} : !t
    %y = arith.addf %c, %c {vdev.device = #gpu1} : !t
    func.return %x, %y : !t, !t
  }
}

// -----

// Level 2 (device.copy, device.copy_async). @k::@inc writes its argument; @k::@twice
// reads its first argument and writes its second (the executor's static write sets).

!h = memref<16xf32>
!d = memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
kernel.module @k target #target.target<"cuda"> {
  kernel.func @inc(%a: memref<16xf32>) {
    %tx = kernel.thread_id x
    %x = memref.load %a[%tx] : memref<16xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %a[%tx] : memref<16xf32>
    kernel.return
  }
  kernel.func @twice(%a: memref<16xf32>, %b: memref<16xf32>) {
    %tx = kernel.thread_id x
    %x = memref.load %a[%tx] : memref<16xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%tx] : memref<16xf32>
    kernel.return
  }
}

// A copy of a buffer onto itself does nothing.
// CHECK-LABEL: func.func @same_buffer
// CHECK-NEXT:    func.return
func.func @same_buffer(%a: !h) -> !h {
  device.copy %a to %a : !h to !h
  func.return %a : !h
}

// Copies into a buffer that nothing reads before it is wholly overwritten, freed, or
// its lifetime (a local allocation at the end of the function) ends.
// CHECK-LABEL: func.func @dead
// CHECK-NEXT:    %d = device.alloc()
// CHECK-NEXT:    device.copy %b to %d
// CHECK-NEXT:    device.copy %d to %r
// CHECK-NEXT:    device.free %d
// CHECK-NEXT:    %e = device.alloc()
// CHECK-NEXT:    device.free %e
// CHECK-NEXT:    %f = device.alloc()
// CHECK-NEXT:    func.return
func.func @dead(%a: !h, %b: !h, %r: !h) {
  %d = device.alloc() : !d
  device.copy %a to %d : !h to !d
  device.copy %b to %d : !h to !d
  device.copy %d to %r : !d to !h
  device.free %d : !d
  %e = device.alloc() : !d
  device.copy %a to %e : !h to !d
  device.free %e : !d
  %f = device.alloc() : !d
  device.copy %a to %f : !h to !d
  func.return
}

// Kept: the destination is read first (by a launch), a kernel writes only part of it
// as far as the pass knows, or it is an argument the caller may read.
// CHECK-LABEL: func.func @dead_kept
// CHECK-COUNT-3: device.copy
func.func @dead_kept(%a: !h, %out: !d) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %d = device.alloc() : !d
  %e = device.alloc() : !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is passed to 'device.launch' at line [[# @LINE + 2]], whose kernel may read it
  device.copy %a to %d : !h to !d
  device.launch @k::@twice on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%d, %e) : !d, !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is passed to 'device.launch' at line [[# @LINE + 2]], whose kernel may read it
  device.copy %a to %d : !h to !d
  device.launch @k::@twice on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%e, %d) : !d, !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is not a local allocation: the caller may read it
  device.copy %d to %out : !d to !d
  device.free %d : !d
  device.free %e : !d
  func.return
}

// -----

!h = memref<16xf32>
!d = memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
kernel.module @k target #target.target<"cuda"> {
  kernel.func @inc(%a: memref<16xf32>) {
    %tx = kernel.thread_id x
    %x = memref.load %a[%tx] : memref<16xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %a[%tx] : memref<16xf32>
    kernel.return
  }
  kernel.func @twice(%a: memref<16xf32>, %b: memref<16xf32>) {
    %tx = kernel.thread_id x
    %x = memref.load %a[%tx] : memref<16xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%tx] : memref<16xf32>
    kernel.return
  }
}

// A -> B, nothing writes A or B (a launch only reads B), B -> A: the copy back goes.
// CHECK-LABEL: func.func @copy_back
// CHECK:         device.copy %a to %d
// CHECK-NEXT:    device.launch
// CHECK-NEXT:    device.free %d
func.func @copy_back(%a: !h) -> !h {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %d = device.alloc() : !d
  %e = device.alloc() : !d
  device.copy %a to %d : !h to !d
  device.launch @k::@twice on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%d, %e) : !d, !d
  device.copy %d to %a : !d to !h
  device.free %d : !d
  device.free %e : !d
  func.return %a : !h
}

// Kept: a kernel writes B in between; a branch may write it (the pass does not look
// into scf.if: it takes the union of both branches).
// CHECK-LABEL: func.func @copy_back_after_write
// CHECK-COUNT-2: device.copy
func.func @copy_back_after_write(%a: !h) -> !h {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %d = device.alloc() : !d
  device.copy %a to %d : !h to !d
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%d) : !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is read by 'func.return' at line [[# @LINE + 3]]; it copies back what 'device.copy' at line [[# @LINE - 2]] copied, but 'device.launch' at line [[# @LINE - 1]] may have changed it since
  device.copy %d to %a : !d to !h
  device.free %d : !d
  func.return %a : !h
}

// CHECK-LABEL: func.func @copy_back_after_branch
// CHECK-COUNT-2: device.copy
func.func @copy_back_after_branch(%a: !h, %p: i1) -> !h {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %d = device.alloc() : !d
  device.copy %a to %d : !h to !d
  scf.if %p {
    device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%d) : !d
  }
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is read by 'func.return' at line [[# @LINE + 3]]; it copies back what 'device.copy' at line [[# @LINE - 4]] copied, but 'scf.if' at line [[# @LINE - 3]] may have changed it since
  device.copy %d to %a : !d to !h
  device.free %d : !d
  func.return %a : !h
}

// Kept: the copy it would undo is async and its token is not yet waited for.
// CHECK-LABEL: func.func @copy_back_after_unawaited_async
// CHECK:         device.copy_async
// CHECK:         device.copy %d to %a
func.func @copy_back_after_unawaited_async(%a: !h) -> !h {
  %d = device.alloc() : !d
  %t = device.copy_async [] %a to %d : !h to !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': async work not yet waited for touches its destination; the copy it undoes ('device.copy_async' at line [[# @LINE - 1]]) is async and not yet waited for
  device.copy %d to %a : !d to !h
  device.wait %t
  device.free %d : !d
  func.return %a : !h
}

// -----

!h = memref<16xf32>
!d = memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
kernel.module @k target #target.target<"cuda"> {
  kernel.func @inc(%a: memref<16xf32>) {
    %tx = kernel.thread_id x
    %x = memref.load %a[%tx] : memref<16xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %a[%tx] : memref<16xf32>
    kernel.return
  }
  kernel.func @twice(%a: memref<16xf32>, %b: memref<16xf32>) {
    %tx = kernel.thread_id x
    %x = memref.load %a[%tx] : memref<16xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%tx] : memref<16xf32>
    kernel.return
  }
}

// Source and destination are one memory area (here: one device and scope) and
// neither is written while the destination is in use: its readers read the source,
// and its buffer goes.
// CHECK-LABEL: func.func @forward
// CHECK-NEXT:    %r = memref.alloc()
// CHECK-NEXT:    %c1
// CHECK-NEXT:    %c16
// CHECK-NEXT:    %o = device.alloc()
// CHECK-NEXT:    device.launch @k::@twice on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%s, %o)
// CHECK-NEXT:    device.copy %s to %r
// CHECK-NEXT:    device.free %o
// CHECK-NEXT:    func.return %r
func.func @forward(%s: !d) -> !h {
  %r = memref.alloc() : !h
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %o = device.alloc() : !d
  %d = device.alloc() : !d
  device.copy %s to %d : !d to !d
  device.launch @k::@twice on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%d, %o) : !d, !d
  device.copy %d to %r : !d to !h
  device.free %d : !d
  device.free %o : !d
  func.return %r : !h
}

// Kept: the source is written while the destination is in use.
// CHECK-LABEL: func.func @forward_source_written
// CHECK-COUNT-2: device.copy %
func.func @forward_source_written(%s: !d) -> !h {
  %r = memref.alloc() : !h
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %d = device.alloc() : !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is read by 'device.copy' at line [[# @LINE + 3]]; its source and destination are one memory area, but its source is written or freed by 'device.launch' at line [[# @LINE + 2]] while the destination is in use
  device.copy %s to %d : !d to !d
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%s) : !d
  device.copy %d to %r : !d to !h
  device.free %d : !d
  func.return %r : !h
}

// Kept: a use after the source is freed.
// CHECK-LABEL: func.func @forward_source_freed
// CHECK-COUNT-2: device.copy %
func.func @forward_source_freed() -> !h {
  %r = memref.alloc() : !h
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %s = device.alloc() : !d
  %d = device.alloc() : !d
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%s) : !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is read by 'device.copy' at line [[# @LINE + 3]]; its source and destination are one memory area, but its source is written or freed by 'device.free' at line [[# @LINE + 2]] while the destination is in use
  device.copy %s to %d : !d to !d
  device.free %s : !d
  device.copy %d to %r : !d to !h
  device.free %d : !d
  func.return %r : !h
}

// Kept: a view of the source is written while the destination is in use (a view's
// root is the buffer it views: forwarding would let the reader see the write).
// CHECK-LABEL: func.func @forward_source_written_through_a_view
// CHECK-COUNT-2: device.copy %
func.func @forward_source_written_through_a_view(%s: memref<32xf32, #vdev.device<"cuda", 0, ?, "global">>) -> memref<32xf32> {
  %r = memref.alloc() : memref<32xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %d = device.alloc() : memref<32xf32, #vdev.device<"cuda", 0, ?, "global">>
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is read by 'device.copy' at line [[# @LINE + 4]]; its source and destination are one memory area, but its source is written or freed by 'device.launch' at line [[# @LINE + 3]] while the destination is in use
  device.copy %s to %d : memref<32xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<32xf32, #vdev.device<"cuda", 0, ?, "global">>
  %v = device.view %s offset(%c1) sizes(%c16) strides(%c2) : memref<32xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<16xf32, strided<[2], offset: 1>, #vdev.device<"cuda", 0, ?, "global">>
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%v) : memref<16xf32, strided<[2], offset: 1>, #vdev.device<"cuda", 0, ?, "global">>
  device.copy %d to %r : memref<32xf32, #vdev.device<"cuda", 0, ?, "global">> to memref<32xf32>
  device.free %d : memref<32xf32, #vdev.device<"cuda", 0, ?, "global">>
  func.return %r : memref<32xf32>
}

// Kept: the destination is read through a view, which the pass does not follow.
// CHECK-LABEL: func.func @forward_destination_viewed
// CHECK-COUNT-2: device.copy %
func.func @forward_destination_viewed(%s: !d) -> !h {
  %r = memref.alloc() : !h
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %d = device.alloc() : !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is read by 'device.copy' at line [[# @LINE + 3]]; its source and destination are one memory area, but its destination is written or escapes at 'device.view' at line [[# @LINE + 2]]
  device.copy %s to %d : !d to !d
  %v = device.view %d offset(%c0) sizes(%c16) strides(%c1) : !d to !d
  device.copy %v to %r : !d to !h
  device.free %d : !d
  func.return %r : !h
}

// Kept: the destination's last reader writes the source (forwarded, one launch would
// read and write the one buffer).
// CHECK-LABEL: func.func @forward_source_written_by_the_last_reader
// CHECK:         device.copy %s to %d
// CHECK-NEXT:    device.launch @k::@twice on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%d, %s)
func.func @forward_source_written_by_the_last_reader(%s: !d) -> !d {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %d = device.alloc() : !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is passed to 'device.launch' at line [[# @LINE + 2]], whose kernel may read it; its source and destination are one memory area, but its source is written or freed by 'device.launch' at line [[# @LINE + 2]] while the destination is in use
  device.copy %s to %d : !d to !d
  device.launch @k::@twice on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%d, %s) : !d, !d
  device.free %d : !d
  func.return %s : !d
}

// Kept: the destination outlives the function (it is returned) while the source's
// lifetime ends in it.
// CHECK-LABEL: func.func @forward_destination_outlives_source
// CHECK:         device.copy %s to %d
func.func @forward_destination_outlives_source() -> !d {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %s = device.alloc() : !d
  %d = device.alloc() : !d
  device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%s) : !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is read by 'func.return' at line [[# @LINE + 3]]; its source and destination are one memory area, but its destination is written or escapes at 'func.return' at line [[# @LINE + 3]]
  device.copy %s to %d : !d to !d
  device.free %s : !d
  func.return %d : !d
}

// -----

!h = memref<16xf32>
!d = memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
!p = memref<16xf32, #vdev.device<"cuda", 0, ?, "host">>
kernel.module @k target #target.target<"cuda"> {
  kernel.func @inc(%a: memref<16xf32>) {
    %tx = kernel.thread_id x
    %x = memref.load %a[%tx] : memref<16xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %a[%tx] : memref<16xf32>
    kernel.return
  }
  kernel.func @twice(%a: memref<16xf32>, %b: memref<16xf32>) {
    %tx = kernel.thread_id x
    %x = memref.load %a[%tx] : memref<16xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%tx] : memref<16xf32>
    kernel.return
  }
}

// Elided async copies: whoever waited for a token waits for the copy's dependencies
// instead (a launch's dependency list, a device.wait); a wait left with nothing to
// wait for goes (it must not become `device.wait all`). %t0 is dead (%t2 overwrites
// %d first), %t1 is dead (%x is freed unread), %t3 likewise.
// CHECK-LABEL: func.func @dead_async
// CHECK-NEXT:    %c1
// CHECK-NEXT:    %c16
// CHECK-NEXT:    %d = device.alloc()
// CHECK-NEXT:    %x = device.alloc()
// CHECK-NEXT:    %t2 = device.copy_async [] %b to %d
// CHECK-NEXT:    %k = device.launch async [%t2] @k::@inc
// CHECK-NEXT:    device.wait %k
// CHECK-NEXT:    device.free %x
// CHECK-NEXT:    %e = device.alloc()
// CHECK-NEXT:    device.free %e
// CHECK-NEXT:    device.free %d
func.func @dead_async(%a: !h, %b: !h) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %d = device.alloc() : !d
  %t0 = device.copy_async [] %a to %d : !h to !d
  %x = device.alloc() : !d
  %t1 = device.copy_async [%t0] %a to %x : !h to !d
  %t2 = device.copy_async [%t1] %b to %d : !h to !d
  %k = device.launch async [%t1, %t2] @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%d) : !d
  device.wait %t1, %k
  device.free %x : !d
  %e = device.alloc() : !d
  %t3 = device.copy_async [] %a to %e : !h to !d
  device.wait %t3
  device.free %e : !d
  device.free %d : !d
  func.return
}

// Kept: a token that leaves its block (the pass does not follow it), a destination
// used inside a loop, a copy into memory another device's kernel reads although the
// two are one memory area (the runtime keeps their buffers apart for kernels).
// CHECK-LABEL: func.func @kept_across_control_flow
// CHECK-COUNT-4: device.copy
func.func @kept_across_control_flow(%a: !h, %n: index) -> !device.token {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %d = device.alloc() : !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is used inside 'scf.for' at line [[# @LINE + 2]] (the pass is conservative across control flow)
  device.copy %a to %d : !h to !d
  scf.for %i = %c0 to %n step %c1 {
    device.launch @k::@inc on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%d) : !d
  }
  device.free %d : !d
  %p = device.alloc() : !p
  %o = device.alloc() : !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy': its destination is passed to 'device.launch' at line [[# @LINE + 2]], whose kernel may read it; its source and destination are one memory area, but 'device.launch' at line [[# @LINE + 2]] reads it, and kernels reach only buffers of their own device at run time (cpu:0 and cuda:0 are two devices)
  device.copy %a to %p : !h to !p
  device.launch @k::@twice on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1) block(%c16, %c1, %c1) args(%p, %o) : !p, !d
  device.copy %o to %a : !d to !h
  device.free %p : !p
  device.free %o : !d
  %q = device.alloc() : !d
  // EXPLAIN: elide_copies.mlir:[[# @LINE + 1]]:3: remark: kept 'device.copy_async': its token is used by 'func.return' at line [[# @LINE + 3]], which the pass does not follow
  %tq = device.copy_async [] %a to %q : !h to !d
  device.free %q : !d
  func.return %tq : !device.token
}

// -----

// One memory area of two devices (cpu:0/global and cuda:0/host in the default system)
// at level 2: host code may read the GPU's host-visible buffer itself, so a copy into
// host memory that host code only reads becomes a view of the source.
// CHECK-LABEL: func.func @forward_to_host_readers
// CHECK:         device.copy %a to %p
// CHECK-NEXT:    %[[VIEW:.*]] = "memref.memory_space_cast"(%p) : (memref<4xf32, #vdev.device<"cuda", 0, ?, "host">>) -> memref<4xf32>
// CHECK-NEXT:    %x = memref.load %[[VIEW]][%c0]
// CHECK-NEXT:    %y = memref.load %[[VIEW]][%c3]
// CHECK-NOT:     memref.dealloc
// CHECK:         device.free %p
!h = memref<4xf32>
!p = memref<4xf32, #vdev.device<"cuda", 0, ?, "host">>
func.func @forward_to_host_readers(%a: !h) -> f32 {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %p = device.alloc() : !p
  device.copy %a to %p : !h to !p
  %h = memref.alloc() : !h
  device.copy %p to %h : !p to !h
  %x = memref.load %h[%c0] : !h
  %y = memref.load %h[%c3] : !h
  %s = arith.addf %x, %y : f32
  memref.dealloc %h : !h
  device.free %p : !p
  func.return %s : f32
}
