// The cuda target on float32 matmuls of a function allowed TF32
// (precision="tf32"): one tensor-core kernel, the operands rounded to TF32
// on their way to shared memory, m16n8k8 MMAs with float32 sums, the bias
// and ReLU in its epilogue. Without the permission the same matmul stays on
// float32 FMAs.
// RUN: %cuvil_opt %s --cuvil-cuda-pipeline=up-to=bufferize | FileCheck %s --check-prefix=KERNELS
// RUN: %cuvil_opt %s --cuvil-cuda-pipeline --gpu-module-to-binary=format=isa | FileCheck %s --check-prefix=PTX

// KERNELS-LABEL: func.func @ffn
// KERNELS: gpu.launch_func async {{.*}} @cuvil_kernels::@ffn_k0 blocks in (%c4, %c2, %c1) threads in (%c32, %c4, %c1)
// KERNELS-NOT: gpu.launch_func
// KERNELS: gpu.func @ffn_k0({{.*}} workgroup(%{{.*}} : memref<64x36xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<32x72xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// KERNELS: llvm.call_intrinsic "llvm.nvvm.f2tf32.rna"
// KERNELS-NOT: nvgpu.ldmatrix
// KERNELS: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// KERNELS: arith.maximumf
// KERNELS: gpu.func @exact_k0
// KERNELS-NOT: llvm.call_intrinsic
// KERNELS: math.fma
// KERNELS-LABEL: func.func @exact
// KERNELS: gpu.launch_func async {{.*}} @cuvil_kernels::@exact_k0 blocks in (%c4, %c2, %c1) threads in (%c16, %c16, %c1)

// Launch bounds of 128 threads, two 64 x 36 and 32 x 72 float32 slices
// (rows padded so that the fragments' reads hit 32 distinct banks), float32
// loads rounded to TF32, 32 MMAs a 32-deep slice (4 k-steps of 8 tiles per
// warp), then the bias and ReLU on the sums.
// PTX: .entry ffn_k0(
// PTX-SAME: .maxntid 32, 4, 1
// PTX-SAME: .shared .align 16 .b8 __wg_ffn_k0_0[9216];
// PTX-SAME: .shared .align 16 .b8 __wg_ffn_k0_1[9216];
// PTX-SAME: ld.global.f32
// PTX-SAME: cvt.rna.tf32.f32
// PTX-COUNT-32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// PTX-SAME: max.NaN.f32
// PTX-SAME: .entry exact_k0(
// PTX-NOT: mma.sync
// PTX-SAME: fma.rn.f32

func.func @ffn(%x: tensor<100x128xf32>, %w: tensor<128x256xf32>, %b: tensor<256xf32>) -> tensor<100x256xf32> attributes {cuvil.tf32_matmuls} {
  %0 = cuvil.matmul %x, %w : (tensor<100x128xf32>, tensor<128x256xf32>) -> tensor<100x256xf32> loc("ffn.py":8:8)
  %1 = cuvil.add %0, %b : (tensor<100x256xf32>, tensor<256xf32>) -> tensor<100x256xf32> loc("ffn.py":8:8)
  %2 = cuvil.relu %1 : tensor<100x256xf32> loc("ffn.py":9:11)
  return %2 : tensor<100x256xf32>
}

func.func @exact(%x: tensor<100x128xf32>, %w: tensor<128x256xf32>) -> tensor<100x256xf32> {
  %0 = cuvil.matmul %x, %w : (tensor<100x128xf32>, tensor<128x256xf32>) -> tensor<100x256xf32> loc("ffn.py":12:8)
  return %0 : tensor<100x256xf32>
}
