//===- ProfileData.h - A loaded trace and its aggregates --------*- C++ -*-===//
//
// Everything the profiler views show is computed here, off the GUI thread:
// reading a trace file, the timeline's lanes (one per thread and event kind,
// with each event's nesting row), the whole-trace call tree and per-op
// table, and the aggregates of a selected time range.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_WORKBENCH_PROFILEDATA_H
#define CUVIL_WORKBENCH_PROFILEDATA_H

#include "cuvil/Profiler/Analysis.h"
#include "cuvil/Profiler/Formats.h"

#include <QString>

#include <memory>
#include <vector>

namespace cuvil::workbench {

namespace prof = cuvil::profiler;

/// One span of a timeline row: an event with its end clipped to its
/// enclosing event, so that starts and ends both grow along a row.
struct RowSpan {
  static constexpr uint32_t kNoFrame = UINT32_MAX;
  int64_t startNs = 0;
  int64_t endNs = 0;
  uint32_t event = 0;
  /// For the caller rows of a Python track: the stack frame on the stack
  /// during `event` (spans of touching calls with the same frame merge).
  uint32_t frame = kNoFrame;
};

/// The events of one kind on one thread, split into nesting rows. Python
/// tracks start with one row per caller frame of their calls' Python
/// stacks (root first, `stackRows` of them), then the calls themselves.
struct TimelineTrack {
  prof::EventKind kind = prof::EventKind::Other;
  uint32_t thread = 0;
  QString group; ///< "Python stack", "NVTX ranges", "CPU kernels", ...
  QString label; ///< "process / thread"
  std::vector<std::vector<RowSpan>> rows; ///< rows[depth], by start time
  size_t stackRows = 0;
  size_t eventCount = 0;
};

/// The lane group title of an event kind ("GPU kernels").
QString trackGroupName(prof::EventKind kind);
/// Tracks of a sorted trace (Trace::sortEvents order): grouped by kind in
/// the order Python, NVTX, CPU kernels, GPU kernels, copies, runtime API,
/// other; by thread within a kind.
std::vector<TimelineTrack> buildTimelineTracks(const prof::Trace &trace);

/// The flow arrows of a trace (launch → kernel, call → kernel) by event,
/// both ways, in compressed rows.
class FlowIndex {
public:
  FlowIndex() = default;
  explicit FlowIndex(const prof::Trace &trace);
  /// Events that `event` has a flow to.
  std::vector<uint32_t> targets(uint32_t event) const;
  /// Events that have a flow to `event`.
  std::vector<uint32_t> sources(uint32_t event) const;

private:
  static std::vector<uint32_t> slice(const std::vector<uint32_t> &offsets,
                                     const std::vector<uint32_t> &values,
                                     uint32_t event);
  std::vector<uint32_t> outOffsets, outEvents, inOffsets, inEvents;
};

/// A trace ready for the views. Immutable once built; shared between the
/// GUI thread and the workers that aggregate selections.
struct Profile {
  std::shared_ptr<const prof::Trace> trace;
  QString path; ///< the file it came from, or a name for in-memory traces
  int64_t beginNs = 0, endNs = 0;
  std::vector<TimelineTrack> tracks;
  prof::CallTree callTree;      ///< of the whole trace
  std::vector<prof::OpRow> ops; ///< of the whole trace, by total time
  FlowIndex flows;
  double readSeconds = 0, analyzeSeconds = 0;
};

/// The result of loading: a profile, or the error to show the user.
struct ProfileLoad {
  std::shared_ptr<const Profile> profile;
  QString error;
};

/// Reads `path` (any format readTraceFile knows) and analyzes it. Safe to
/// run on any thread. A malformed file yields the reader's error text.
ProfileLoad loadProfile(const QString &path);
/// Analyzes an in-memory trace (sorted here when it is not).
std::shared_ptr<const Profile> analyzeProfile(prof::Trace trace,
                                              const QString &name);

/// The call tree and per-op rows of a part of a trace.
struct Aggregates {
  prof::Selection selection;
  prof::CallTree callTree;
  std::vector<prof::OpRow> ops;
};
Aggregates aggregate(const prof::Trace &trace,
                     const prof::Selection &selection);

/// The most characters of a name that models hand to views.
constexpr int kMaxDisplayChars = 1000;
/// A name (frame, event, thread) as the views show it: decoded from UTF-8
/// (bytes that are not become U+FFFD) and, past kMaxDisplayChars, cut with
/// "…". Only that prefix is decoded, so a 5 MB name costs what a short one
/// does in layout and paint. Every name crossing into the views goes
/// through here, so names compared between views are cut the same way.
QString displayText(std::string_view text);

/// "12 ns", "3.40 µs", "1.25 ms", "2.003 s".
QString formatDuration(int64_t ns);
/// "+1.25 ms" / "-3.40 µs" / "0 ns".
QString formatDelta(int64_t ns);
/// The last path component of a "file:line:col" location, keeping the
/// line and column ("/a/b/model.py:3:9" → "model.py:3:9").
QString shortLocation(const QString &loc);

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_PROFILEDATA_H
