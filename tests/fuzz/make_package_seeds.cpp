//===- make_package_seeds.cpp - Seeds for fuzz-package --------------------===//
//
// Writes, with the package writer itself, an IR package and executable
// packages (static and symbolic signatures, raw and zstd entries, several
// functions) into the folder given as the only argument.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Serialization/Package.h"

#include <cstdio>
#include <string>

using namespace cuvil;

namespace {
const char *kStatic = R"({"format":"cuvil-executable","cuvil_version":"0.1.0",
"fingerprint":"06c389ff6524aa0a6d0a0ed0a44c8d6bfcc8ff3b2bdc1e4b0b57ad2f5b7cc0a1",
"host":{"cpu":"znver4","features":["avx2","avx512f","fma"]},
"functions":[{"name":"main","aliases":["mlp"],"symbol":"cuvil_mlp","target":"cpu",
"code":"code/cpu/main.so","instrumented":false,
"inputs":[{"name":"x","dtype":"float32","shape":[8,16]},
{"name":"w","dtype":"float32","shape":[16,4]}],
"outputs":[{"dtype":"float32","shape":[8,4]}],"structure":"single"}]})";

const char *kSymbolic = R"({"format":"cuvil-executable","cuvil_version":"0.1.0",
"fingerprint":"1c389ff6524aa0a6d0a0ed0a44c8d6bfcc8ff3b2bdc1e4b0b57ad2f5b7cc0a10",
"host":{"cpu":"x86-64","features":[]},
"functions":[{"name":"main","symbol":"cuvil_f","target":"cpu","code":"code/cpu/main.so",
"inputs":[{"name":"x","dtype":"float32","shape":["N",null,"h"]}],
"outputs":[{"dtype":"int64","shape":["N * 2","((h + -1) // 2) + 1","N % 3"]}]},
{"name":"second","aliases":["other"],"symbol":"cuvil_g","target":"cuda",
"code":"weights/w0","inputs":[],"outputs":[{"dtype":"bool","shape":[]}]}]})";

bool write(const std::string &path, PackageKind kind, const char *metadata,
           bool compress) {
  PackageWriter writer(kind);
  std::string error;
  std::string code(512, '\x7f');
  bool ok =
      writer.setMetadata(metadata, error) &&
      writer.add(
          kind == PackageKind::IR ? "ir/module.mlir" : "code/cpu/main.so",
          kind == PackageKind::IR ? "module {\n}\n" : code, compress, error) &&
      writer.add("weights/w0", std::string(300, '\0'), !compress, error) &&
      writer.write(path, error);
  if (!ok)
    std::fprintf(stderr, "make-package-seeds: %s\n", error.c_str());
  return ok;
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  bool ok =
      write(dir + "/ir.irpkg", PackageKind::IR,
            R"({"format":"cuvil-irpkg","mlir_version":"19.1"})", true) &&
      write(dir + "/static.cuvil", PackageKind::Executable, kStatic, true) &&
      write(dir + "/static-raw.cuvil", PackageKind::Executable, kStatic,
            false) &&
      write(dir + "/symbolic.cuvil", PackageKind::Executable, kSymbolic, true);
  return ok ? 0 : 1;
}
