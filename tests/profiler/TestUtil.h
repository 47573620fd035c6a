//===- TestUtil.h - Shared helpers of the profiler tests ------------------===//

#ifndef CUVIL_TESTS_PROFILER_TESTUTIL_H
#define CUVIL_TESTS_PROFILER_TESTUTIL_H

#include "cuvil/Profiler/Profiler.h"

#include <fstream>
#include <sstream>
#include <string>

namespace cuvil::profiler::test {

inline std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline std::string fixture(const std::string &name) {
  return std::string(CUVIL_PROFILER_FIXTURES) + "/" + name;
}

inline std::string golden(const std::string &name) {
  return std::string(CUVIL_PROFILER_GOLDEN) + "/" + name;
}

/// Adds an event to `trace` on thread (pid, tid).
inline uint32_t addEvent(Trace &trace, const std::string &name, int64_t start,
                         int64_t duration,
                         EventKind kind = EventKind::CpuKernel, int64_t tid = 1,
                         int64_t pid = 1) {
  Event e;
  e.startNs = start;
  e.durationNs = duration;
  e.name = trace.intern(name);
  e.kind = kind;
  e.category = trace.intern(eventKindName(kind));
  e.thread = trace.thread(pid, tid);
  trace.events.push_back(e);
  return static_cast<uint32_t>(trace.events.size() - 1);
}

} // namespace cuvil::profiler::test

#endif // CUVIL_TESTS_PROFILER_TESTUTIL_H
