//===- LLVMCodegen.cpp - From the LLVM dialect to machine code ------------===//
//
// What the backends that generate code through LLVM share: translation to
// LLVM IR for a target machine, its optimization, object and assembly
// emission.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/LLVMCodegen.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::cuvil;

/// LLVM's IR pipeline level. The IR reaching LLVM is already tiled,
/// vectorized and unrolled by the CPU schedule; O3's extra IR passes blow
/// the long unrolled blocks up further and made the machine schedulers
/// quadratic on them (the example transformer block: 24 s of CPU to
/// compile at O3 against 0.9 s at O2, with no measurable gain in its run
/// time or the GEMMs'). Code generation itself stays at -O3.
static constexpr unsigned kIROptLevel = 2;

llvm::Error mlir::cuvil::optimizeLLVMIR(llvm::Module &module,
                                        llvm::TargetMachine &tm) {
  return makeOptimizingTransformer(kIROptLevel, 0, &tm)(&module);
}

llvm::Expected<std::unique_ptr<llvm::Module>>
mlir::cuvil::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                               llvm::TargetMachine &tm, bool optimize) {
  // MLIR reports why through diagnostics: keep the first one (its op and
  // location) for the message.
  std::string why;
  std::unique_ptr<llvm::Module> llvmModule;
  {
    ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
      if (why.empty() && d.getSeverity() == DiagnosticSeverity::Error) {
        llvm::raw_string_ostream os(why);
        os << d.getLocation() << ": " << d.str();
      }
      return success();
    });
    llvmModule = mlir::translateModuleToLLVMIR(module, context, "cuvil");
  }
  if (!llvmModule)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "translation to LLVM IR failed%s%s",
                                   why.empty() ? "" : ": ", why.c_str());
  llvmModule->setDataLayout(tm.createDataLayout());
  llvmModule->setTargetTriple(tm.getTargetTriple().str());
  if (optimize) {
    if (llvm::Error error = optimizeLLVMIR(*llvmModule, tm))
      return std::move(error);
  }
  return llvmModule;
}

llvm::Error mlir::cuvil::emitMachineCode(llvm::Module &module,
                                         llvm::TargetMachine &tm, bool assembly,
                                         std::string &out) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  auto fileType = assembly ? llvm::CodeGenFileType::AssemblyFile
                           : llvm::CodeGenFileType::ObjectFile;
  if (tm.addPassesToEmitFile(pm, os, nullptr, fileType))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the target cannot emit this file type");
  pm.run(module);
  out.assign(buffer.begin(), buffer.end());
  return llvm::Error::success();
}
