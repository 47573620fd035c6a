//===- SplitCodegen.cpp - Code generation on two threads ------------------===//
//
// Code generation is a third of a cold compile and runs function by
// function, but one LLVMContext serves one thread at a time. An optimized
// module large enough to pay is cut in two by its functions (the outlined
// parallel regions are most of the code): the second part is cloned with
// declarations of everything else, carried into a context of its own as
// bitcode (code only: the weights stay with the first part) and emitted on
// a second thread while this one emits the first. The parts are linked
// into one shared library. Symbols one part takes from the other are made
// hidden external ones: nothing new is exported from the library.
//
// The cut comes after LLVM's IR passes, so what they learn across
// functions (an outlined region's arguments through __kmpc_fork_call) is
// already in the code.
//
//===----------------------------------------------------------------------===//

#include "SplitCodegen.h"

#include "cuvil/Target/CPU/CpuBackend.h"
#include "cuvil/Target/LLVMCodegen.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <thread>

using namespace mlir;
using namespace mlir::cuvil;

/// Instructions from which a module is cut in two. Below it there is little
/// to share: a lone GEMM (about 350 instructions) compiled in 73 ms cut
/// against 76 uncut, within noise; the MLP example (1,000) 159 against 175.
static constexpr unsigned kSplitInstructions = 500;

/// The functions of the second part: the largest first, each to the part
/// with fewer instructions so far; empty when the module is small, when
/// one function is nearly all of it, or when a global needs its module's
/// special handling (appending arrays such as constructors, thread-local
/// data, comdats).
static llvm::SmallPtrSet<const llvm::GlobalValue *, 16>
secondPart(llvm::Module &module) {
  llvm::SmallPtrSet<const llvm::GlobalValue *, 16> second;
  for (llvm::GlobalVariable &global : module.globals())
    if (global.hasAppendingLinkage() || global.isThreadLocal() ||
        global.hasComdat())
      return second;
  llvm::SmallVector<std::pair<unsigned, llvm::Function *>> sizes;
  unsigned total = 0;
  for (llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    if (f.hasComdat())
      return second;
    sizes.push_back({f.getInstructionCount(), &f});
    total += sizes.back().first;
  }
  if (total < kSplitInstructions)
    return second;
  llvm::stable_sort(sizes, [](auto &a, auto &b) { return a.first > b.first; });
  unsigned firstSize = 0, secondSize = 0;
  for (auto [size, f] : sizes) {
    if (secondSize < firstSize) {
      second.insert(f);
      secondSize += size;
    } else {
      firstSize += size;
    }
  }
  // Under a fifth of the work on the second thread does not pay.
  if (secondSize * 5 < total)
    second.clear();
  return second;
}

/// Gives every local symbol a name and hidden external linkage, so that the
/// other part can refer to it; it stays invisible outside the library.
static void externalizeLocals(llvm::Module &module) {
  unsigned unnamed = 0;
  auto externalize = [&](llvm::GlobalValue &value) {
    if (value.isDeclaration() || !value.hasLocalLinkage())
      return;
    if (!value.hasName())
      value.setName("cuvil.local." + llvm::Twine(unnamed++));
    value.setLinkage(llvm::GlobalValue::ExternalLinkage);
    value.setVisibility(llvm::GlobalValue::HiddenVisibility);
    value.setDSOLocal(true);
  };
  for (llvm::Function &f : module)
    externalize(f);
  for (llvm::GlobalVariable &global : module.globals())
    externalize(global);
  for (llvm::GlobalAlias &alias : module.aliases())
    externalize(alias);
}

/// Parses `bitcode` into a context of its own and emits it as an object.
static llvm::Error emitBitcode(llvm::StringRef bitcode, std::string &object) {
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode, "cuvil-codegen-part"), context);
  if (!module)
    return module.takeError();
  auto tm = cpu::createHostTargetMachine(/*positionIndependent=*/true);
  if (!tm)
    return tm.takeError();
  return emitMachineCode(**module, **tm, /*assembly=*/false, object);
}

llvm::Error cpu::emitObjects(llvm::Module &module, llvm::TargetMachine &tm,
                             std::vector<std::string> &objects) {
  objects.clear();
  llvm::SmallPtrSet<const llvm::GlobalValue *, 16> second = secondPart(module);
  if (second.empty()) {
    objects.emplace_back();
    return emitMachineCode(module, tm, /*assembly=*/false, objects.back());
  }
  externalizeLocals(module);
  std::string bitcode;
  {
    llvm::ValueToValueMapTy map;
    std::unique_ptr<llvm::Module> part =
        llvm::CloneModule(module, map, [&](const llvm::GlobalValue *value) {
          return second.contains(value);
        });
    llvm::raw_string_ostream os(bitcode);
    llvm::WriteBitcodeToFile(*part, os);
  }
  for (llvm::Function &f : module)
    if (second.contains(&f))
      f.deleteBody();
  objects.resize(2);
  llvm::Error secondError = llvm::Error::success();
  std::thread worker([&] {
    llvm::ErrorAsOutParameter guard(&secondError);
    secondError = emitBitcode(bitcode, objects[1]);
  });
  llvm::Error firstError =
      emitMachineCode(module, tm, /*assembly=*/false, objects[0]);
  worker.join();
  if (firstError) {
    llvm::consumeError(std::move(secondError));
    return firstError;
  }
  return secondError;
}
