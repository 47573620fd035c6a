//===- FuzzInputFile.h - Inputs written to a file for path-based readers -===//
//
// Readers that take a path (SQLite, the package reader's mapping) get each
// input through one temporary file per fuzzing process, created in $TMPDIR
// (or /tmp) on first use and removed at exit.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TESTS_FUZZ_FUZZINPUTFILE_H
#define CUVIL_TESTS_FUZZ_FUZZINPUTFILE_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace cuvil::fuzz {

class InputFile {
public:
  /// "<tmp>/cuvil-fuzz-<name>-XXXXXX<suffix>".
  InputFile(const char *name, const char *suffix) {
    const char *dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/cuvil-fuzz-" + name +
           "-XXXXXX" + suffix;
    int fd = mkstemps(path.data(), static_cast<int>(std::strlen(suffix)));
    if (fd < 0) {
      std::perror("fuzz: cannot create a temporary file");
      std::exit(1);
    }
    close(fd);
  }
  ~InputFile() { std::remove(path.c_str()); }

  /// Replaces the file's content with `data`; aborts if that fails.
  const std::string &write(const uint8_t *data, size_t size) const {
    FILE *file = std::fopen(path.c_str(), "wb");
    if (!file || std::fwrite(data, 1, size, file) != size) {
      std::perror(path.c_str());
      std::abort();
    }
    std::fclose(file);
    return path;
  }

private:
  std::string path;
};

} // namespace cuvil::fuzz

#endif // CUVIL_TESTS_FUZZ_FUZZINPUTFILE_H
