// RUN: %cuvil_opt %s --convert-cuvil-to-linalg --cuvil-fuse-elementwise | FileCheck %s

// Elementwise chains fuse into one generic.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = cuvil.exp %a : tensor<4x8xf32>
  %1 = cuvil.add %0, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// A constant broadcast to a dynamic shape (a generic reading no input) is not
// fused into a reduction: the reduction keeps reading it, so the vectorizer
// keeps the reduced dimension.
// CHECK-LABEL: func.func @broadcast_constant_then_sum
// CHECK: %[[ONES:.*]] = linalg.generic {{.*}} outs(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[ONES]] :
func.func @broadcast_constant_then_sum(%x: tensor<?x20xf32> {cuvil.symbols = ["N"]}) -> tensor<?xf32> {
  %c = cuvil.constant dense<1.0> : tensor<1x1xf32>
  %y = cuvil.broadcast_to %c like %x : (tensor<1x1xf32>, tensor<?x20xf32>) -> tensor<?x20xf32>
  %s = cuvil.reduce_sum %y {axes = array<i64: 1>, keepdims = false} : (tensor<?x20xf32>) -> tensor<?xf32>
  return %s : tensor<?xf32>
}
