//===- WasmBackend.cpp - wasm32 code generation, linking and text ---------===//
//
// The lowered module is translated to LLVM IR, optimized and compiled for
// wasm32 with 128-bit SIMD in process, then linked by wasm-ld into a module
// that imports nothing: no entry point, the function and the linear memory
// exported, the stack first (an overflow traps instead of overwriting the
// arena), and math the polynomials do not cover (f64, fmod) taken from
// wasi-libc's libm, which needs no host.
//
//===----------------------------------------------------------------------===//

#include "WasmBackend.h"

#include "cuvil/Target/LLVMCodegen.h"
#include "cuvil/Target/TargetSupport.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

extern "C" {
void LLVMInitializeWebAssemblyTargetInfo();
void LLVMInitializeWebAssemblyTarget();
void LLVMInitializeWebAssemblyTargetMC();
void LLVMInitializeWebAssemblyAsmPrinter();
}

using namespace mlir;
using namespace mlir::cuvil;

namespace {

constexpr llvm::StringLiteral kTriple = "wasm32-unknown-unknown";
/// Features every current engine has (Node 16+, Chrome 91+, Firefox 89+,
/// Safari 16.4+): SIMD, bulk memory (memcpy as memory.copy), saturating
/// float-to-int conversion, sign extension.
constexpr llvm::StringLiteral kFeatures =
    "+simd128,+bulk-memory,+nontrapping-fptoint,+sign-ext,+mutable-globals";
/// Stack for the generated code's small temporaries (vector spills).
constexpr llvm::StringLiteral kStackBytes = "1048576";
/// Where Debian's wasi-libc keeps its static libraries.
constexpr llvm::StringLiteral kWasiLibc = "/usr/lib/wasm32-wasi/libc.a";

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine() {
  static bool initialized = [] {
    LLVMInitializeWebAssemblyTargetInfo();
    LLVMInitializeWebAssemblyTarget();
    LLVMInitializeWebAssemblyTargetMC();
    LLVMInitializeWebAssemblyAsmPrinter();
    return true;
  }();
  (void)initialized;
  std::string message;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(kTriple.str(), message);
  if (!target)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "LLVM has no wasm32 target here (%s); the wasm target needs an LLVM "
        "19 built with WebAssembly, as Debian's is",
        message.c_str());
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      kTriple, "generic", kFeatures, options, llvm::Reloc::Static, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot create a wasm32 target machine");
  return machine;
}

/// Optimized LLVM IR of `lowered` for the wasm32 machine `tm`.
llvm::Expected<std::unique_ptr<llvm::Module>>
optimizedModule(ModuleOp lowered, llvm::LLVMContext &context,
                llvm::TargetMachine &tm) {
  return translateToLLVMIR(lowered, context, tm, /*optimize=*/true);
}

/// Links `object` into a module at `path` exporting `symbol`.
LogicalResult link(llvm::StringRef object, llvm::StringRef symbol,
                   llvm::StringRef path, std::string &error) {
  std::string exported = ("--export=" + symbol).str();
  std::string stack = ("stack-size=" + kStackBytes).str();
  SmallVector<StringRef> args = {"--no-entry",  "--stack-first",
                                 "-z",          stack,
                                 exported,      "--export=__heap_base",
                                 "-O2",         "--strip-all",
                                 "--threads=1", "-o",
                                 path,          object};
  // Pulled in only for calls the module makes (libm's expf for f64, fmodf):
  // wasm-ld takes an archive's members on demand.
  bool libc = llvm::sys::fs::exists(kWasiLibc);
  if (libc)
    args.push_back(kWasiLibc);
  if (llvm::Error e = runLinker(LinkerFlavor::Wasm, args, path)) {
    error =
        "wasm-ld could not link the module: " + llvm::toString(std::move(e));
    if (!libc && llvm::StringRef(error).contains("undefined symbol"))
      error += "; fix: install Debian's wasi-libc, from which the wasm target "
               "links the math functions it has no polynomial for";
    return failure();
  }
  return success();
}

} // namespace

std::string wasm::exportOf(const LoadRequest &request) {
  return compiledSymbol(request);
}

LogicalResult wasm::printLLVMIR(ModuleOp lowered, std::string &out,
                                std::string &error) {
  auto tm = createTargetMachine();
  if (!tm)
    return takeError(tm.takeError(), error);
  llvm::LLVMContext context;
  auto module = optimizedModule(lowered, context, **tm);
  if (!module)
    return takeError(module.takeError(), error);
  out.clear();
  llvm::raw_string_ostream os(out);
  (*module)->print(os, nullptr);
  return success();
}

LogicalResult wasm::buildModule(ModuleOp lowered, const LoadRequest &request,
                                std::string &bytes, std::string &error) {
  auto tm = createTargetMachine();
  if (!tm)
    return takeError(tm.takeError(), error);
  std::string object;
  {
    llvm::LLVMContext context;
    auto module = optimizedModule(lowered, context, **tm);
    if (!module)
      return takeError(module.takeError(), error);
    if (failed(takeError(
            emitMachineCode(**module, **tm, /*assembly=*/false, object),
            error)))
      return failure();
  }
  std::unique_ptr<llvm::MemoryBuffer> linked = buildInTemporaryFile(
      "cuvil-wasm", "wasm",
      [&](StringRef path, std::string &message) {
        return withTemporaryFile(
            object, "cuvil-wasm", "o",
            [&](StringRef objectPath, std::string &m) {
              return link(objectPath, exportOf(request), path, m);
            },
            message);
      },
      error);
  if (!linked)
    return failure();
  bytes = linked->getBuffer().str();
  return success();
}

LogicalResult wasm::printText(StringRef bytes, std::string &out,
                              std::string &error) {
  std::string tool = findProgram({"wasm2wat"});
  if (tool.empty()) {
    error = "the WebAssembly text comes from wasm2wat and there is none on "
            "PATH; fix: install Debian's wabt";
    return failure();
  }
  std::unique_ptr<llvm::MemoryBuffer> text = buildInTemporaryFile(
      "cuvil-wasm", "wat",
      [&](StringRef textPath, std::string &message) {
        return withTemporaryFile(
            bytes, "cuvil-wasm", "wasm",
            [&](StringRef modulePath, std::string &m) {
              SmallVector<StringRef> args = {tool, "--enable-all", modulePath,
                                             "-o", textPath};
              return takeError(runTool(tool, args, textPath), m);
            },
            message);
      },
      error);
  if (!text)
    return failure();
  out = text->getBuffer().str();
  return success();
}
