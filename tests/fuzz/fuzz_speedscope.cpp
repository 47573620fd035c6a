//===- fuzz_speedscope.cpp - libFuzzer target: speedscope JSON reader ===//

#include "FuzzTrace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return cuvil::profiler::fuzz::fuzzTextReader(cuvil::profiler::parseSpeedscope,
                                               data, size);
}
