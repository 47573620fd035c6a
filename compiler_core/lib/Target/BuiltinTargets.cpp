//===- BuiltinTargets.cpp - The one place built-in targets are named ------===//

#include "cuvil/Target/TargetBackend.h"

#include "cuvil/Target/C/CTarget.h"
#include "cuvil/Target/CPU/CpuTarget.h"
#include "cuvil/Target/CUDA/CudaTarget.h"
#include "cuvil/Target/Wasm/WasmTarget.h"

#include <mutex>

void mlir::cuvil::registerBuiltinTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    TargetRegistry::registerBackend(cpu::createCpuTarget());
    TargetRegistry::registerBackend(c::createCTarget());
    TargetRegistry::registerBackend(wasm::createWasmTarget());
    TargetRegistry::registerBackend(cuda::createCudaTarget());
  });
}
