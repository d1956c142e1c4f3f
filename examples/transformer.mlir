// A pre-norm transformer block at level 1, as a frontend writes it in linalg: layer
// normalisation, single-head self-attention with a softmax, and an MLP with a GELU, each
// with its residual connection. 16 tokens of width 32; the MLP is 64 wide.
//
//   devplan-run examples/transformer.mlir --random-args 0 --stats
//   devplan-opt examples/transformer.mlir -p 'plan-devices{explain=true}' -o /dev/null
//
// Four hints split it: attention on cuda:0, the MLP on cuda:1, the two residual sums on
// the CPU. plan-devices places the rest by dataflow: each layer normalisation runs where
// the layer it feeds runs.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#q = affine_map<(d0, d1, d2) -> (d0, d2)>
#k = affine_map<(d0, d1, d2) -> (d1, d2)>
#s = affine_map<(d0, d1, d2) -> (d0, d1)>

func.func @main(%x: tensor<16x32xf32>, %g1: tensor<32xf32>, %b1: tensor<32xf32>,
                %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>,
                %wo: tensor<32x32xf32>, %g2: tensor<32xf32>, %b2: tensor<32xf32>,
                %wup: tensor<32x64xf32>, %bup: tensor<64xf32>, %wdown: tensor<64x32xf32>)
    -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32

  // Attention on cuda:0. Layer normalisation: (x - mean) / sqrt(var + 1e-5) * g1 + b1
  // along each row, the row's sum and sum of squares from one pass (two outputs).
  %e16 = tensor.empty() : tensor<16xf32>
  %z16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<16xf32>) -> tensor<16xf32>
  %e1632 = tensor.empty() : tensor<16x32xf32>
  %ln1s:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x32xf32>) outs(%z16, %z16 : tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%xi: f32, %s: f32, %sq: f32):
    %s1 = arith.addf %s, %xi : f32
    %x2 = arith.mulf %xi, %xi : f32
    %sq1 = arith.addf %sq, %x2 : f32
    linalg.yield %s1, %sq1 : f32, f32
  } -> (tensor<16xf32>, tensor<16xf32>)
  %ln1 = linalg.generic {indexing_maps = [#id, #row, #row, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ln1s#0, %ln1s#1, %g1, %b1 : tensor<16x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<32xf32>, tensor<32xf32>)
      outs(%e1632 : tensor<16x32xf32>) {
  ^bb0(%xi: f32, %s: f32, %sq: f32, %g: f32, %b: f32, %o: f32):
    %n = arith.constant 32.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %mean = arith.divf %s, %n : f32
    %msq = arith.divf %sq, %n : f32
    %mm = arith.mulf %mean, %mean : f32
    %var = arith.subf %msq, %mm : f32
    %ve = arith.addf %var, %eps : f32
    %rs = math.rsqrt %ve : f32
    %c = arith.subf %xi, %mean : f32
    %nrm = arith.mulf %c, %rs : f32
    %sc = arith.mulf %nrm, %g : f32
    %r = arith.addf %sc, %b : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>

  // softmax(q k^T / sqrt(32)) v, projected by wo
  %z1632 = linalg.fill ins(%zero : f32) outs(%e1632 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %q = linalg.matmul ins(%ln1, %wq : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z1632 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %k = linalg.matmul ins(%ln1, %wk : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z1632 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %v = linalg.matmul ins(%ln1, %wv : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z1632 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %e1616 = tensor.empty() : tensor<16x16xf32>
  %z1616 = linalg.fill ins(%zero : f32) outs(%e1616 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %scores = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<16x32xf32>, tensor<16x32xf32>) outs(%z1616 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e16 : tensor<16xf32>) -> tensor<16xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%scores : tensor<16x16xf32>) outs(%m0 : tensor<16xf32>) {
  ^bb0(%s: f32, %m: f32):
    %r = arith.maximumf %s, %m : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%scores, %max : tensor<16x16xf32>, tensor<16xf32>) outs(%e1616 : tensor<16x16xf32>) {
  ^bb0(%s: f32, %m: f32, %o: f32):
    %scale = arith.constant 0.176776695 : f32
    %d = arith.subf %s, %m : f32
    %ds = arith.mulf %d, %scale : f32
    %r = math.exp %ds : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  %den = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<16x16xf32>) outs(%z16 : tensor<16xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %probs = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %den : tensor<16x16xf32>, tensor<16xf32>) outs(%e1616 : tensor<16x16xf32>) {
  ^bb0(%p: f32, %l: f32, %o: f32):
    %r = arith.divf %p, %l : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  %ctx = linalg.matmul ins(%probs, %v : tensor<16x16xf32>, tensor<16x32xf32>) outs(%z1632 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %attn = linalg.matmul ins(%ctx, %wo : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z1632 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %attn0 = vdev.on_device %attn to #vdev.device<"cuda", 0> : tensor<16x32xf32>

  // First residual on the CPU
  %h = arith.addf %x, %attn0 : tensor<16x32xf32>
  %h0 = vdev.on_device %h to #vdev.device<"cpu", 0> : tensor<16x32xf32>

  // MLP on cuda:1: gelu(ln2 wup + bup) wdown, the GELU in its tanh form
  %f16 = tensor.empty() : tensor<16xf32>
  %y16 = linalg.fill ins(%zero : f32) outs(%f16 : tensor<16xf32>) -> tensor<16xf32>
  %f1632 = tensor.empty() : tensor<16x32xf32>
  %ln2s:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h0 : tensor<16x32xf32>) outs(%y16, %y16 : tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%xi: f32, %s: f32, %sq: f32):
    %s1 = arith.addf %s, %xi : f32
    %x2 = arith.mulf %xi, %xi : f32
    %sq1 = arith.addf %sq, %x2 : f32
    linalg.yield %s1, %sq1 : f32, f32
  } -> (tensor<16xf32>, tensor<16xf32>)
  %ln2 = linalg.generic {indexing_maps = [#id, #row, #row, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h0, %ln2s#0, %ln2s#1, %g2, %b2 : tensor<16x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<32xf32>, tensor<32xf32>)
      outs(%f1632 : tensor<16x32xf32>) {
  ^bb0(%xi: f32, %s: f32, %sq: f32, %g: f32, %b: f32, %o: f32):
    %n = arith.constant 32.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %mean = arith.divf %s, %n : f32
    %msq = arith.divf %sq, %n : f32
    %mm = arith.mulf %mean, %mean : f32
    %var = arith.subf %msq, %mm : f32
    %ve = arith.addf %var, %eps : f32
    %rs = math.rsqrt %ve : f32
    %c = arith.subf %xi, %mean : f32
    %nrm = arith.mulf %c, %rs : f32
    %sc = arith.mulf %nrm, %g : f32
    %r = arith.addf %sc, %b : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  %e1664 = tensor.empty() : tensor<16x64xf32>
  %z1664 = linalg.fill ins(%zero : f32) outs(%e1664 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %up = linalg.matmul ins(%ln2, %wup : tensor<16x32xf32>, tensor<32x64xf32>) outs(%z1664 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %gelu = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%up, %bup : tensor<16x64xf32>, tensor<64xf32>) outs(%e1664 : tensor<16x64xf32>) {
  ^bb0(%u: f32, %b: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %c = arith.constant 0.0447149985 : f32
    %sqrt2pi = arith.constant 0.797884583 : f32
    %t = arith.addf %u, %b : f32
    %t2 = arith.mulf %t, %t : f32
    %t3 = arith.mulf %t2, %t : f32
    %ct3 = arith.mulf %c, %t3 : f32
    %inner = arith.addf %t, %ct3 : f32
    %arg = arith.mulf %sqrt2pi, %inner : f32
    %th = math.tanh %arg : f32
    %th1 = arith.addf %one, %th : f32
    %ht = arith.mulf %half, %t : f32
    %r = arith.mulf %ht, %th1 : f32
    linalg.yield %r : f32
  } -> tensor<16x64xf32>
  %y1632 = linalg.fill ins(%zero : f32) outs(%f1632 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %down = linalg.matmul ins(%gelu, %wdown : tensor<16x64xf32>, tensor<64x32xf32>) outs(%y1632 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %down1 = vdev.on_device %down to #vdev.device<"cuda", 1> : tensor<16x32xf32>

  // Second residual on the CPU
  %out = arith.addf %h0, %down1 : tensor<16x32xf32>
  %out0 = vdev.on_device %out to #vdev.device<"cpu", 0> : tensor<16x32xf32>
  func.return %out0 : tensor<16x32xf32>
}
