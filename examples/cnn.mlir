// A small convolutional network at level 1: two 3x3 convolutions, each followed by a
// bias and a ReLU in one linalg.generic, a 2x2 max pooling between them, a global
// average pooling and a linear classifier. One 16x16 RGB image in, ten scores out.
//
//   devplan-run examples/cnn.mlir --random-args 0 --stats
//
// One hint puts the feature extractor on cuda:0; the classifier is free and goes to the
// default device, the CPU, with one copy of the 16 pooled features between them.

#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#channel = affine_map<(n, c, h, w) -> (c)>
#pooled = affine_map<(n, c, h, w) -> (n, c)>

func.func @main(%image: tensor<1x3x16x16xf32>, %w1: tensor<8x3x3x3xf32>, %b1: tensor<8xf32>,
                %w2: tensor<16x8x3x3xf32>, %b2: tensor<16xf32>, %wfc: tensor<16x10xf32>)
    -> tensor<1x10xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32

  // conv 3x3 (3 -> 8 channels), bias, ReLU: 1x8x14x14
  %e1 = tensor.empty() : tensor<1x8x14x14xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x8x14x14xf32>) -> tensor<1x8x14x14xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%image, %w1 : tensor<1x3x16x16xf32>, tensor<8x3x3x3xf32>) outs(%z1 : tensor<1x8x14x14xf32>) -> tensor<1x8x14x14xf32>
  %r1 = linalg.generic {indexing_maps = [#nchw, #channel, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1, %b1 : tensor<1x8x14x14xf32>, tensor<8xf32>) outs(%e1 : tensor<1x8x14x14xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %relu0 = arith.constant 0.0 : f32
    %s = arith.addf %x, %b : f32
    %r = arith.maximumf %s, %relu0 : f32
    linalg.yield %r : f32
  } -> tensor<1x8x14x14xf32>

  // max pooling 2x2, stride 2: 1x8x7x7
  %window = tensor.empty() : tensor<2x2xf32>
  %e2 = tensor.empty() : tensor<1x8x7x7xf32>
  %m2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %p2 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%r1, %window : tensor<1x8x14x14xf32>, tensor<2x2xf32>) outs(%m2 : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>

  // conv 3x3 (8 -> 16 channels), bias, ReLU: 1x16x5x5
  %e3 = tensor.empty() : tensor<1x16x5x5xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  %c3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p2, %w2 : tensor<1x8x7x7xf32>, tensor<16x8x3x3xf32>) outs(%z3 : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  %r3 = linalg.generic {indexing_maps = [#nchw, #channel, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c3, %b2 : tensor<1x16x5x5xf32>, tensor<16xf32>) outs(%e3 : tensor<1x16x5x5xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %relu0 = arith.constant 0.0 : f32
    %s = arith.addf %x, %b : f32
    %r = arith.maximumf %s, %relu0 : f32
    linalg.yield %r : f32
  } -> tensor<1x16x5x5xf32>

  // global average pooling: the mean of each channel's 5x5 values, 1x16
  %e4 = tensor.empty() : tensor<1x16xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x16xf32>) -> tensor<1x16xf32>
  %sums = linalg.generic {indexing_maps = [#nchw, #pooled], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%r3 : tensor<1x16x5x5xf32>) outs(%z4 : tensor<1x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<1x16xf32>
  %features = linalg.generic {indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (n, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%sums : tensor<1x16xf32>) outs(%e4 : tensor<1x16xf32>) {
  ^bb0(%s: f32, %o: f32):
    %count = arith.constant 25.0 : f32
    %mean = arith.divf %s, %count : f32
    linalg.yield %mean : f32
  } -> tensor<1x16xf32>
  %features0 = vdev.on_device %features to #vdev.device<"cuda", 0> : tensor<1x16xf32>

  // the classifier: scores = features wfc
  %e5 = tensor.empty() : tensor<1x10xf32>
  %z5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<1x10xf32>) -> tensor<1x10xf32>
  %scores = linalg.matmul ins(%features0, %wfc : tensor<1x16xf32>, tensor<16x10xf32>) outs(%z5 : tensor<1x10xf32>) -> tensor<1x10xf32>
  func.return %scores : tensor<1x10xf32>
}
