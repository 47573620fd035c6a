//===- LLVMCodegen.h - From the LLVM dialect to machine code ----*- C++ -*-===//
//
// Shared by the targets that generate code through LLVM (cpu, wasm).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGET_LLVMCODEGEN_H
#define CUVIL_TARGET_LLVMCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::cuvil {

/// Translates an LLVM-dialect module to LLVM IR for `tm` (its data layout
/// and triple), optimized (optimizeLLVMIR) when asked. With
/// `constantsAsBytes`, local constant arrays of numbers of 1 KiB or more
/// become arrays of their bytes (same contents, name and alignment): for
/// object code, which reaches them by address alone; LLVM IR and assembly
/// read better with the numbers.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                  llvm::TargetMachine &tm, bool optimize,
                  bool constantsAsBytes = false);

/// Runs LLVM's IR pipeline (O2) on `module` for `tm`.
llvm::Error optimizeLLVMIR(llvm::Module &module, llvm::TargetMachine &tm);

/// Emits `module` as assembly text or an object file into `out`. For an
/// object file, constant arrays of numbers are first rewritten as arrays of
/// their bytes (same contents, address and alignment), which the object
/// writer emits in one piece.
llvm::Error emitMachineCode(llvm::Module &module, llvm::TargetMachine &tm,
                            bool assembly, std::string &out);

} // namespace mlir::cuvil

#endif // CUVIL_TARGET_LLVMCODEGEN_H
