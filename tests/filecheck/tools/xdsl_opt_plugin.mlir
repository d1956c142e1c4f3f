// Plain `xdsl-opt` sees devplan's dialects through the `xdsl.universe` entry point.
// RUN: xdsl-opt %s | filecheck %s

// CHECK: "test.op"() {t = #target.target<"cuda", {arch = "sm_80"}>} : () -> ()
"test.op"() {t = #target.target<"cuda", {arch = "sm_80"}>} : () -> ()

// A devplan error inside plain xdsl-opt is one diagnostic, no Python traceback; xdsl-opt's
// parser keeps no locations, so the diagnostic prints the op instead.
// RUN: not xdsl-opt %S/inputs/xdsl_opt_conflict.mlir -p plan-devices 2>&1 | filecheck %s --check-prefix=ERROR
// ERROR-NOT:  Traceback
// ERROR:      <unknown>: error: conflicting placement: the 'vdev.on_device' hint places %b on #vdev.device<"cpu", 0>, but it is already placed on #vdev.device<"cuda", 0>
// ERROR-NEXT:   see current operation: %c = vdev.on_device %b to #vdev.device<"cpu", 0> {constrain_result} : tensor<4xf32>
// ERROR-NEXT: <unknown>: note: the 'vdev.on_device' hint places it on #vdev.device<"cuda", 0>
// ERROR-NEXT:   see current operation: %b = vdev.on_device %a to #vdev.device<"cuda", 0> {constrain_result} : tensor<4xf32>
// ERROR-NOT:  Traceback
