// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-merge-sibling-matmuls))" --split-input-file | FileCheck %s
// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-merge-sibling-matmuls{max-bytes=16}))" --split-input-file | FileCheck %s --check-prefix=LIMIT

// Three products of %x with constant weights: one product with the weights
// side by side (row by row), its column slices replacing the results.
// CHECK-LABEL: func.func @projections
// CHECK-SAME: (%[[X:.*]]: tensor<4x2xf32>)
// CHECK: %[[W:.*]] = cuvil.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 5.000000e+00, 7.000000e+00, 8.000000e+00], [3.000000e+00, 4.000000e+00, 6.000000e+00, 9.000000e+00, 1.000000e+01]]> : tensor<2x5xf32>
// CHECK: %[[P:.*]] = cuvil.matmul %[[X]], %[[W]] : (tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<4x5xf32>
// CHECK: %[[Q:.*]] = cuvil.slice %[[P]] limit [4, 2] {start = array<i64: 0, 0>, step = array<i64: 1, 1>} : (tensor<4x5xf32>) -> tensor<4x2xf32>
// CHECK: %[[K:.*]] = cuvil.slice %[[P]] limit [4, 3] {start = array<i64: 0, 2>, step = array<i64: 1, 1>} : (tensor<4x5xf32>) -> tensor<4x1xf32>
// CHECK: %[[V:.*]] = cuvil.slice %[[P]] limit [4, 5] {start = array<i64: 0, 3>, step = array<i64: 1, 1>} : (tensor<4x5xf32>) -> tensor<4x2xf32>
// CHECK-NOT: cuvil.matmul
// CHECK: return %[[Q]], %[[K]], %[[V]]
// The weights are 16, 8 and 16 bytes: 16 allow none to join the first.
// LIMIT-LABEL: func.func @projections
// LIMIT-COUNT-3: cuvil.matmul
// LIMIT-NOT: cuvil.slice
func.func @projections(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x1xf32>, tensor<4x2xf32>) {
  %wq = cuvil.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %wk = cuvil.constant dense<[[5.0], [6.0]]> : tensor<2x1xf32>
  %wv = cuvil.constant dense<[[7.0, 8.0], [9.0, 10.0]]> : tensor<2x2xf32>
  %q = cuvil.matmul %x, %wq : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %k = cuvil.matmul %x, %wk : (tensor<4x2xf32>, tensor<2x1xf32>) -> tensor<4x1xf32>
  %v = cuvil.matmul %x, %wv : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %q, %k, %v : tensor<4x2xf32>, tensor<4x1xf32>, tensor<4x2xf32>
}

// -----

// Batched activations (a leading batch dim) merge the same way.
// CHECK-LABEL: func.func @batched
// CHECK: cuvil.matmul %{{.*}}, %{{.*}} : (tensor<3x4x2xf32>, tensor<2x3xf32>) -> tensor<3x4x3xf32>
// CHECK: cuvil.slice %{{.*}} limit [3, 4, 1] {start = array<i64: 0, 0, 0>, step = array<i64: 1, 1, 1>}
// CHECK: cuvil.slice %{{.*}} limit [3, 4, 3] {start = array<i64: 0, 0, 1>, step = array<i64: 1, 1, 1>}
func.func @batched(%x: tensor<3x4x2xf32>) -> (tensor<3x4x1xf32>, tensor<3x4x2xf32>) {
  %a = cuvil.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %b = cuvil.constant dense<[[3.0, 4.0], [5.0, 6.0]]> : tensor<2x2xf32>
  %p = cuvil.matmul %x, %a : (tensor<3x4x2xf32>, tensor<2x1xf32>) -> tensor<3x4x1xf32>
  %r = cuvil.matmul %x, %b : (tensor<3x4x2xf32>, tensor<2x2xf32>) -> tensor<3x4x2xf32>
  return %p, %r : tensor<3x4x1xf32>, tensor<3x4x2xf32>
}

// -----

// Left alone: a weight that is an argument, a splat constant, a weight of
// another element type, and products of different left operands.
// CHECK-LABEL: func.func @not_merged
// CHECK-COUNT-5: cuvil.matmul
// CHECK-NOT: cuvil.slice
func.func @not_merged(%x: tensor<4x2xf32>, %y: tensor<4x2xf32>, %w: tensor<2x2xf32>, %xh: tensor<4x2xf16>)
    -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf16>, tensor<4x2xf32>) {
  %c = cuvil.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %s = cuvil.constant dense<1.0> : tensor<2x2xf32>
  %h = cuvil.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf16>
  %0 = cuvil.matmul %x, %c : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %1 = cuvil.matmul %x, %w : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %2 = cuvil.matmul %x, %s : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %3 = cuvil.matmul %xh, %h : (tensor<4x2xf16>, tensor<2x2xf16>) -> tensor<4x2xf16>
  %4 = cuvil.matmul %y, %c : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %0, %1, %2, %3, %4 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf16>, tensor<4x2xf32>
}
