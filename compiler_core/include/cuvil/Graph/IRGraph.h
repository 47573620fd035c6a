//===- IRGraph.h - Dataflow graphs of printed IR, as plain data -*- C++ -*-===//
//
// The narrow public interface the Workbench and cuvil-graph use to turn the
// printed IR of one pipeline snapshot into a graph: ops are nodes, SSA
// use-def chains are edges, ops with regions are clusters. Text in, plain
// data and DOT out; no MLIR headers here.
//
// Snapshot IR is printed with pretty debug locations ("file:line:col"),
// which MLIR's parser does not read back, so the graph is recovered from the
// printed form directly: one op per line, regions delimited by braces,
// SSA names scoped per region as MLIR's printer scopes them.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_GRAPH_IRGRAPH_H
#define CUVIL_GRAPH_IRGRAPH_H

#include <string>
#include <vector>

namespace cuvil::graph {

/// What an op does, for colouring and legends.
enum class OpKind {
  Argument,    ///< function or block argument
  Block,       ///< a basic block of a multi-block function body
  Contraction, ///< matmul, conv, batch matmul, fma, dot
  Elementwise, ///< arithmetic, math, activations, linalg.generic bodies
  Reduction,   ///< sum/mean/max reductions, softmax, layer norm
  Shape,       ///< reshape, transpose, broadcast, slices, casts
  Memory,      ///< allocation, loads, stores, copies, buffers
  Control,     ///< loops, branches, parallel regions, yields, returns
  Constant,
  Call,
  Other,
};

/// Lower-case kind name ("contraction", "elementwise", ...).
const char *opKindName(OpKind kind);
/// The kind of an op by its name ("linalg.matmul" -> Contraction).
OpKind classifyOp(const std::string &opName);
/// Fill colour for a kind, "#rrggbb".
const char *opKindColor(OpKind kind);

struct SourceLoc {
  std::string file; ///< empty when the op has no file location
  int line = 0;
  int column = 0;
  bool valid() const { return !file.empty() && line > 0; }
};

struct Node {
  int id = 0;          ///< index into IRGraph::nodes; "n<id>" in DOT
  std::string opName;  ///< "linalg.matmul", "%arg0" for arguments, "^bb3"
  OpKind kind = OpKind::Other;
  std::string results; ///< printed result names, "%3" or "%4:2"
  std::string type;    ///< result type summary, may be empty
  int irLine = 0;      ///< 1-based line of the op in the printed IR
  SourceLoc loc;       ///< the op's source location, when it has one
  int cluster = -1;    ///< innermost cluster containing the node, or -1
  int ownsCluster = -1; ///< cluster of this op's regions, or -1
  int collapsedOps = 0; ///< ops folded into this node when collapsed
  bool changed = false; ///< set by markChanged()
  /// What markChanged() compares: the op's text up to SSA names, its
  /// location, the ops producing its operands and the ops of its body.
  std::string signature;
};

struct Edge {
  int from = 0; ///< defining node
  int to = 0;   ///< using node
  std::string value; ///< SSA name of the value, "%2"
};

/// The body of an op with regions (a fused linalg.generic, a loop nest).
struct Cluster {
  int id = 0;
  int parent = -1; ///< enclosing cluster, or -1
  int owner = 0;   ///< node of the op that owns the regions
  std::string label;
};

struct IRGraph {
  std::string function; ///< symbol name of the graphed function
  int functionLine = 0; ///< 1-based line of its header
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<Cluster> clusters;
  int changedCount = 0; ///< nodes marked changed
  int removedCount = 0; ///< ops of the previous graph with no counterpart
};

struct GraphOptions {
  /// Function to graph; empty picks the first function with a body.
  std::string function;
  /// Draw each op with regions as one node instead of a cluster of its body
  /// (for big graphs: one node per fused region or loop nest).
  bool collapseRegions = false;
  /// Leave out scalar and index constants (they clutter lowered IR).
  bool hideConstants = false;
};

/// Builds the graph of one function of the printed IR in `irText`. On
/// failure (no function found, unbalanced regions) returns false and sets
/// `error` to "line N: what went wrong".
bool buildGraph(const std::string &irText, const GraphOptions &options,
                IRGraph &graph, std::string &error);

/// Marks the nodes of `after` that have no counterpart in `before` (equal
/// Node::signature: same op text up to SSA names, same location, same
/// producing ops, same body) as changed and counts the ops of `before` that
/// disappeared.
void markChanged(const IRGraph &before, IRGraph &after);

/// Names of the functions with a body in `irText`, in order.
std::vector<std::string> listFunctions(const std::string &irText);

struct DotOptions {
  bool colorByKind = true;
  /// Outline changed nodes in red with a thick pen.
  bool highlightChanged = true;
  /// Graphviz spline routing; "true" (curved), "polyline" or "line".
  /// Big graphs lay out much faster with "line".
  std::string splines = "true";
  /// Bound Graphviz's crossing minimization and network simplex passes:
  /// a 2,000-op graph lays out in well under 2 s instead of ~20 s, with
  /// somewhat more edge crossings.
  bool fastLayout = false;
};

/// The graph as Graphviz DOT. Every node carries `op`, `kind`, `irline`,
/// `loc` (file:line) and `changed` attributes so that a viewer can link a
/// drawn node back to the IR and the Python source.
std::string toDot(const IRGraph &graph, const DotOptions &options = {});

} // namespace cuvil::graph

#endif // CUVIL_GRAPH_IRGRAPH_H
