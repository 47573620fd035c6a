// RUN: %cuvil_opt %s --cuvil-cpu-conv-to-gemm=vector-lanes=16 --split-input-file | FileCheck %s
// RUN: %cuvil_opt %s --cuvil-cpu-conv-to-gemm=vector-lanes=16 --cuvil-cpu-schedule=vector-lanes=16 --split-input-file | FileCheck %s --check-prefix=SCHED
// RUN: %cuvil_opt %s --cuvil-cpu-conv-to-gemm=vector-lanes=8 --split-input-file | FileCheck %s --check-prefix=AVX2

// A unit-stride convolution with 16 channels and 32 filters is a GEMM whose
// right operand is the padded image itself, read in place: output column
// p = oh * 30 + ow reads element p + kh * 30 + kw of each channel's plane.
// 28 rows of 30 columns (840) are rounded up to whole register tiles of 3
// vectors (864 = 18 x 48) and one more row of padding keeps their reads
// inside each plane. The weights are packed at compile time by 8 filters
// ([4, C, KH, KW, 8]); the result drops the columns past the image's edge.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d6, d3 * 48 + d4 * 16 + d5 + d7 * 30 + d8)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d1, d6, d7, d8, d2)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4, d5)>
// With 8 lanes (16 vector registers) the weights are packed by 4 filters,
// the register tiles 3 vectors wide (840 = 35 x 24 columns): 12
// accumulators.
// AVX2-LABEL: func.func @implicit
// AVX2: arith.constant dense<5.000000e-01> : tensor<8x16x3x3x4xf32>
// AVX2: linalg.fill {{.*}} -> tensor<1x8x4x35x3x8xf32>
// AVX2: cuvil.implicit_conv
// CHECK-LABEL: func.func @implicit
// CHECK: %[[PACKED:.*]] = arith.constant dense<5.000000e-01> : tensor<4x16x3x3x8xf32>
// CHECK: %[[PAD:.*]] = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 1, 0]
// CHECK: tensor<1x16x30x30xf32> to tensor<1x16x31x30xf32>
// CHECK: %[[PLANES:.*]] = tensor.collapse_shape %[[PAD]] {{\[}}[0], [1], [2, 3]] : tensor<1x16x31x30xf32> into tensor<1x16x930xf32>
// CHECK: %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<1x4x8x18x3x16xf32>
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[PLANES]], %[[PACKED]] : tensor<1x16x930xf32>, tensor<4x16x3x3x8xf32>) outs(%[[INIT]] : tensor<1x4x8x18x3x16xf32>) attrs = {cuvil.implicit_conv}
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2], [3, 4, 5]] : tensor<1x4x8x18x3x16xf32> into tensor<1x32x864xf32>
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[F]][0, 0, 0] [1, 32, 840] [1, 1, 1]
// CHECK: %[[E:.*]] = tensor.expand_shape %[[ROWS]] {{\[}}[0], [1], [2, 3]] output_shape [1, 32, 28, 30]
// CHECK: %[[R:.*]] = tensor.extract_slice %[[E]][0, 0, 0, 0] [1, 32, 28, 28] [1, 1, 1, 1]
// CHECK: return %[[R]]
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @implicit(%x: tensor<1x16x30x30xf32>) -> tensor<1x32x28x28xf32> {
  %w = arith.constant dense<5.000000e-01> : tensor<32x16x3x3xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x28x28xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<1x16x30x30xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
  return %r : tensor<1x32x28x28xf32>
}

// -----

// Weights that are no constant are packed by a transpose; a dilation of 2
// shifts the rows by 2 * 64 and 2; the image's own padding is extended.
// CHECK-DAG: #[[XD:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d6, d3 * 48 + d4 * 16 + d5 + d7 * 128 + d8 * 2)>
// CHECK-LABEL: func.func @dilated_weights_not_constant
// CHECK: %[[S:.*]] = tensor.expand_shape %arg1 {{\[}}[0, 1], [2], [3], [4]] output_shape [4, 8, 16, 3, 3]
// CHECK: %[[P:.*]] = linalg.transpose ins(%[[S]] : tensor<4x8x16x3x3xf32>) outs(%{{.*}} : tensor<4x16x3x3x8xf32>) permutation = [0, 2, 3, 4, 1]
// CHECK: tensor.pad %arg0 low[0, 0, 2, 2] high[0, 0, {{[0-9]+}}, 2]
// CHECK: linalg.generic {indexing_maps = [#[[XD]],
// CHECK-SAME: ins(%{{.*}}, %[[P]] :
// CHECK-SAME: attrs = {cuvil.implicit_conv}
func.func @dilated_weights_not_constant(%x: tensor<1x16x60x60xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x60x60xf32> {
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %cst : f32
  } : tensor<1x16x60x60xf32> to tensor<1x16x64x64xf32>
  %e = tensor.empty() : tensor<1x32x60x60xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x60x60xf32>) -> tensor<1x32x60x60xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%p, %w : tensor<1x16x64x64xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<1x32x60x60xf32>) -> tensor<1x32x60x60xf32>
  return %r : tensor<1x32x60x60xf32>
}

// -----

// Strides of 2, and too few filters, keep the gathered columns.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: cuvil.implicit_conv
// CHECK: return
func.func @kept(%x: tensor<1x16x31x31xf32>, %w: tensor<32x16x3x3xf32>, %v: tensor<1x16x30x30xf32>, %u: tensor<16x16x3x3xf32>) -> (tensor<1x32x15x15xf32>, tensor<1x16x28x28xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x15x15xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x15x15xf32>) -> tensor<1x32x15x15xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
     ins(%x, %w : tensor<1x16x31x31xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<1x32x15x15xf32>) -> tensor<1x32x15x15xf32>
  %e2 = tensor.empty() : tensor<1x16x28x28xf32>
  %f2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<1x16x28x28xf32>) -> tensor<1x16x28x28xf32>
  %r2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%v, %u : tensor<1x16x30x30xf32>, tensor<16x16x3x3xf32>) outs(%f2 : tensor<1x16x28x28xf32>) -> tensor<1x16x28x28xf32>
  return %r, %r2 : tensor<1x32x15x15xf32>, tensor<1x16x28x28xf32>
}

// -----

// The schedule: thread tasks of filters by columns (2 tasks of 4 row tiles
// by 144 columns), the 64 channels in blocks of 32, register tiles of 8
// filters by 3 vectors of 16 columns whose 24 accumulators stay in
// registers across a block's channels, the 3 x 3 offsets unrolled: 9 steps
// of 24 broadcast multiply-adds per channel.
// SCHED-LABEL: func.func @blocked
// SCHED: scf.forall (%{{.*}}) in (2) {{.*}} -> (tensor<1x4x8x6x3x16xf32>)
// SCHED: scf.for %{{.*}} = %c0 to %c64 step %c32
// SCHED: scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (vector<8x3x16xf32>)
// SCHED-COUNT-216: vector.fma {{.*}} : vector<16xf32>
// SCHED-NOT: vector.fma
// SCHED: scf.forall.in_parallel
func.func @blocked(%x: tensor<1x64x18x18xf32>) -> tensor<1x32x16x16xf32> {
  %w = arith.constant dense<5.000000e-01> : tensor<32x64x3x3xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x16x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%x, %w : tensor<1x64x18x18xf32>, tensor<32x64x3x3xf32>) outs(%f : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  return %r : tensor<1x32x16x16xf32>
}
