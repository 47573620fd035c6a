// Batched GEMM chains: attention's scores (q·kᵀ), scale and softmax, and
// the product with v become one loop over blocks of query rows per head.
// Each block's scores and probabilities are computed, normalized and
// multiplied by v while they are in L1; the full score matrix is never
// written. Both GEMMs keep their 8 x 32 register tiles; the scores'
// accumulators start at zero in registers (no fill pass over the block).
// RUN: %cuvil_opt %s --split-input-file --cuvil-cpu-pipeline="up-to=schedule vector-lanes=16" | FileCheck %s

// 8 heads, 256 queries and keys, 64 per head: blocks of 16 rows (16 x 256
// scores are 16 KiB), 128 tasks across threads.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: linalg.batch_matmul ins(
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<1x8x32xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (8, 16)
// CHECK-NOT: linalg.fill {{.*}} -> tensor<1x16x256xf32>
// CHECK: scf.for {{.*}} to %c64 step %c1 iter_args(%{{.*}} = %[[ZERO]]) -> (vector<1x8x32xf32>)
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: arith.mulf
// CHECK: vector.reduction <maximumf>, {{.*}} fastmath<reassoc> : vector<256xf32> into f32
// CHECK: math.exp {{.*}} : vector<1x1x16xf32>
// CHECK: vector.reduction <add>, {{.*}} : vector<256xf32> into f32
// CHECK: arith.divf {{.*}} : vector<1x1x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<1x1x16xf32>
// CHECK: vector.transfer_write %[[ZEROS]], {{.*}} : vector<1x1x16xf32>, tensor<1x1x16xf32>
// CHECK: scf.for {{.*}} to %c256 step %c1 {{.*}} -> (vector<1x8x32xf32>)
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: cuvil.serial
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.batch_matmul ins(
// CHECK: return
func.func @attention(%q: tensor<8x256x64xf32>, %kt: tensor<8x64x256xf32>, %v: tensor<8x256x64xf32>) -> tensor<8x256x64xf32> {
  %scale = cuvil.constant dense<0.125> : tensor<f32>
  %s = cuvil.matmul %q, %kt : (tensor<8x256x64xf32>, tensor<8x64x256xf32>) -> tensor<8x256x256xf32>
  %x = cuvil.mul %s, %scale : (tensor<8x256x256xf32>, tensor<f32>) -> tensor<8x256x256xf32>
  %m = cuvil.reduce_max %x {axes = array<i64: 2>, keepdims = true} : (tensor<8x256x256xf32>) -> tensor<8x256x1xf32>
  %d = cuvil.sub %x, %m : (tensor<8x256x256xf32>, tensor<8x256x1xf32>) -> tensor<8x256x256xf32>
  %e = cuvil.exp %d : tensor<8x256x256xf32>
  %z = cuvil.reduce_sum %e {axes = array<i64: 2>, keepdims = true} : (tensor<8x256x256xf32>) -> tensor<8x256x1xf32>
  %p = cuvil.div %e, %z : (tensor<8x256x256xf32>, tensor<8x256x1xf32>) -> tensor<8x256x256xf32>
  %c = cuvil.matmul %p, %v : (tensor<8x256x256xf32>, tensor<8x256x64xf32>) -> tensor<8x256x64xf32>
  return %c : tensor<8x256x64xf32>
}

// -----

// 4 heads of 64 x 64 by 32: one block per head would be 4 tasks; blocks of
// 32 rows make 8. A causal mask added to the scores joins the chain.
// CHECK-LABEL: func.func @masked_attention
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (4, 2)
// CHECK: vector.fma
// CHECK: arith.addf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: vector.fma
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK: return
func.func @masked_attention(%q: tensor<4x64x32xf32>, %kt: tensor<4x32x64xf32>, %v: tensor<4x64x32xf32>, %mask: tensor<64x64xf32>) -> tensor<4x64x32xf32> {
  %s = cuvil.matmul %q, %kt : (tensor<4x64x32xf32>, tensor<4x32x64xf32>) -> tensor<4x64x64xf32>
  %x = cuvil.add %s, %mask : (tensor<4x64x64xf32>, tensor<64x64xf32>) -> tensor<4x64x64xf32>
  %m = cuvil.reduce_max %x {axes = array<i64: 2>, keepdims = true} : (tensor<4x64x64xf32>) -> tensor<4x64x1xf32>
  %d = cuvil.sub %x, %m : (tensor<4x64x64xf32>, tensor<4x64x1xf32>) -> tensor<4x64x64xf32>
  %e = cuvil.exp %d : tensor<4x64x64xf32>
  %z = cuvil.reduce_sum %e {axes = array<i64: 2>, keepdims = true} : (tensor<4x64x64xf32>) -> tensor<4x64x1xf32>
  %p = cuvil.div %e, %z : (tensor<4x64x64xf32>, tensor<4x64x1xf32>) -> tensor<4x64x64xf32>
  %c = cuvil.matmul %p, %v : (tensor<4x64x64xf32>, tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %c : tensor<4x64x32xf32>
}

// -----

// The probabilities are also returned: they must be stored whole, so the
// second GEMM reads them from memory and nothing is chained.
// CHECK-LABEL: func.func @probabilities_returned
// CHECK: scf.forall
// CHECK: scf.forall.in_parallel
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: scf.forall
// CHECK: return
func.func @probabilities_returned(%q: tensor<4x64x32xf32>, %kt: tensor<4x32x64xf32>, %v: tensor<4x64x32xf32>) -> (tensor<4x64x32xf32>, tensor<4x64x64xf32>) {
  %s = cuvil.matmul %q, %kt : (tensor<4x64x32xf32>, tensor<4x32x64xf32>) -> tensor<4x64x64xf32>
  %m = cuvil.reduce_max %s {axes = array<i64: 2>, keepdims = true} : (tensor<4x64x64xf32>) -> tensor<4x64x1xf32>
  %d = cuvil.sub %s, %m : (tensor<4x64x64xf32>, tensor<4x64x1xf32>) -> tensor<4x64x64xf32>
  %e = cuvil.exp %d : tensor<4x64x64xf32>
  %z = cuvil.reduce_sum %e {axes = array<i64: 2>, keepdims = true} : (tensor<4x64x64xf32>) -> tensor<4x64x1xf32>
  %p = cuvil.div %e, %z : (tensor<4x64x64xf32>, tensor<4x64x1xf32>) -> tensor<4x64x64xf32>
  %c = cuvil.matmul %p, %v : (tensor<4x64x64xf32>, tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %c, %p : tensor<4x64x32xf32>, tensor<4x64x64xf32>
}

// -----

// 40 keys are not whole register tiles of 32 columns: the GEMMs and the
// softmax keep kernels of their own.
// CHECK-LABEL: func.func @odd_keys
// CHECK: scf.forall
// CHECK: scf.forall.in_parallel
// CHECK: math.exp
// CHECK: scf.forall
// CHECK: return
func.func @odd_keys(%q: tensor<4x64x32xf32>, %kt: tensor<4x32x40xf32>, %v: tensor<4x40x32xf32>) -> tensor<4x64x32xf32> {
  %s = cuvil.matmul %q, %kt : (tensor<4x64x32xf32>, tensor<4x32x40xf32>) -> tensor<4x64x40xf32>
  %m = cuvil.reduce_max %s {axes = array<i64: 2>, keepdims = true} : (tensor<4x64x40xf32>) -> tensor<4x64x1xf32>
  %d = cuvil.sub %s, %m : (tensor<4x64x40xf32>, tensor<4x64x1xf32>) -> tensor<4x64x40xf32>
  %e = cuvil.exp %d : tensor<4x64x40xf32>
  %z = cuvil.reduce_sum %e {axes = array<i64: 2>, keepdims = true} : (tensor<4x64x40xf32>) -> tensor<4x64x1xf32>
  %p = cuvil.div %e, %z : (tensor<4x64x40xf32>, tensor<4x64x1xf32>) -> tensor<4x64x40xf32>
  %c = cuvil.matmul %p, %v : (tensor<4x64x40xf32>, tensor<4x40x32xf32>) -> tensor<4x64x32xf32>
  return %c : tensor<4x64x32xf32>
}

// -----

// 2048 keys, no scale: the softmax's maximum and differences both read the
// scores (the GEMM is fused once for both), rows are reduced in chunks of
// 1024 lanes, blocks of 8 query rows.
// CHECK-LABEL: func.func @long_unscaled_attention
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 256)
// CHECK: -> (vector<1x8x32xf32>)
// CHECK-NOT: -> (vector<1x8x32xf32>)
// CHECK: scf.for {{.*}} to %c2048 step %c1024
// CHECK: vector.reduction <maximumf>, {{.*}} : vector<1024xf32> into f32
// CHECK: math.exp
// CHECK: vector.reduction <add>, {{.*}} : vector<1024xf32> into f32
// CHECK: arith.divf
// CHECK: -> (vector<1x8x32xf32>)
// CHECK: scf.forall.in_parallel
// CHECK-NOT: -> (vector<1x8x32xf32>)
// CHECK-NOT: scf.forall
// CHECK: return
func.func @long_unscaled_attention(%q: tensor<2x2048x32xf32>, %kt: tensor<2x32x2048xf32>, %v: tensor<2x2048x32xf32>) -> tensor<2x2048x32xf32> {
  %s = cuvil.matmul %q, %kt : (tensor<2x2048x32xf32>, tensor<2x32x2048xf32>) -> tensor<2x2048x2048xf32>
  %m = cuvil.reduce_max %s {axes = array<i64: 2>, keepdims = true} : (tensor<2x2048x2048xf32>) -> tensor<2x2048x1xf32>
  %d = cuvil.sub %s, %m : (tensor<2x2048x2048xf32>, tensor<2x2048x1xf32>) -> tensor<2x2048x2048xf32>
  %e = cuvil.exp %d : tensor<2x2048x2048xf32>
  %z = cuvil.reduce_sum %e {axes = array<i64: 2>, keepdims = true} : (tensor<2x2048x2048xf32>) -> tensor<2x2048x1xf32>
  %p = cuvil.div %e, %z : (tensor<2x2048x2048xf32>, tensor<2x2048x1xf32>) -> tensor<2x2048x2048xf32>
  %c = cuvil.matmul %p, %v : (tensor<2x2048x2048xf32>, tensor<2x2048x32xf32>) -> tensor<2x2048x32xf32>
  return %c : tensor<2x2048x32xf32>
}
