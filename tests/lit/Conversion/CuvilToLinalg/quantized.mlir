// RUN: %cuvil_opt %s --convert-cuvil-to-linalg --split-input-file | FileCheck %s

// K splits into (groups, group), N into the two nibbles' halves: every map is
// a projected permutation. The dequantization selects the nibble by the half
// (linalg.index 2) and scales it; the contraction is tagged for the CPU
// schedule, which fuses the dequantization into its K loop.
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d1, d2)>
// CHECK-LABEL: func.func @int4
// CHECK: %[[X3:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [64, 2, 128]
// CHECK: %[[Q3:.*]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2]] output_shape [2, 128, 32]
// CHECK: %[[S3:.*]] = tensor.expand_shape %arg2 {{\[\[}}0], [1, 2]] output_shape [2, 2, 32]
// CHECK: %[[W:.*]] = linalg.generic {indexing_maps = [#[[P]], #[[S]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[Q3]], %[[S3]] : tensor<2x128x32xi8>, tensor<2x2x32xf32>)
// CHECK: arith.shli
// CHECK: linalg.index 2
// CHECK: arith.select
// CHECK: arith.sitofp {{.*}} : i8 to f32
// CHECK: -> tensor<2x128x2x32xf32>
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[B]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[X3]], %[[W]] : {{.*}}) outs({{.*}} : tensor<64x2x32xf32>) attrs =  {cuvil.dequantized_gemm}
// CHECK: arith.mulf {{.*}} fastmath<contract>
// CHECK: tensor.collapse_shape %[[G]] {{\[\[}}0], [1, 2]] : tensor<64x2x32xf32> into tensor<64x64xf32>
func.func @int4(%x: tensor<64x256xf32>, %q: tensor<256x32xi8>, %s: tensor<2x64xf32>) -> tensor<64x64xf32> {
  %y = cuvil.quantized_matmul %x, %q, %s {group_size = 128 : i64} : (tensor<64x256xf32>, tensor<256x32xi8>, tensor<2x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}

// -----

// Leading batch dims fold into the rows, as for cuvil.matmul.
// CHECK-LABEL: func.func @batched
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
// CHECK: tensor.expand_shape {{.*}} : tensor<6x8xf32> into tensor<6x2x4xf32>
// CHECK: tensor.expand_shape {{.*}} : tensor<6x4xf32> into tensor<2x3x4xf32>
func.func @batched(%x: tensor<2x3x8xf32>, %q: tensor<8x2xi8>, %s: tensor<2x4xf32>) -> tensor<2x3x4xf32> {
  %y = cuvil.quantized_matmul %x, %q, %s {group_size = 4 : i64} : (tensor<2x3x8xf32>, tensor<8x2xi8>, tensor<2x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}
