//===- fuzz_nsys_sqlite.cpp - libFuzzer target: Nsight Systems SQLite ----===//
//
// readNsysSqlite opens a file by path (SQLite reads it read-only), so each
// input is written to one temporary file of this process first.
//
//===----------------------------------------------------------------------===//

#include "FuzzInputFile.h"
#include "FuzzTrace.h"

#include <cstddef>
#include <cstdint>

using namespace cuvil::profiler;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const cuvil::fuzz::InputFile input("nsys", ".sqlite");
  Expected<Trace> trace = readNsysSqlite(input.write(data, size));
  fuzz::exercise(trace);
  return 0;
}
