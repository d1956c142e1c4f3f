// Elementwise operands must have the same sizes: with `--dynamic-size 3,4` the two `?`
// dimensions differ, and the run stops at the add.
func.func @main(%a: tensor<?x5xf32>, %b: tensor<?x5xf32>, %n: index) -> (tensor<?x5xf32>, index) {
  %c = arith.addf %a, %b : tensor<?x5xf32>
  func.return %c, %n : tensor<?x5xf32>, index
}
