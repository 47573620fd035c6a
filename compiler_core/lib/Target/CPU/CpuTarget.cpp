//===- CpuTarget.cpp - The host CPU as a target backend -------------------===//
//
// The CPU's phases (GEMM schedule, bufferization, LLVM lowering), its cache
// of shared libraries and their loading. Code is always built as a shared
// library and opened privately, whether it goes to the cache or only to a
// temporary file: one compilation per function, the same machine code on
// the first call and from the cache, and no LLVM symbols in the process's
// global scope.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CPU/CpuTarget.h"

#include "cuvil/Pipelines/Pipelines.h"
#include "cuvil/Runtime/SharedLibrary.h"
#include "cuvil/Target/CPU/CpuBackend.h"
#include "cuvil/Target/CPU/CpuTransformOps.h"
#include "cuvil/Target/CPU/Passes.h"
#include "cuvil/Target/TargetSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::cuvil;
using ::cuvil::ArtifactKind;
using ::cuvil::IRStage;

namespace {

class CpuTarget : public TargetBackend {
public:
  StringRef name() const override { return "cpu"; }
  StringRef description() const override {
    return "the host CPU through LLVM: shared libraries loaded in process, "
           "objects";
  }

  void registerDialects(DialectRegistry &registry) const override {
    cpu::initializeTargets(registry);
    registerCpuTransformOps(registry);
  }
  void registerPasses() const override { registerCpuCodegenPasses(); }

  void buildPhases(const TargetOptions &options,
                   PipelineBuilder &p) const override;

  std::string cacheKeyMaterial(const TargetOptions &options) const override {
    return cpu::hostDescription() +
           (options.parallel ? "|parallel" : "|serial");
  }

  void prepareForLowering(ModuleOp module) const override {
    renameFunctions(module, "cuvil_");
  }

  FailureOr<std::unique_ptr<::cuvil::Executable>>
  load(ModuleOp lowered, const LoadRequest &request,
       std::string &error) const override;

  std::string cacheExtension() const override { return ".so"; }
  LogicalResult storeInCache(ModuleOp lowered, const LoadRequest &request,
                             StringRef path,
                             std::string &error) const override {
    return takeError(
        cpu::emitSharedLibrary(lowered, compiledSymbol(request), path), error);
  }
  FailureOr<std::unique_ptr<::cuvil::Executable>>
  loadFromCache(StringRef path, const LoadRequest &request,
                std::string &error) const override;

  std::vector<IRStage> irStages() const override {
    return {IRStage::Lowered, IRStage::LLVMIR, IRStage::Assembly};
  }
  LogicalResult printStage(ModuleOp lowered, IRStage stage,
                           const LoadRequest &request, std::string &out,
                           std::string &error) const override;

