//===- Phases.h - Typed pipeline phases, IR stages and artifacts -*- C++
//-*-===//
//
// One enum and one name table each for the phases a compilation runs
// through, the IR stages a compiled function can show, and the artifacts it
// can write. The compiler, the Python package, the CLI and the Workbench
// read these tables; nobody compares stage strings of their own. No MLIR
// headers here.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PIPELINES_PHASES_H
#define CUVIL_PIPELINES_PHASES_H

#include <optional>
#include <string>
#include <vector>

namespace cuvil {

/// The phases of a compilation, in run order. The first three are
/// target-neutral; a target backend contributes the later ones it needs.
enum class Phase {
  Graph,     ///< "cuvil": graph-level cleanups on the cuvil dialect
  Linalg,    ///< "linalg": cuvil ops become linalg/tensor/arith
  Fusion,    ///< "fusion": elementwise fusion on linalg
  Schedule,  ///< "schedule": tiling and vectorization for the target
  Bufferize, ///< "bufferize": tensors become buffers, memory is planned
  Lower,     ///< "llvm": lowering to the target's code generation dialect
};

struct PhaseInfo {
  Phase phase;
  const char *name;        ///< stable short name shown to users
  const char *description; ///< one line for listings and tooltips
  /// Target-neutral: every backend runs it before its own phases.
  bool targetNeutral;
  /// Canonicalization and CSE in this phase only tidy up: code generation
  /// does not depend on them, so a user may turn them off.
  bool cleanupsOptional;
};

/// Every phase in run order.
const std::vector<PhaseInfo> &phases();
const PhaseInfo &phaseInfo(Phase phase);
const char *phaseName(Phase phase);
/// The phase called `name`, or nothing.
std::optional<Phase> parsePhase(const std::string &name);
/// "cuvil, linalg, ..." for error messages.
std::string phaseNames();

/// The IR after the last phase that is still target-neutral is what users
/// call the "optimized" IR: the graph after fusion, before scheduling.
constexpr Phase kLastOptimizedPhase = Phase::Fusion;

/// IR a compiled function can show.
enum class IRStage {
  Input,     ///< "input": the verified cuvil IR as compiled
  Optimized, ///< "optimized": after the target-neutral phases
  Lowered,   ///< "llvm-dialect": after the target's last phase
  LLVMIR,    ///< "llvm": LLVM IR, optimized for the target
  Assembly,  ///< "asm": the target's assembly
  CSource,   ///< "c": C source (the c target)
  Wat,       ///< "wat": WebAssembly text (the wasm target)
  PTX,       ///< "ptx": the kernels' PTX (the cuda target)
};

/// Files a compiled function can write.
enum class ArtifactKind {
  MLIR,          ///< "mlir": the input IR
  LLVMIR,        ///< "llvm": LLVM IR
  Assembly,      ///< "asm"
  Object,        ///< "obj": a relocatable object
  SharedLibrary, ///< "so": a shared library with the packed entry point
  CSource,       ///< "c": C99 source (the c target)
  CHeader,       ///< "h": the C source's header
  Wasm,          ///< "wasm": a WebAssembly module
  JSModule,      ///< "mjs": the ES module loading the wasm module
  Wat,           ///< "wat": the wasm module as text
  PTX,           ///< "ptx": the kernels' PTX (the cuda target)
  Cubin,         ///< "cubin": the kernels' SASS for one GPU architecture
  Fatbin,        ///< "fatbin": SASS plus PTX a newer driver can JIT
};

struct IRStageInfo {
  IRStage stage;
  const char *name;
  const char *description;
};

struct ArtifactInfo {
  ArtifactKind kind;
  const char *name;
  const char *description;
  const char *extension; ///< file name extension, with the dot
  bool binary;           ///< not text: written to a file, never printed
};

const std::vector<IRStageInfo> &irStages();
const std::vector<ArtifactInfo> &artifactKinds();
const char *irStageName(IRStage stage);
const char *artifactName(ArtifactKind kind);
std::optional<IRStage> parseIRStage(const std::string &name);
std::optional<ArtifactKind> parseArtifactKind(const std::string &name);

/// "a, b or c" of the given names, for error messages.
std::string joinNames(const std::vector<std::string> &names);

} // namespace cuvil

#endif // CUVIL_PIPELINES_PHASES_H
