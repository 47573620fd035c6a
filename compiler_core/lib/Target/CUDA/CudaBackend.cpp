//===- CudaBackend.cpp - PTX, SASS, fat binaries and host code ------------===//
//
// The kernels' gpu.module is serialized to PTX by MLIR's NVVM target (LLVM's
// NVPTX backend, in process, libdevice linked for math functions); ptxas
// assembles the PTX into SASS for kChip and fatbinary packs SASS and PTX
// together, so a newer driver can JIT the PTX for a newer GPU. The host
// code, with the fat binary embedded as a constant (gpu.binary), is then
// built like CPU code into a shared library; each runtime function it
// declares is defined there as a call through a slot the loader fills.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include "cuvil/Runtime/CudaRuntimeAbi.h"
#include "cuvil/Target/CPU/CpuBackend.h"
#include "cuvil/Target/TargetSupport.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <mutex>

#ifndef CUVIL_CUDA_HOME
#define CUVIL_CUDA_HOME "/usr/local/cuda"
#endif

using namespace mlir;
using namespace mlir::cuvil;

std::string cuda::toolkitHome() {
  const char *home = std::getenv("CUDA_HOME");
  return home && *home ? home : CUVIL_CUDA_HOME;
}

std::string cuda::libdevicePath() {
  std::string path = toolkitHome() + "/nvvm/libdevice/libdevice.10.bc";
  return llvm::sys::fs::exists(path) ? path : "";
}

std::string cuda::toolkitDescription() {
  // Part of every cuda compilation's cache key: the toolkit's version file
  // (it changes with every release) is read once per toolkit folder.
  static std::mutex mutex;
  static llvm::StringMap<std::string> described;
  std::string home = toolkitHome();
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, added] = described.try_emplace(home);
  if (added) {
    it->second = kChip.str() + "|fatbin(sass+ptx)|" + home;
    if (auto version = llvm::MemoryBuffer::getFile(home + "/version.json"))
      it->second +=
          "|" + std::to_string(llvm::hash_value((*version)->getBuffer()));
  }
  return it->second;
}

namespace {

/// Runs `pipeline` on `module`; MLIR's messages become `error`.
LogicalResult runPipeline(ModuleOp module, StringRef pipeline,
                          std::string &error) {
  std::string messages;
  llvm::raw_string_ostream os(messages);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    os << (messages.empty() ? "" : "; ") << d.str();
    return success();
  });
  PassManager pm(module.getContext());
  if (failed(parsePassPipeline(pipeline, pm, os))) {
    error = "cannot parse " + pipeline.str() + ": " + messages;
    return failure();
  }
  if (failed(pm.run(module))) {
    error = messages.empty() ? "pass pipeline " + pipeline.str() + " failed"
                             : messages;
    return failure();
  }
  return success();
}

/// A copy of `lowered` whose kernels are PTX objects of gpu.binary ops.
FailureOr<OwningOpRef<ModuleOp>> withPTX(ModuleOp lowered, std::string &error) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(lowered->clone()));
  if (failed(runPipeline(*copy, "gpu-module-to-binary{format=isa}", error))) {
    error = "generating PTX for the kernels failed: " + error;
    return failure();
  }
  return copy;
}

/// The PTX of a serialized object, without the NUL the serializer ends it
/// with for the driver (ptxas reads it as text and stops there).
StringRef ptxText(gpu::ObjectAttr object) {
  return object.getObject().getValue().rtrim(StringRef("\0", 1));
}

/// A program of the CUDA toolkit, or "" with `error` saying how to get it.
std::string findTool(StringRef name, std::string &error) {
  std::string bin = cuda::toolkitHome() + "/bin";
  if (auto path = llvm::sys::findProgramByName(name, {bin}))
    return *path;
  error = "the cuda target runs " + name.str() +
          " from the CUDA toolkit and there is none in " + bin +
          "; fix: install the CUDA toolkit (12.0 or newer) and set CUDA_HOME "
          "to its folder";
  return "";
}

/// "90" of "sm_90".
std::string chipNumber() { return cuda::kChip.drop_front(3).str(); }

/// ptxas on `ptxPath` writes SASS to `cubinPath`.
LogicalResult runPtxas(StringRef ptxPath, StringRef cubinPath,
                       std::string &error) {
  std::string ptxas = findTool("ptxas", error);
  if (ptxas.empty())
    return failure();
  std::string arch = "-arch=" + cuda::kChip.str();
  SmallVector<StringRef> args = {ptxas, arch, "-O3", ptxPath, "-o", cubinPath};
  if (failed(takeError(runTool(ptxas, args, cubinPath), error))) {
    error = "ptxas could not assemble the kernels: " + error;
    return failure();
  }
  return success();
}

