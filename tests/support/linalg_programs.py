"""Level-1 tensor programs written the way users of TVM, IREE and torch-mlir write them:
`linalg.generic` with broadcasts, reductions and permuted maps, and named linalg ops.

`PROGRAMS` maps a name to the IR text of a module whose `@main` takes tensors only
(`tests/reference/test_linalg_programs.py` evaluates each in the oracle and checks one
known value). Shapes are small so that a lowering can run them in a test.
"""

# ruff: noqa: E501  (IR lines are long)

from __future__ import annotations

_PAR2 = '["parallel", "parallel"]'
_ROW_REDUCE = '["parallel", "reduction"]'
_ID2 = "affine_map<(d0, d1) -> (d0, d1)>"
_ROW = "affine_map<(d0, d1) -> (d0)>"
_COL = "affine_map<(d0, d1) -> (d1)>"

MLP = f"""
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.generic {{indexing_maps = [{_ID2}, {_COL}, {_ID2}], iterator_types = {_PAR2}}} ins(%mm, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {{
  ^bb0(%v: f32, %bias: f32, %out: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }} -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}}
"""

SOFTMAX = f"""
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {{
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %mx = linalg.generic {{indexing_maps = [{_ID2}, {_ROW}], iterator_types = {_ROW_REDUCE}}} ins(%x : tensor<4x16xf32>) outs(%mx0 : tensor<4xf32>) {{
  ^bb0(%v: f32, %m: f32):
    %r = arith.maximumf %v, %m : f32
    linalg.yield %r : f32
  }} -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %ex = linalg.generic {{indexing_maps = [{_ID2}, {_ROW}, {_ID2}], iterator_types = {_PAR2}}} ins(%x, %mx : tensor<4x16xf32>, tensor<4xf32>) outs(%e2 : tensor<4x16xf32>) {{
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  }} -> tensor<4x16xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {{indexing_maps = [{_ID2}, {_ROW}], iterator_types = {_ROW_REDUCE}}} ins(%ex : tensor<4x16xf32>) outs(%s0 : tensor<4xf32>) {{
  ^bb0(%v: f32, %a: f32):
    %r = arith.addf %v, %a : f32
    linalg.yield %r : f32
  }} -> tensor<4xf32>
  %y = linalg.generic {{indexing_maps = [{_ID2}, {_ROW}, {_ID2}], iterator_types = {_PAR2}}} ins(%ex, %sum : tensor<4x16xf32>, tensor<4xf32>) outs(%e2 : tensor<4x16xf32>) {{
  ^bb0(%v: f32, %t: f32, %o: f32):
    %r = arith.divf %v, %t : f32
    linalg.yield %r : f32
  }} -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}}
"""

LAYERNORM = f"""
func.func @main(%x: tensor<4x16xf64>, %gamma: tensor<16xf64>, %beta: tensor<16xf64>) -> tensor<4x16xf64> {{
  %zero = arith.constant 0.0 : f64
  %n = arith.constant 16.0 : f64
  %eps = arith.constant 1.0e-5 : f64
  %e1 = tensor.empty() : tensor<4xf64>
  %z1 = linalg.fill ins(%zero : f64) outs(%e1 : tensor<4xf64>) -> tensor<4xf64>
  %sums:2 = linalg.generic {{indexing_maps = [{_ID2}, {_ROW}, {_ROW}], iterator_types = {_ROW_REDUCE}}} ins(%x : tensor<4x16xf64>) outs(%z1, %z1 : tensor<4xf64>, tensor<4xf64>) {{
  ^bb0(%v: f64, %s: f64, %q: f64):
    %s1 = arith.addf %s, %v : f64
    %v2 = arith.mulf %v, %v : f64
    %q1 = arith.addf %q, %v2 : f64
    linalg.yield %s1, %q1 : f64, f64
  }} -> (tensor<4xf64>, tensor<4xf64>)
  %e2 = tensor.empty() : tensor<4x16xf64>
  %y = linalg.generic {{indexing_maps = [{_ID2}, {_ROW}, {_ROW}, {_COL}, {_COL}, {_ID2}], iterator_types = {_PAR2}}} ins(%x, %sums#0, %sums#1, %gamma, %beta : tensor<4x16xf64>, tensor<4xf64>, tensor<4xf64>, tensor<16xf64>, tensor<16xf64>) outs(%e2 : tensor<4x16xf64>) {{
  ^bb0(%v: f64, %s: f64, %q: f64, %g: f64, %b: f64, %o: f64):
    %mean = arith.divf %s, %n : f64
    %msq = arith.divf %q, %n : f64
    %mm = arith.mulf %mean, %mean : f64
    %var = arith.subf %msq, %mm : f64
    %ve = arith.addf %var, %eps : f64
    %rs = math.rsqrt %ve : f64
    %c = arith.subf %v, %mean : f64
    %nrm = arith.mulf %c, %rs : f64
    %sc = arith.mulf %nrm, %g : f64
    %r = arith.addf %sc, %b : f64
    linalg.yield %r : f64
  }} -> tensor<4x16xf64>
  func.return %y : tensor<4x16xf64>
}}
"""

