//===- fuzz_chrome_trace.cpp - libFuzzer target: Chrome trace-event JSON reader

#include "FuzzTrace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return cuvil::profiler::fuzz::fuzzTextReader(
      cuvil::profiler::parseChromeTrace, data, size);
}
