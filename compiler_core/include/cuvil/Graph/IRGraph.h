//===- IRGraph.h - Dataflow graphs of IR, as plain data ---------*- C++ -*-===//
//
// The graph of one function of a pipeline snapshot as plain data: ops are
// nodes, SSA use-def chains are edges, ops with regions are clusters. The
// graph is built where MLIR is loaded (cuvil/Graph/GraphBuilder.h, used by
// cuvil-graph) and crosses to the Workbench as JSON, so this header and its
// library (CuvilGraphData) have no MLIR dependency: the GUI links them
// without linking MLIR.
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
/// The kind named `name` (the inverse of opKindName); false when no kind
/// has that name.
bool opKindFromName(const std::string &name, OpKind &kind);
/// Fill colour for a kind, "#rrggbb".
const char *opKindColor(OpKind kind);

struct SourceLoc {
  std::string file; ///< empty when the op has no file location
  int line = 0;
  int column = 0;
  bool valid() const { return !file.empty() && line > 0; }
};

struct Node {
  int id = 0;         ///< index into IRGraph::nodes; "n<id>" in DOT
  std::string opName; ///< "linalg.matmul", "%arg0" for arguments, "^bb3"
  OpKind kind = OpKind::Other;
  std::string results; ///< printed result names, "%3" or "%4:2"
  std::string type;    ///< result type summary, may be empty
  int irLine = 0;      ///< 1-based line of the op in the printed IR
  SourceLoc loc;       ///< the op's source location, when it has one
  /// The name of the op's NameLoc, when it has one: the node name of an
  /// imported model ("node_7"), an FX node in its nn.Module path
  /// ("stem.0/convolution": a NameLoc's scopes are the NameLocs it is
  /// nested around).
  std::string locName;
  int cluster = -1;     ///< innermost cluster containing the node, or -1
  int ownsCluster = -1; ///< cluster of this op's regions, or -1
  int collapsedOps = 0; ///< ops folded into this node when collapsed
  bool changed = false; ///< set by markChanged()
  /// Structural hash of the op (name, attributes, types, location, the ops
  /// producing its operands, the ops of its body), as hex; equal across
  /// snapshots for an op a pass left alone. What markChanged() compares.
  std::string fingerprint;
};

struct Edge {
  int from = 0;      ///< defining node
  int to = 0;        ///< using node
  std::string value; ///< SSA name of the value, "%2", or a block, "^bb1"
};

/// The body of an op with regions (a fused linalg.generic, a loop nest).
struct Cluster {
  int id = 0;
  int parent = -1; ///< enclosing cluster (always < id), or -1
  int owner = 0;   ///< node of the op that owns the regions
  std::string label;
};

/// One GPU kernel launch in the module: `gpu.launch` (before outlining) or
/// `gpu.launch_func`, with its launch configuration as the IR states it.
struct KernelLaunch {
  int irLine = 0;     ///< 1-based line of the launch op
  std::string kernel; ///< "cuvil_kernels::f_k0"; "gpu.launch" when inline
  /// What it runs: the fused ops named for its location by
  /// cuvil-tag-kernels ("linalg.fill + linalg.matmul"); empty when untagged.
  std::string ops;
  SourceLoc loc; ///< the launch's source location
  /// Grid (blocks) and block (threads) extents x, y, z; -1 where the
  /// extent is not a constant (a dynamic shape).
  int grid[3] = {-1, -1, -1};
  int block[3] = {-1, -1, -1};
  /// Shared memory per block in bytes: the kernel's static buffers
  /// (workgroup attributions, or address space 3 globals once lowered to
  /// LLVM), -1 when the kernel's body is not in the IR (a gpu.binary) or a
  /// buffer has a dynamic size; and the launch's dynamic shared memory, -1
  /// when not a constant.
  int staticSharedBytes = 0;
  int dynamicSharedBytes = 0;
};

struct IRGraph {
  std::string function; ///< symbol name of the graphed function
  int functionLine = 0; ///< 1-based line of its header
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<Cluster> clusters;
  int changedCount = 0; ///< nodes marked changed
  int removedCount = 0; ///< ops of the previous graph with no counterpart
  /// Every kernel launch of the module (not only of the graphed function),
  /// in IR order.
  std::vector<KernelLaunch> launches;
};

struct GraphOptions {
  /// Function to graph; empty picks the first function with a body. A
  /// function nested in another symbol table is named "k::f" (gpu.func @f
  /// in gpu.module @k); its plain name also selects it.
  std::string function;
  /// Draw each op with regions as one node instead of a cluster of its body
  /// (for big graphs: one node per fused region or loop nest).
  bool collapseRegions = false;
  /// Leave out constants (they clutter lowered IR).
  bool hideConstants = false;
};

/// Marks the nodes of `after` that have no counterpart in `before` (equal
/// Node::fingerprint) as changed and counts the ops of `before` that
/// disappeared. Arguments are never marked.
void markChanged(const IRGraph &before, IRGraph &after);

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
/// `loc` (file:line), `locname` and `changed` attributes so that a viewer
/// can link a drawn node back to the IR and the Python source.
std::string toDot(const IRGraph &graph, const DotOptions &options = {});

/// "(2, 2, 1)": grid or block extents, "?" for one that is not a constant.
std::string extentsText(const int (&extents)[3]);
/// Blocks in a grid or threads in a block; -1 when an extent is unknown.
long long extentProduct(const int (&extents)[3]);
/// One line per kernel launch: "line 40: cuvil_kernels::f_k0 grid (2, 2, 1)
/// block (16, 16, 1) shared 8512 B + dynamic 0 B: linalg.matmul at
/// m.py:6:37".
std::string launchesText(const IRGraph &graph);

/// The graph as one JSON object (the format cuvil-graph --json prints).
std::string toJson(const IRGraph &graph);

/// Reads a graph written by toJson(), typically by another process: every
/// field is type- and bounds-checked (node, edge and cluster references in
/// range, cluster nesting acyclic and shallow, sizes bounded), so a
/// malformed or hostile document yields an error, never a graph that
/// crashes its users. On failure returns false and sets `error` to what is
/// wrong and where ("nodes[3].cluster: 7 is not a cluster index ...").
bool fromJson(const std::string &json, IRGraph &graph, std::string &error);

} // namespace cuvil::graph

#endif // CUVIL_GRAPH_IRGRAPH_H
