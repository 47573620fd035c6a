//===- fuzz_cuvil_dialect.cpp - libFuzzer target: cuvil dialect parser ---===//
//
// Parses a module with the cuvil dialect and the upstream dialects its IR
// uses, verifies it as cuvil-opt does, and prints what verified (the
// printer must accept every op the verifier accepts).
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  registry.insert<cuvil::CuvilDialect, arith::ArithDialect, func::FuncDialect,
                  tensor::TensorDialect>();
  // One thread: starting a thread pool for every input only slows it down.
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Diagnostics are the expected outcome of most inputs; keep them quiet.
  context.getDiagEngine().registerHandler([](Diagnostic &) {});
  // cuvil-opt reads its input into a MemoryBuffer, which ends with a NUL
  // that MLIR's lexer relies on; the fuzzer's bytes do not, so copy them.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.mlir"),
      llvm::SMLoc());
  // The parser runs the verifier on what it parsed (ParserConfig's default).
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return 0;
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  return 0;
}
