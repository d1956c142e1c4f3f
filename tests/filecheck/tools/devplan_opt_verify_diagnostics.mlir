// --verify-diagnostics checks the diagnostics against expected-* annotations as mlir-opt
// does: all of them met is exit status 0 and the chunks' IR on stdout.
// RUN: devplan-opt %s --split-input-file --verify-diagnostics -p 'plan-devices,classify-regions{explain=true}' | filecheck %s
// A missing, unexpected or wrong diagnostic is exit status 1 with one line each.
// RUN: not devplan-opt %S/inputs/verify_diagnostics_fail.mlir --split-input-file --verify-diagnostics -p 'plan-devices,classify-regions{explain=true}' 2>&1 | filecheck %s --check-prefix=FAIL

// An error with its note, each at its line.
// expected-note@+1 {{the vdev.device attribute of argument 0 of @conflict places it}}
func.func @conflict(%x: tensor<4xf32> {vdev.device = #vdev.device<"cpu">}) -> tensor<4xf32> {
  // expected-error@+1 {{conflicting placement}}
  %h = vdev.on_device %x to #vdev.device<"cuda", 0> {constrain_result} : tensor<4xf32>
  func.return %h : tensor<4xf32>
}

// -----

// Remarks, with @below and @above (the nearest line without an annotation).
// CHECK: func.func @host_only() attributes {device.region = "host"}
// expected-remark@below {{@host_only is host}}
func.func @host_only() {
  func.return
}
// CHECK: func.func @also_host() attributes {device.region = "host"}
func.func @also_host() {
// expected-remark@above {{@also_host is host}}
  func.return
}

// -----

// A parse error, at an absolute line of the file (34).
// expected-error@34 {{Operation arith.bogus is not registered}}
func.func @bad() {
  %x = arith.bogus : i32
  func.return
}

// FAIL:      verify_diagnostics_fail.mlir:4:4: error: expected error "conflicting placement" at line 5 was not produced
// FAIL:      verify_diagnostics_fail.mlir:12:1: error: unexpected remark: @unannounced is host: it does no device work
// FAIL:      verify_diagnostics_fail.mlir:20:1: error: 'remark' diagnostic emitted when expecting a 'warning'
// FAIL:      verify_diagnostics_fail.mlir:29:3: error: unexpected error: conflicting placement
// FAIL:      verify_diagnostics_fail.mlir:27:1: error: unexpected note: the vdev.device attribute
// FAIL:      verify_diagnostics_fail.mlir:28:6: error: expected error "a different message" at line 29 was not produced
// FAIL:      verify_diagnostics_fail.mlir:35:4: error: 'expected-{{.}}rror-re' (regular expressions) is not supported
// FAIL-NOT:  Traceback
