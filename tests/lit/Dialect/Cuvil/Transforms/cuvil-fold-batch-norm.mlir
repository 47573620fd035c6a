// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-fold-batch-norm))" --split-input-file | FileCheck %s
// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-fold-batch-norm,cuvil-fold-constants),canonicalize)" --split-input-file | FileCheck %s --check-prefix=CONST

// CHECK-LABEL: func.func @conv_bn
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[S:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[M:.*]]: tensor<4xf32>, %[[V:.*]]: tensor<4xf32>)
// CHECK: %[[EPS:.*]] = cuvil.constant dense<1.000000e-03> : tensor<f32>
// CHECK: %[[VE:.*]] = cuvil.add %[[V]], %[[EPS]]
// CHECK: %[[INV:.*]] = cuvil.rsqrt %[[VE]]
// CHECK: %[[SC:.*]] = cuvil.mul %[[S]], %[[INV]]
// CHECK: %[[MS:.*]] = cuvil.mul %[[M]], %[[SC]]
// CHECK: %[[SHIFT:.*]] = cuvil.sub %[[B]], %[[MS]]
// CHECK: %[[SC4:.*]] = cuvil.reshape %[[SC]] : (tensor<4xf32>) -> tensor<4x1x1x1xf32>
// CHECK: %[[W2:.*]] = cuvil.mul %[[W]], %[[SC4]]
// CHECK: %[[CONV:.*]] = cuvil.conv2d %[[X]], %[[W2]]
// CHECK: %[[SH3:.*]] = cuvil.reshape %[[SHIFT]] : (tensor<4xf32>) -> tensor<4x1x1xf32>
// CHECK: %[[OUT:.*]] = cuvil.add %[[CONV]], %[[SH3]] : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NOT: cuvil.batch_norm
// CHECK: return %[[OUT]]
func.func @conv_bn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %0 = cuvil.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = cuvil.batch_norm %0, %s, %b, %m, %v {epsilon = 1.0e-3 : f64}
      : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  return %1 : tensor<1x4x6x6xf32>
}

// -----

// A matmul with channels last folds too: weights scaled per column.
// CHECK-LABEL: func.func @matmul_bn
// CHECK: %[[W2:.*]] = cuvil.mul %{{.*}}, %{{.*}} : ({{.*}}) -> tensor<16x4xf32>
// CHECK: %[[MM:.*]] = cuvil.matmul %{{.*}}, %[[W2]]
// CHECK: cuvil.add %[[MM]], %{{.*}} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NOT: cuvil.batch_norm
// With constant weights and statistics, only the contraction and its bias remain.
// CONST-LABEL: func.func @matmul_bn
// (scale / sqrt(var) = [1, 1, 0.75, 0.5]; shift = bias - mean * that.)
// CONST-DAG: %[[B:.*]] = cuvil.constant dense<[-5.000000e-01, 5.000000e-01, -3.750000e-01, 7.500000e-01]> : tensor<4xf32>
// CONST-DAG: %[[W:.*]] = cuvil.constant dense<{{\[\[}}5.000000e-01, 5.000000e-01, 3.750000e-01, 2.500000e-01]{{.*}}> : tensor<16x4xf32>
// CONST: %[[MM:.*]] = cuvil.matmul %{{.*}}, %[[W]]
// CONST-NEXT: %[[R:.*]] = cuvil.add %[[MM]], %[[B]]
// CONST-NEXT: return %[[R]]
func.func @matmul_bn(%x: tensor<2x16xf32>) -> tensor<2x4xf32> {
  %w = cuvil.constant dense<0.5> : tensor<16x4xf32>
  %s = cuvil.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = cuvil.constant dense<[0.0, 1.0, 0.0, 1.0]> : tensor<4xf32>
  %m = cuvil.constant dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf32>
  %v = cuvil.constant dense<[1.0, 4.0, 16.0, 64.0]> : tensor<4xf32>
  %0 = cuvil.matmul %x, %w : (tensor<2x16xf32>, tensor<16x4xf32>) -> tensor<2x4xf32>
  %1 = cuvil.batch_norm %0, %s, %b, %m, %v {epsilon = 0.0 : f64}
      : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// -----

// Must not fire: the conv result has another user, so folding would change it.
// CHECK-LABEL: func.func @conv_used_twice
// CHECK: cuvil.batch_norm
// CONST-LABEL: func.func @conv_used_twice
// CONST: cuvil.batch_norm
func.func @conv_used_twice(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %p: tensor<4xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %0 = cuvil.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, groups = 1 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = cuvil.batch_norm %0, %p, %p, %p, %p {epsilon = 1.0e-3 : f64}
      : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  return %0, %1 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

// -----

// Must not fire: the input is not a conv or matmul.
// CHECK-LABEL: func.func @bn_alone
// CHECK: cuvil.batch_norm
func.func @bn_alone(%x: tensor<1x4x6x6xf32>, %p: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %1 = cuvil.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-3 : f64}
      : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  return %1 : tensor<1x4x6x6xf32>
}
