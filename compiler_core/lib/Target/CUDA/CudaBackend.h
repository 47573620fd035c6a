//===- CudaBackend.h - PTX, SASS, fat binaries and host code ----*- C++ -*-===//
//
// The cuda target's pieces below its TargetBackend: the CUDA toolkit it
// compiles with, the kernels' PTX (MLIR's NVVM serialization, in process),
// SASS and fat binaries (the toolkit's ptxas and fatbinary), and the host
// library that embeds the fat binary and calls Cuvil's CUDA runtime.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_LIB_TARGET_CUDA_CUDABACKEND_H
#define CUVIL_LIB_TARGET_CUDA_CUDABACKEND_H

#include "cuvil/Target/TargetBackend.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::cuvil::cuda {

/// The GPU architecture code is compiled for: the H100/H200's (sm_90),
/// the newest LLVM 19's NVPTX knows. A fat binary carries its SASS and PTX,
/// which drivers JIT-compile for newer GPUs.
constexpr llvm::StringLiteral kChip = "sm_90";

/// The CUDA toolkit folder: CUDA_HOME, else the one the build found.
std::string toolkitHome();
/// libdevice (the toolkit's math library as bitcode), or "" when missing.
std::string libdevicePath();
/// What decides the generated code besides the IR: chip, PTX features,
/// toolkit version.
std::string toolkitDescription();

/// The PTX of the lowered module's kernels.
LogicalResult emitPTX(ModuleOp lowered, std::string &ptx, std::string &error);

/// `ptx` assembled by ptxas for `kChip` (a cubin), or a fat binary of that
/// SASS plus the PTX when `fatbin`.
LogicalResult assemble(llvm::StringRef ptx, bool fatbin, std::string &bytes,
                       std::string &error);

/// The host code as a shared library at `path`: the fat binary embedded,
/// the runtime's functions called through the slots the loader fills.
LogicalResult emitHostLibrary(ModuleOp lowered, const LoadRequest &request,
                              llvm::StringRef path, std::string &error);

/// The host code's LLVM IR (with the fat binary embedded).
LogicalResult printHostLLVMIR(ModuleOp lowered, std::string &out,
                              std::string &error);

} // namespace mlir::cuvil::cuda

#endif // CUVIL_LIB_TARGET_CUDA_CUDABACKEND_H