ATTENTION = """
func.func @main(%q: tensor<8x4xf64>, %k: tensor<8x4xf64>, %v: tensor<8x4xf64>) -> tensor<8x4xf64> {
  %zero = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %scale = arith.constant 0.5 : f64
  %e88 = tensor.empty() : tensor<8x8xf64>
  %z88 = linalg.fill ins(%zero : f64) outs(%e88 : tensor<8x8xf64>) -> tensor<8x8xf64>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, d) -> (i, d)>, affine_map<(i, j, d) -> (j, d)>, affine_map<(i, j, d) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : tensor<8x4xf64>, tensor<8x4xf64>) outs(%z88 : tensor<8x8xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %ps = arith.mulf %p, %scale : f64
    %r = arith.addf %acc, %ps : f64
    linalg.yield %r : f64
  } -> tensor<8x8xf64>
  %e8 = tensor.empty() : tensor<8xf64>
  %m0 = linalg.fill ins(%ninf : f64) outs(%e8 : tensor<8xf64>) -> tensor<8xf64>
  %m = linalg.reduce ins(%s : tensor<8x8xf64>) outs(%m0 : tensor<8xf64>) dimensions = [1]
    (%in: f64, %init: f64) {
      %r = arith.maximumf %in, %init : f64
      linalg.yield %r : f64
    }
  %p = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%s, %m : tensor<8x8xf64>, tensor<8xf64>) outs(%e88 : tensor<8x8xf64>) {
  ^bb0(%x: f64, %mx: f64, %o: f64):
    %d = arith.subf %x, %mx : f64
    %r = math.exp %d : f64
    linalg.yield %r : f64
  } -> tensor<8x8xf64>
  %l0 = linalg.fill ins(%zero : f64) outs(%e8 : tensor<8xf64>) -> tensor<8xf64>
  %l = linalg.reduce ins(%p : tensor<8x8xf64>) outs(%l0 : tensor<8xf64>) dimensions = [1]
    (%in: f64, %init: f64) {
      %r = arith.addf %in, %init : f64
      linalg.yield %r : f64
    }
  %e84 = tensor.empty() : tensor<8x4xf64>
  %z84 = linalg.fill ins(%zero : f64) outs(%e84 : tensor<8x4xf64>) -> tensor<8x4xf64>
  %o = linalg.matmul ins(%p, %v : tensor<8x8xf64>, tensor<8x4xf64>) outs(%z84 : tensor<8x4xf64>) -> tensor<8x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(i, d) -> (i, d)>, affine_map<(i, d) -> (i)>, affine_map<(i, d) -> (i, d)>], iterator_types = ["parallel", "parallel"]} ins(%o, %l : tensor<8x4xf64>, tensor<8xf64>) outs(%e84 : tensor<8x4xf64>) {
  ^bb0(%x: f64, %t: f64, %out: f64):
    %r = arith.divf %x, %t : f64
    linalg.yield %r : f64
  } -> tensor<8x4xf64>
  func.return %y : tensor<8x4xf64>
}
"""

CONV_RELU = """
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x6x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%z : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x4x6x6xf32>) outs(%e : tensor<1x4x6x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}
"""

MAX_POOL = """
func.func @main(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %window = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %window : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}
"""

