//===- fuzz_package.cpp - libFuzzer target: .irpkg and .cuvil readers -----===//
//
// The package reader maps a file by path, so each input is written to one
// temporary file of this process first. Every input is opened as both kinds;
// what opens has each entry read (decompressed and checked) and, as an
// executable package, each function described, looked up and its output
// shapes computed for inputs of size 3 in every symbolic dim. Code is never
// loaded. Entries are limited to 64 MiB (CUVIL_MAX_PACKAGE_ENTRY_MIB) to stay
// inside libFuzzer's memory limit.
//
//===----------------------------------------------------------------------===//

#include "FuzzInputFile.h"

#include "cuvil/Runtime/ExecutablePackage.h"
#include "cuvil/Serialization/Package.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace cuvil;

namespace {
void readAll(const std::string &path, PackageKind kind) {
  std::string error;
  auto reader = PackageReader::open(path, kind, error);
  if (!reader) {
    if (error.empty())
      std::abort(); // a refusal must say why
    return;
  }
  for (const PackageEntry &entry : reader->entries()) {
    std::string bytes;
    if (!reader->read(entry.name, bytes, error) && error.empty())
      std::abort();
    if (bytes.size() > entry.rawSize)
      std::abort();
  }
}

void describeFunctions(const std::string &path) {
  std::string error;
  auto package = ExecutablePackage::open(path, error);
  if (!package)
    return;
  for (const PackagedFunction &fn : package->functions()) {
    (void)fn.signatureText();
    if (!package->find(fn.name, error))
      std::abort(); // every function is found by its own name
    std::vector<std::vector<int64_t>> shapes, out;
    for (const TensorSignature &input : fn.inputs) {
      shapes.emplace_back();
      for (int64_t d : input.shape)
        shapes.back().push_back(d < 0 ? 3 : d);
    }
    (void)outputShapes(fn, shapes, out, error);
  }
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  ::setenv("CUVIL_MAX_PACKAGE_ENTRY_MIB", "64", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const cuvil::fuzz::InputFile input("package", ".cuvil");
  const std::string &path = input.write(data, size);
  readAll(path, PackageKind::IR);
  readAll(path, PackageKind::Executable);
  describeFunctions(path);
  return 0;
}
