//===- Pipelines.h - Pipelines as typed phases of parsed passes -*- C++ -*-===//
//
// A pipeline is a list of steps, one pass each, grouped into the typed
// phases of Phases.h. Steps are added by pass name and options (never by
// splitting pipeline text) and every step is parsed by MLIR's pass registry
// before anything runs. The target-neutral phases are built here; each
// target backend appends its own phases (TargetBackend::buildPhases).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PIPELINES_PIPELINES_H
#define CUVIL_PIPELINES_PIPELINES_H

#include "cuvil/Pipelines/PassSnapshot.h"
#include "cuvil/Pipelines/Phases.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace mlir::cuvil {

using ::cuvil::PassSnapshot;
using ::cuvil::Phase;

class TargetBackend;
struct TargetOptions;

/// An ordered list of single-pass steps in typed phases.
class PipelineBuilder {
public:
  /// One pass, anchored as it runs ("func.func(cse)").
  struct Step {
    std::string name;     ///< pass argument, e.g. "cse"
    Phase phase;          ///< phase it belongs to
    std::string pipeline; ///< textual pipeline running just this pass
    bool optional;        ///< code generation still works without it
  };

  enum class Need { Required, Optional };

  /// Appends pass `name` with `options` ("a=1 b=2") to `phase`, nested on
  /// ops named `anchor` ("func.func") when given.
  PipelineBuilder &add(Phase phase, llvm::StringRef name,
                       llvm::StringRef options = "",
                       llvm::StringRef anchor = "", Need need = Need::Required);
  /// Appends canonicalize and cse, optional where the phase says cleanups
  /// only tidy up.
  PipelineBuilder &addCleanups(Phase phase);
  /// Appends to the Bufferize phase what the targets that lower through
  /// loops share: one-shot bufferization at function boundaries, every
  /// result its own buffer passed as an out-parameter, deallocations placed.
  PipelineBuilder &addBufferization();

  const std::vector<Step> &steps() const { return stepList; }

  /// Parses every step with MLIR's pass registry; false with the step, its
  /// phase and MLIR's message when one does not parse (an unknown pass, a
  /// bad option) or parses into another pass than its name says.
  bool verify(std::string &error) const;
  /// The check `verify` makes of one step (the passes must be registered:
  /// registerCuvilPasses and the targets').
  static bool verifyStep(llvm::StringRef name, Phase phase,
                         llvm::StringRef pipeline, std::string &error);

  /// Runs one step's textual pipeline on `module`, recording a snapshot
  /// under `phase` (the IR only when `captureIR`); MLIR's verifier runs
  /// after each of its passes when `verify`.
  static LogicalResult runStep(ModuleOp module, Phase phase,
                               llvm::StringRef pipeline, bool captureIR,
                               bool verify,
                               std::vector<PassSnapshot> &snapshots);

private:
  std::vector<Step> stepList;
};

/// Appends the target-neutral phases (cuvil, linalg, fusion).
void buildTargetNeutralPhases(PipelineBuilder &pipeline, bool enableFusion);

/// The whole pipeline of `target`: the neutral phases, then its own.
PipelineBuilder buildPipeline(const TargetBackend &target,
                              const TargetOptions &options);

/// Registers `cuvil-<target>-pipeline` for every registered target (its
/// whole pipeline, serial, with `up-to=<phase>`) for cuvil-opt, after
/// parsing every step of every target's pipeline for each option
/// combination. False with a message when one does not parse.
bool registerCuvilPipelines(std::string &error);

/// Registers every upstream and Cuvil pass so textual pipelines resolve
/// (idempotent, thread-safe); a target's own passes are registered with the
/// target (TargetRegistry::registerBackend).
void registerCuvilPasses();

/// Loads an MLIR pass plugin (a shared library exporting
/// mlirGetPassPluginInfo) and registers its passes; loading the same path
/// twice is a no-op. False with a message naming the file on failure.
bool loadPassPlugin(const std::string &path, std::string &error);

/// Parses a textual pipeline anchored on builtin.module; false with MLIR's
/// message (unknown pass, bad option) otherwise.
bool checkPassPipeline(const std::string &pipeline, std::string &error);

/// Registers every dialect and extension Cuvil pipelines and the built-in
/// targets need.
void registerCuvilDialects(DialectRegistry &registry);

} // namespace mlir::cuvil

#endif // CUVIL_PIPELINES_PIPELINES_H
