//===- fuzz_nsys_sqlite.cpp - libFuzzer target: Nsight Systems SQLite ----===//
//
// readNsysSqlite opens a file by path (SQLite reads it read-only), so each
// input is written to one temporary file of this process first.
//
//===----------------------------------------------------------------------===//

#include "FuzzTrace.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace cuvil::profiler;

namespace {
std::string inputPath;

void removeInput() { std::remove(inputPath.c_str()); }
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *dir = std::getenv("TMPDIR");
  std::string pattern = std::string(dir && *dir ? dir : "/tmp") +
                        "/cuvil-fuzz-nsys-XXXXXX.sqlite";
  int fd = mkstemps(pattern.data(), 7);
  if (fd < 0) {
    std::perror("fuzz-nsys-sqlite: cannot create a temporary file");
    std::exit(1);
  }
  close(fd);
  inputPath = pattern;
  std::atexit(removeInput);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *file = std::fopen(inputPath.c_str(), "wb");
  if (!file || std::fwrite(data, 1, size, file) != size) {
    std::perror(inputPath.c_str());
    std::abort();
  }
  std::fclose(file);
  Expected<Trace> trace = readNsysSqlite(inputPath);
  fuzz::exercise(trace);
  return 0;
}
