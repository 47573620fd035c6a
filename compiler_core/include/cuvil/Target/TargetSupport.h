//===- TargetSupport.h - What target backends share -------------*- C++ -*-===//
//
// Writing artifact files, and running the system's compiler and linker.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGET_TARGETSUPPORT_H
#define CUVIL_TARGET_TARGETSUPPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace mlir::cuvil {

/// Renames every function defined in `module` to `prefix`<name>`suffix`
/// (the symbols a target's code defines must not capture the C library's).
void renameFunctions(ModuleOp module, llvm::StringRef prefix,
                     llvm::StringRef suffix = "");

/// Writes `content` to `path`; failure with the reason in `error`.
LogicalResult writeFile(llvm::StringRef path, llvm::StringRef content,
                        std::string &error);

/// The bytes of the file at `path`; null with `error` naming it and why.
std::unique_ptr<llvm::MemoryBuffer> readFile(llvm::StringRef path,
                                             std::string &error);

/// The bytes `build` writes to a temporary file (named `prefix`-*.`suffix`,
/// removed afterwards): for tools that write only files (a linker, a C
/// compiler) when the code is loaded from memory. Null with `error` set.
std::unique_ptr<llvm::MemoryBuffer> buildInTemporaryFile(
    llvm::StringRef prefix, llvm::StringRef suffix,
    llvm::function_ref<LogicalResult(llvm::StringRef path, std::string &error)>
        build,
    std::string &error);

/// Writes `content` to a temporary file (named `prefix`-*.`suffix`), calls
/// `use` with its path and removes it: a tool's input (an object for the
/// linker, C for the compiler).
LogicalResult withTemporaryFile(
    llvm::StringRef content, llvm::StringRef prefix, llvm::StringRef suffix,
    llvm::function_ref<LogicalResult(llvm::StringRef path, std::string &error)>
        use,
    std::string &error);

/// `e` as a LogicalResult, its message in `error`.
LogicalResult takeError(llvm::Error e, std::string &error);

/// Runs `program` with `args` (args[0] is the program) to write `output`,
/// in an environment rebuilt from getenv (PATH, HOME, TMPDIR, the compiler
/// driver's variables); its messages become the error when it fails.
llvm::Error runTool(llvm::StringRef program,
                    llvm::ArrayRef<llvm::StringRef> args,
                    llvm::StringRef output);

/// The first of `names` on PATH, else in LLVM 19's folder, or "".
std::string findProgram(llvm::ArrayRef<llvm::StringRef> names);

/// The linkers of LLVM's LLD the targets use.
enum class LinkerFlavor {
  Elf,  // ld.lld: the CPU target's shared libraries
  Wasm, // wasm-ld: the wasm target's modules
};

/// Links `output` with LLD's `flavor` driver given `args` (the linker's
/// arguments, no program name): the first link of the process inside it,
/// later ones (LLD 19 is not safe to run twice in one process; see
/// Linker.cpp) and all with CUVIL_LINKER=external by the linker's program
/// (ld.lld-19, wasm-ld-19). Its messages become the error when it fails.
llvm::Error runLinker(LinkerFlavor flavor, llvm::ArrayRef<llvm::StringRef> args,
                      llvm::StringRef output);

} // namespace mlir::cuvil

#endif // CUVIL_TARGET_TARGETSUPPORT_H
