// RUN: %cuvil_opt %s --cuvil-cpu-schedule="vector-lanes=8 register-rows=8" --split-input-file | FileCheck %s
// RUN: %cuvil_opt %s --cuvil-cpu-schedule=vector-lanes=8 --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: %cuvil_opt %s --cuvil-cpu-schedule=vector-lanes=16 --split-input-file | FileCheck %s --check-prefix=WIDE

// With AVX2-sized registers and 8 rows the register tile is 8 x 16; tile
// sizes divide the GEMM (M=96 -> 32-row blocks, N=48 -> 48 columns, K=100
// -> whole K). By default 8-lane vectors take 4 rows: their ISAs have 16
// vector registers, and 8 rows (16 accumulators, two vectors of the right
// operand and a broadcast) would spill. The 4-row tile's 8 accumulators
// leave room for four K steps per iteration of its loop.
// AVX2-LABEL: func.func @avx2_tiles
// AVX2: scf.for %{{.*}} = %c0 to %c100 step %c4 iter_args(%{{.*}} = %{{.*}}) -> (vector<4x16xf32>)
// AVX2-COUNT-16: vector.fma {{.*}} : vector<16xf32>
// AVX2-NOT: vector.fma
// AVX2: return
// CHECK-LABEL: func.func @avx2_tiles
// CHECK: scf.forall (%{{.*}}) in (3)
// CHECK: vector<8x16xf32>
// CHECK-COUNT-8: vector.fma {{.*}} : vector<16xf32>
// Under 2^20 multiply-adds: the thread tiles run on the caller.
// CHECK: } {cuvil.serial}
func.func @avx2_tiles(%a: tensor<96x100xf32>, %b: tensor<100x48xf32>) -> tensor<96x48xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x48xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<96x48xf32>) -> tensor<96x48xf32>
  %r = linalg.matmul ins(%a, %b : tensor<96x100xf32>, tensor<100x48xf32>) outs(%f : tensor<96x48xf32>) -> tensor<96x48xf32>
  return %r : tensor<96x48xf32>
}

// -----

// Rows ending in a partial register tile (49 = 12 x 4 + 1: a 7 x 7 image's
// pixels as rows) take the four K steps too, the peeled last row included.
// AVX2-LABEL: func.func @partial_rows_k_steps
// AVX2: scf.for %{{.*}} = %c0 to %c48 step %c4
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c4 iter_args(%{{.*}} = %{{.*}}) -> (vector<4x16xf32>)
// AVX2-COUNT-16: vector.fma {{.*}} : vector<16xf32>
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c4 iter_args(%{{.*}} = %{{.*}}) -> (vector<1x16xf32>)
// AVX2-COUNT-4: vector.fma {{.*}} : vector<16xf32>
// CHECK-LABEL: func.func @partial_rows_k_steps
func.func @partial_rows_k_steps(%a: tensor<49x64xf32>, %b: tensor<64x32xf32>) -> tensor<49x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<49x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<49x32xf32>) -> tensor<49x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<49x64xf32>, tensor<64x32xf32>) outs(%f : tensor<49x32xf32>) -> tensor<49x32xf32>
  return %r : tensor<49x32xf32>
}

// -----

// A merged q|k|v projection of a small block (64 x 128 by 128 x 384 with
// AVX2-sized tiles: 128-column cache tiles would make 3 tasks, one core
// idle for a whole task): 4 tasks of 96 columns.
// CHECK-LABEL: func.func @even_tasks
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK-NOT: cuvil.serial
// CHECK: return
func.func @even_tasks(%a: tensor<64x128xf32>, %b: tensor<128x384xf32>) -> tensor<64x384xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x384xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x384xf32>) -> tensor<64x384xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x384xf32>) outs(%f : tensor<64x384xf32>) -> tensor<64x384xf32>
  return %r : tensor<64x384xf32>
}

// -----

