// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-quantize-weights{group-size=2 column-multiple=4}))" --split-input-file | FileCheck %s --check-prefix=INT4
// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-quantize-weights{bits=8 activation-scales=0.5}))" --split-input-file | FileCheck %s --check-prefix=INT8
// RUN: %cuvil_opt %s --pass-pipeline="builtin.module(func.func(cuvil-quantize-weights{bits=8 probe=1}))" --split-input-file | FileCheck %s --check-prefix=PROBE

// Group 0 (rows 0-1): column 0 has max|w| 7, so scale 1 and codes 7, 4 (3.5
// rounds to even); column 2 has scale 1/7 and codes 7, -7. A byte holds
// column j in its low nibble and column j + N/2 in its high one:
// 0x77 = 119 (7 | 7 << 4), 0x94 = -108 (4 | -7 << 4).
// INT4-LABEL: func.func @weights
// INT4: %[[Q:.*]] = cuvil.constant dense<{{\[\[}}119, 9], [-108, 112], [115, 7], [57, 3]]> : tensor<4x2xi8>
// INT4: %[[S:.*]] = cuvil.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 0.142857149, 0.285714298], [0.285714298, 0.142857149, 0.0714285746, 0.000000e+00]]> : tensor<2x4xf32>
// INT4: cuvil.quantized_matmul %arg0, %[[Q]], %[[S]] {group_size = 2 : i64} : (tensor<3x4xf32>, tensor<4x2xi8>, tensor<2x4xf32>) -> tensor<3x4xf32>
// INT4-NOT: cuvil.matmul

// Per-column int8 weights (max|w| -> 127) and the activation quantized with
// the given scale, an i8 x i8 -> i32 matmul, rescaled by sx * sw per column.
// INT8-LABEL: func.func @weights
// INT8: %[[INV:.*]] = cuvil.constant dense<2.000000e+00> : tensor<f32>
// INT8: %[[XS:.*]] = cuvil.mul %arg0, %[[INV]]
// INT8: %[[XR:.*]] = cuvil.round %[[XS]]
// INT8: cuvil.max %[[XR]]
// INT8: %[[XC:.*]] = cuvil.min
// INT8: %[[XQ:.*]] = cuvil.cast %[[XC]] : (tensor<3x4xf32>) -> tensor<3x4xi8>
// INT8: %[[WQ:.*]] = cuvil.constant dense<{{\[\[}}127, -127, 127, 0], [64, 0, -127, 127], [18, 9, 64, 0], [-36, 5, 32, 0]]> : tensor<4x4xi8>
// INT8: %[[P:.*]] = cuvil.matmul %[[XQ]], %[[WQ]] : (tensor<3x4xi8>, tensor<4x4xi8>) -> tensor<3x4xi32>
// INT8: %[[F:.*]] = cuvil.cast %[[P]] : (tensor<3x4xi32>) -> tensor<3x4xf32>
// INT8: %[[SC:.*]] = cuvil.constant dense<[0.027559055, 0.05511811, 0.00393700786, 0.00787401571]> : tensor<4xf32>
// INT8: cuvil.mul %[[F]], %[[SC]]

// The calibration's form: the activation of each matmul to quantize is an
// extra result; nothing else changes.
// PROBE-LABEL: func.func @weights
// PROBE-SAME: -> (tensor<3x4xf32>, tensor<3x4xf32>)
// PROBE: %[[Y:.*]] = cuvil.matmul %arg0
// PROBE: return %[[Y]], %arg0
func.func @weights(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %w = cuvil.constant dense<[[7.0, -14.0, 1.0, 0.0], [3.5, 0.0, -1.0, 2.0], [1.0, 1.0, 0.5, 0.0], [-2.0, 0.5, 0.25, 0.0]]> : tensor<4x4xf32>
  %y = cuvil.matmul %x, %w : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

