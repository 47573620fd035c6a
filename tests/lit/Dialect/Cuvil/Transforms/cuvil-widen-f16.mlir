// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-widen-f16))" --split-input-file | FileCheck %s

// The signature, constants and every op become f32; a cast to f16 that is
// now f32 to f32 goes; other element types stay.
// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi1>)
// CHECK: %[[C:.*]] = cuvil.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[Y:.*]] = cuvil.mul %[[X]], %[[C]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: %[[F:.*]] = cuvil.cast %[[N]] : (tensor<4xi32>) -> tensor<4xf32>
// CHECK: %[[S:.*]] = cuvil.add %[[Y]], %[[F]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[B:.*]] = cuvil.compare gt, %[[S]], %[[C]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
// CHECK: return %[[S]], %[[B]] : tensor<4xf32>, tensor<4xi1>
func.func @f(%x: tensor<4xf16>, %n: tensor<4xi32>) -> (tensor<4xf16>, tensor<4xi1>) {
  %c = cuvil.constant dense<5.000000e-01> : tensor<f16>
  %y = cuvil.mul %x, %c : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  %f = cuvil.cast %n : (tensor<4xi32>) -> tensor<4xf16>
  %s = cuvil.add %y, %f : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %b = cuvil.compare gt, %s, %c : (tensor<4xf16>, tensor<f16>) -> tensor<4xi1>
  %w = cuvil.cast %s : (tensor<4xf16>) -> tensor<4xf16>
  return %w, %b : tensor<4xf16>, tensor<4xi1>
}
