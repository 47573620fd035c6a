// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-reduce-precision))" --split-input-file | FileCheck %s
// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-reduce-precision{precision=fp16}))" --split-input-file | FileCheck %s --check-prefix=FP16
// RUN: not %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-reduce-precision{precision=int2}))" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-reduce-precision{precision=tf32}))" --split-input-file | FileCheck %s --check-prefix=TF32

// The activation read by two matmuls is cast once; the constant weight is
// converted at compile time (1.00390625 is not a bf16 and rounds to even,
// 1.0); both matmuls accumulate in f32, and what follows stays f32.
// CHECK-LABEL: func.func @two_heads
// CHECK: %[[V:.*]] = cuvil.cast %arg1 : (tensor<8x2xf32>) -> tensor<8x2xbf16>
// CHECK: %[[X:.*]] = cuvil.cast %arg0 : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK: %[[W:.*]] = cuvil.constant dense<1.000000e+00> : tensor<8x2xbf16>
// CHECK: %[[A:.*]] = cuvil.matmul %[[X]], %[[W]] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xf32>
// CHECK: %[[B:.*]] = cuvil.matmul %[[X]], %[[V]] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xf32>
// CHECK: cuvil.add %[[A]], %[[B]] : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NOT: : tensor<8x2xf32>
// FP16-LABEL: func.func @two_heads
// FP16: cuvil.constant dense<1.003910e+00> : tensor<8x2xf16>
// FP16-COUNT-2: -> tensor<4x2xf32>
// BAD: precision 'int2' is not one of bf16, fp16, tf32
// TF32 changes no type: the function with float32 matmuls is allowed TF32,
// one without them is not marked.
// TF32-LABEL: func.func @two_heads
// TF32-SAME: attributes {cuvil.tf32_matmuls}
// TF32: cuvil.constant dense<1.00390625> : tensor<8x2xf32>
// TF32-COUNT-2: cuvil.matmul {{.*}} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
// TF32-LABEL: func.func @float64
// TF32-NOT: cuvil.tf32_matmuls
func.func @two_heads(%x: tensor<4x8xf32>, %v: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %w = cuvil.constant dense<1.00390625> : tensor<8x2xf32>
  %a = cuvil.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %b = cuvil.matmul %x, %v : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %c = cuvil.add %a, %b : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// -----

// Matmuls of other types are left as they are.
// CHECK-LABEL: func.func @float64
// CHECK: cuvil.matmul %arg0, %arg1 : (tensor<4x8xf64>, tensor<8x2xf64>) -> tensor<4x2xf64>
func.func @float64(%x: tensor<4x8xf64>, %w: tensor<8x2xf64>) -> tensor<4x2xf64> {
  %a = cuvil.matmul %x, %w : (tensor<4x8xf64>, tensor<8x2xf64>) -> tensor<4x2xf64>
  return %a : tensor<4x2xf64>
}
