//===- ChangeMarking.cpp - Which ops a pass changed, by fingerprint -------===//

#include "cuvil/Graph/IRGraph.h"

#include <unordered_map>

namespace cuvil::graph {

void markChanged(const IRGraph &before, IRGraph &after) {
  // A multiset: two identical ops before the pass match two after it.
  std::unordered_map<std::string, int> remaining;
  for (const Node &node : before.nodes)
    if (node.kind != OpKind::Argument)
      ++remaining[node.fingerprint];
  after.changedCount = 0;
  for (Node &node : after.nodes) {
    if (node.kind == OpKind::Argument)
      continue;
    auto it = remaining.find(node.fingerprint);
    if (it != remaining.end() && it->second > 0) {
      --it->second;
      node.changed = false;
    } else {
      node.changed = true;
      ++after.changedCount;
    }
  }
  after.removedCount = 0;
  for (const auto &[fingerprint, count] : remaining)
    after.removedCount += count;
}

} // namespace cuvil::graph