// 2^21 multiply-adds: worth the second core, the thread tiles stay parallel.
// K is one block: the register tiles start from zero and read the rows of
// the thread's block of the right operand (which the panel packing copies),
// one K step's row per iteration of their loop with 8-lane vectors (16
// registers: AVX2, wasm), four steps' rows with 16 lanes (AVX-512).
// CHECK-LABEL: func.func @threads_for_large_work
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (4, 2)
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %arg1[0, %{{.*}}] [32, 128] [1, 1]
// CHECK-NOT: linalg.fill
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1
// CHECK: tensor.extract_slice %[[BLOCK]][%{{.*}}, %{{.*}}] [1, 16] [1, 1]
// WIDE-LABEL: func.func @threads_for_large_work
// WIDE: scf.for %{{.*}} = %c0 to %c32 step %c4
// WIDE: tensor.extract_slice %{{.*}}[%{{.*}}, %{{.*}}] [4, 32] [1, 1]
// CHECK-NOT: cuvil.serial
// CHECK: return
func.func @threads_for_large_work(%a: tensor<256x32xf32>, %b: tensor<32x256xf32>) -> tensor<256x256xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x32xf32>, tensor<32x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// -----

// One cache tile would cover the whole GEMM (M = 64, N = 64 fit the 64-row
// and 64-column blocks): with 2^22 multiply-adds the second core is worth
// having, so the columns are cut in two (32 each, two register tiles).
// CHECK-LABEL: func.func @lone_tile_shared
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK-NOT: cuvil.serial
// CHECK: return
func.func @lone_tile_shared(%a: tensor<64x1024xf32>, %b: tensor<1024x64xf32>) -> tensor<64x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x1024xf32>, tensor<1024x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// Half that work (2^21) stays one tile, run by the calling thread. K is
// eight blocks (deeper than 512: not one block): the result is filled
// first, a register at a time along its rows, then each block's tiles add
// to it.
// CHECK-LABEL: func.func @lone_tile_kept
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.fill
// CHECK: vector.transfer_write {{.*}} : vector<1x8xf32>, tensor<1x8xf32>
// CHECK: scf.for {{.*}} step %c128
// CHECK: vector.transfer_read {{.*}} vector<8x16xf32>
// CHECK: scf.for
// CHECK: return
func.func @lone_tile_kept(%a: tensor<32x1024xf32>, %b: tensor<1024x64xf32>) -> tensor<32x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<32x1024xf32>, tensor<1024x64xf32>) outs(%f : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}

// -----

// Fills no kernel absorbs are vectorized along their rows, floats and
// integers of whole bytes alike; a boolean fill stays scalar (vectors of i1
// are bit-packed in memory, tensors of i1 a byte per element). A short row
// (20 floats) is one vector.
// CHECK-LABEL: func.func @fills_beside_a_gemm
// CHECK-DAG: vector.transfer_write {{.*}} : vector<1x8xi32>, tensor<1x8xi32>
// CHECK-DAG: vector.transfer_write {{.*}} : vector<20xf32>, tensor<20xf32>
// CHECK-DAG: linalg.fill ins(%{{.*}} : i1) outs(%{{.*}} : tensor<4x32xi1>)
// CHECK: return
func.func @fills_beside_a_gemm(%a: tensor<64x512xf32>, %b: tensor<512x64xf32>) -> (tensor<64x64xf32>, tensor<4x32xi32>, tensor<20xf32>, tensor<4x32xi1>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x512xf32>, tensor<512x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %seven = arith.constant 7 : i32
  %ei = tensor.empty() : tensor<4x32xi32>
  %fi = linalg.fill ins(%seven : i32) outs(%ei : tensor<4x32xi32>) -> tensor<4x32xi32>
  %half = arith.constant 0.5 : f32
  %ev = tensor.empty() : tensor<20xf32>
  %fv = linalg.fill ins(%half : f32) outs(%ev : tensor<20xf32>) -> tensor<20xf32>
  %true = arith.constant true
  %eb = tensor.empty() : tensor<4x32xi1>
  %fb = linalg.fill ins(%true : i1) outs(%eb : tensor<4x32xi1>) -> tensor<4x32xi1>
  return %r, %fi, %fv, %fb : tensor<64x64xf32>, tensor<4x32xi32>, tensor<20xf32>, tensor<4x32xi1>
}

