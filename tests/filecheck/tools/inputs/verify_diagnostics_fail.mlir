// Each chunk fails --verify-diagnostics in one way (devplan_opt_verify_diagnostics.mlir).

// A missing error: the program is fine.
// expected-error@+1 {{conflicting placement}}
func.func @fine(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// -----

// An unexpected remark.
func.func @unannounced() {
  func.return
}

// -----

// A remark where a warning is expected.
// expected-warning@+1 {{@wrong_kind is host}}
func.func @wrong_kind() {
  func.return
}

// -----

// A wrong message: the expected text is missing and the error unexpected.
func.func @conflict(%x: tensor<4xf32> {vdev.device = #vdev.device<"cpu">}) -> tensor<4xf32> {
  // expected-error@+1 {{a different message}}
  %h = vdev.on_device %x to #vdev.device<"cuda", 0> {constrain_result} : tensor<4xf32>
  func.return %h : tensor<4xf32>
}

// -----

// expected-error-re@+1 {{{{.*}}}}
func.func @regex() {
  func.return
}
