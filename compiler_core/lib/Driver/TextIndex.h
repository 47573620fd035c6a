//===- TextIndex.h - The disk cache's index by traced text ------*- C++ -*-===//
//
// The disk cache keys compiled code by the module's structural fingerprint,
// which takes an MLIR context, a parse and a walk of the IR. The text index
// maps the exact text a front end produced (with the rest of the key: the
// function, compiler build, target and passes) to that entry, with what
// loading needs (the signature) and what a compiled function reports without
// its IR (the fingerprint). A new process then loads cached code without
// building MLIR; the IR is rebuilt from its own text, the one the entry is
// keyed by, only when something asks for a stage. The text is not stored:
// a model's weights make it tens of megabytes.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_LIB_DRIVER_TEXTINDEX_H
#define CUVIL_LIB_DRIVER_TEXTINDEX_H

#include "cuvil/Runtime/Executable.h"

#include <string>
#include <vector>

namespace cuvil::detail {

struct TextIndexEntry {
  /// The structural cache key: the compiled code is <cache>/<key><ext>.
  std::string cacheKey;
  std::string fingerprint;
  std::vector<TensorSignature> inputs, outputs;
};

/// Reads the entry at `path`. False, with `entry` untouched, when the file
/// is missing, not an index of this format, or holds anything out of bounds
/// (an unknown dtype, a rank or size no signature has): the caller then
/// compiles or looks the structural key up as if there were no index.
bool readTextIndex(const std::string &path, TextIndexEntry &entry);

/// Writes `entry` to `path` through a uniquely named file renamed into place,
/// so readers never see half an entry. Best effort: a cache that cannot be
/// written costs the next process a parse, nothing else.
void writeTextIndex(const std::string &path, const TextIndexEntry &entry);

} // namespace cuvil::detail

#endif // CUVIL_LIB_DRIVER_TEXTINDEX_H