// -----

// A GEMM smaller than one register tile both ways is left alone (scalar
// loops later): vectors would gain nothing.
// CHECK-LABEL: func.func @tiny_untouched
// CHECK-NOT: scf.forall
// CHECK-NOT: vector.
// CHECK: linalg.matmul
func.func @tiny_untouched(%a: tensor<7x13xf32>, %b: tensor<13x5xf32>) -> tensor<7x5xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<7x5xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<7x5xf32>) -> tensor<7x5xf32>
  %r = linalg.matmul ins(%a, %b : tensor<7x13xf32>, tensor<13x5xf32>) outs(%f : tensor<7x5xf32>) -> tensor<7x5xf32>
  return %r : tensor<7x5xf32>
}

// -----

// Sizes no tile divides (M = 100: 64-row blocks, the last one of 36 rows;
// N = 37: two register tiles and 5 columns). The GEMM is split by columns:
// 32 columns of whole register tiles, and the last 5 columns in register
// tiles 5 wide (not a column at a time), each into its slice of the result.
// Both keep the full register tiles and peel the partial row block into
// single rows.
// CHECK-LABEL: func.func @odd_sizes_peeled
// CHECK: %[[MAIN:.*]] = scf.forall (%{{.*}}) in (2) {{.*}} -> (tensor<100x32xf32>)
// CHECK-COUNT-8: vector.fma {{.*}} : vector<16xf32>
// CHECK: %[[HEAD:.*]] = tensor.insert_slice %[[MAIN]] into %{{.*}}[0, 0] [100, 32]
// CHECK: %[[REST:.*]] = scf.forall (%{{.*}}) in (2) {{.*}} -> (tensor<100x5xf32>)
// CHECK: tensor.extract_slice %arg1[%{{.*}}, 32] [1, 5]
// CHECK-COUNT-8: vector.fma {{.*}} : vector<5xf32>
// CHECK: tensor.insert_slice %[[REST]] into %[[HEAD]][0, 32] [100, 5]
// CHECK-NOT: vector<1xf32>
// CHECK-NOT: linalg.matmul
func.func @odd_sizes_peeled(%a: tensor<100x13xf32>, %b: tensor<13x37xf32>) -> tensor<100x37xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x37xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<100x37xf32>) -> tensor<100x37xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x13xf32>, tensor<13x37xf32>) outs(%f : tensor<100x37xf32>) -> tensor<100x37xf32>
  return %r : tensor<100x37xf32>
}

// -----

// A split GEMM's epilogue (bias by column, ReLU) is split alike: each part
// computes it on its accumulators, the rest reading its 5 columns of bias.
// CHECK-LABEL: func.func @odd_columns_epilogue
// CHECK: tensor.extract_slice %arg2[0] [32] [1] : tensor<37xf32> to tensor<32xf32>
// CHECK-COUNT-8: vector.fma {{.*}} : vector<16xf32>
// CHECK: arith.maximumf %{{.*}} : vector<8x16xf32>
// CHECK: %[[HEAD:.*]] = tensor.insert_slice %{{.*}}[0, 0] [64, 32]
// CHECK: tensor.extract_slice %arg2[32] [5] [1] : tensor<37xf32> to tensor<5xf32>
// CHECK-COUNT-8: vector.fma {{.*}} : vector<5xf32>
// CHECK: arith.maximumf %{{.*}} : vector<8x5xf32>
// CHECK: tensor.insert_slice %{{.*}} into %[[HEAD]][0, 32] [64, 5]
// CHECK-NOT: linalg.generic
func.func @odd_columns_epilogue(%a: tensor<64x32xf32>, %b: tensor<32x37xf32>, %bias: tensor<37xf32>) -> tensor<64x37xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x37xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x37xf32>) -> tensor<64x37xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x37xf32>) outs(%f : tensor<64x37xf32>) -> tensor<64x37xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%r, %bias : tensor<64x37xf32>, tensor<37xf32>) outs(%e : tensor<64x37xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    %m = arith.maximumf %s, %cst : f32
    linalg.yield %m : f32
  } -> tensor<64x37xf32>
  return %y : tensor<64x37xf32>
}

