//===- CTarget.h - The C target backend -------------------------*- C++ -*-===//
#ifndef CUVIL_TARGET_C_CTARGET_H
#define CUVIL_TARGET_C_CTARGET_H

#include "cuvil/Target/TargetBackend.h"

namespace mlir::cuvil::c {

/// The `c` target: dependency-free C99 (a `.c` file with a documented
/// entry point and its `.h`) through EmitC, run in process by compiling it
/// with the system's C compiler into a private shared library.
std::unique_ptr<TargetBackend> createCTarget();

} // namespace mlir::cuvil::c

#endif // CUVIL_TARGET_C_CTARGET_H
