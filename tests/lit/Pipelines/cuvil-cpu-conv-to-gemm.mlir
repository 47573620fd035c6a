// RUN: %cuvil_opt %s --cuvil-cpu-conv-to-gemm --split-input-file | FileCheck %s

// One image, 3x3 kernel with strides 2: the windows are copied into columns
// [N, C, KH, KW, OH, OW] (read at oh * 2 + kh, ow * 2 + kw), collapsed
// straight to [C*KH*KW, OH*OW], then one matmul of the weights [F, C*KH*KW]
// by them.
// CHECK-LABEL: func.func @one_image
// CHECK: %[[COLS:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<1x4x3x3x7x7xf32>)
// CHECK: tensor.extract %arg0
// CHECK: tensor.collapse_shape %[[COLS]] {{\[}}[0, 1, 2, 3], [4, 5]] : tensor<1x4x3x3x7x7xf32> into tensor<36x49xf32>
// CHECK: %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<8x4x3x3xf32> into tensor<8x36xf32>
// CHECK: %[[F:.*]] = linalg.fill {{.*}} -> tensor<8x49xf32>
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[W]], %{{.*}} : tensor<8x36xf32>, tensor<36x49xf32>) outs(%[[F]]
// CHECK: tensor.expand_shape %[[MM]] {{\[}}[0, 1], [2, 3]] output_shape [1, 8, 7, 7]
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @one_image(%x: tensor<1x4x15x15xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
     ins(%x, %w : tensor<1x4x15x15xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  return %r : tensor<1x8x7x7xf32>
}

// -----

// The elementwise op on the convolution's image (bias and ReLU) computes on
// the GEMM's [F, OH*OW] result, which it then expands: the GEMM schedule
// takes it as its epilogue. The per-filter bias stays indexed by filter (the
// unit batch dimension is dropped first), and the reshapes between fold.
// CHECK-LABEL: func.func @bias_relu_on_gemm
// CHECK: %[[MM:.*]] = linalg.matmul {{.*}} -> tensor<8x49xf32>
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<8x49xf32>
// CHECK: %[[EPI:.*]] = linalg.generic {indexing_maps = [#[[ID:.*]], #[[BIAS:.*]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[MM]], %arg2 : tensor<8x49xf32>, tensor<8xf32>) outs(%[[OUT]] : tensor<8x49xf32>)
// CHECK: arith.maximumf
// CHECK: tensor.expand_shape %[[EPI]] {{\[}}[0, 1], [2, 3]] output_shape [1, 8, 7, 7]
// CHECK-NOT: linalg.generic
func.func @bias_relu_on_gemm(%x: tensor<1x4x15x15xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x7x7xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
     ins(%x, %w : tensor<1x4x15x15xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (f)>, affine_map<(n, f, h, w) -> (n, f, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r, %b : tensor<1x8x7x7xf32>, tensor<8xf32>) outs(%e : tensor<1x8x7x7xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %m = arith.maximumf %s, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x8x7x7xf32>
  return %y : tensor<1x8x7x7xf32>
}

// -----

// A dynamic batch: the weights are broadcast per image and a batch_matmul
// multiplies them by each image's columns; every tensor takes its batch
// size from the input.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK: tensor.empty(%[[N:.*]]) : tensor<?x2x3x3x4x4xf32>
// CHECK: tensor.empty(%[[N]]) : tensor<?x5x18xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<5x18xf32>) outs(%{{.*}} : tensor<?x5x18xf32>)
// CHECK: tensor.empty(%[[N]]) : tensor<?x5x16xf32>
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<?x5x18xf32>, tensor<?x18x16xf32>)
// CHECK: tensor.expand_shape {{.*}} {{\[}}[0], [1], [2, 3]] output_shape [%{{.*}}, 5, 4, 4]
func.func @dynamic_batch(%x: tensor<?x2x6x6xf32>, %w: tensor<5x2x3x3xf32>) -> tensor<?x5x4x4xf32> {
  %cst = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x6x6xf32>
  %e = tensor.empty(%n) : tensor<?x5x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<?x5x4x4xf32>) -> tensor<?x5x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<?x2x6x6xf32>, tensor<5x2x3x3xf32>) outs(%f : tensor<?x5x4x4xf32>) -> tensor<?x5x4x4xf32>
  return %r : tensor<?x5x4x4xf32>
}

// -----

// A 1x1 kernel with unit strides: the input is its own columns, no copy.
// CHECK-LABEL: func.func @pointwise
// CHECK-NOT: linalg.generic
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0, 1], [2, 3]] : tensor<1x16x5x5xf32> into tensor<16x25xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<16x25xf32>)
func.func @pointwise(%x: tensor<1x16x5x5xf32>, %w: tensor<32x16x1x1xf32>) -> tensor<1x32x5x5xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x5x5xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x5x5xf32>) -> tensor<1x32x5x5xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<1x16x5x5xf32>, tensor<32x16x1x1xf32>) outs(%f : tensor<1x32x5x5xf32>) -> tensor<1x32x5x5xf32>
  return %r : tensor<1x32x5x5xf32>
}

