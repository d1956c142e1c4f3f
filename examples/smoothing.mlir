// Iterative smoothing at level 1: control flow and calls across devices.
//
//   devplan-run examples/smoothing.mlir --random-args 0 --stats
//
// `scf.for` carries a tensor through %steps rounds of @blend on cuda:1; @blend is also
// called on the inputs as they are on the CPU, so plan-devices makes one copy of it per
// device; `scf.if` clamps the result by the CPU's answer when %clamp is set. %steps and
// %clamp are host scalars.

func.func @blend(%a: tensor<1000xf32>, %b: tensor<1000xf32>) -> tensor<1000xf32> {
  %half = arith.constant dense<0.5> : tensor<1000xf32>
  %s = arith.addf %a, %b : tensor<1000xf32>
  %m = arith.mulf %s, %half : tensor<1000xf32>
  func.return %m : tensor<1000xf32>
}

func.func @main(%x: tensor<1000xf32>, %y: tensor<1000xf32>, %steps: index, %clamp: i1)
    -> tensor<1000xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %start = math.tanh %x : tensor<1000xf32>
  %start1 = vdev.on_device %start to #vdev.device<"cuda", 1> : tensor<1000xf32>
  %smooth = scf.for %i = %c0 to %steps step %c1 iter_args(%acc = %start1) -> (tensor<1000xf32>) {
    %next = func.call @blend(%acc, %y) : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
    %next1 = vdev.on_device %next to #vdev.device<"cuda", 1> {constrain_result} : tensor<1000xf32>
    scf.yield %next1 : tensor<1000xf32>
  }
  %xc = vdev.on_device %x to #vdev.device<"cpu", 0> : tensor<1000xf32>
  %yc = vdev.on_device %y to #vdev.device<"cpu", 0> : tensor<1000xf32>
  %once = func.call @blend(%xc, %yc) : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  %result = scf.if %clamp -> (tensor<1000xf32>) {
    %low = arith.minimumf %smooth, %once : tensor<1000xf32>
    scf.yield %low : tensor<1000xf32>
  } else {
    scf.yield %smooth : tensor<1000xf32>
  }
  func.return %result : tensor<1000xf32>
}
