// RUN: not devplan-opt %s --split-input-file 2>&1 | filecheck %s

// A #vdev.device field of the wrong kind names the field it expected.

// CHECK: syntax_errors.mlir:[[# @LINE + 1]]:31: error: string literal expected for the device type (or ? for unconstrained)
"test.op"() {d = #vdev.device<>} : () -> ()

// -----

// CHECK: syntax_errors.mlir:[[# @LINE + 1]]:39: error: Expected integer literal for the virtual id (or ? for unconstrained)
"test.op"() {d = #vdev.device<"cuda", "0">} : () -> ()

// -----

// CHECK: syntax_errors.mlir:[[# @LINE + 1]]:45: error: string literal expected for the memory scope (or ? for unconstrained)
"test.op"() {d = #vdev.device<"cuda", 0, ?, 7>} : () -> ()
