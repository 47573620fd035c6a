// RUN: %cuvil_opt %s --convert-cuvil-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @matmul_2d
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<64x16xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<32x16xf32>) outs(%[[F]] : tensor<64x16xf32>)
func.func @matmul_2d(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %0 = cuvil.matmul %a, %b : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// -----

// A batched lhs times a matrix folds the batch into M: one GEMM.
// CHECK-LABEL: func.func @matmul_folded_batch
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<8x64x32xf32> into tensor<512x32xf32>
// CHECK: linalg.matmul
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [8, 64, 16] : tensor<512x16xf32> into tensor<8x64x16xf32>
func.func @matmul_folded_batch(%a: tensor<8x64x32xf32>, %b: tensor<32x16xf32>) -> tensor<8x64x16xf32> {
  %0 = cuvil.matmul %a, %b : (tensor<8x64x32xf32>, tensor<32x16xf32>) -> tensor<8x64x16xf32>
  return %0 : tensor<8x64x16xf32>
}

// -----

// Broadcast batch dims are materialized, then one batch_matmul.
// CHECK-LABEL: func.func @matmul_batched
// CHECK: linalg.generic
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<6x4x3xf32>, tensor<6x3x5xf32>)
func.func @matmul_batched(%a: tensor<2x1x4x3xf32>, %b: tensor<3x3x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = cuvil.matmul %a, %b : (tensor<2x1x4x3xf32>, tensor<3x3x5xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// CHECK-LABEL: func.func @conv_padded
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
func.func @conv_padded(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = cuvil.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @conv_grouped
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK-SAME: tensor<1x2x2x8x8xf32>, tensor<2x3x2x3x3xf32>
func.func @conv_grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = cuvil.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 2 : i64}
      : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

// Max pooling pads with -inf so padding never wins.
// CHECK-LABEL: func.func @max_pool
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.pad
// CHECK: tensor.yield %[[NEG]]
// CHECK: linalg.pooling_nchw_max
func.func @max_pool(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %0 = cuvil.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>}
      : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @reduce_mean_keepdims
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK: arith.addf
// CHECK: arith.constant 1.600000e+01 : f32
// CHECK: arith.divf
// CHECK: tensor.expand_shape {{.*}} : tensor<4xf32> into tensor<1x4x1xf32>
func.func @reduce_mean_keepdims(%x: tensor<2x4x8xf32>) -> tensor<1x4x1xf32> {
  %0 = cuvil.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<1x4x1xf32>
  return %0 : tensor<1x4x1xf32>
}

// -----

// Softmax subtracts the row maximum before exp (stable form).
// CHECK-LABEL: func.func @softmax
// CHECK: arith.maximumf
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = cuvil.softmax %x {axis = 1 : i64} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm
// CHECK: math.rsqrt
// CHECK-SAME: f32
func.func @layer_norm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = cuvil.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @shapes
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<4x8xf32> into tensor<32xf32>
// CHECK: tensor.expand_shape
// CHECK: linalg.transpose ins(%{{.*}} : tensor<4x8xf32>) outs(%{{.*}} : tensor<8x4xf32>) permutation = [1, 0]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [4, 8] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[4, 0] [2, 8] [1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 1] [2, 7] [2, 1]
func.func @shapes(%x: tensor<4x8xf32>, %y: tensor<2x8xf32>)
    -> (tensor<2x16xf32>, tensor<8x4xf32>, tensor<6x8xf32>, tensor<2x7xf32>) {
  %0 = cuvil.reshape %x : (tensor<4x8xf32>) -> tensor<2x16xf32>
  %1 = cuvil.transpose %x {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %2 = cuvil.concat %x, %y {axis = 0 : i64} : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<6x8xf32>
  %3 = cuvil.slice %x limit [4, 8] {start = array<i64: 0, 1>, step = array<i64: 2, 1>} : (tensor<4x8xf32>) -> tensor<2x7xf32>
  return %0, %1, %2, %3 : tensor<2x16xf32>, tensor<8x4xf32>, tensor<6x8xf32>, tensor<2x7xf32>
}

// -----

// Rank 0 goes through a one-element vector with empty reassociations.
// CHECK-LABEL: func.func @reshape_rank0
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
func.func @reshape_rank0(%x: tensor<f32>, %y: tensor<1xf32>) -> (tensor<1x1xf32>, tensor<f32>) {
  %0 = cuvil.reshape %x : (tensor<f32>) -> tensor<1x1xf32>
  %1 = cuvil.reshape %y : (tensor<1xf32>) -> tensor<f32>
  return %0, %1 : tensor<1x1xf32>, tensor<f32>
}

// -----

// One index per point of the result: a negative index wraps once, the rest
// are clamped into [0, 10), then the element is extracted.
// CHECK-DAG: #[[IDX:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @gather_embedding
// CHECK-SAME: (%[[T:.*]]: tensor<10x16xf32>, %[[I:.*]]: tensor<2x5xi64>)
// CHECK: %[[N:.*]] = arith.constant 10 : index
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[I]] : tensor<2x5xi64>)
// CHECK: ^bb0(%[[IN:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[X:.*]] = arith.index_cast %[[IN]] : i64 to index
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[X]], %[[ZERO:.*]] : index
// CHECK: %[[UP:.*]] = arith.addi %[[X]], %[[N]] : index
// CHECK: %[[W:.*]] = arith.select %[[NEG]], %[[UP]], %[[X]] : index
// CHECK: %[[LAST:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK: %[[LO:.*]] = arith.minsi %[[W]], %[[LAST]] : index
// CHECK: %[[C:.*]] = arith.maxsi %[[LO]], %[[ZERO]] : index
// CHECK: %[[COL:.*]] = linalg.index 2 : index
// CHECK: %[[E:.*]] = tensor.extract %[[T]][%[[C]], %[[COL]]] : tensor<10x16xf32>
// CHECK: linalg.yield %[[E]] : f32
func.func @gather_embedding(%t: tensor<10x16xf32>, %i: tensor<2x5xi64>) -> tensor<2x5x16xf32> {
  %0 = cuvil.gather %t, %i {axis = 0 : i64} : (tensor<10x16xf32>, tensor<2x5xi64>) -> tensor<2x5x16xf32>
  return %0 : tensor<2x5x16xf32>
}

// -----

// A scalar index on a middle axis drops that axis.
// CHECK-DAG: #[[IDX:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @gather_scalar_index
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #{{.*}}]
// CHECK: %[[C:.*]] = arith.maxsi
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK: %[[D1:.*]] = linalg.index 1 : index
// CHECK: tensor.extract %{{.*}}[%[[D0]], %[[C]], %[[D1]]] : tensor<3x10x4xf32>
func.func @gather_scalar_index(%t: tensor<3x10x4xf32>, %i: tensor<i32>) -> tensor<3x4xf32> {
  %0 = cuvil.gather %t, %i {axis = 1 : i64} : (tensor<3x10x4xf32>, tensor<i32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
