// RUN: %cuvil_opt %s --convert-cuvil-to-linalg --cuvil-cpu-schedule=vector-lanes=16 | FileCheck %s

// An int4 GEMM: thread tiles over (rows, half, columns); per K block (one
// quantization group) the group's weights for the tile's columns are decoded
// into a float panel, row by row in vectors; then the 8 x 32 register tile
// accumulates broadcast-times-row products over the group's 128 rows.
// CHECK-LABEL: func.func @int4
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK: scf.for {{.*}} to %c2 step %c1
// CHECK: scf.for {{.*}} to %c128 step %c1
// CHECK: arith.sitofp {{.*}} : vector<1x1x1x32xi8> to vector<1x1x1x32xf32>
// CHECK: scf.for {{.*}} to %c64 step %c8
// CHECK: scf.for {{.*}} to %c128 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (vector<8x32xf32>)
// CHECK: arith.mulf {{.*}} fastmath<contract> : vector<8x32xf32>
// CHECK: arith.addf {{.*}} fastmath<contract> : vector<8x32xf32>
// CHECK-NOT: cuvil.dequantized_gemm
func.func @int4(%x: tensor<64x256xf32>, %q: tensor<256x32xi8>, %s: tensor<2x64xf32>) -> tensor<64x64xf32> {
  %y = cuvil.quantized_matmul %x, %q, %s {group_size = 128 : i64} : (tensor<64x256xf32>, tensor<256x32xi8>, tensor<2x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
