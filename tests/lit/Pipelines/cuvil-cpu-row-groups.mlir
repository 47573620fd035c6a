// Row groups: a softmax's four row kernels (maximum, exponentials, sum,
// quotients) become one loop over blocks of rows, each op computed for the
// block while its rows are in L1, the exponentials once (both the sum and
// the division read them), the blocks shared between threads. Chains under
// 2^15 elements keep a kernel per op.
// RUN: %cuvil_opt %s --split-input-file --cuvil-cpu-pipeline="up-to=schedule vector-lanes=16" | FileCheck %s
// RUN: %cuvil_opt %s --split-input-file --cuvil-cpu-pipeline="up-to=schedule vector-lanes=8" | FileCheck %s --check-prefix=AVX2

// 8 x 256 x 256 scores: 16 rows of 1 KiB per block, 128 blocks, threads.
// CHECK-LABEL: func.func @softmax
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (8, 16)
// CHECK: vector.reduction <maximumf>
// CHECK: math.exp {{.*}} : vector<1x1x16xf32>
// CHECK-NOT: math.exp
// CHECK: vector.reduction <add>
// CHECK: arith.divf {{.*}} : vector<1x1x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: cuvil.serial
// CHECK-NOT: scf.forall
// CHECK: return
func.func @softmax(%x: tensor<8x256x256xf32>) -> tensor<8x256x256xf32> {
  %m = cuvil.reduce_max %x {axes = array<i64: 2>, keepdims = true} : (tensor<8x256x256xf32>) -> tensor<8x256x1xf32>
  %d = cuvil.sub %x, %m : (tensor<8x256x256xf32>, tensor<8x256x1xf32>) -> tensor<8x256x256xf32>
  %e = cuvil.exp %d : tensor<8x256x256xf32>
  %s = cuvil.reduce_sum %e {axes = array<i64: 2>, keepdims = true} : (tensor<8x256x256xf32>) -> tensor<8x256x1xf32>
  %y = cuvil.div %e, %s : (tensor<8x256x256xf32>, tensor<8x256x1xf32>) -> tensor<8x256x256xf32>
  return %y : tensor<8x256x256xf32>
}

// -----

// 64 x 64 (under 2^15 elements): not grouped, four kernels of their own
// (their tensors stay in L2; fused, they were no faster).
// CHECK-LABEL: func.func @small_softmax
// CHECK-NOT: scf.forall
// CHECK: vector.reduction <maximumf>
// CHECK: scf.for
// CHECK: math.exp
// CHECK: scf.for
// CHECK: vector.reduction <add>
// CHECK: scf.for
// CHECK: arith.divf
// CHECK: return
func.func @small_softmax(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %m = cuvil.reduce_max %x {axes = array<i64: 1>, keepdims = true} : (tensor<64x64xf32>) -> tensor<64x1xf32>
  %d = cuvil.sub %x, %m : (tensor<64x64xf32>, tensor<64x1xf32>) -> tensor<64x64xf32>
  %e = cuvil.exp %d : tensor<64x64xf32>
  %s = cuvil.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<64x64xf32>) -> tensor<64x1xf32>
  %y = cuvil.div %e, %s : (tensor<64x64xf32>, tensor<64x1xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}

// -----

// The exponentials are also returned: they must be stored whole, so they
// stay a kernel of their own (threaded: it is large) and the group is the
// sum and the division.
// CHECK-LABEL: func.func @shared_exponentials
// CHECK: math.exp
// CHECK: scf.forall
// CHECK-NOT: math.exp
// CHECK: vector.reduction <add>
// CHECK: arith.divf
// CHECK: return
func.func @shared_exponentials(%x: tensor<8x256x256xf32>) -> (tensor<8x256x256xf32>, tensor<8x256x256xf32>) {
  %e = cuvil.exp %x : tensor<8x256x256xf32>
  %s = cuvil.reduce_sum %e {axes = array<i64: 2>, keepdims = true} : (tensor<8x256x256xf32>) -> tensor<8x256x1xf32>
  %y = cuvil.div %e, %s : (tensor<8x256x256xf32>, tensor<8x256x1xf32>) -> tensor<8x256x256xf32>
  return %y, %e : tensor<8x256x256xf32>, tensor<8x256x256xf32>
}

// -----

// A layer norm: the mean and the variance are per-row values (a row sum,
// then its division by the row length, computed for the block's rows), the
// centred values are read by the variance and the normalization. One loop
// over blocks of 16 rows of 512, across threads.
// CHECK-LABEL: func.func @layer_norm
// CHECK: scf.forall (%{{.*}}) in (16)
// CHECK: vector.reduction <add>
// CHECK: arith.divf {{.*}} : vector<16xf32>
// CHECK: arith.subf
// CHECK: vector.reduction <add>
// CHECK: arith.divf {{.*}} : vector<16xf32>
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK: return
func.func @layer_norm(%x: tensor<256x512xf32>) -> tensor<256x512xf32> {
  %m = cuvil.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<256x512xf32>) -> tensor<256x1xf32>
  %d = cuvil.sub %x, %m : (tensor<256x512xf32>, tensor<256x1xf32>) -> tensor<256x512xf32>
  %s = cuvil.mul %d, %d : (tensor<256x512xf32>, tensor<256x512xf32>) -> tensor<256x512xf32>
  %v = cuvil.reduce_mean %s {axes = array<i64: 1>, keepdims = true} : (tensor<256x512xf32>) -> tensor<256x1xf32>
  %e = cuvil.constant dense<1.0e-05> : tensor<f32>
  %ve = cuvil.add %v, %e : (tensor<256x1xf32>, tensor<f32>) -> tensor<256x1xf32>
  %r = cuvil.sqrt %ve : tensor<256x1xf32>
  %y = cuvil.div %d, %r : (tensor<256x512xf32>, tensor<256x1xf32>) -> tensor<256x512xf32>
  return %y : tensor<256x512xf32>
}

