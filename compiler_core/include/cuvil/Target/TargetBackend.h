//===- TargetBackend.h - The interface every code generator implements -*- C++
//-*-===//
//
// A target backend turns the target-neutral IR (linalg on tensors, after
// fusion) into loaded, callable code and artifacts. The compile driver knows
// no target by name: it looks one up in the TargetRegistry, runs the
// target-neutral phases and then the phases the backend contributes, and
// hands the lowered module back to the backend to load, cache or emit.
// Adding a target is one folder implementing this interface plus one call
// to TargetRegistry::registerBackend.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGET_TARGETBACKEND_H
#define CUVIL_TARGET_TARGETBACKEND_H

#include "cuvil/Pipelines/Phases.h"
#include "cuvil/Runtime/Executable.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/LogicalResult.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::cuvil {

class PipelineBuilder;

/// Options of one compilation that a backend's phases depend on.
struct TargetOptions {
  bool enableFusion = true;
  /// Use the target's parallelism (threads on a CPU).
  bool parallel = true;
  /// Device index from a device string ("cuda:1" -> 1).
  int device = 0;
  /// f32 lanes of generated vector code; 0 picks the target's own (the
  /// host's widest register on the CPU).
  int vectorLanes = 0;
};

/// What the driver knows about the function it asks a backend to load.
struct LoadRequest {
  /// Symbol of the compiled function in the lowered module.
  std::string symbol;
  std::vector<::cuvil::TensorSignature> inputs, outputs;
  /// The code calls kernel hooks (cuvil-instrument-kernels ran).
  bool instrumented = false;
  /// Device index the code runs on ("cuda:1" -> 1).
  int device = 0;
};

/// The symbol of the compiled function in generated code: the prefix keeps
/// a user function called `exp` from capturing the C library's exp that
/// generated code calls (prepareForLowering renames with it).
inline std::string compiledSymbol(const LoadRequest &request) {
  return "cuvil_" + request.symbol;
}

class TargetBackend {
public:
  virtual ~TargetBackend() = default;

  /// Registry name, the `target=` users write ("cpu").
  virtual llvm::StringRef name() const = 0;
  /// One line for listings.
  virtual llvm::StringRef description() const = 0;
  /// How many devices of this target the process can use.
  virtual int deviceCount() const { return 1; }
  /// Why code for device `device` cannot run in this process (no driver, no
  /// GPU), or "" when it can. Compiling and writing artifacts work either
  /// way.
  virtual std::string unavailableReason(int device) const { return ""; }

  /// Dialects and translations the backend's phases and loading need.
  virtual void registerDialects(DialectRegistry &registry) const {}
  /// Registers the backend's own passes so textual pipelines resolve.
  virtual void registerPasses() const {}

  /// The loaded code reports its kernels to the profiler's hooks by itself
  /// (the cuda runtime around each launch), without cuvil-instrument-kernels.
  virtual bool reportsKernels() const { return false; }

  /// Appends the backend's phases (Schedule and later), in run order.
  virtual void buildPhases(const TargetOptions &options,
                           PipelineBuilder &pipeline) const = 0;

  /// What besides the IR and the pipeline decides the generated code (CPU
  /// model and features, SM version); part of every cache key.
  virtual std::string cacheKeyMaterial(const TargetOptions &options) const = 0;

  /// Called on the module before the backend's last phase (Lower) runs,
  /// while function attributes are still there: symbol renaming, ABI
  /// attributes.
  virtual void prepareForLowering(ModuleOp module) const {}

  /// Loads the lowered module (after every phase) into callable code.
  virtual FailureOr<std::unique_ptr<::cuvil::Executable>>
  load(ModuleOp lowered, const LoadRequest &request,
       std::string &error) const = 0;

  /// File name extension of a cache entry (".so"), or "" when the backend
  /// keeps no disk cache.
  virtual std::string cacheExtension() const { return ""; }
  /// Writes a cache entry for the lowered module at `path`.
  virtual LogicalResult storeInCache(ModuleOp lowered,
                                     const LoadRequest &request,
                                     llvm::StringRef path,
                                     std::string &error) const {
    error = "the " + name().str() + " target keeps no cache";
    return failure();
  }
  /// Loads a cache entry storeInCache wrote.
  virtual FailureOr<std::unique_ptr<::cuvil::Executable>>
  loadFromCache(llvm::StringRef path, const LoadRequest &request,
                std::string &error) const {
    error = "the " + name().str() + " target keeps no cache";
    return failure();
  }

  /// IR stages past "optimized" the backend can show.
  virtual std::vector<::cuvil::IRStage> irStages() const { return {}; }
  /// Prints the lowered module at `stage` into `out`.
  virtual LogicalResult printStage(ModuleOp lowered, ::cuvil::IRStage stage,
                                   const LoadRequest &request, std::string &out,
                                   std::string &error) const;

  /// Writes the lowered module printed at `stage` (printStage) to `path`:
  /// for artifacts that are an IR stage as a file.
  LogicalResult emitStage(ModuleOp lowered, ::cuvil::IRStage stage,
                          const LoadRequest &request, llvm::StringRef path,
                          std::string &error) const;

  /// Artifacts the backend writes besides the input IR.
  virtual std::vector<::cuvil::ArtifactKind> artifacts() const { return {}; }
  /// Writes artifact `kind` of the lowered module to `path`.
  virtual LogicalResult emit(ModuleOp lowered, ::cuvil::ArtifactKind kind,
                             const LoadRequest &request, llvm::StringRef path,
                             std::string &error) const;
};

/// Every target backend of this process. Built-in backends register on
/// first use; others through registerBackend (tests, target plugins).
class TargetRegistry {
public:
  /// Adds a backend; false when one of that name exists.
  static bool registerBackend(std::unique_ptr<TargetBackend> backend);
  /// The backend called `name`, or null.
  static const TargetBackend *lookup(llvm::StringRef name);
  /// Registered names, sorted.
  static std::vector<std::string> names();
};

/// Registers the targets built into Cuvil (idempotent). The only place that
/// names them.
void registerBuiltinTargets();

} // namespace mlir::cuvil

#endif // CUVIL_TARGET_TARGETBACKEND_H