// -----

// Batched GEMMs (attention) get one thread task per batch element and the
// same register tile. Its K steps read rows of the task's block of the
// right operand (one batch's `[1, 32, 48]`), which
// cuvil-cpu-pack-gemm-panels then copies into panels.
// CHECK-LABEL: func.func @batched
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK: %[[BLOCK:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}, 0, 0] [1, 32, 48] [1, 1, 1]
// CHECK: vector<1x8x16xf32>
// CHECK: tensor.extract_slice %[[BLOCK]][0, %{{.*}}, %{{.*}}] [1, 1, 16] [1, 1, 1] : tensor<1x32x48xf32> to tensor<1x1x16xf32>
// CHECK-COUNT-8: vector.fma {{.*}} : vector<16xf32>
func.func @batched(%a: tensor<4x64x32xf32>, %b: tensor<4x32x48xf32>) -> tensor<4x64x48xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64x48xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x64x48xf32>) -> tensor<4x64x48xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x64x32xf32>, tensor<4x32x48xf32>) outs(%f : tensor<4x64x48xf32>) -> tensor<4x64x48xf32>
  return %r : tensor<4x64x48xf32>
}

// -----

// Epilogue fusion: the elementwise consumer (bias + ReLU) is tiled across
// threads and the GEMM is computed inside each of its tiles. With the whole
// K in one block, the GEMM's register tile is fused into the epilogue's: the
// fill is the accumulators' initial value and the epilogue computes on the
// accumulators themselves (the GEMM's result is never stored).
// CHECK-LABEL: func.func @epilogue
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.forall (%{{.*}}) in (2)
// CHECK: %[[ACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x16xf32>)
// CHECK: vector.fma
// CHECK: arith.addf %[[ACC]], {{.*}} : vector<8x16xf32>
// CHECK: arith.maximumf {{.*}} : vector<8x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.generic
func.func @epilogue(%a: tensor<128x32xf32>, %b: tensor<32x48xf32>, %bias: tensor<48xf32>) -> tensor<128x48xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x48xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x48xf32>) -> tensor<128x48xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x32xf32>, tensor<32x48xf32>) outs(%f : tensor<128x48xf32>) -> tensor<128x48xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%r, %bias : tensor<128x48xf32>, tensor<48xf32>) outs(%e : tensor<128x48xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %cst : f32
    linalg.yield %m : f32
  } -> tensor<128x48xf32>
  return %o : tensor<128x48xf32>
}

// -----

// A batched GEMM's epilogue (attention's scale) is fused the same way, under
// the batch tile of 1: the scores are scaled while they are in registers.
// CHECK-LABEL: func.func @batched_epilogue
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<1x8x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK: iter_args(%{{.*}} = %[[ZERO]]) -> (vector<1x8x16xf32>)
// CHECK: vector.fma
// CHECK: arith.mulf {{.*}} : vector<1x8x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.generic
func.func @batched_epilogue(%a: tensor<4x64x32xf32>, %b: tensor<4x32x48xf32>) -> tensor<4x64x48xf32> {
  %cst = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<4x64x48xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x64x48xf32>) -> tensor<4x64x48xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x64x32xf32>, tensor<4x32x48xf32>) outs(%f : tensor<4x64x48xf32>) -> tensor<4x64x48xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r : tensor<4x64x48xf32>) outs(%e : tensor<4x64x48xf32>) {
  ^bb0(%x: f32, %out: f32):
    %s = arith.mulf %x, %scale : f32
    linalg.yield %s : f32
  } -> tensor<4x64x48xf32>
  return %o : tensor<4x64x48xf32>
}