// -----

// A large transpose (attention's k transposed, 2^17 elements) runs as 8
// tasks across threads, each in blocks of 16 x 16 (a transposed vector read,
// AVX-512 shuffles); a small one (2^12) runs in the same blocks on the
// caller's thread. With AVX2's 8 lanes the blocks are 8 x 8, lowered to
// x86vector's AVX2 shuffles and blends.
// CHECK-LABEL: func.func @transposes
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK-NOT: linalg.transpose
// CHECK: vector.transfer_read {{.*}} : tensor<1x16x16xf32>, vector<1x16x16xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write {{.*}} : vector<1x16x16xf32>, tensor<1x16x16xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK-NOT: linalg.transpose
// CHECK: vector.transfer_read {{.*}} : tensor<1x16x16xf32>, vector<1x16x16xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write {{.*}} : vector<1x16x16xf32>, tensor<1x16x16xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return
// AVX2-LABEL: func.func @transposes
// AVX2: scf.forall (%{{.*}}) in (8)
// AVX2: vector.transfer_read {{.*}} : tensor<1x8x8xf32>, vector<1x8x8xf32>
// AVX2: llvm.inline_asm {{.*}}vblendps
// AVX2: scf.forall.in_parallel
// AVX2-NOT: scf.forall
// AVX2: vector.transfer_read {{.*}} : tensor<1x8x8xf32>, vector<1x8x8xf32>
// AVX2-NOT: linalg.transpose
// AVX2: return
func.func @transposes(%k: tensor<8x256x64xf32>, %s: tensor<4x32x32xf32>) -> (tensor<8x64x256xf32>, tensor<4x32x32xf32>) {
  %t = cuvil.transpose %k {permutation = array<i64: 0, 2, 1>} : (tensor<8x256x64xf32>) -> tensor<8x64x256xf32>
  %u = cuvil.transpose %s {permutation = array<i64: 0, 2, 1>} : (tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  return %t, %u : tensor<8x64x256xf32>, tensor<4x32x32xf32>
}

// -----

// A large transpose in neither vector form (65 columns: no whole blocks)
// still runs as tasks across threads, each a loop nest; a small one stays
// one loop nest on the caller's thread.
// CHECK-LABEL: func.func @unvectorized_transposes
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x256x65xf32>)
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK: linalg.transpose ins(%{{.*}} : tensor<4x32x33xf32>)
// CHECK: return
func.func @unvectorized_transposes(%k: tensor<8x256x65xf32>, %s: tensor<4x32x33xf32>) -> (tensor<8x65x256xf32>, tensor<4x33x32xf32>) {
  %t = cuvil.transpose %k {permutation = array<i64: 0, 2, 1>} : (tensor<8x256x65xf32>) -> tensor<8x65x256xf32>
  %u = cuvil.transpose %s {permutation = array<i64: 0, 2, 1>} : (tensor<4x32x33xf32>) -> tensor<4x33x32xf32>
  return %t, %u : tensor<8x65x256xf32>, tensor<4x33x32xf32>
}

// -----

// Attention's heads split off a projection's columns. Keeping the innermost
// dimension (q and v: 256 x 8 x 64 -> 8 x 256 x 64), each row of 64 is one
// contiguous vector copy; taking the input's innermost dimension to the
// second innermost (k: -> 8 x 64 x 256), blocks of 16 x 16 through
// shuffles. Neither is a scalar loop.
// CHECK-LABEL: func.func @head_splits
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: vector.transfer_read {{.*}} : tensor<1x1x64xf32>, vector<1x1x64xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x1x64xf32>, tensor<1x1x64xf32>
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: vector.transfer_read {{.*}} : tensor<16x1x16xf32>, vector<16x1x16xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write {{.*}} : vector<1x16x16xf32>, tensor<1x16x16xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @head_splits(%x: tensor<256x8x64xf32>) -> (tensor<8x256x64xf32>, tensor<8x64x256xf32>) {
  %q = cuvil.transpose %x {permutation = array<i64: 1, 0, 2>} : (tensor<256x8x64xf32>) -> tensor<8x256x64xf32>
  %k = cuvil.transpose %x {permutation = array<i64: 1, 2, 0>} : (tensor<256x8x64xf32>) -> tensor<8x64x256xf32>
  return %q, %k : tensor<8x256x64xf32>, tensor<8x64x256xf32>
}
