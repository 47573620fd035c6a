//===- Phases.cpp - The name tables of phases, IR stages and artifacts ----===//

#include "cuvil/Pipelines/Phases.h"

#include <cassert>

using namespace cuvil;

const std::vector<PhaseInfo> &cuvil::phases() {
  static const std::vector<PhaseInfo> table = {
      {Phase::Graph, "cuvil",
       "graph cleanups on cuvil ops: training ops, batch-norm and constant "
       "folding",
       true, true},
      {Phase::Linalg, "linalg", "cuvil ops lowered to linalg, tensor and arith",
       true, true},
      {Phase::Fusion, "fusion", "elementwise chains fused into single kernels",
       true, true},
      {Phase::Schedule, "schedule",
       "kernels tagged, tiled and vectorized for the target", false, false},
      {Phase::Bufferize, "bufferize",
       "tensors become buffers; results written in place; memory planned",
       false, false},
      {Phase::Lower, "llvm",
       "loops, vectors and memrefs lowered to the target's code generation "
       "dialect",
       false, false},
  };
  return table;
}

const PhaseInfo &cuvil::phaseInfo(Phase phase) {
  const PhaseInfo &info = phases()[static_cast<size_t>(phase)];
  assert(info.phase == phase && "phase table out of order");
  return info;
}

const char *cuvil::phaseName(Phase phase) { return phaseInfo(phase).name; }

std::optional<Phase> cuvil::parsePhase(const std::string &name) {
  for (const PhaseInfo &info : phases())
    if (name == info.name)
      return info.phase;
  return std::nullopt;
}

std::string cuvil::phaseNames() {
  std::vector<std::string> names;
  for (const PhaseInfo &info : phases())
    names.push_back(info.name);
  return joinNames(names);
}

const std::vector<IRStageInfo> &cuvil::irStages() {
  static const std::vector<IRStageInfo> table = {
      {IRStage::Input, "input", "the verified cuvil IR as compiled"},
      {IRStage::Optimized, "optimized",
       "after the target-neutral phases (graph passes and fusion)"},
      {IRStage::Lowered, "llvm-dialect",
       "after the target's last phase, before translation"},
      {IRStage::LLVMIR, "llvm", "LLVM IR, optimized for the target"},
      {IRStage::Assembly, "asm", "the target's assembly"},
      {IRStage::CSource, "c", "C source (the c target)"},
      {IRStage::Wat, "wat",
       "WebAssembly text (the wasm target; needs wasm2wat from wabt)"},
      {IRStage::PTX, "ptx", "the GPU kernels' PTX (the cuda target)"},
  };
  return table;
}

const std::vector<ArtifactInfo> &cuvil::artifactKinds() {
  static const std::vector<ArtifactInfo> table = {
      {ArtifactKind::MLIR, "mlir", "the input cuvil IR", ".mlir", false},
      {ArtifactKind::LLVMIR, "llvm", "LLVM IR", ".ll", false},
      {ArtifactKind::Assembly, "asm", "assembly", ".s", false},
      {ArtifactKind::Object, "obj", "relocatable object file", ".o", true},
      {ArtifactKind::SharedLibrary, "so",
       "shared library with the packed entry point", ".so", true},
      {ArtifactKind::CSource, "c", "C99 source with the entry point", ".c",
       false},
      {ArtifactKind::CHeader, "h", "C header declaring the entry point", ".h",
       false},
      {ArtifactKind::Wasm, "wasm", "WebAssembly module exporting the function",
       ".wasm", true},
      {ArtifactKind::JSModule, "mjs",
       "ES module loading the .wasm in Node or a browser", ".mjs", false},
      {ArtifactKind::Wat, "wat", "WebAssembly text of the module", ".wat",
       false},
      {ArtifactKind::PTX, "ptx", "PTX of the GPU kernels", ".ptx", false},
      {ArtifactKind::Cubin, "cubin",
       "the GPU kernels' SASS for the compiled architecture", ".cubin", true},
      {ArtifactKind::Fatbin, "fatbin",
       "fat binary: SASS for the compiled architecture and PTX for newer ones",
       ".fatbin", true},
  };
  return table;
}

const char *cuvil::irStageName(IRStage stage) {
  return irStages()[static_cast<size_t>(stage)].name;
}

const char *cuvil::artifactName(ArtifactKind kind) {
  return artifactKinds()[static_cast<size_t>(kind)].name;
}

std::optional<IRStage> cuvil::parseIRStage(const std::string &name) {
  for (const IRStageInfo &info : irStages())
    if (name == info.name)
      return info.stage;
  return std::nullopt;
}

std::optional<ArtifactKind> cuvil::parseArtifactKind(const std::string &name) {
  for (const ArtifactInfo &info : artifactKinds())
    if (name == info.name)
      return info.kind;
  return std::nullopt;
}

std::string cuvil::joinNames(const std::vector<std::string> &names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i)
      text += i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}
