// The cuda target on a matmul of bf16 operands summed in float32 (what
// precision="bf16" makes of a model's matmuls): one tensor-core kernel with
// the bias and ReLU in its epilogue, in PTX for sm_90.
// RUN: %cuvil_opt %s --cuvil-cuda-pipeline=up-to=bufferize | FileCheck %s --check-prefix=KERNELS
// RUN: %cuvil_opt %s --cuvil-cuda-pipeline --gpu-module-to-binary=format=isa | FileCheck %s --check-prefix=PTX

// One launch of 4 warps over ceil(256/64) x ceil(100/64) tiles of 64 x 64,
// reading the bf16 input itself (the lowering's float32 copy of the left
// operand is gone); the bias and ReLU are the same kernel's.
// KERNELS-LABEL: func.func @ffn
// KERNELS-NOT: gpu.alloc
// KERNELS: gpu.launch_func async {{.*}} @cuvil_kernels::@ffn_k0 blocks in (%c4, %c2, %c1) threads in (%c32, %c4, %c1)
// KERNELS-SAME: %arg0 : memref<100x128xbf16>
// KERNELS-NOT: gpu.launch_func
// KERNELS: gpu.func @ffn_k0({{.*}} workgroup(%{{.*}} : memref<64x40xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<32x72xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// KERNELS: nvgpu.ldmatrix
// KERNELS: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"
// KERNELS: arith.maximumf

// The kernel in PTX has launch bounds of 128 threads, two 16-byte aligned
// slices in shared memory (64 x 40 and 32 x 72 bf16), the 16-bit operands
// loaded as they are, fragments by ldmatrix (the right operand transposed
// on the way), 16 bf16 tensor-core MMAs with float32 accumulators per
// slice, the slices stored between barriers (LLVM rotates the loop: the
// MMAs come first), then the epilogue's bias (float32 loads) and ReLU (max)
// on the sums.
// PTX: .target sm_90
// PTX-SAME: .entry ffn_k0(
// PTX-SAME: .maxntid 32, 4, 1
// PTX-SAME: .shared .align 16 .b8 __wg_ffn_k0_0[5120];
// PTX-SAME: .shared .align 16 .b8 __wg_ffn_k0_1[4608];
// PTX-SAME: ld.global.b16
// PTX-SAME: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-SAME: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-COUNT-16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-SAME: bar.sync
// PTX-SAME: st.shared.b16
// PTX-SAME: bar.sync
// PTX-SAME: ld.global.f32
// PTX-SAME: max.NaN.f32

func.func @ffn(%x: tensor<100x128xbf16>, %w: tensor<128x256xbf16>, %b: tensor<256xf32>) -> tensor<100x256xf32> {
  %0 = cuvil.matmul %x, %w : (tensor<100x128xbf16>, tensor<128x256xbf16>) -> tensor<100x256xf32> loc("ffn.py":8:8)
  %1 = cuvil.add %0, %b : (tensor<100x256xf32>, tensor<256xf32>) -> tensor<100x256xf32> loc("ffn.py":8:8)
  %2 = cuvil.relu %1 : tensor<100x256xf32> loc("ffn.py":9:11)
  return %2 : tensor<100x256xf32>
}
