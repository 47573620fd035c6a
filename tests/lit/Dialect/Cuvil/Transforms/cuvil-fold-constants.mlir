// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-fold-constants))" --split-input-file | FileCheck %s

// A weight-preprocessing chain (transpose, scale, add) becomes one constant.
// CHECK-LABEL: func.func @weight_chain
// CHECK: %[[W:.*]] = cuvil.constant dense<{{\[\[}}2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00], [4.000000e+00, 7.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: cuvil.transpose
// CHECK-NOT: cuvil.add %{{.*}}, %{{.*}} : (tensor<3x2xf32>, tensor<f32>)
// CHECK: %[[R:.*]] = cuvil.matmul %{{.*}}, %[[W]]
// CHECK: return %[[R]]
func.func @weight_chain(%x: tensor<5x3xf32>) -> tensor<5x2xf32> {
  %w = cuvil.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %one = cuvil.constant dense<1.0> : tensor<f32>
  %t = cuvil.transpose %w {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %s = cuvil.add %t, %one : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %r = cuvil.matmul %x, %s : (tensor<5x3xf32>, tensor<3x2xf32>) -> tensor<5x2xf32>
  return %r : tensor<5x2xf32>
}

// -----

// Activations and broadcasting evaluate like NumPy (max propagates NaN).
// CHECK-LABEL: func.func @activations
// CHECK: cuvil.constant dense<{{\[\[}}0.000000e+00, 2.000000e+00], [0x7FC00000, 2.000000e+00]]> : tensor<2x2xf32>
func.func @activations() -> tensor<2x2xf32> {
  %a = cuvil.constant dense<[[-1.0, 2.0], [0x7FC00000, 0.5]]> : tensor<2x2xf32>
  %b = cuvil.constant dense<[0.0, 2.0]> : tensor<2xf32>
  %r = cuvil.relu %a : tensor<2x2xf32>
  %m = cuvil.max %r, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}

// -----

// Must not fire: an operand is a function argument.
// CHECK-LABEL: func.func @runtime_operand
// CHECK: cuvil.add
func.func @runtime_operand(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = cuvil.constant dense<1.0> : tensor<2xf32>
  %r = cuvil.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

// Must not fire: results above max-elements stay run-time work.
// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-fold-constants{max-elements=4}))" --split-input-file | FileCheck %s --check-prefix=LIMIT
// LIMIT-LABEL: func.func @too_large
// LIMIT: cuvil.exp
func.func @too_large() -> tensor<8xf32> {
  %c = cuvil.constant dense<1.0> : tensor<8xf32>
  %r = cuvil.exp %c : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Reshapes of constants (per-channel scales broadcast over weights) fold.
// CHECK-LABEL: func.func @reshape_then_scale
// CHECK-NOT: cuvil.reshape
// CHECK: %[[C:.*]] = cuvil.constant dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}8.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NOT: cuvil.mul
// CHECK-NOT: cuvil.add
// CHECK: return %[[C]]
func.func @reshape_then_scale() -> tensor<2x1x1x1xf32> {
  %s = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %r = cuvil.reshape %s : (tensor<2xf32>) -> tensor<2x1x1x1xf32>
  %m = cuvil.mul %r, %r : (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
  %d = cuvil.add %m, %m : (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
  return %d : tensor<2x1x1x1xf32>
}
