//===- NullTarget.cpp - A test-only target, loaded as a target plugin -----===//
//
// Shows that a target is one folder plus one registration: it contributes
// a bufferize phase, keeps a disk cache of its own (the lowered IR as
// text), and loads into an executable that writes zeros to every output.
// The tests compile through the driver, the cache and the Python API with
// it; it is never registered outside tests. A second target, null-broken,
// ends its bufferize phase with a pass that breaks the IR.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Dialect/Cuvil/IR/DTypes.h"
#include "cuvil/Pipelines/Pipelines.h"
#include "cuvil/Target/TargetPlugin.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace mlir::cuvil;

namespace {

int64_t elementBytes(const std::string &dtype) {
  const DType *entry = lookupDType(dtype);
  return entry ? entry->byteSize : 1;
}

/// Writes zeros to every output: enough to see a call go through.
class ZeroExecutable : public ::cuvil::Executable {
public:
  explicit ZeroExecutable(std::vector<::cuvil::TensorSignature> outputs)
      : outputs(std::move(outputs)) {}

  void call(void *const *, void *const *out, const ::cuvil::KernelHooks *,
            const ::cuvil::Shapes *) const override {
    for (size_t i = 0; i < outputs.size(); ++i) {
      int64_t bytes = elementBytes(outputs[i].dtype);
      for (int64_t dim : outputs[i].shape)
        bytes *= dim;
      std::memset(out[i], 0, bytes);
    }
  }

private:
  std::vector<::cuvil::TensorSignature> outputs;
};

/// `breaksIR`: "null-broken", whose default bufferize phase ends with a pass
/// that leaves IR which no longer verifies (how the driver reports that).
class NullTarget : public TargetBackend {
public:
  explicit NullTarget(bool breaksIR) : breaksIR(breaksIR) {}

  StringRef name() const override { return breaksIR ? "null-broken" : "null"; }
  StringRef description() const override {
    return breaksIR ? "test-only: the null target, its bufferize phase "
                      "breaking the IR"
                    : "test-only: bufferizes, then every call writes zeros";
  }

  void buildPhases(const TargetOptions &options,
                   PipelineBuilder &p) const override {
    p.add(::cuvil::Phase::Bufferize, "one-shot-bufferize",
          "bufferize-function-boundaries=1");
    if (breaksIR)
      p.add(::cuvil::Phase::Bufferize, "cuvil-test-break-ir");
  }

  std::string cacheKeyMaterial(const TargetOptions &) const override {
    return breaksIR ? "null-broken-v1" : "null-v1";
  }

  FailureOr<std::unique_ptr<::cuvil::Executable>>
  load(ModuleOp, const LoadRequest &request, std::string &) const override {
    std::unique_ptr<::cuvil::Executable> executable =
        std::make_unique<ZeroExecutable>(request.outputs);
    return executable;
  }

  std::string cacheExtension() const override { return ".null.mlir"; }
  LogicalResult storeInCache(ModuleOp lowered, const LoadRequest &,
                             StringRef path,
                             std::string &error) const override {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec) {
      error = ec.message();
      return failure();
    }
    lowered.print(os);
    return success();
  }
  FailureOr<std::unique_ptr<::cuvil::Executable>>
  loadFromCache(StringRef path, const LoadRequest &request,
                std::string &error) const override {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer || !(*buffer)->getBuffer().contains("func.func")) {
      error = "not a null-target cache entry: " + path.str();
      return failure();
    }
    std::unique_ptr<::cuvil::Executable> executable =
        std::make_unique<ZeroExecutable>(request.outputs);
    return executable;
  }

  std::vector<::cuvil::IRStage> irStages() const override {
    return {::cuvil::IRStage::Lowered};
  }

private:
  bool breaksIR;
};

/// Gives every function a type its body does not have: IR that no longer
/// verifies, as a broken pass would leave it.
struct BreakFunctionTypes
    : public PassWrapper<BreakFunctionTypes, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(BreakFunctionTypes)
  StringRef getArgument() const override { return "cuvil-test-break-ir"; }
  StringRef getDescription() const override {
    return "test-only: leaves functions whose type does not match their body";
  }
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp func) {
      func.setFunctionTypeAttr(TypeAttr::get(
          FunctionType::get(func.getContext(), TypeRange(), TypeRange())));
    });
  }
};

} // namespace

extern "C" CUVIL_TARGET_PLUGIN_EXPORT void
cuvilRegisterTargetPlugin(::cuvil::TargetPluginRegistrar *registrar) {
  if (registrar->apiVersion != ::cuvil::kTargetPluginApiVersion) {
    registrar->apiVersion = ::cuvil::kTargetPluginApiVersion;
    return;
  }
  registrar->add(registrar, new NullTarget(/*breaksIR=*/false));
  static bool passRegistered = [] {
    PassRegistration<BreakFunctionTypes>();
    return true;
  }();
  (void)passRegistered;
  registrar->add(registrar, new NullTarget(/*breaksIR=*/true));
}