// -----

// Must not fuse: the GEMM result is also returned, so it must be stored.
// The ReLU is then a kernel of its own (vectorized by rows).
// CHECK-LABEL: func.func @no_epilogue_with_two_users
// CHECK: scf.forall
// CHECK-NOT: arith.maximumf
// CHECK: scf.forall.in_parallel
// CHECK: arith.maximumf {{.*}} : vector<1x8xf32>
func.func @no_epilogue_with_two_users(%a: tensor<128x32xf32>, %b: tensor<32x48xf32>) -> (tensor<128x48xf32>, tensor<128x48xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x48xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x48xf32>) -> tensor<128x48xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x32xf32>, tensor<32x48xf32>) outs(%f : tensor<128x48xf32>) -> tensor<128x48xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<128x48xf32>) outs(%e : tensor<128x48xf32>) {
  ^bb0(%x: f32, %out: f32):
    %m = arith.maximumf %x, %cst : f32
    linalg.yield %m : f32
  } -> tensor<128x48xf32>
  return %r, %o : tensor<128x48xf32>, tensor<128x48xf32>
}

// -----

// Elementwise kernels are vectorized along the innermost dimension; row
// reductions become one vector reduction per row.
// CHECK-LABEL: func.func @rows
// CHECK: vector.reduction <add>, %{{.*}} : vector<40xf32> into f32
// CHECK: math.exp {{.*}} : vector<1x8xf32>
func.func @rows(%x: tensor<6x40xf32>, %y: tensor<6x32xf32>) -> (tensor<6xf32>, tensor<6x32xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x40xf32>) outs(%f : tensor<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  } -> tensor<6xf32>
  %e2 = tensor.empty() : tensor<6x32xf32>
  %x2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<6x32xf32>) outs(%e2 : tensor<6x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<6x32xf32>
  return %s, %x2 : tensor<6xf32>, tensor<6x32xf32>
}

// -----

// Boolean kernels stay scalar: vectors of i1 are bit-packed in memory.
// CHECK-LABEL: func.func @booleans_scalar
// CHECK-NOT: vector.
// CHECK: linalg.generic
func.func @booleans_scalar(%x: tensor<4x32xf32>) -> tensor<4x32xi1> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xi1>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x32xf32>) outs(%e : tensor<4x32xi1>) {
  ^bb0(%in: f32, %out: i1):
    %c = arith.cmpf olt, %in, %cst : f32
    linalg.yield %c : i1
  } -> tensor<4x32xi1>
  return %r : tensor<4x32xi1>
}

// -----

// Regression (found by the random-graph tester): vectorized kernels writing
// into nested concatenations keep every write.
// CHECK-LABEL: func.func @nested_concat
// CHECK: %[[A:.*]] = vector.transfer_write %{{.*}}, %{{.*}}[%c0] {{.*}} : vector<4xf32>, tensor<4xf32>
// CHECK: %[[B:.*]] = vector.transfer_write %{{.*}}, %{{.*}}[%c0] {{.*}} : vector<4xf32>, tensor<4xf32>
// CHECK: tensor.insert_slice %[[A]] into %{{.*}}[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
// CHECK: tensor.insert_slice %[[B]] into %{{.*}}[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
func.func @nested_concat(%x: tensor<4xf32>) -> tensor<12xf32> {
  %e4 = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %i0 = tensor.insert_slice %a into %e8[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %i1 = tensor.insert_slice %b into %i0[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %e12 = tensor.empty() : tensor<12xf32>
  %j0 = tensor.insert_slice %x into %e12[0] [4] [1] : tensor<4xf32> into tensor<12xf32>
  %j1 = tensor.insert_slice %i1 into %j0[4] [8] [1] : tensor<8xf32> into tensor<12xf32>
  return %j1 : tensor<12xf32>
}

// -----

// A gather (an embedding lookup: tensor.extract at a computed row) is
// vectorized along the row with the vectorizer's n-D extract support, the
// tile's unit dimensions folded away first: the clamped row index is
// computed once per row and the row read as a gather (the vectorizer cannot
// prove a row read from the indices tensor contiguous).
// CHECK-LABEL: func.func @embedding_gather
// CHECK: scf.for
// CHECK: arith.minsi %{{.*}} : vector<8xindex>
// CHECK: scf.for
// CHECK: vector.gather %{{.*}} : tensor<10x16xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NOT: tensor.extract %
func.func @embedding_gather(%t: tensor<10x16xf32>, %i: tensor<2x5xi64>) -> tensor<2x5x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %c10 = arith.constant 10 : index
  %e = tensor.empty() : tensor<2x5x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%i : tensor<2x5xi64>) outs(%e : tensor<2x5x16xf32>) {
  ^bb0(%in: i64, %out: f32):
    %x = arith.index_cast %in : i64 to index
    %neg = arith.cmpi slt, %x, %c0 : index
    %up = arith.addi %x, %c10 : index
    %w = arith.select %neg, %up, %x : index
    %lo = arith.minsi %w, %c9 : index
    %c = arith.maxsi %lo, %c0 : index
    %col = linalg.index 2 : index
    %v = tensor.extract %t[%c, %col] : tensor<10x16xf32>
    linalg.yield %v : f32
  } -> tensor<2x5x16xf32>
  return %r : tensor<2x5x16xf32>
}

