//===- LaunchText.cpp - Kernel launches as text ---------------------------===//

#include "cuvil/Graph/IRGraph.h"

namespace cuvil::graph {
namespace {

std::string bytesText(int bytes) {
  return bytes < 0 ? std::string("?") : std::to_string(bytes) + " B";
}

} // namespace

std::string extentsText(const int (&extents)[3]) {
  std::string text = "(";
  for (int i = 0; i < 3; ++i) {
    if (i)
      text += ", ";
    text += extents[i] < 0 ? std::string("?") : std::to_string(extents[i]);
  }
  return text + ")";
}

long long extentProduct(const int (&extents)[3]) {
  long long product = 1;
  for (int extent : extents) {
    if (extent < 0)
      return -1;
    product *= extent;
  }
  return product;
}

std::string launchesText(const IRGraph &graph) {
  std::string text;
  for (const KernelLaunch &launch : graph.launches) {
    text += "line " + std::to_string(launch.irLine) + ": " +
            (launch.kernel.empty() ? "gpu.launch" : launch.kernel) + " grid " +
            extentsText(launch.grid) + " block " + extentsText(launch.block) +
            " shared " + bytesText(launch.staticSharedBytes) + " + dynamic " +
            bytesText(launch.dynamicSharedBytes);
    if (!launch.ops.empty())
      text += ": " + launch.ops;
    if (launch.loc.valid())
      text += " at " + launch.loc.file + ":" + std::to_string(launch.loc.line) +
              ":" + std::to_string(launch.loc.column);
    text += "\n";
  }
  return text;
}

} // namespace cuvil::graph
