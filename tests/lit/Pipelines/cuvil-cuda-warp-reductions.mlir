// RUN: %cuvil_opt %s --split-input-file --cuvil-cuda-warp-reductions | FileCheck %s

// A row max over 512 columns: 8 warps a block (256 rows / 8 = 32 blocks),
// lanes striding by 32 from -inf, five xor shuffles, lane 0 folding the
// result into the output.
// CHECK-LABEL: func.func @row_max
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in (%{{[a-z0-9]+}} = %{{[a-z0-9_]+}}, %{{[a-z0-9]+}} = %c1{{[_0-9]*}}, %{{[a-z0-9]+}} = %c1{{[_0-9]*}}) threads({{.*}}) in (%{{[a-z0-9]+}} = %c32{{[_0-9]*}}, %{{[a-z0-9]+}} = %c8{{[_0-9]*}}, %{{[a-z0-9]+}} = %c1{{[_0-9]*}})
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for %{{.*}} = %{{.*}} to %c512{{.*}} step %c32{{.*}} iter_args(%{{.*}} = %[[NEGINF]])
// CHECK: arith.maximumf
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: scf.if
// CHECK: memref.load
// CHECK: arith.maximumf
// CHECK: memref.store
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%x: memref<256x512xf32>, %m: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x512xf32>) outs(%m : memref<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %acc, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The body's own computation (x - mean)^2 is done per element before the sum.
// CHECK-LABEL: func.func @variance
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-COUNT-5: gpu.shuffle  xor
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @variance(%x: memref<2x64x128xf32>, %mean: memref<2x64xf32>, %v: memref<2x64xf32>) {
  linalg.generic {indexing_maps = [#id3, #row3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %mean : memref<2x64x128xf32>, memref<2x64xf32>) outs(%v : memref<2x64xf32>) {
  ^bb0(%in: f32, %mu: f32, %acc: f32):
    %d = arith.subf %in, %mu : f32
    %s = arith.mulf %d, %d : f32
    %r = arith.addf %acc, %s : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Short rows and column reductions stay loops.
// CHECK-LABEL: func.func @short_rows
// CHECK: linalg.generic
// CHECK-NOT: gpu.launch
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
func.func @short_rows(%x: memref<256x16xf32>, %m: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x16xf32>) outs(%m : memref<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  return
}
