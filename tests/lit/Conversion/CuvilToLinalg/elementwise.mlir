// RUN: %cuvil_opt %s --convert-cuvil-to-linalg --split-input-file | FileCheck %s

// Broadcasting: the size-1 / missing dimensions read index 0 or nothing.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME: (%[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x3xf32>, tensor<3xf32>) outs(%[[E]] : tensor<4x3xf32>)
// CHECK: arith.addf
// CHECK-NOT: cuvil.
func.func @add_broadcast(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = cuvil.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @compare_int
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[COL]], #{{.*}}]
// CHECK: arith.cmpi slt
// CHECK: -> tensor<4x3xi1>
func.func @compare_int(%a: tensor<4x3xi32>, %b: tensor<4x1xi32>) -> tensor<4x3xi1> {
  %0 = cuvil.compare lt, %a, %b : (tensor<4x3xi32>, tensor<4x1xi32>) -> tensor<4x3xi1>
  return %0 : tensor<4x3xi1>
}

// -----

// GELU is the exact erf form; sigmoid is 1 / (1 + exp(-x)).
// CHECK-LABEL: func.func @activations
// CHECK: math.erf
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.divf
func.func @activations(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = cuvil.gelu %a : tensor<8xf32>
  %1 = cuvil.sigmoid %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @casts
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.cmpi ne
// CHECK: arith.uitofp %{{.*}} : i1 to f64
func.func @casts(%a: tensor<8xf32>) -> tensor<8xf64> {
  %0 = cuvil.cast %a : (tensor<8xf32>) -> tensor<8xi32>
  %1 = cuvil.cast %0 : (tensor<8xi32>) -> tensor<8xi1>
  %2 = cuvil.cast %1 : (tensor<8xi1>) -> tensor<8xf64>
  return %2 : tensor<8xf64>
}

// -----

// Dropout is the identity outside training; constants become arith.constant.
// CHECK-LABEL: func.func @dropout_constant
// CHECK-SAME: (%[[A:.*]]: tensor<2xf32>)
// CHECK: %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[C]]
func.func @dropout_constant(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = cuvil.dropout %a {ratio = 0.5 : f64} : tensor<2xf32>
  %c = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = cuvil.mul %0, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// Trigonometry and rounding are one math op per element; round is ties-to-even.
// CHECK-LABEL: func.func @trig_rounding
// CHECK: math.sin
// CHECK: math.cos
// CHECK: math.floor
// CHECK: math.ceil
// CHECK: math.trunc
// CHECK: math.roundeven
func.func @trig_rounding(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = cuvil.sin %a : tensor<8xf32>
  %1 = cuvil.cos %0 : tensor<8xf32>
  %2 = cuvil.floor %1 : tensor<8xf32>
  %3 = cuvil.ceil %2 : tensor<8xf32>
  %4 = cuvil.trunc %3 : tensor<8xf32>
  %5 = cuvil.round %4 : tensor<8xf32>
  return %5 : tensor<8xf32>
}

// -----

// Float rem is fmod; integer div and rem never trap: a zero divisor gives 0
// and -1 gives the negation (MIN / -1 would overflow). Floor division is the
// truncated quotient minus one where the remainder's sign differs.
// CHECK-LABEL: func.func @division
// CHECK: arith.remf
// CHECK: arith.ori
// CHECK: %[[D:.*]] = arith.select
// CHECK: arith.remsi %{{.*}}, %[[D]]
// CHECK: arith.xori
// CHECK: arith.divsi %{{.*}}, %[[D]]
// CHECK: arith.subi
// CHECK: arith.select
// CHECK: arith.select
// CHECK: arith.remsi
// CHECK-NOT: arith.floordivsi
func.func @division(%a: tensor<8xf32>, %i: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>, tensor<8xi32>) {
  %0 = cuvil.rem %a, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = cuvil.div %i, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %2 = cuvil.rem %i, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  return %0, %1, %2 : tensor<8xf32>, tensor<8xi32>, tensor<8xi32>
}
