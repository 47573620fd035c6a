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

// -----

// bf16 operands summed in float32 (a matmul under precision="bf16") go to
// tensor cores: 4 warps (32 x 4 threads) a block over 64 x 64 tiles, slices
// 32 deep in shared memory with rows padded by 8 elements (16 bytes), the
// next slices' 16 + 16 elements per thread loaded before the fragments are
// (ldmatrix, .trans for the k-major right operand), 2 steps of 16 x 4 warp
// tiles of m16n8k16 mma.sync = 16 per slice, 32 guarded stores per thread.
// CHECK-LABEL: func.func @bf16_tensor_cores
// CHECK: gpu.launch blocks(
// CHECK-SAME: threads(%{{[a-z0-9]+}}, %{{[a-z0-9]+}}, %{{[a-z0-9]+}}) in (%{{[a-z0-9]+}} = %c32{{[_0-9]*}}, %{{[a-z0-9]+}} = %c4{{[_0-9]*}}, %{{[a-z0-9]+}} = %c1{{[_0-9]*}})
// CHECK-SAME: workgroup(%[[AS:[a-z0-9]+]] : memref<64x40xbf16, #gpu.address_space<workgroup>>, %[[BS:[a-z0-9]+]] : memref<32x72xbf16, #gpu.address_space<workgroup>>)
// CHECK-COUNT-32: memref.load %arg
// CHECK: scf.for
// CHECK-COUNT-16: memref.store %{{.*}}, %[[AS]]
// CHECK-COUNT-16: memref.store %{{.*}}, %[[BS]]
// CHECK: gpu.barrier
// CHECK-COUNT-32: memref.load %arg
// CHECK: nvgpu.ldmatrix %[[AS]]{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x40xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvgpu.ldmatrix %[[BS]]{{.*}} {numTiles = 4 : i32, transpose = true} : memref<32x72xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"({{.*}}) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: gpu.barrier
// CHECK-COUNT-32: scf.if
// CHECK-NOT: linalg.generic
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @bf16_tensor_cores(%x: memref<200x96xbf16>, %w: memref<96x100xbf16>, %y: memref<200x100xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<200x96xbf16>, memref<96x100xbf16>) outs(%y : memref<200x100xf32>) {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %0 = arith.extf %p : bf16 to f32
    %1 = arith.extf %q : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// f16 operands (precision="fp16"), the named op with its widening body: the
// fragments go to the intrinsic as <2 x half> pairs.
// CHECK-LABEL: func.func @f16_tensor_cores
// CHECK: nvgpu.ldmatrix {{.*}} -> vector<4x2xf16>
// CHECK-NOT: vector.bitcast
// CHECK: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"({{.*}}) : (vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, f32, f32, f32, f32)
func.func @f16_tensor_cores(%x: memref<64x64xf16>, %w: memref<64x64xf16>, %y: memref<64x64xf32>) {
  linalg.matmul ins(%x, %w : memref<64x64xf16>, memref<64x64xf16>) outs(%y : memref<64x64xf32>)
  return
}

// -----

// Mixed operand types, or a narrow sum, stay loops.
// CHECK-LABEL: func.func @mixed_operands
// CHECK: linalg.matmul
// CHECK-NOT: gpu.launch
func.func @mixed_operands(%x: memref<64x64xbf16>, %w: memref<64x64xf16>, %y: memref<64x64xf32>) {
  linalg.matmul ins(%x, %w : memref<64x64xbf16>, memref<64x64xf16>) outs(%y : memref<64x64xf32>)
  return
}

// -----

// The lowering widens a mixed matmul's left operand to float32 once; the
// kernel reads the bf16 values it was widened from instead, and the
// widening and its buffer go (nothing else reads them).
// CHECK-LABEL: func.func @widened_left_operand
// CHECK-NOT: gpu.alloc
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK-COUNT-16: memref.load %arg0
// CHECK: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
#id = affine_map<(i, j) -> (i, j)>
func.func @widened_left_operand(%x: memref<64x64xbf16>, %w: memref<64x64xbf16>, %y: memref<64x64xf32>) {
  %wide = gpu.alloc () : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x64xbf16>) outs(%wide : memref<64x64xf32>) {
  ^bb0(%p: bf16, %o: f32):
    %e = arith.extf %p : bf16 to f32
    linalg.yield %e : f32
  }
  linalg.matmul ins(%wide, %w : memref<64x64xf32>, memref<64x64xbf16>) outs(%y : memref<64x64xf32>)
  gpu.dealloc %wide : memref<64x64xf32>
  return
}

// -----

// A float32 left operand holding any float32 values (not widened from the
// right one's type) cannot be narrowed: the loops stay.
// CHECK-LABEL: func.func @float32_left_operand
// CHECK: linalg.matmul
// CHECK-NOT: gpu.launch
func.func @float32_left_operand(%x: memref<64x64xf32>, %w: memref<64x64xbf16>, %y: memref<64x64xf32>) {
  linalg.matmul ins(%x, %w : memref<64x64xf32>, memref<64x64xbf16>) outs(%y : memref<64x64xf32>)
  return
}
