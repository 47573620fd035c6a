//===- WasmTarget.cpp - WebAssembly as a target backend -------------------===//
//
// The wasm target's phases: the CPU's GEMM schedule at simd128's width (4
// f32 lanes), bufferization and memory planning as on the CPU, then every
// buffer in static storage (the planned arena one global), thread-level
// loops serial, polynomial math, and one conversion to the LLVM dialect with
// a 32-bit index and bare-pointer arguments. The lowered module becomes a
// linked .wasm (WasmBackend.cpp), with an ES module to load it (JsModule.cpp);
// calls from the process run it in Node (NodeExecutable.cpp).
//
// The module's ABI: one export `cuvil_<name>(in0, ..., out0, ...)` taking
// the linear-memory address (i32) of each C-contiguous buffer; `memory`
// and `__heap_base` (the first free byte) exported; no imports.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/Wasm/WasmTarget.h"

#include "WasmBackend.h"

#include "cuvil/Pipelines/Pipelines.h"
#include "cuvil/Target/CPU/CpuTransformOps.h"
#include "cuvil/Target/CPU/Passes.h"
#include "cuvil/Target/TargetSupport.h"
#include "cuvil/Target/Wasm/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::cuvil;
using ::cuvil::ArtifactKind;
using ::cuvil::IRStage;

namespace {

class WasmTarget : public TargetBackend {
public:
  StringRef name() const override { return "wasm"; }
  StringRef description() const override {
    return "WebAssembly (wasm32, 128-bit SIMD) through LLVM: a .wasm that "
           "imports nothing and an ES module for Node and browsers";
  }

  void registerDialects(DialectRegistry &registry) const override {
    registerAllToLLVMIRTranslations(registry);
    // The CPU's schedule, which this target runs at its own vector width.
    registerCpuTransformOps(registry);
  }
  void registerPasses() const override {
    registerCpuCodegenPasses();
    registerCuvilWasmPasses();
  }

  void buildPhases(const TargetOptions &options,
                   PipelineBuilder &p) const override;

  std::string cacheKeyMaterial(const TargetOptions &) const override {
    return "wasm32|simd128|bulk-memory|wasi-libc";
  }

  void prepareForLowering(ModuleOp module) const override {
    renameFunctions(module, "cuvil_");
  }

  FailureOr<std::unique_ptr<::cuvil::Executable>>
  load(ModuleOp lowered, const LoadRequest &request,
       std::string &error) const override {
    std::string bytes;
    if (failed(wasm::buildModule(lowered, request, bytes, error)))
      return failure();
    return fromBytes(bytes, request, error);
  }

  std::string cacheExtension() const override { return ".wasm"; }
  LogicalResult storeInCache(ModuleOp lowered, const LoadRequest &request,
                             StringRef path,
                             std::string &error) const override {
    std::string bytes;
    if (failed(wasm::buildModule(lowered, request, bytes, error)))
      return failure();
    return writeFile(path, bytes, error);
  }
  FailureOr<std::unique_ptr<::cuvil::Executable>>
  loadFromCache(StringRef path, const LoadRequest &request,
                std::string &error) const override {
    std::unique_ptr<llvm::MemoryBuffer> bytes = readFile(path, error);
    if (!bytes)
      return failure();
    return fromBytes(bytes->getBuffer(), request, error);
  }

  std::vector<IRStage> irStages() const override {
    return {IRStage::Lowered, IRStage::LLVMIR, IRStage::Wat};
  }
  LogicalResult printStage(ModuleOp lowered, IRStage stage,
                           const LoadRequest &request, std::string &out,
                           std::string &error) const override {
    if (stage == IRStage::LLVMIR)
      return wasm::printLLVMIR(lowered, out, error);
    if (stage != IRStage::Wat)
      return TargetBackend::printStage(lowered, stage, request, out, error);
    std::string bytes;
    if (failed(wasm::buildModule(lowered, request, bytes, error)))
      return failure();
    return wasm::printText(bytes, out, error);
  }

  std::vector<ArtifactKind> artifacts() const override {
    return {ArtifactKind::Wasm, ArtifactKind::JSModule, ArtifactKind::Wat,
            ArtifactKind::LLVMIR};
  }
  LogicalResult emit(ModuleOp lowered, ArtifactKind kind,
                     const LoadRequest &request, StringRef path,
                     std::string &error) const override;

private:
  static FailureOr<std::unique_ptr<::cuvil::Executable>>
  fromBytes(StringRef bytes, const LoadRequest &request, std::string &error) {
    std::unique_ptr<::cuvil::Executable> executable =
        wasm::loadInNode(bytes, request, error);
    if (!executable)
      return failure();
    return executable;
  }
};

void WasmTarget::buildPhases(const TargetOptions &o, PipelineBuilder &p) const {
  using Need = PipelineBuilder::Need;
  addCpuSchedule(p, o.vectorLanes > 0 ? o.vectorLanes : wasm::kVectorLanes,
                 o.enableFusion, wasm::kRegisterRows);
  p.addBufferization();
  p.add(Phase::Bufferize, "cuvil-plan-memory", "", "func.func", Need::Optional);
  p.add(Phase::Bufferize, "convert-linalg-to-loops");
  // No threads: every thread-level loop runs in order.
  p.add(Phase::Bufferize, "scf-forall-to-for");
  p.add(Phase::Bufferize, "canonicalize");

  p.add(Phase::Lower, "cuvil-static-buffers", "target=wasm bounded-views=1");
  p.add(Phase::Lower, "cuvil-gathers-as-loads", "", "func.func");
  p.add(Phase::Lower, "cuvil-lower-strided-gathers", "", "func.func");
  p.add(Phase::Lower, "cuvil-approximate-math", "", "func.func",
        Need::Optional);
  p.add(Phase::Lower, "convert-vector-to-scf", "full-unroll=1");
  // Math LLVM has no intrinsic for (tanh, erf in f64) calls libm: wasm-ld
  // links it from wasi-libc.
  for (StringRef pass :
       {"convert-math-to-funcs", "convert-math-to-llvm", "convert-math-to-libm",
        "convert-scf-to-cf", "expand-strided-metadata", "lower-affine"})
    p.add(Phase::Lower, pass);
  p.add(Phase::Lower, "cuvil-wasm-to-llvm");
  p.add(Phase::Lower, "reconcile-unrealized-casts");
}

LogicalResult WasmTarget::emit(ModuleOp lowered, ArtifactKind kind,
                               const LoadRequest &request, StringRef path,
                               std::string &error) const {
  std::string content;
  switch (kind) {
  case ArtifactKind::JSModule: {
    // Named after the .wasm the export writes next to it.
    return writeFile(path, wasm::jsModule(request, request.symbol + ".wasm"),
                     error);
  }
  case ArtifactKind::Wasm:
    if (failed(wasm::buildModule(lowered, request, content, error)))
      return failure();
    return writeFile(path, content, error);
  case ArtifactKind::Wat:
    return emitStage(lowered, IRStage::Wat, request, path, error);
  case ArtifactKind::LLVMIR:
    return emitStage(lowered, IRStage::LLVMIR, request, path, error);
  default:
    return TargetBackend::emit(lowered, kind, request, path, error);
  }
}

} // namespace

std::unique_ptr<TargetBackend> wasm::createWasmTarget() {
  return std::make_unique<WasmTarget>();
}
