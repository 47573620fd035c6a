//===- CpuTarget.h - The host CPU target backend ----------------*- C++ -*-===//
#ifndef CUVIL_TARGET_CPU_CPUTARGET_H
#define CUVIL_TARGET_CPU_CPUTARGET_H

#include "cuvil/Target/TargetBackend.h"

namespace mlir::cuvil::cpu {

/// The `cpu` target: LLVM code for the host, JIT-compiled in process, cached
/// and exported as shared libraries, objects, assembly and LLVM IR.
std::unique_ptr<TargetBackend> createCpuTarget();

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGET_CPU_CPUTARGET_H
