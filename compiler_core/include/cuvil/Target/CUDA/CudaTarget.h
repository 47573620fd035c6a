//===- CudaTarget.h - The CUDA target backend -------------------*- C++ -*-===//
#ifndef CUVIL_TARGET_CUDA_CUDATARGET_H
#define CUVIL_TARGET_CUDA_CUDATARGET_H

#include "cuvil/Target/TargetBackend.h"

namespace mlir::cuvil::cuda {

/// The `cuda` target: loops mapped onto GPU blocks and threads, kernels
/// lowered through NVVM to PTX and assembled by the CUDA toolkit into a
/// fat binary (SASS for the compiled architecture plus PTX), host code in a
/// shared library that launches them through Cuvil's CUDA runtime.
std::unique_ptr<TargetBackend> createCudaTarget();

} // namespace mlir::cuvil::cuda

#endif // CUVIL_TARGET_CUDA_CUDATARGET_H
