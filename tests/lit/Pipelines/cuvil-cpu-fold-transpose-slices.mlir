// RUN: cuvil-opt %s --transform-interpreter --split-input-file | FileCheck %s

// transform.cuvil.fold_transpose_slices: a slice of a transpose that only
// moves dimensions of extent 1 (a head of attention's q or v, [1, 0, 2] of
// [seq, heads, 64]) reads the transpose's input; a slice that moves data
// (k transposed, [1, 2, 0]) or would read it a column at a time keeps
// reading the transpose.

// CHECK-LABEL: func.func @heads
// CHECK-SAME: (%[[X:[^:]*]]: tensor<256x8x64xf32>, %[[H:[^:]*]]: index, %[[R:[^:]*]]: index)
// The q transpose, without readers, is gone; k transposed (its slice moves
// data) stays.
// CHECK-NOT: permutation = [1, 0, 2]
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[X]] : tensor<256x8x64xf32>) outs(%{{.*}} : tensor<8x64x256xf32>) permutation = [1, 2, 0]
// The head of q: rows R..R+16 of head H, a slice of the input, expanded.
// CHECK: %[[Q:.*]] = tensor.extract_slice %[[X]][%[[R]], %[[H]], 0] [16, 1, 64] [1, 1, 1] : tensor<256x8x64xf32> to tensor<16x64xf32>
// CHECK: tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2]] output_shape [1, 16, 64] : tensor<16x64xf32> into tensor<1x16x64xf32>
// CHECK: tensor.extract_slice %[[KT]][%[[H]], 0, 0] [1, 64, 256]
// CHECK: return
func.func @heads(%x: tensor<256x8x64xf32>, %h: index, %r: index) -> (tensor<1x16x64xf32>, tensor<1x64x256xf32>) {
  %e = tensor.empty() : tensor<8x256x64xf32>
  %q = linalg.transpose ins(%x : tensor<256x8x64xf32>) outs(%e : tensor<8x256x64xf32>) permutation = [1, 0, 2]
  %ek = tensor.empty() : tensor<8x64x256xf32>
  %k = linalg.transpose ins(%x : tensor<256x8x64xf32>) outs(%ek : tensor<8x64x256xf32>) permutation = [1, 2, 0]
  %qs = tensor.extract_slice %q[%h, %r, 0] [1, 16, 64] [1, 1, 1] : tensor<8x256x64xf32> to tensor<1x16x64xf32>
  %ks = tensor.extract_slice %k[%h, 0, 0] [1, 64, 256] [1, 1, 1] : tensor<8x64x256xf32> to tensor<1x64x256xf32>
  return %qs, %ks : tensor<1x16x64xf32>, tensor<1x64x256xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %g = transform.cuvil.fold_transpose_slices %f : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A rank-reducing slice of one head's rows: no unit dimension to restore.
// CHECK-LABEL: func.func @rank_reduced
// CHECK-NOT: linalg.transpose
// CHECK: %[[V:.*]] = tensor.extract_slice %{{.*}}[0, %{{.*}}, 0] [256, 1, 64] [1, 1, 1] : tensor<256x8x64xf32> to tensor<256x64xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK: return %[[V]]
func.func @rank_reduced(%x: tensor<256x8x64xf32>, %h: index) -> tensor<256x64xf32> {
  %e = tensor.empty() : tensor<8x256x64xf32>
  %v = linalg.transpose ins(%x : tensor<256x8x64xf32>) outs(%e : tensor<8x256x64xf32>) permutation = [1, 0, 2]
  %vs = tensor.extract_slice %v[%h, 0, 0] [1, 256, 64] [1, 1, 1] : tensor<8x256x64xf32> to tensor<256x64xf32>
  return %vs : tensor<256x64xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %g = transform.cuvil.fold_transpose_slices %f : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}

// -----

// A column of a 2-D transpose's input (row h of the result): its elements
// are a row of the input apart, so the slice keeps reading the transpose
// (a copy, contiguous).
// CHECK-LABEL: func.func @column
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: tensor.extract_slice %[[T]]
func.func @column(%x: tensor<256x8xf32>, %h: index) -> tensor<1x256xf32> {
  %e = tensor.empty() : tensor<8x256xf32>
  %t = linalg.transpose ins(%x : tensor<256x8xf32>) outs(%e : tensor<8x256xf32>) permutation = [1, 0]
  %row = tensor.extract_slice %t[%h, 0] [1, 256] [1, 1] : tensor<8x256xf32> to tensor<1x256xf32>
  return %row : tensor<1x256xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %g = transform.cuvil.fold_transpose_slices %f : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
