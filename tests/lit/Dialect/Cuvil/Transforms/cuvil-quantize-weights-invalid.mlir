// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-quantize-weights{group-size=4 column-multiple=4}))" --split-input-file --verify-diagnostics
// RUN: not %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-quantize-weights{bits=8 activation-scales=0.5,0.25}))" --split-input-file 2>&1 | FileCheck %s --check-prefix=SCALES

// Shapes the int4 kernel has no vector schedule for stay float32, with a
// remark naming why.
func.func @odd_k(%x: tensor<3x6xf32>) -> tensor<3x4xf32> {
  %w = cuvil.constant dense<1.0> : tensor<6x4xf32>
  // expected-remark @+1 {{kept in float32: K=6 is not a multiple of the group size 4}}
  %y = cuvil.matmul %x, %w : (tensor<3x6xf32>, tensor<6x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

func.func @odd_n(%x: tensor<3x4xf32>) -> tensor<3x6xf32> {
  %w = cuvil.constant dense<1.0> : tensor<4x6xf32>
  // expected-remark @+1 {{kept in float32: N=6 is not a multiple of 4}}
  %y = cuvil.matmul %x, %w : (tensor<3x4xf32>, tensor<4x6xf32>) -> tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

// -----

// A weight that is a run-time input stays float32.
func.func @runtime_weight(%x: tensor<3x4xf32>, %w: tensor<4x4xf32>) -> tensor<3x4xf32> {
  // expected-remark @+1 {{kept in float32: its weight is not a 2-D constant (a run-time input stays float32)}}
  %y = cuvil.matmul %x, %w : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// int8 takes one activation scale per matmul it quantizes.
// SCALES: 1 matmuls to quantize but 2 activation scales; calibrate with probe=1 first
