// The cuda target's pipeline: loops become kernels of one GPU module launched
// on one stream, kernels go to NVVM, PTX for sm_90.
// RUN: %cuvil_opt %s --cuvil-cuda-pipeline=up-to=bufferize | FileCheck %s --check-prefix=KERNELS
// RUN: %cuvil_opt %s --cuvil-cuda-pipeline | FileCheck %s --check-prefix=NVVM
// RUN: %cuvil_opt %s --cuvil-cuda-pipeline --gpu-module-to-binary=format=isa | FileCheck %s --check-prefix=PTX

// Host code only launches and allocates: an intermediate lives in device
// memory (gpu.alloc), every launch and allocation is chained on one stream
// and the host waits once, at the end. The GEMM is one kernel of 16 x 16
// threads with the fill before it and the bias + GELU after it in its
// epilogue; the softmax's row reductions are warps (32 x 8 threads a block);
// the 1-D fill of 16 rows has 16 threads.
// Kernels are named after the function and their place in its kernel table
// (`cuvil.kernels`, the profiler's: IR op names from cuvil-tag-kernels).
// KERNELS-LABEL: func.func @mlp
// KERNELS-SAME: cuvil.kernels =
// KERNELS-SAME: "linalg.fill + linalg.matmul", #loc], ["linalg.fill + linalg.generic(maximumf)
// KERNELS-NOT: memref.alloc
// KERNELS: %[[T0:.*]] = gpu.wait async
// KERNELS: gpu.launch_func async [%[[T0]]] @cuvil_kernels::@mlp_k0 blocks in (%c4, %c1, %c1) threads in (%c16, %c16, %c1)
// KERNELS: gpu.alloc async
// KERNELS: gpu.launch_func async {{.*}} @cuvil_kernels::@mlp_k1 blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
// KERNELS: gpu.launch_func async {{.*}} @cuvil_kernels::@mlp_k2 blocks in (%c2, %c1, %c1) threads in (%c32, %c8, %c1)
// KERNELS: gpu.dealloc async
// KERNELS-NEXT: gpu.wait [%{{.*}}]
// KERNELS-NEXT: return
// KERNELS: gpu.module @cuvil_kernels {
// KERNELS-COUNT-7: gpu.func @mlp_k{{[0-9]}}({{.*}} kernel
// KERNELS-NOT: gpu.module

// Kernels in NVVM with their launch bounds; math from libdevice (the GELU's
// erf in the GEMM's epilogue), linked when the module is serialized.
// NVVM: llvm.func @mlp(
// NVVM: gpu.module @cuvil_kernels [#nvvm.target<O = 3, chip = "sm_90"
// NVVM: llvm.func @mlp_k0({{.*}} nvvm.kernel, nvvm.maxntid = array<i32: 16, 16, 1>
// NVVM: llvm.call @__nv_erff
// NVVM: llvm.func @mlp_k1({{.*}} nvvm.maxntid = array<i32: 16, 1, 1>
// NVVM: llvm.call @__nv_expf

// The GEMM (mlp_k0): both operands' slices in shared memory (64 x 17 and
// 16 x 65 floats), barriers around the FMAs, the epilogue's erf after them.
// PTX: .target sm_90
// PTX-SAME: .entry mlp_k0(
// PTX-SAME: .maxntid 16, 16, 1
// PTX-SAME: .shared .align 16 .b8 __wg_mlp_k0_0[4352];
// PTX-SAME: .shared .align 16 .b8 __wg_mlp_k0_1[4160];
// PTX-SAME: st.shared.f32
// PTX-SAME: bar.sync
// PTX-SAME: ld.shared.f32
// PTX-SAME: fma.rn.f32
// PTX-SAME: bar.sync
// PTX-SAME: .entry mlp_k1(
// PTX-SAME: .maxntid 16, 1, 1
// PTX-SAME: .entry mlp_k2(
// PTX-SAME: .maxntid 32, 8, 1
// PTX-SAME: shfl.sync.bfly.b32

func.func @mlp(%x: tensor<16x32xf32>, %w: tensor<32x256xf32>, %b: tensor<256xf32>) -> tensor<16x256xf32> {
  %0 = cuvil.matmul %x, %w : (tensor<16x32xf32>, tensor<32x256xf32>) -> tensor<16x256xf32> loc("mlp.py":12:8)
  %1 = cuvil.add %0, %b : (tensor<16x256xf32>, tensor<256xf32>) -> tensor<16x256xf32> loc("mlp.py":12:8)
  %2 = cuvil.gelu %1 : tensor<16x256xf32> loc("mlp.py":13:11)
  %3 = cuvil.softmax %2 {axis = 1 : i64} : tensor<16x256xf32> loc("mlp.py":14:11)
  return %3 : tensor<16x256xf32>
}
