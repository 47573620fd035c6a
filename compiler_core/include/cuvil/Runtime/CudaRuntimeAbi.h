//===- CudaRuntimeAbi.h - What CUDA host code calls ------------*- C++ -*-===//
//
// Host code of the cuda target calls the `mgpu*` functions MLIR's
// gpu-to-llvm conversion emits (module load, kernel launch, streams,
// events, device memory) and `cuvilCudaConstant` (cuvil-cuda-device-
// constants). MLIR 19 ships no runtime for them; Cuvil's is in
// CudaRuntime.cpp. The generated library calls them through slots
// (RuntimeSlots.h). No MLIR headers here.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_RUNTIME_CUDARUNTIMEABI_H
#define CUVIL_RUNTIME_CUDARUNTIMEABI_H

#include "cuvil/Runtime/RuntimeSlots.h"

#include <string_view>
#include <vector>

namespace cuvil::cuda {

/// `void *cuvilCudaConstant(const void *host, int64_t bytes)`: the device
/// copy of a constant buffer, made on first use.
constexpr const char *kConstantFunction = "cuvilCudaConstant";

/// Whether `name`, a function host code declares, is one the runtime
/// provides (and so is called through a slot).
inline bool isRuntimeFunction(std::string_view name) {
  return name.rfind("mgpu", 0) == 0 || name == kConstantFunction;
}

/// Every function of the runtime with its address, for the loader.
const std::vector<RuntimeFunction> &runtimeFunctions();

} // namespace cuvil::cuda

#endif // CUVIL_RUNTIME_CUDARUNTIMEABI_H
