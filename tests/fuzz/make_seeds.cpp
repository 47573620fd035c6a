//===- make_seeds.cpp - Speedscope and folded seeds from Chrome fixtures --===//
//
// The test fixtures are Chrome traces; the profiler's own writers turn them
// into seeds for the speedscope and folded-stacks fuzz targets, so no seed
// file is kept by hand. Usage: cuvil-fuzz-make-seeds OUT_DIR TRACE...
//
//===----------------------------------------------------------------------===//

#include "cuvil/Profiler/Formats.h"

#include <cstdio>
#include <fstream>
#include <string>

using namespace cuvil::profiler;

static bool writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) {
    std::fprintf(stderr, "cuvil-fuzz-make-seeds: cannot write %s\n",
                 path.c_str());
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: cuvil-fuzz-make-seeds OUT_DIR TRACE...\n");
    return 2;
  }
  std::string out = argv[1];
  for (int i = 2; i < argc; ++i) {
    Expected<Trace> trace = readTraceFile(argv[i]);
    if (!trace) {
      std::fprintf(stderr, "cuvil-fuzz-make-seeds: %s\n",
                   trace.error().text().c_str());
      return 1;
    }
    std::string name = argv[i];
    name = name.substr(name.find_last_of('/') + 1);
    if (!writeFile(out + "/speedscope/" + name + ".speedscope.json",
                   writeSpeedscope(*trace)) ||
        !writeFile(out + "/folded-stacks/" + name + ".folded",
                   writeFoldedStacks(*trace)))
      return 1;
  }
  return 0;
}
