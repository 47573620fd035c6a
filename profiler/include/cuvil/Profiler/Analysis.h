//===- Analysis.h - Aggregations of a trace for tables and flame graphs ---===//
//
// Per-op tables (count, total, self, p50, p99), call trees for flame graphs
// and icicles (merged identical frames), the diff of two call trees, search,
// timeline tracks, all optionally restricted to a time range or event kinds.
// These are the data behind the Workbench views; they hold no widgets.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PROFILER_ANALYSIS_H
#define CUVIL_PROFILER_ANALYSIS_H

#include "cuvil/Profiler/Trace.h"

#include <string>
#include <string_view>
#include <vector>

namespace cuvil::profiler {

/// What part of a trace to aggregate.
struct Selection {
  int64_t beginNs = INT64_MIN; ///< events are clipped to [beginNs, endNs)
  int64_t endNs = INT64_MAX;
  uint32_t kindMask = ~0u; ///< bit (1 << int(EventKind)) per included kind

  static uint32_t bit(EventKind kind) { return 1u << unsigned(kind); }
  bool includes(EventKind kind) const { return kindMask & bit(kind); }
};

/// How per-op rows are keyed.
enum class GroupBy {
  Name, ///< the event name (kernel or op name)
  OpId, ///< the IR op id (events without one are grouped by name)
};

struct OpRow {
  std::string name;
  EventKind kind = EventKind::Other;
  int64_t opId = kNoOp;
  std::string loc;
  std::string node; ///< model node name (the events' "node" argument)
  uint64_t count = 0;
  int64_t totalNs = 0;
  int64_t selfNs = 0; ///< total minus nested children on the same thread
  int64_t p50Ns = 0;
  int64_t p99Ns = 0;
  int64_t maxNs = 0;
};

/// One row per op, sorted by total time (descending, then name).
std::vector<OpRow> opTable(const Trace &trace, const Selection &selection = {},
                           GroupBy groupBy = GroupBy::Name);
/// The nearest-rank percentile (0 < p <= 100) of unsorted values.
int64_t percentile(std::vector<int64_t> values, double p);
/// A fixed-width text table of `rows` (at most `top`, 0 = all).
std::string formatOpTable(const std::vector<OpRow> &rows, size_t top = 0);

/// What a flame frame shows before its location: "name", then " [node]"
/// for a model node, then " #instance" for one of several ops that share
/// name, node and line ("cuvil.add #2").
std::string frameTitle(std::string_view name, std::string_view node = {},
                       uint32_t instance = 0);
/// frameTitle plus " (file:line)" when there is a file: the text of a frame
/// in printed trees and folded stacks, and what diffs match frames by.
std::string frameLabel(std::string_view name, std::string_view node,
                       uint32_t instance, std::string_view file, uint32_t line);

/// What a flame frame is and shows, shared by call and diff trees.
struct FlameFrame {
  std::string name;
  std::string file; ///< source file of the frame, empty if none
  uint32_t line = 0;
  std::string node; ///< model node name, empty if none
  /// 1-based rank by IR op among sibling frames that differ only in their
  /// op (op ids are per process; ranks are the same in every run of the
  /// same program), 0 when no sibling does. Set by CallTree::finalize.
  uint32_t instance = 0;

  std::string label() const {
    return frameLabel(name, node, instance, file, line);
  }
};

/// A flame graph's tree: node 0 is the root, children merge equal frames.
///
/// Frames are the same frame when name, file and line are equal and they
/// come from the same model node (the events' "node" argument) or, for
/// frames without one, the same IR op: two convolutions made on one source
/// line (an `nn.Sequential` line, a loop) stay two frames, while one op
/// called many times is one frame. Frames with neither (Python frames,
/// imported text formats) merge by name, file and line.
class CallTree {
public:
  struct Node : FlameFrame {
    /// The IR op of the frame's first event, kNoOp if none; part of the
    /// frame's identity only when it has no model node name.
    int64_t opId = kNoOp;
    uint32_t parent = 0;
    std::vector<uint32_t> children;
    int64_t totalNs = 0;
    int64_t selfNs = 0;
    uint64_t count = 0; ///< events (or folded lines) that ended here
    uint32_t depth = 0;
  };

