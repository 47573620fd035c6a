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

// -----

// Run-time sizes that are static fold: cuvil.dim of a static dimension is a
// constant, a range to a constant limit is a constant, and constant slice
// limits and reshape sizes become static ones (a reshape restores the type
// users see).
// CHECK-LABEL: func.func @static_run_time_sizes
// CHECK-SAME: (%[[M:.*]]: tensor<1x1x16x16xf32>, %[[H:.*]]: tensor<24x8xf32>)
// CHECK-NOT: cuvil.dim
// CHECK-DAG: %[[R:.*]] = cuvil.constant dense<[1, 3, 5]> : tensor<3xi64>
// CHECK-DAG: %[[RC:.*]] = cuvil.reshape %[[R]] : (tensor<3xi64>) -> tensor<?xi64>
// CHECK-DAG: %[[S:.*]] = cuvil.slice %[[M]] limit [1, 1, 6, 16] {start = array<i64: 0, 0, 0, 0>, step = array<i64: 1, 1, 1, 1>} : (tensor<1x1x16x16xf32>) -> tensor<1x1x6x16xf32>
// CHECK-DAG: %[[SC:.*]] = cuvil.reshape %[[S]] : (tensor<1x1x6x16xf32>) -> tensor<1x1x?x?xf32>
// CHECK-DAG: %[[P:.*]] = cuvil.reshape %[[H]] : (tensor<24x8xf32>) -> tensor<4x6x8xf32>
// CHECK-DAG: %[[PC:.*]] = cuvil.reshape %[[P]] : (tensor<4x6x8xf32>) -> tensor<?x?x8xf32>
// CHECK: return %[[RC]], %[[SC]], %[[PC]]
func.func @static_run_time_sizes(%mask: tensor<1x1x16x16xf32>, %h: tensor<24x8xf32>)
    -> (tensor<?xi64>, tensor<1x1x?x?xf32>, tensor<?x?x8xf32>) {
  %c4 = arith.constant 4 : index
  %c20 = arith.constant 20 : index
  %six = cuvil.dim %mask, 2 : tensor<1x1x16x16xf32>
  %t = arith.constant 6 : index
  %0 = cuvil.range %t {start = 1 : i64, step = 2 : i64} : tensor<?xi64>
  %1 = cuvil.slice %mask limit [1, 1, %t, %c20] {start = array<i64: 0, 0, 0, 0>, step = array<i64: 1, 1, 1, 1>}
      : (tensor<1x1x16x16xf32>) -> tensor<1x1x?x?xf32>
  %2 = cuvil.reshape %h (%c4, %t) : (tensor<24x8xf32>) -> tensor<?x?x8xf32>
  return %0, %1, %2 : tensor<?xi64>, tensor<1x1x?x?xf32>, tensor<?x?x8xf32>
}

// -----

// CHECK-LABEL: func.func @dim_folds
// CHECK: %[[C:.*]] = arith.constant 16 : index
// CHECK: %[[D:.*]] = cuvil.dim %{{.*}}, 0 : tensor<?x16xf32>
// CHECK: return %[[D]], %[[C]]
func.func @dim_folds(%x: tensor<?x16xf32>) -> (index, index) {
  %0 = cuvil.dim %x, 0 : tensor<?x16xf32>
  %1 = cuvil.dim %x, 1 : tensor<?x16xf32>
  return %0, %1 : index, index
}

