// RUN: %cuvil_opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @square
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[M:.*]] = cuvil.mul %[[X]], %[[X]]
// CHECK-NOT: cuvil.pow
// CHECK: return %[[M]]
func.func @square(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = cuvil.constant dense<2.0> : tensor<f32>
  %0 = cuvil.pow %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @square_root_and_identity
// CHECK: %[[S:.*]] = cuvil.sqrt
// CHECK-NOT: cuvil.pow
// CHECK: return %[[S]]
func.func @square_root_and_identity(%x: tensor<8xf32>) -> tensor<8xf32> {
  %h = cuvil.constant dense<0.5> : tensor<f32>
  %one = cuvil.constant dense<1.0> : tensor<8xf32>
  %0 = cuvil.pow %x, %h : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = cuvil.pow %0, %one : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// Must not fire: other exponents, and powers that broadcast the base.
// CHECK-LABEL: func.func @kept
// CHECK: cuvil.pow %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<f32>)
// CHECK: cuvil.pow %{{.*}}, %{{.*}} : (tensor<f32>, tensor<8xf32>)
func.func @kept(%x: tensor<8xf32>, %s: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %three = cuvil.constant dense<3.0> : tensor<f32>
  %two = cuvil.constant dense<2.0> : tensor<8xf32>
  %0 = cuvil.pow %x, %three : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = cuvil.pow %s, %two : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Identity folders: x + 0, x * 1, reshape/transpose/cast no-ops.
// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT: cuvil.
// CHECK: return %[[X]]
func.func @identities(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = cuvil.constant dense<0.0> : tensor<4xf32>
  %o = cuvil.constant dense<1.0> : tensor<f32>
  %0 = cuvil.add %x, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = cuvil.mul %0, %o : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = cuvil.reshape %1 : (tensor<4xf32>) -> tensor<2x2xf32>
  %3 = cuvil.reshape %2 : (tensor<2x2xf32>) -> tensor<4xf32>
  %4 = cuvil.transpose %3 {permutation = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  %5 = cuvil.cast %4 : (tensor<4xf32>) -> tensor<4xf32>
  return %5 : tensor<4xf32>
}

// -----

// Ops depending on an unknown size are not folded: ?x? may regroup the
// elements, and a dynamic broadcast may turn 1 into N. With one dynamic
// size the element count fixes it, and the reshape folds.
// CHECK-LABEL: func.func @dynamic_not_folded
// CHECK-SAME: (%{{.*}}: tensor<?x?xf32>, %[[Y:.*]]: tensor<?x4xf32>, %{{.*}}: tensor<?x4xf32>)
// CHECK: %[[R:.*]] = cuvil.reshape
// CHECK: %[[B:.*]] = cuvil.broadcast_to
// CHECK: return %[[R]], %[[B]], %[[Y]]
func.func @dynamic_not_folded(%x: tensor<?x?xf32>, %y: tensor<?x4xf32>, %l: tensor<?x4xf32>)
    -> (tensor<?x?xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = cuvil.reshape %x : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = cuvil.broadcast_to %y like %l : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = cuvil.reshape %y : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0, %1, %2 : tensor<?x?xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}
