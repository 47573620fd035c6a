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

/// A flame graph's tree: node 0 is the root, children merge equal frames.
class CallTree {
public:
  struct Node {
    std::string name;
    std::string file; ///< source file of the frame, empty if none
    uint32_t line = 0;
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
  /// The child of `parent` with this frame, or 0 if there is none.
  uint32_t child(uint32_t parent, std::string_view name,
                 std::string_view file = {}, uint32_t line = 0) const;
  /// The frames from the root's child down to `node`.
  std::vector<uint32_t> path(uint32_t node) const;
  /// The module a frame belongs to (file stem, or the text before the first
  /// '.' of a dotted name such as "cuvil.matmul"), for colouring.
  std::string module(uint32_t node) const;

  /// Nodes whose name contains `text` (case-insensitive), and the time they
  /// cover without counting a match nested in another match twice.
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

  /// Adds `weightNs` of self time along a root-first list of frames.
  void addPath(const std::vector<const Node *> &frames, int64_t weightNs);
  uint32_t addChild(uint32_t parent, std::string_view name,
                    std::string_view file, uint32_t line);
  /// Recomputes totals from self times (after addPath/addChild edits).
  void finalize();

  CallTree();

private:
  std::vector<Node> nodeList;
};

/// The per-frame difference of two call trees (baseline → current).
struct DiffNode {
  std::string name;
  std::string file;
  uint32_t line = 0;
  uint32_t parent = 0;
  std::vector<uint32_t> children;
  int64_t baselineTotalNs = 0, currentTotalNs = 0;
  int64_t baselineSelfNs = 0, currentSelfNs = 0;
  int64_t deltaTotalNs() const { return currentTotalNs - baselineTotalNs; }
  int64_t deltaSelfNs() const { return currentSelfNs - baselineSelfNs; }
};

class DiffTree {
public:
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