  std::vector<ArtifactKind> artifacts() const override {
    return {ArtifactKind::LLVMIR, ArtifactKind::Assembly, ArtifactKind::Object,
            ArtifactKind::SharedLibrary};
  }
  LogicalResult emit(ModuleOp lowered, ArtifactKind kind,
                     const LoadRequest &request, StringRef path,
                     std::string &error) const override;
};

void CpuTarget::buildPhases(const TargetOptions &o, PipelineBuilder &p) const {
  using Need = PipelineBuilder::Need;
  addCpuSchedule(p, o.vectorLanes > 0 ? o.vectorLanes : hostVectorLanes(),
                 o.enableFusion, /*registerRows=*/0,
                 /*unaliasRows=*/!o.parallel);
  p.addBufferization();
  p.add(Phase::Bufferize, "cuvil-plan-memory", "", "func.func", Need::Optional);
  p.add(Phase::Bufferize, "convert-linalg-to-loops");
  p.add(Phase::Bufferize, "cuvil-serial-foralls", "", "func.func");
  p.add(Phase::Bufferize, "scf-forall-to-parallel");
  p.add(Phase::Bufferize, "canonicalize");
  p.add(Phase::Bufferize, "cuvil-cpu-stack-buffers",
        o.parallel ? "" : "threads=0", "func.func");
  // Its stack buffers are per thread: convert-scf-to-openmp puts them at
  // the start of each thread's region (the parallel loops are final here).
  if (o.parallel)
    p.add(Phase::Bufferize, "cuvil-cpu-pack-gemm-panels", "", "",
          Need::Optional);
  p.add(Phase::Bufferize, "cuvil-instrument-kernels", "", "func.func",
        Need::Optional);
  // Last, so its checks are not kernels of their own (a profile times them
  // with the copy they guard).
  p.add(Phase::Bufferize, "cuvil-check-result-sizes");

  p.add(Phase::Lower, "cuvil-gathers-as-loads", "", "func.func");
  // A remainder tile's FMAs in several partial sums: as many accumulator
  // registers as the schedule's full tile (its rows by two vectors).
  int lanes = o.vectorLanes > 0 ? o.vectorLanes : hostVectorLanes();
  p.add(Phase::Lower, "cuvil-cpu-split-accumulators",
        "registers=" + std::to_string(2 * registerRowsFor(lanes)) +
            " vector-bits=" + std::to_string(lanes * 32),
        "func.func");
  p.add(Phase::Lower, "cuvil-lower-strided-gathers", "", "func.func");
  p.add(Phase::Lower, "cuvil-expand-strided-copies",
        o.parallel ? "" : "threads=0", "func.func");
  p.add(Phase::Lower, "cuvil-approximate-math", "", "func.func",
        Need::Optional);
  p.add(Phase::Lower, "cuvil-expand-bf16-conversions", "", "func.func");
  p.add(Phase::Lower, "convert-vector-to-scf", "full-unroll=1");
  if (o.parallel) {
    p.add(Phase::Lower, "convert-scf-to-openmp");
    p.add(Phase::Lower, "canonicalize");
    p.add(Phase::Lower, "cuvil-serial-single-task", "", "func.func");
  }
  for (StringRef pass :
       {"convert-math-to-funcs", "convert-math-to-llvm", "convert-math-to-libm",
        "convert-scf-to-cf", "expand-strided-metadata", "lower-affine",
        "convert-vector-to-llvm"})
    p.add(Phase::Lower, pass);
  // Allocations call _mlir_memref_to_llvm_alloc, which the backend defines
  // to check for failure (cpu::defineAllocationFunctions).
  p.add(Phase::Lower, "finalize-memref-to-llvm", "use-generic-functions=1");
  for (StringRef pass :
       {"convert-arith-to-llvm", "convert-index-to-llvm",
        "convert-func-to-llvm", "convert-cf-to-llvm", "convert-openmp-to-llvm",
        "reconcile-unrealized-casts"})
    p.add(Phase::Lower, pass);
}

FailureOr<std::unique_ptr<::cuvil::Executable>>
CpuTarget::load(ModuleOp lowered, const LoadRequest &request,
                std::string &error) const {
  // No cache entry wanted: link the library in a temporary file (the linker
  // needs one), take its bytes and remove it, then load it from memory.
  // Loading the temporary file itself went wrong once its name was reused
  // by a later compilation while the first library was still loaded: the
  // loader returned the old library for the new path.
  std::unique_ptr<llvm::MemoryBuffer> bytes = buildInTemporaryFile(
      "cuvil", "so",
      [&](StringRef path, std::string &message) {
        return storeInCache(lowered, request, path, message);
      },
      error);
  if (!bytes)
    return failure();
  std::unique_ptr<::cuvil::Executable> executable =
      ::cuvil::LibraryExecutable::loadFromMemory(
          bytes->getBuffer(), compiledSymbol(request), compiledSymbol(request),
          ::cuvil::codeRuntimeLibraries(), request.inputs, request.outputs,
          request.instrumented, error);
  if (!executable)
    return failure();
  return executable;
}

FailureOr<std::unique_ptr<::cuvil::Executable>>
CpuTarget::loadFromCache(StringRef path, const LoadRequest &request,
                         std::string &error) const {
  std::unique_ptr<::cuvil::Executable> executable =
      ::cuvil::LibraryExecutable::load(
          path.str(), compiledSymbol(request), ::cuvil::codeRuntimeLibraries(),
          request.inputs, request.outputs, request.instrumented, error);
  if (!executable)
    return failure();
  return executable;
}

LogicalResult CpuTarget::printStage(ModuleOp lowered, IRStage stage,
                                    const LoadRequest &request,
                                    std::string &out,
                                    std::string &error) const {
  if (stage != IRStage::LLVMIR && stage != IRStage::Assembly)
    return TargetBackend::printStage(lowered, stage, request, out, error);
  auto kind = stage == IRStage::LLVMIR ? cpu::Artifact::LLVMIR
                                       : cpu::Artifact::Assembly;
  return takeError(cpu::emitArtifact(lowered, kind, out), error);
}

LogicalResult CpuTarget::emit(ModuleOp lowered, ArtifactKind kind,
                              const LoadRequest &request, StringRef path,
                              std::string &error) const {
  std::string content;
  switch (kind) {
  case ArtifactKind::SharedLibrary:
    return takeError(
        cpu::emitSharedLibrary(lowered, compiledSymbol(request), path), error);
  case ArtifactKind::Object:
    if (failed(takeError(
            cpu::emitArtifact(lowered, cpu::Artifact::Object, content), error)))
      return failure();
    return writeFile(path, content, error);
  case ArtifactKind::LLVMIR:
    return emitStage(lowered, IRStage::LLVMIR, request, path, error);
  case ArtifactKind::Assembly:
    return emitStage(lowered, IRStage::Assembly, request, path, error);
  default:
    return TargetBackend::emit(lowered, kind, request, path, error);
  }
}

} // namespace

std::unique_ptr<TargetBackend> cpu::createCpuTarget() {
  return std::make_unique<CpuTarget>();
}
