//===- DotWriter.cpp - Graphviz DOT for IR graphs -------------------------===//

#include "cuvil/Graph/IRGraph.h"

#include <sstream>

namespace cuvil::graph {
namespace {

std::string quote(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// Whether byte `i` of `text` continues a UTF-8 character.
bool continuesCharacter(const std::string &text, size_t i) {
  return i < text.size() &&
         (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
}

/// `text` cut to at most `size` bytes in its middle, at UTF-8 character
/// boundaries: a node name's start (the module or graph scope) and its end
/// (the node itself) say the most ("features.bn1/..._legit_no_training").
std::string shortenInMiddle(const std::string &text, size_t size) {
  if (text.size() <= size)
    return text;
  size_t head = (size - 3) / 2;
  while (head > 0 && continuesCharacter(text, head))
    --head;
  size_t tail = text.size() - (size - 3 - head);
  while (continuesCharacter(text, tail))
    ++tail;
  return text.substr(0, head) + "..." + text.substr(tail);
}

std::string locText(const SourceLoc &loc) {
  return loc.valid() ? loc.file + ":" + std::to_string(loc.line) : "";
}

class DotWriter {
public:
  DotWriter(const IRGraph &graph, const DotOptions &options)
      : graph(graph), options(options) {
    nodesOf.resize(graph.clusters.size() + 1);
    childrenOf.resize(graph.clusters.size() + 1);
    for (const Node &node : graph.nodes)
      nodesOf[node.cluster + 1].push_back(node.id);
    for (const Cluster &cluster : graph.clusters)
      childrenOf[cluster.parent + 1].push_back(cluster.id);
  }

  std::string write() {
    out << "digraph " << quote(graph.function.empty() ? "ir" : graph.function)
        << " {\n";
    out << "  graph [rankdir=TB, compound=true, fontname=\"Helvetica\", "
           "fontsize=10, nodesep=0.25, ranksep=0.35, splines="
        << options.splines;
    if (options.fastLayout)
      out << ", mclimit=0.05, nslimit=0.2, nslimit1=0.2, remincross=false";
    out << "];\n";
    out << "  node [shape=box, style=\"rounded,filled\", "
           "fontname=\"Helvetica\", fontsize=10, height=0.3, "
           "fillcolor=\"#ffffff\"];\n";
    out << "  edge [arrowsize=0.6, color=\"#777777\"];\n";
    writeContents(-1, "  ");
    for (const Edge &edge : graph.edges)
      out << "  n" << edge.from << " -> n" << edge.to
          << " [tooltip=" << quote(edge.value) << "];\n";
    out << "}\n";
    return out.str();
  }

private:
  void writeContents(int cluster, const std::string &indent) {
    for (int id : nodesOf[cluster + 1])
      writeNode(graph.nodes[id], indent);
    for (int child : childrenOf[cluster + 1]) {
      const Cluster &c = graph.clusters[child];
      out << indent << "subgraph cluster_" << c.id << " {\n";
      out << indent << "  label=" << quote(c.label)
          << "; style=\"rounded,dashed\"; color=\"#7f7fb2\"; "
             "fontcolor=\"#555588\"; owner=\"n"
          << c.owner << "\";\n";
      writeContents(child, indent + "  ");
      out << indent << "}\n";
    }
  }

  void writeNode(const Node &node, const std::string &indent) {
    std::string label = node.opName;
    if (node.collapsedOps > 0)
      label += " (" + std::to_string(node.collapsedOps) +
               (node.collapsedOps == 1 ? " op)" : " ops)");
    // An imported model's node name says which layer this is; long module
    // paths are shortened to keep boxes narrow.
    if (!node.locName.empty())
      label += "\n" + shortenInMiddle(node.locName, 36);
    if (!node.type.empty())
      label += "\n" + node.type;
    out << indent << "n" << node.id << " [label=" << quote(label)
        << ", op=" << quote(node.opName) << ", kind=\"" << opKindName(node.kind)
        << "\", irline=" << node.irLine << ", loc=" << quote(locText(node.loc))
        << ", changed=" << (node.changed ? "true" : "false")
        << ", locname=" << quote(node.locName);
    if (options.colorByKind)
      out << ", fillcolor=\"" << opKindColor(node.kind) << "\"";
    if (node.kind == OpKind::Argument)
      out << ", shape=ellipse";
    if (options.highlightChanged && node.changed)
      out << ", color=\"#d62728\", penwidth=2.5";
    out << "];\n";
  }

  const IRGraph &graph;
  const DotOptions &options;
  std::ostringstream out;
  std::vector<std::vector<int>> nodesOf;    ///< by cluster + 1
  std::vector<std::vector<int>> childrenOf; ///< by parent cluster + 1
};

} // namespace

std::string toDot(const IRGraph &graph, const DotOptions &options) {
  return DotWriter(graph, options).write();
}

} // namespace cuvil::graph
