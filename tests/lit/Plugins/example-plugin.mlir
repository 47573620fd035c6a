// RUN: %cuvil_opt %s --load-pass-plugin=%cuvil_lib/CuvilExamplePlugin.so --pass-pipeline="builtin.module(cuvil-example-fold-double-negation)" | FileCheck %s

// CHECK-LABEL: func.func @double_negation
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT: cuvil.neg
// CHECK: %[[E:.*]] = cuvil.exp %[[X]]
// CHECK: return %[[E]]
func.func @double_negation(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = cuvil.neg %x : tensor<4xf32>
  %1 = cuvil.neg %0 : tensor<4xf32>
  %2 = cuvil.exp %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// A single negation stays.
// CHECK-LABEL: func.func @single_negation
// CHECK: cuvil.neg
func.func @single_negation(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = cuvil.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
