//===- TargetSupport.h - What target backends share -------------*- C++ -*-===//
//
// Writing artifact files, and running the system's compiler and linker.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGET_TARGETSUPPORT_H
#define CUVIL_TARGET_TARGETSUPPORT_H

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::cuvil {

/// Writes `content` to `path`; failure with the reason in `error`.
LogicalResult writeFile(llvm::StringRef path, llvm::StringRef content,
                        std::string &error);

/// `e` as a LogicalResult, its message in `error`.
LogicalResult takeError(llvm::Error e, std::string &error);

/// Runs `program` with `args` (args[0] is the program) to write `output`,
/// in an environment rebuilt from getenv (PATH, HOME, TMPDIR, the compiler
/// driver's variables); its messages become the error when it fails.
llvm::Error runTool(llvm::StringRef program,
                    llvm::ArrayRef<llvm::StringRef> args,
                    llvm::StringRef output);

} // namespace mlir::cuvil

#endif // CUVIL_TARGET_TARGETSUPPORT_H
