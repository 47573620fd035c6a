// RUN: %cuvil_opt %s --cuvil-cpu-conv-to-gemm --cuvil-cpu-schedule=vector-lanes=16 --split-input-file | FileCheck %s

// A convolution's GEMM whose column tiles can cover whole output rows (784
// pixels of 28 x 28 in one-vector register tiles: 112 columns = 4 rows per
// task) computes its columns per thread task: each task gathers the
// [C, KH, KW, 4, 28] window (8 channels: from 16 channels and 32 filters
// unit strides take the implicit GEMM, see cuvil-cpu-conv-implicit.mlir) of the image it multiplies, one output row per
// contiguous vector read, right before its register tiles read them; no
// kernel writes the whole [72, 784] column matrix. The ReLU on the image
// is the GEMM's epilogue, applied to the accumulators.
// CHECK-LABEL: func.func @columns_per_task
// CHECK: scf.forall (%{{.*}}) in (7)
// CHECK: tensor.empty() : tensor<1x8x3x3x4x28xf32>
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<1x8x30x30xf32>, vector<28xf32>
// CHECK: %[[COLS:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3], [4, 5]] : tensor<1x8x3x3x4x28xf32> into tensor<72x112xf32>
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %c0 to %c72 step %c4 iter_args(%{{.*}} = %cst{{.*}}) -> (vector<8x16xf32>)
// CHECK: tensor.extract_slice %[[COLS]]
// CHECK-COUNT-8: vector.fma
// CHECK: arith.maximumf %[[ACC]]
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 32, 28, 28]
func.func @columns_per_task(%x: tensor<1x8x30x30xf32>, %w: tensor<32x8x3x3xf32>) -> tensor<1x32x28x28xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x28x28xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<1x8x30x30xf32>, tensor<32x8x3x3xf32>) outs(%f : tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (n, f, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r : tensor<1x32x28x28xf32>) outs(%e : tensor<1x32x28x28xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x32x28x28xf32>
  return %y : tensor<1x32x28x28xf32>
}

// -----

// 7 x 7 outputs (49 pixels) are no whole vectors: the columns stay a kernel
// of their own, vectorized along the output row, and the GEMM reads them.
// CHECK-LABEL: func.func @columns_kept_whole
// CHECK: %[[G:.*]] = scf.for
// CHECK: vector.transfer_read %arg0{{.*}} vector<7xf32>
// CHECK: %[[COLS:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1, 2, 3], [4, 5]] : tensor<1x64x3x3x7x7xf32> into tensor<576x49xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c576 step %c64
// CHECK: tensor.extract_slice %[[COLS]]
func.func @columns_kept_whole(%x: tensor<1x64x9x9xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x7x7xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x7x7xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<1x64x9x9xf32>, tensor<64x64x3x3xf32>) outs(%f : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  return %r : tensor<1x64x7x7xf32>
}
