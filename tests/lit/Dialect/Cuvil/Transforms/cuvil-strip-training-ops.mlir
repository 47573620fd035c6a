// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-strip-training-ops))" --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @dropout_removed
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT: cuvil.dropout
// CHECK: %[[R:.*]] = cuvil.relu %[[X]]
// CHECK: return %[[R]]
func.func @dropout_removed(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = cuvil.dropout %x {ratio = 0.1 : f64} : tensor<4x8xf32>
  %1 = cuvil.relu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Nothing training-only: the function is unchanged.
// CHECK-LABEL: func.func @nothing_to_strip
// CHECK: %[[R:.*]] = cuvil.relu
// CHECK-NEXT: return %[[R]]
func.func @nothing_to_strip(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = cuvil.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