  /// Builds the tree of `trace`: an event's path is the path of the event
  /// enclosing it on its thread, or its Python stack when it is outermost,
  /// followed by its own name.
  static CallTree build(const Trace &trace, const Selection &selection = {});

  const std::vector<Node> &nodes() const { return nodeList; }
  const Node &root() const { return nodeList[0]; }
  /// The first child of `parent` with this name, location and model node,
  /// or 0 if there is none.
  uint32_t child(uint32_t parent, std::string_view name,
                 std::string_view file = {}, uint32_t line = 0,
                 std::string_view node = {}) const;
  /// Whether `a` and `b` are one frame (see the class comment).
  static bool sameFrame(const Node &a, const Node &b);
  /// frameLabel of a node.
  std::string label(uint32_t node) const { return nodeList[node].label(); }
  /// The frames from the root's child down to `node`.
  std::vector<uint32_t> path(uint32_t node) const;
  /// The module a frame belongs to (file stem, or the text before the first
  /// '.' of a dotted name such as "cuvil.matmul"), for colouring.
  std::string module(uint32_t node) const;

  /// Nodes whose name or model node contains `text` (case-insensitive), and the
  /// time they cover without counting a match nested in another match twice.
  struct SearchResult {
    std::vector<uint32_t> matches;
    int64_t coveredNs = 0;
  };
  SearchResult search(std::string_view text) const;

  /// A tree whose root is `node` (zooming into a frame).
  CallTree subtree(uint32_t node) const;
  /// Sorted, indented text, children by total time: "name total self".
  /// Frames deeper than 64 levels show "[depth N]" instead of more indent.
  /// Like every walk of the tree, this uses no recursion: any depth works.
  std::string print(uint32_t maxDepth = UINT32_MAX) const;
  /// Folded stacks of the tree weighted by self time.
  std::string folded() const;

  /// Adds `weightNs` of self time along a root-first list of frames (their
  /// name, file, line, node and opId count).
  void addPath(const std::vector<const Node *> &frames, int64_t weightNs);
  uint32_t addChild(uint32_t parent, std::string_view name,
                    std::string_view file, uint32_t line);
  /// The child of `parent` that is the same frame as `frame`, added when
  /// there is none.
  uint32_t addChild(uint32_t parent, const Node &frame);
  /// Recomputes totals from self times and instance numbers (after
  /// addPath/addChild edits).
  void finalize();

  CallTree();

private:
  void numberInstances();
  std::vector<Node> nodeList;
};

/// The per-frame difference of two call trees (baseline → current).
struct DiffNode : FlameFrame {
  uint32_t parent = 0;
  std::vector<uint32_t> children;
  int64_t baselineTotalNs = 0, currentTotalNs = 0;
  int64_t baselineSelfNs = 0, currentSelfNs = 0;
  int64_t deltaTotalNs() const { return currentTotalNs - baselineTotalNs; }
  int64_t deltaSelfNs() const { return currentSelfNs - baselineSelfNs; }
};

class DiffTree {
public:
  /// Frames match by their frameLabel under matching parents: by name,
  /// location, model node and instance, not by op ids (which differ from
  /// run to run), and a frame read back from folded stacks matches the
  /// frame it was written from. A frame left without a match takes one that
  /// differs only in instance, in order (a run with one op fewer on a line).
  static DiffTree build(const CallTree &baseline, const CallTree &current);
  const std::vector<DiffNode> &nodes() const { return nodeList; }
  /// "name base→cur (+delta)" per frame; '+' is slower (red), '-' faster.
  std::string print() const;

private:
  std::vector<DiffNode> nodeList;
};

/// A timeline track: the events of one kind on one thread, by start time.
struct Track {
  uint32_t thread = 0;
  EventKind kind = EventKind::Other;
  std::string label; ///< "process / thread · kind"
  std::vector<uint32_t> events;
  uint32_t maxDepth = 0; ///< nesting depth (rows the track needs)
};
/// Expects a sorted trace (Trace::sortEvents), as every importer and
/// EventRecorder::takeTrace return; track events index trace.events.
std::vector<Track> buildTracks(const Trace &trace);

/// Indices of events overlapping [beginNs, endNs), in index order.
std::vector<uint32_t> eventsInRange(const Trace &trace, int64_t beginNs,
                                    int64_t endNs);

} // namespace cuvil::profiler

#endif // CUVIL_PROFILER_ANALYSIS_H