BATCH_MATMUL = """
func.func @main(%a: tensor<3x4x5xf64>, %b: tensor<3x5x2xf64>) -> tensor<3x4x2xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<3x4x2xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<3x4x2xf64>) -> tensor<3x4x2xf64>
  %c = linalg.batch_matmul ins(%a, %b : tensor<3x4x5xf64>, tensor<3x5x2xf64>) outs(%z : tensor<3x4x2xf64>) -> tensor<3x4x2xf64>
  func.return %c : tensor<3x4x2xf64>
}
"""

GELU_TRANSPOSED = """
func.func @main(%x: tensor<6x4xf64>) -> tensor<4x6xf64> {
  %half = arith.constant 0.5 : f64
  %one = arith.constant 1.0 : f64
  %c = arith.constant 0.7978845608028654 : f64
  %k = arith.constant 0.044715 : f64
  %e = tensor.empty() : tensor<4x6xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<6x4xf64>) outs(%e : tensor<4x6xf64>) {
  ^bb0(%v: f64, %o: f64):
    %v2 = arith.mulf %v, %v : f64
    %v3 = arith.mulf %v2, %v : f64
    %kv3 = arith.mulf %k, %v3 : f64
    %inner = arith.addf %v, %kv3 : f64
    %scaled = arith.mulf %c, %inner : f64
    %t = math.tanh %scaled : f64
    %onep = arith.addf %one, %t : f64
    %hv = arith.mulf %half, %v : f64
    %r = arith.mulf %hv, %onep : f64
    linalg.yield %r : f64
  } -> tensor<4x6xf64>
  func.return %y : tensor<4x6xf64>
}
"""

MIXED_MATMUL = """
func.func @main(%a: tensor<4x8xi8>, %b: tensor<8x3xi8>) -> tensor<4x3xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<4x3xi32>
  %z = linalg.fill ins(%zero : i32) outs(%e : tensor<4x3xi32>) -> tensor<4x3xi32>
  %c = linalg.matmul ins(%a, %b : tensor<4x8xi8>, tensor<8x3xi8>) outs(%z : tensor<4x3xi32>) -> tensor<4x3xi32>
  func.return %c : tensor<4x3xi32>
}
"""

COLUMN_SUM = """
func.func @main(%x: tensor<5x3xi32>) -> tensor<3xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<3xi32>
  %z = linalg.fill ins(%zero : i32) outs(%e : tensor<3xi32>) -> tensor<3xi32>
  %s = linalg.generic {indexing_maps = [affine_map<(j, i) -> (i, j)>, affine_map<(j, i) -> (j)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<5x3xi32>) outs(%z : tensor<3xi32>) {
  ^bb0(%v: i32, %acc: i32):
    %r = arith.addi %acc, %v : i32
    linalg.yield %r : i32
  } -> tensor<3xi32>
  func.return %s : tensor<3xi32>
}
"""

NAMED_ELEMENTWISE = """
func.func @main(%x: tensor<3x4xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %e43 = tensor.empty() : tensor<4x3xf32>
  %t = linalg.transpose ins(%x : tensor<3x4xf32>) outs(%e43 : tensor<4x3xf32>) permutation = [1, 0]
  %bb = linalg.broadcast ins(%b : tensor<3xf32>) outs(%e43 : tensor<4x3xf32>) dimensions = [0]
  %s = linalg.add ins(%t, %bb : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.exp ins(%s : tensor<4x3xf32>) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}
"""

DYNAMIC_RELU = """
func.func @main(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%x : tensor<?x8xf32>) {
  ^bb0(%v: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}
"""

PROGRAMS: dict[str, str] = {
    "mlp_broadcast_bias_relu": MLP,
    "softmax": SOFTMAX,
    "layernorm": LAYERNORM,
    "attention": ATTENTION,
    "conv_2d_nchw_fchw_relu": CONV_RELU,
    "max_pool": MAX_POOL,
    "batch_matmul": BATCH_MATMUL,
    "gelu_transposed": GELU_TRANSPOSED,
    "matmul_i8_i32": MIXED_MATMUL,
    "column_sum": COLUMN_SUM,
    "transpose_broadcast_add_exp": NAMED_ELEMENTWISE,
    "dynamic_rows_relu": DYNAMIC_RELU,
}
"""Program name -> IR text of a module with `@main`."""