/// fatbinary packs the SASS at `cubinPath` and the PTX at `ptxPath`.
LogicalResult runFatbinary(StringRef ptxPath, StringRef cubinPath,
                           StringRef fatbinPath, std::string &error) {
  std::string fatbinary = findTool("fatbinary", error);
  if (fatbinary.empty())
    return failure();
  std::string create = "--create=" + fatbinPath.str();
  std::string sass =
      "--image3=kind=elf,sm=" + chipNumber() + ",file=" + cubinPath.str();
  std::string ptx =
      "--image3=kind=ptx,sm=" + chipNumber() + ",file=" + ptxPath.str();
  SmallVector<StringRef> args = {fatbinary, "-64", create, sass, ptx};
  if (failed(takeError(runTool(fatbinary, args, fatbinPath), error))) {
    error = "fatbinary could not pack the kernels: " + error;
    return failure();
  }
  return success();
}

/// Defines each runtime function the host code declares as a call through
/// its slot (CudaRuntimeAbi.h); an unfilled slot (the library loaded by
/// something else than Cuvil's runtime) stops the program.
void defineRuntimeCalls(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::FunctionCallee abort = module.getOrInsertFunction(
      "abort", llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {}));
  for (llvm::Function &fn : module) {
    if (!fn.isDeclaration() || !::cuvil::cuda::isRuntimeFunction(fn.getName()))
      continue;
    llvm::GlobalVariable *slot = cpu::runtimeSlot(module, fn.getName());
    cpu::defineThroughSlot(fn, slot, [&](llvm::IRBuilder<> &b) {
      b.CreateCall(abort);
      b.CreateUnreachable();
    });
  }
}

/// A copy of `lowered` with every kernel module a fat binary, ready for the
/// host code's translation.
FailureOr<OwningOpRef<ModuleOp>> withFatbin(ModuleOp lowered,
                                            std::string &error) {
  auto copy = withPTX(lowered, error);
  if (failed(copy))
    return failure();
  MLIRContext *ctx = lowered.getContext();
  WalkResult walk = (*copy)->walk([&](gpu::BinaryOp binary) {
    SmallVector<Attribute> objects;
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      std::string bytes;
      if (failed(
              cuda::assemble(ptxText(object), /*fatbin=*/true, bytes, error)))
        return WalkResult::interrupt();
      objects.push_back(gpu::ObjectAttr::get(
          ctx, object.getTarget(), gpu::CompilationTarget::Fatbin,
          StringAttr::get(ctx, bytes), object.getProperties()));
    }
    binary.setObjectsAttr(ArrayAttr::get(ctx, objects));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return std::move(*copy);
}

} // namespace

LogicalResult cuda::emitPTX(ModuleOp lowered, std::string &ptx,
                            std::string &error) {
  auto copy = withPTX(lowered, error);
  if (failed(copy))
    return failure();
  ptx.clear();
  (**copy)->walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects())
      ptx += ptxText(cast<gpu::ObjectAttr>(attr));
  });
  if (ptx.empty()) {
    error = "the function has no GPU kernels";
    return failure();
  }
  return success();
}

LogicalResult cuda::assemble(StringRef ptx, bool fatbin, std::string &bytes,
                             std::string &error) {
  auto build = [&](StringRef outPath, std::string &message) {
    return withTemporaryFile(
        ptx, "cuvil-cuda", "ptx",
        [&](StringRef ptxPath, std::string &m) -> LogicalResult {
          if (!fatbin)
            return runPtxas(ptxPath, outPath, m);
          std::unique_ptr<llvm::MemoryBuffer> cubin = buildInTemporaryFile(
              "cuvil-cuda", "cubin",
              [&](StringRef cubinPath, std::string &m2) {
                return runPtxas(ptxPath, cubinPath, m2);
              },
              m);
          if (!cubin)
            return failure();
          return withTemporaryFile(
              cubin->getBuffer(), "cuvil-cuda", "cubin",
              [&](StringRef cubinPath, std::string &m2) {
                return runFatbinary(ptxPath, cubinPath, outPath, m2);
              },
              m);
        },
        message);
  };
  std::unique_ptr<llvm::MemoryBuffer> out = buildInTemporaryFile(
      "cuvil-cuda", fatbin ? "fatbin" : "cubin", build, error);
  if (!out)
    return failure();
  bytes = out->getBuffer().str();
  return success();
}

LogicalResult cuda::emitHostLibrary(ModuleOp lowered,
                                    const LoadRequest &request, StringRef path,
                                    std::string &error) {
  auto host = withFatbin(lowered, error);
  if (failed(host))
    return failure();
  return takeError(cpu::emitSharedLibrary(**host, compiledSymbol(request), path,
                                          defineRuntimeCalls),
                   error);
}

LogicalResult cuda::printHostLLVMIR(ModuleOp lowered, std::string &out,
                                    std::string &error) {
  auto host = withFatbin(lowered, error);
  if (failed(host))
    return failure();
  return takeError(cpu::emitArtifact(**host, cpu::Artifact::LLVMIR, out, "",
                                     defineRuntimeCalls),
                   error);
}
