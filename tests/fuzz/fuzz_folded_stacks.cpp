//===- fuzz_folded_stacks.cpp - libFuzzer target: Folded stacks reader ===//

#include "FuzzTrace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return cuvil::profiler::fuzz::fuzzTextReader(
      cuvil::profiler::parseFoldedStacks, data, size);
}
