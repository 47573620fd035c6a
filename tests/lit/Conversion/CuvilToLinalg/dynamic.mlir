// RUN: %cuvil_opt %s --convert-cuvil-to-linalg --split-input-file | FileCheck %s

// Dynamic sizes come from the operands: tensor.dim feeds every tensor.empty,
// the GEMM keeps its dynamic M, and a mean divides by the run-time count.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32> {cuvil.symbols = ["N"]}
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x16xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x16xf32>)
// CHECK: linalg.matmul ins(%[[X]], %{{.*}} : tensor<?x8xf32>, tensor<8x16xf32>) outs(%[[F]] : tensor<?x16xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<?x16xf32>, tensor<16xf32>)
// CHECK: %[[ROWS:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x16xf32>
// CHECK: %[[I:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK: %[[COUNT:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: %[[SCALED:.*]] = arith.mulf %{{.*}}, %[[COUNT]] : f32
// CHECK: arith.divf %{{.*}}, %[[SCALED]] : f32
func.func @mlp(%x: tensor<?x8xf32> {cuvil.symbols = ["N"]}, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<1x16xf32> {
  %0 = cuvil.matmul %x, %w : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %1 = cuvil.add %0, %b : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %2 = cuvil.reduce_mean %1 {axes = array<i64: 0>, keepdims = true} : (tensor<?x16xf32>) -> tensor<1x16xf32>
  return %2 : tensor<1x16xf32>
}

// -----

// reshape(2, -1) of a dynamic tensor: flatten, then expand with the
// dynamic size inferred from the element count.
// CHECK-LABEL: func.func @reshape_minus_one
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<?x3x4xf32> into tensor<?xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [2, %{{.*}}] : tensor<?xf32> into tensor<2x?xf32>
func.func @reshape_minus_one(%x: tensor<?x3x4xf32>) -> tensor<2x?xf32> {
  %0 = cuvil.reshape %x : (tensor<?x3x4xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// A dynamic broadcast takes its size from `like`, an operand of the generic.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @dynamic_broadcast
// CHECK-SAME: (%[[B:.*]]: tensor<1x4xf32>, %[[L:.*]]: tensor<?x4xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[L]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #[[ID]], #[[ID]]], {{.*}}} ins(%[[B]], %[[L]] : tensor<1x4xf32>, tensor<?x4xf32>) outs(%[[E]] : tensor<?x4xf32>)
func.func @dynamic_broadcast(%b: tensor<1x4xf32>, %l: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = cuvil.broadcast_to %b like %l : (tensor<1x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Batch and sequence both dynamic: one generic contraction over (b, t, n, k)
// instead of a GEMM between reshapes.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @batch_and_sequence
// CHECK: %[[B:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x?x8xf32>
// CHECK: %[[T:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x?x8xf32>
// CHECK: tensor.empty(%[[B]], %[[T]]) : tensor<?x?x2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @batch_and_sequence(%y: tensor<?x?x8xf32>, %w: tensor<8x2xf32>) -> tensor<?x?x2xf32> {
  %0 = cuvil.matmul %y, %w : (tensor<?x?x8xf32>, tensor<8x2xf32>) -> tensor<?x?x2xf32>
  return %0 : tensor<?x?x2xf32>
}

// -----

// A transpose reads each dynamic size from its input's permuted dimension.
// CHECK-LABEL: func.func @transpose_dynamic
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x12xf32>
// CHECK: tensor.empty(%[[N]]) : tensor<12x?xf32>
// CHECK: linalg.transpose
func.func @transpose_dynamic(%x: tensor<?x12xf32>) -> tensor<12x?xf32> {
  %0 = cuvil.transpose %x {permutation = array<i64: 1, 0>} : (tensor<?x12xf32>) -> tensor<12x?xf32>
  return %0 : tensor<12x?xf32>
}
