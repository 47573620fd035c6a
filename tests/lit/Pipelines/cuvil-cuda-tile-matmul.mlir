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

// -----

// The fill and the bias + ReLU after the GEMM run in its kernel: the sums
// start from the fill's value (no load of C), the epilogue's body runs on
// them and writes its own output; C, a temporary nothing else reads, is not
// stored.
// CHECK-LABEL: func.func @fused
// CHECK-NOT: linalg.fill
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: gpu.launch
// CHECK-COUNT-256: math.fma
// CHECK: scf.if
// CHECK-NOT: memref.load %[[C:alloc]]
// CHECK: arith.addf %[[ZERO]]
// CHECK: memref.load %arg2
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %arg3
// CHECK-NOT: linalg.generic
#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @fused(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %bias: memref<48xf32>, %out: memref<64x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<64x48xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x48xf32>)
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>)
  linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<64x48xf32>, memref<48xf32>) outs(%out : memref<64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<64x48xf32>
  return
}

// -----

// An epilogue writing where the GEMM's operand lives (the memory plan gave a
// dead operand's bytes to it) would race with blocks still reading it: not
// fused.
// CHECK-LABEL: func.func @aliasing
// CHECK: gpu.launch
// CHECK: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @aliasing(%arena: memref<65536xi8>, %b: memref<32x32xf32>) {
  %c0 = arith.constant 0 : index
  %c16k = arith.constant 16384 : index
  %a = memref.view %arena[%c0][] : memref<65536xi8> to memref<32x32xf32>
  %c = memref.view %arena[%c16k][] : memref<65536xi8> to memref<32x32xf32>
  %d = memref.view %arena[%c0][] : memref<65536xi8> to memref<32x32xf32>
  linalg.matmul ins(%a, %b : memref<32x32xf32>, memref<32x32xf32>) outs(%c : memref<32x32xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<32x32xf32>) outs(%d : memref<32x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.mulf %x, %x : f32
    linalg.yield %r : f32
  }
  return
}
