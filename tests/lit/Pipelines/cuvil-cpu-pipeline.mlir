// Stages of the CPU pipeline, one RUN per stage boundary.
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline="up-to=fusion vector-lanes=16" --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=FUSED
// RUN: %cuvil_opt %s "--cuvil-cpu-pipeline=up-to=fusion enable-fusion=false vector-lanes=16" | FileCheck %s --check-prefix=UNFUSED
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline="up-to=schedule vector-lanes=16" | FileCheck %s --check-prefix=SCHEDULED
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline="up-to=bufferize vector-lanes=16" | FileCheck %s --check-prefix=BUFFERS
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline=vector-lanes=16 | FileCheck %s --check-prefix=LLVM
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline=vector-lanes=16 | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR

// Bias add and GELU fuse into one elementwise kernel after the GEMM; the
// fused kernel keeps the user's source line.
// FUSED-LABEL: func.func @mlp
// FUSED: linalg.matmul {{.*}} loc("mlp.py":12:8)
// FUSED: linalg.generic
// FUSED: arith.addf {{.*}} loc("mlp.py":12:8)
// FUSED: math.erf {{.*}} loc("mlp.py":13:11)
// FUSED: linalg.yield
// FUSED-NEXT: } -> tensor<128x256xf32> loc("mlp.py":13:11)
// FUSED-NOT: linalg.generic
// FUSED: return

// UNFUSED-LABEL: func.func @mlp
// UNFUSED: linalg.matmul
// UNFUSED: linalg.generic
// UNFUSED: arith.addf
// UNFUSED: linalg.generic
// UNFUSED: math.erf

// The GEMM is tiled across threads and computed on a register tile of
// 8 x 32 floats with FMAs, its accumulators starting at zero (K is one
// block: no pass fills the result first); its epilogue is fused into the
// same thread tile.
// SCHEDULED-LABEL: func.func @mlp
// SCHEDULED: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// SCHEDULED: scf.forall (%{{.*}}) in (2)
// SCHEDULED-NOT: linalg.fill
// SCHEDULED: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x32xf32>)
// SCHEDULED-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// The bias + GELU epilogue runs in the same thread tile, vectorized.
// SCHEDULED: math.erf {{.*}} : vector<8x32xf32>
// SCHEDULED: scf.forall.in_parallel
// SCHEDULED-NOT: cuvil.gemm_id

// Results become caller-provided buffers (no allocation is returned).
// BUFFERS-LABEL: func.func @mlp
// BUFFERS-SAME: %{{.*}}: memref<128x128xf32>, %{{.*}}: memref<128x256xf32>, %{{.*}}: memref<256xf32>, %{{.*}}: memref<128x256xf32>)
// BUFFERS-SAME: cuvil.planned_peak_bytes
// BUFFERS-NOT: tensor<
// BUFFERS: return
// BUFFERS-NEXT: }

// LLVM-LABEL: llvm.func @mlp
// LLVM-NOT: linalg.
// LLVM-NOT: memref.
// LLVM: llvm.intr.fmuladd
// LLVM: llvm.return

// GELU's erf is a polynomial on the vectors (cuvil-approximate-math), not
// a libm call per element.
// IR: define void @mlp(
// IR-NOT: @erff
func.func @mlp(%x: tensor<128x128xf32>, %w: tensor<128x256xf32>, %b: tensor<256xf32>) -> tensor<128x256xf32> {
  %0 = cuvil.matmul %x, %w : (tensor<128x128xf32>, tensor<128x256xf32>) -> tensor<128x256xf32> loc("mlp.py":12:8)
  %1 = cuvil.add %0, %b : (tensor<128x256xf32>, tensor<256xf32>) -> tensor<128x256xf32> loc("mlp.py":12:8)
  %2 = cuvil.gelu %1 : tensor<128x256xf32> loc("mlp.py":13:11)
  return %2 : tensor<128x256xf32>
}