// -----

// Dynamic image sizes keep the convolution (its columns would need sizes
// known at compile time).
// CHECK-LABEL: func.func @dynamic_image_kept
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NOT: linalg.matmul
func.func @dynamic_image_kept(%x: tensor<1x2x?x?xf32>, %w: tensor<5x2x3x3xf32>, %init: tensor<1x5x?x?xf32>) -> tensor<1x5x?x?xf32> {
  %cst = arith.constant 0.0 : f32
  %f = linalg.fill ins(%cst : f32) outs(%init : tensor<1x5x?x?xf32>) -> tensor<1x5x?x?xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<1x2x?x?xf32>, tensor<5x2x3x3xf32>) outs(%f : tensor<1x5x?x?xf32>) -> tensor<1x5x?x?xf32>
  return %r : tensor<1x5x?x?xf32>
}

// -----

// A static batch is one GEMM over all images' columns, [C, KH, KW, N, OH, OW]
// collapsed to [C*KH*KW, N*OH*OW]: the weights are read once, not broadcast to
// a copy per image. The result [F, N, OH, OW] goes back to NCHW by a transpose.
// CHECK-LABEL: func.func @static_batch
// CHECK: %[[COLS:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<2x3x3x3x4x4xf32>)
// CHECK: tensor.collapse_shape %[[COLS]] {{\[}}[0, 1, 2], [3, 4, 5]] : tensor<2x3x3x3x4x4xf32> into tensor<18x48xf32>
// CHECK: %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<5x18xf32>, tensor<18x48xf32>)
// CHECK: %[[F:.*]] = tensor.expand_shape %[[MM]] {{\[}}[0], [1, 2, 3]] output_shape [5, 3, 4, 4]
// CHECK: linalg.transpose ins(%[[F]] : tensor<5x3x4x4xf32>) outs(%{{.*}} : tensor<3x5x4x4xf32>) permutation = [1, 0, 2, 3]
// CHECK-NOT: linalg.batch_matmul
func.func @static_batch(%x: tensor<3x2x6x6xf32>, %w: tensor<5x2x3x3xf32>) -> tensor<3x5x4x4xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<3x5x4x4xf32>) -> tensor<3x5x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<3x2x6x6xf32>, tensor<5x2x3x3xf32>) outs(%f : tensor<3x5x4x4xf32>) -> tensor<3x5x4x4xf32>
  return %r : tensor<3x5x4x4xf32>
}

// -----

// With an elementwise op on the batch's image (a ReLU), that op reads the
// [F, N, OH, OW] result through a permuted map instead: no transpose.
// CHECK: #[[PERM:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-LABEL: func.func @static_batch_relu
// CHECK: %[[MM:.*]] = linalg.matmul
// CHECK: %[[F:.*]] = tensor.expand_shape %[[MM]] {{\[}}[0], [1, 2, 3]] output_shape [5, 3, 4, 4]
// CHECK: linalg.generic {indexing_maps = [#[[PERM]], #{{.*}}]{{.*}} ins(%[[F]] : tensor<5x3x4x4xf32>) outs(%{{.*}} : tensor<3x5x4x4xf32>)
// CHECK: arith.maximumf
// CHECK-NOT: linalg.transpose
func.func @static_batch_relu(%x: tensor<3x2x6x6xf32>, %w: tensor<5x2x3x3xf32>) -> tensor<3x5x4x4xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<3x5x4x4xf32>) -> tensor<3x5x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<3x2x6x6xf32>, tensor<5x2x3x3xf32>) outs(%f : tensor<3x5x4x4xf32>) -> tensor<3x5x4x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (n, f, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r : tensor<3x5x4x4xf32>) outs(%e : tensor<3x5x4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %cst : f32
    linalg.yield %m : f32
  } -> tensor<3x5x4x4xf32>
  return %y : tensor<3x5x4x4xf32>
}
