//===- PassSnapshot.h - The IR after one pass, as plain data ----*- C++ -*-===//
#ifndef CUVIL_PIPELINES_PASSSNAPSHOT_H
#define CUVIL_PIPELINES_PASSSNAPSHOT_H

#include "cuvil/Pipelines/Phases.h"

#include <string>

namespace cuvil {

/// The IR after one pass of a pipeline run.
struct PassSnapshot {
  std::string name;           ///< pass argument, e.g. "convert-cuvil-to-linalg"
  Phase phase = Phase::Graph; ///< pipeline phase the pass belongs to
  double wallMs = 0;          ///< wall time of the pass
  bool changed = false;       ///< meaningful only when changeKnown
  bool changeKnown = false;   ///< tracked only while the IR is captured
  std::string ir;             ///< IR after the pass (empty unless captured)
};

} // namespace cuvil

#endif // CUVIL_PIPELINES_PASSSNAPSHOT_H