// -----

// Image-to-column copies (cuvil-cpu-conv-to-gemm) read the input at
// `ow + kw`: with the tile's unit dimensions folded away, the vectorizer
// proves the read contiguous and loads whole rows, no gather.
// CHECK-LABEL: func.func @image_to_columns
// CHECK: vector.transfer_read %arg0[{{.*}}], {{.*}} : tensor<1x4x10x10xf32>, vector<8xf32>
// CHECK-NOT: vector.gather
func.func @image_to_columns(%x: tensor<1x4x10x10xf32>) -> tensor<1x4x3x3x8x8xf32> {
  %e = tensor.empty() : tensor<1x4x3x3x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x4x3x3x8x8xf32>) {
  ^bb0(%out: f32):
    %n = linalg.index 0 : index
    %c = linalg.index 1 : index
    %kh = linalg.index 2 : index
    %kw = linalg.index 3 : index
    %oh = linalg.index 4 : index
    %ow = linalg.index 5 : index
    %h = arith.addi %oh, %kh : index
    %w = arith.addi %ow, %kw : index
    %v = tensor.extract %x[%n, %c, %h, %w] : tensor<1x4x10x10xf32>
    linalg.yield %v : f32
  } -> tensor<1x4x3x3x8x8xf32>
  return %r : tensor<1x4x3x3x8x8xf32>
}

// -----

// A large gather (a 7x7 stem convolution's columns, 2^21 elements) is cut
// into tasks across threads along its first dimension that splits (the 3
// channels do not, the 112 output rows do), each vectorized inside.
// CHECK-LABEL: func.func @image_to_columns_threaded
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: tensor.extract_slice {{.*}} [1, 3, 7, 7, 14, 112]
// CHECK: vector.transfer_read %arg0[{{.*}}], {{.*}} : tensor<1x3x118x118xf32>, vector<8xf32>
// CHECK: scf.forall.in_parallel
func.func @image_to_columns_threaded(%x: tensor<1x3x118x118xf32>) -> tensor<1x3x7x7x112x112xf32> {
  %e = tensor.empty() : tensor<1x3x7x7x112x112xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x3x7x7x112x112xf32>) {
  ^bb0(%out: f32):
    %n = linalg.index 0 : index
    %c = linalg.index 1 : index
    %kh = linalg.index 2 : index
    %kw = linalg.index 3 : index
    %oh = linalg.index 4 : index
    %ow = linalg.index 5 : index
    %h = arith.addi %oh, %kh : index
    %w = arith.addi %ow, %kw : index
    %v = tensor.extract %x[%n, %c, %h, %w] : tensor<1x3x118x118xf32>
    linalg.yield %v : f32
  } -> tensor<1x3x7x7x112x112xf32>
  return %r : tensor<1x3x7x7x112x112xf32>
}

