//===- Pipelines.h - The one place Cuvil's pass order is decided -*- C++
//-*-===//
#ifndef CUVIL_PIPELINES_PIPELINES_H
#define CUVIL_PIPELINES_PIPELINES_H

#include "cuvil/Pipelines/PassSnapshot.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace mlir::cuvil {

using ::cuvil::PassSnapshot;

struct CpuPipelineOptions {
  bool enableFusion = true;
  /// Split the outer loops of GEMMs across threads (OpenMP).
  bool parallel = true;
  /// Vector width in f32 lanes of the widest usable register (16 for
  /// AVX-512, 8 for AVX2); decides micro-kernel tile sizes.
  int vectorLanes = 16;
  bool captureSnapshots = false;
};

/// A pipeline: named stages, each a textual pass pipeline, run in order
/// with optional per-pass snapshots.
class PipelineBuilder {
public:
  struct Stage {
    std::string name;
    std::string passes; ///< textual pass pipeline
  };

  /// One pass of a stage, anchored as it runs ("func.func(cse)").
  struct Step {
    std::string name;     ///< pass argument, e.g. "cse"
    std::string stage;    ///< stage it belongs to
    std::string pipeline; ///< textual pipeline running just this pass
    bool optional;        ///< code generation still works without it
  };

  PipelineBuilder &addStage(std::string name, std::string passes);
  const std::vector<Stage> &stages() const { return stageList; }

  /// The stages as a flat list of single passes, in run order.
  std::vector<Step> steps() const;

  /// Runs one textual pipeline on `module`, recording snapshots under
  /// `stage` when `captureSnapshots` (times and changed flags always).
  static LogicalResult runPasses(ModuleOp module, llvm::StringRef stage,
                                 llvm::StringRef passes, bool captureSnapshots,
                                 std::vector<PassSnapshot> &snapshots);

  /// Runs stages [first, last) on `module`. Snapshots (when requested) are
  /// appended to `snapshots`. Diagnostics go to the context's handler.
  LogicalResult run(ModuleOp module, bool captureSnapshots,
                    std::vector<PassSnapshot> &snapshots, size_t first = 0,
                    size_t last = ~size_t(0)) const;

private:
  std::vector<Stage> stageList;
};

/// The CPU pipeline: cuvil -> linalg -> fused, tiled, vectorized ->
/// bufferized -> LLVM dialect. Stage names: "cuvil", "linalg", "fusion",
/// "schedule", "bufferize", "llvm".
PipelineBuilder buildCpuPipeline(const CpuPipelineOptions &options);

/// Registers `cuvil-cpu-pipeline` (up to and excluding the LLVM dialect
/// stage's codegen) and `cuvil-to-linalg-pipeline` for cuvil-opt.
void registerCuvilPipelines();

/// Registers every upstream and Cuvil pass so textual pipelines resolve
/// (idempotent, thread-safe).
void registerCuvilPasses();

/// Loads an MLIR pass plugin (a shared library exporting
/// mlirGetPassPluginInfo) and registers its passes; loading the same path
/// twice is a no-op. False with a message naming the file on failure.
bool loadPassPlugin(const std::string &path, std::string &error);

/// Parses a textual pipeline anchored on builtin.module; false with MLIR's
/// message (unknown pass, bad option) otherwise.
bool checkPassPipeline(const std::string &pipeline, std::string &error);

/// Registers every dialect and extension Cuvil pipelines need.
void registerCuvilDialects(DialectRegistry &registry);

} // namespace mlir::cuvil

#endif // CUVIL_PIPELINES_PIPELINES_H
