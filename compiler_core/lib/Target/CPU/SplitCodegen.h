//===- SplitCodegen.h - Code generation on two threads ----------*- C++ -*-===//
//
// How the CPU target emits a large module's objects on two threads (see
// SplitCodegen.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_TARGET_CPU_SPLITCODEGEN_H
#define CUVIL_TARGET_CPU_SPLITCODEGEN_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::cuvil::cpu {

/// Emits the optimized `module` as one object, or, when it is large enough,
/// as two emitted on two threads (its functions shared between them; the
/// local symbols of `module` become hidden external ones). Link every
/// object of `objects` together.
llvm::Error emitObjects(llvm::Module &module, llvm::TargetMachine &tm,
                        std::vector<std::string> &objects);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGET_CPU_SPLITCODEGEN_H