// -----

// 336 columns (with 8 lanes, register tiles of 16): neither 128 nor 64
// divides them, 112 (seven register tiles) does; whole tiles instead of a
// partial last one, no peeled loops.
// CHECK-LABEL: func.func @columns_in_whole_tiles
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 3)
// CHECK: tensor.extract_slice %arg1[0, %{{.*}}] [64, 112] [1, 1]
// CHECK-NOT: affine.min
// CHECK: scf.forall.in_parallel
func.func @columns_in_whole_tiles(%a: tensor<128x64xf32>, %b: tensor<64x336xf32>) -> tensor<128x336xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x336xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x336xf32>) -> tensor<128x336xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x336xf32>) outs(%f : tensor<128x336xf32>) -> tensor<128x336xf32>
  return %r : tensor<128x336xf32>
}

// -----

// 40 columns, whole vectors (8 lanes) but not whole register tiles (16):
// register tiles one vector wide, no remainder done a column at a time.
// CHECK-LABEL: func.func @columns_in_whole_vectors
// CHECK: scf.for {{.*}} -> (vector<8x8xf32>)
// CHECK-COUNT-8: vector.fma {{.*}} : vector<8xf32>
// CHECK-NOT: vector<8x1xf32>
// CHECK: return
func.func @columns_in_whole_vectors(%a: tensor<64x64xf32>, %b: tensor<64x40xf32>) -> tensor<64x40xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x40xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x40xf32>) -> tensor<64x40xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x40xf32>) outs(%f : tensor<64x40xf32>) -> tensor<64x40xf32>
  return %r : tensor<64x40xf32>
}

// -----

// 784 rows (a 28 x 28 image's pixels) in 64-row tiles make 13 tasks, which
// two threads share as 7 full tiles against 5 and a quarter: 56-row tiles
// make 14 equal tasks, 7 each, all whole (no peeled rows).
// CHECK-LABEL: func.func @rows_balanced_between_threads
// CHECK: scf.forall (%{{.*}}) in (14)
// CHECK: tensor.extract_slice %arg0[%{{.*}}, 0] [56, 64] [1, 1]
// CHECK-NOT: affine.min
// CHECK: scf.forall.in_parallel
func.func @rows_balanced_between_threads(%a: tensor<784x64xf32>, %b: tensor<64x128xf32>) -> tensor<784x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<784x128xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<784x128xf32>) -> tensor<784x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<784x64xf32>, tensor<64x128xf32>) outs(%f : tensor<784x128xf32>) -> tensor<784x128xf32>
  return %r : tensor<784x128xf32>
}

// -----

// A convolution's zero border: the padding value written by an elementwise
// kernel of its own, vectorized along the padded rows and split across
// threads by channel, and the image inserted into its interior (no
// tensor.pad left to bufferize into a scalar loop nest).
// CHECK-LABEL: func.func @pad_as_fill_and_insert
// CHECK-NOT: tensor.pad
// CHECK: %[[FILL:.*]] = scf.forall (%{{.*}}) in (64)
// CHECK: vector.transfer_write %{{.*}} : vector<1x1x1x8xf32>
// CHECK: tensor.insert_slice %arg0 into %[[FILL]][0, 0, 1, 1] [1, 64, 30, 30] [1, 1, 1, 1]
func.func @pad_as_fill_and_insert(%x: tensor<1x64x30x30xf32>) -> tensor<1x64x32x32xf32> {
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x64x30x30xf32> to tensor<1x64x32x32xf32>
  return %p : tensor<1x64x32x32xf32>
}

// -----

