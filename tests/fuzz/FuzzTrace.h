//===- FuzzTrace.h - What every trace reader's fuzz target checks ---------===//
//
// A reader either returns a trace or a TraceError; both are then used the way
// `cuvil trace` uses them, so a trace the reader accepted but left
// inconsistent (an index out of range, a stack that is not a tree) shows up
// in the writers rather than later in the Workbench.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FUZZ_FUZZTRACE_H
#define CUVIL_FUZZ_FUZZTRACE_H

#include "cuvil/Profiler/Formats.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace cuvil::profiler::fuzz {

/// Aborts (a finding) when `text` is not valid UTF-8: error messages go to
/// Python and the Workbench as UTF-8 strings.
inline void checkUtf8(const std::string &text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = text[i];
    size_t n = c < 0x80         ? 1
               : (c >> 5) == 6  ? 2
               : (c >> 4) == 14 ? 3
               : (c >> 3) == 30 ? 4
                                : 0;
    bool ok = n != 0 && i + n <= text.size();
    for (size_t k = 1; ok && k < n; ++k)
      ok = (static_cast<unsigned char>(text[i + k]) >> 6) == 2;
    if (!ok) {
      std::fprintf(stderr, "error text is not UTF-8 at byte %zu\n", i);
      std::abort();
    }
    i += n;
  }
}

/// Writes an accepted trace in every format, or renders the error.
inline void exercise(Expected<Trace> &trace) {
  if (!trace) {
    checkUtf8(trace.error().text());
    return;
  }
  (void)writeChromeTrace(*trace);
  (void)writeFoldedStacks(*trace);
  (void)writeSpeedscope(*trace);
}

/// One input through a reader of in-memory text (`parseChromeTrace`, ...),
/// after the format detection `readTraceFile` runs on the same bytes.
inline int fuzzTextReader(Expected<Trace> (*parse)(std::string_view,
                                                   const std::string &),
                          const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  (void)detectFormat(text);
  Expected<Trace> trace = parse(text, "fuzz.input");
  exercise(trace);
  return 0;
}

} // namespace cuvil::profiler::fuzz

#endif // CUVIL_FUZZ_FUZZTRACE_H
