// RUN: %cuvil_opt %s --split-input-file --cuvil-cuda-tile-matmul | FileCheck %s

// A GEMM of odd sizes: one launch of 16 x 16 threads over 64 x 64 tiles
// (ceil(100/64) x ceil(70/64) blocks), both operands staged in shared memory
// 16 deep, 4 x 4 FMAs per thread and step, guarded stores adding to C.
// CHECK-LABEL: func.func @gemm
// CHECK-NOT: linalg.matmul
// CHECK: gpu.launch blocks(
// CHECK-SAME: threads(%{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[a-z0-9]+}}) in (%{{[a-z0-9]+}} = %c16{{[_0-9]*}}, %{{[a-z0-9]+}} = %c16{{[_0-9]*}}, %{{[a-z0-9]+}} = %c1{{[_0-9]*}})
// CHECK-SAME: workgroup(%[[AS:[a-z0-9]+]] : memref<64x17xf32, #gpu.address_space<workgroup>>, %[[BS:[a-z0-9]+]] : memref<16x65xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK-COUNT-4: memref.store %{{.*}}, %[[AS]]
// CHECK-COUNT-4: memref.store %{{.*}}, %[[BS]]
// CHECK: gpu.barrier
// CHECK-COUNT-256: math.fma
// CHECK: gpu.barrier
// CHECK-COUNT-16: scf.if
func.func @gemm(%a: memref<100x33xf32>, %b: memref<33x70xf32>, %c: memref<100x70xf32>) {
  linalg.matmul ins(%a, %b : memref<100x33xf32>, memref<33x70xf32>) outs(%c : memref<100x70xf32>)
  return
}

// -----

// A batch on the grid's z; B transposed (q @ k^T in attention).
// CHECK-LABEL: func.func @bmm_transposed
// CHECK: gpu.launch blocks(%{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[a-z0-9]+}}) in (%{{[a-z0-9]+}} = %{{[a-z0-9_]+}}, %{{[a-z0-9]+}} = %{{[a-z0-9_]+}}, %{{[a-z0-9]+}} = %c8{{[_0-9]*}})
// CHECK-COUNT-256: math.fma
#a = affine_map<(b, m, n, k) -> (b, m, k)>
#bt = affine_map<(b, m, n, k) -> (b, n, k)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @bmm_transposed(%q: memref<8x64x32xf32>, %k: memref<8x64x32xf32>, %s: memref<8x64x64xf32>) {
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<8x64x32xf32>, memref<8x64x32xf32>) outs(%s : memref<8x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// Not float32, or not a plain multiply-add: left to the loop path.
// CHECK-LABEL: func.func @integer
// CHECK: linalg.matmul
// CHECK-NOT: gpu.launch
func.func @integer(%a: memref<4x4xi32>, %b: memref<4x4xi32>, %c: memref<4x4xi32>) {
  linalg.matmul ins(%a, %b : memref<4x4xi32>, memref<4x4xi32>) outs(%c : memref<4x4xi32>)
  return
}