// 576 rows in 64-row tiles make 9 tasks (5 against 4 on two threads):
// 48-row tiles make 12, still dividing the rows.
// CHECK-LABEL: func.func @odd_task_count_balanced
// CHECK: scf.forall (%{{.*}}) in (12)
// CHECK: tensor.extract_slice %arg0[%{{.*}}, 0] [48, 64] [1, 1]
// CHECK-NOT: affine.min
// CHECK: scf.forall.in_parallel
func.func @odd_task_count_balanced(%a: tensor<576x64xf32>, %b: tensor<64x128xf32>) -> tensor<576x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<576x128xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<576x128xf32>) -> tensor<576x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<576x64xf32>, tensor<64x128xf32>) outs(%f : tensor<576x128xf32>) -> tensor<576x128xf32>
  return %r : tensor<576x128xf32>
}

// -----

// A narrow, deep GEMM reads each row of its left operand once, from memory:
// K blocks of 1024 (not 128) let each register tile walk a row 4 KiB at a
// time, which the prefetchers follow.
// CHECK-LABEL: func.func @narrow_and_deep
// CHECK: scf.for %{{.*}} = %c0 to %c2048 step %c1024
// CHECK: scf.for %{{.*}} = %c0 to %c1024 step %c1
// WIDE-LABEL: func.func @narrow_and_deep
// WIDE: scf.for %{{.*}} = %c0 to %c2048 step %c1024
// WIDE: scf.for %{{.*}} = %c0 to %c1024 step %c4
func.func @narrow_and_deep(%a: tensor<512x2048xf32>, %b: tensor<2048x64xf32>) -> tensor<512x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<512x64xf32>) -> tensor<512x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<512x2048xf32>, tensor<2048x64xf32>) outs(%f : tensor<512x64xf32>) -> tensor<512x64xf32>
  return %r : tensor<512x64xf32>
}

// -----

// Up to 512 deep, a GEMM of whole register tiles is one K block when its
// right operand is a constant (packed at compile time) and N is more than
// one column tile: the register tiles start at the fill's value and walk all
// of K. An input's block of 512 x 256 floats (512 KiB) would not fit the
// stack its panels are packed on at run time, and where every row tile reads
// the same block (N = 256, one column tile) 512 deep ran slower: both keep
// K blocks of 256.
// WIDE-LABEL: func.func @whole_depth_weights
// WIDE-NOT: linalg.fill
// WIDE-NOT: step %c256
// WIDE: scf.for %{{.*}} = %c0 to %c512 step %c4 iter_args(%{{.*}} = %cst
// WIDE-LABEL: func.func @whole_depth_input
// WIDE: scf.for %{{.*}} = %c0 to %c512 step %c256
// WIDE: scf.for %{{.*}} = %c0 to %c256 step %c4
// WIDE-LABEL: func.func @whole_depth_one_column_tile
// WIDE: scf.for %{{.*}} = %c0 to %c512 step %c256
// WIDE: scf.for %{{.*}} = %c0 to %c256 step %c4
func.func @whole_depth_weights(%a: tensor<256x512xf32>) -> tensor<256x512xf32> {
  %cst = arith.constant 0.0 : f32
  %b = arith.constant dense<0.5> : tensor<512x512xf32>
  %e = tensor.empty() : tensor<256x512xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x512xf32>) outs(%f : tensor<256x512xf32>) -> tensor<256x512xf32>
  return %r : tensor<256x512xf32>
}
func.func @whole_depth_input(%a: tensor<256x512xf32>, %b: tensor<512x512xf32>) -> tensor<256x512xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x512xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x512xf32>) outs(%f : tensor<256x512xf32>) -> tensor<256x512xf32>
  return %r : tensor<256x512xf32>
}
func.func @whole_depth_one_column_tile(%a: tensor<1024x512xf32>) -> tensor<1024x256xf32> {
  %cst = arith.constant 0.0 : f32
  %b = arith.constant dense<0.5> : tensor<512x256xf32>
  %e = tensor.empty() : tensor<1024x256xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1024x256xf32>) -> tensor<1024x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1024x512xf32>, tensor<512x256xf32>) outs(%f : tensor<1024x256xf32>) -> tensor<1024x256xf32>
  return %r : tensor<1024x256xf32>
}
