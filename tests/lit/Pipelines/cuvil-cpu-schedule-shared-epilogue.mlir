// An elementwise op combining two GEMMs is the epilogue of the first only:
// the second GEMM is tiled on its own (the schedule used to try to fuse both
// into it and fail: "requires exactly one containing_op handle").
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline=up-to=schedule | FileCheck %s
// RUN: %cuvil_opt %s --cuvil-cpu-pipeline | FileCheck %s --check-prefix=LLVM

// Both GEMMs get the register-tile kernel; the minimum stays one kernel.
// CHECK-LABEL: func.func @two_gemms
// CHECK: vector.fma
// CHECK: arith.minimumf
// LLVM: llvm.func @two_gemms
func.func @two_gemms(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>, %d: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = cuvil.matmul %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = cuvil.matmul %c, %d : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %2 = cuvil.min %0, %1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %2 : tensor<64x64xf32>
}
