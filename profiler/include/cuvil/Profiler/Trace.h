//===- Trace.h - The profiler's trace model: events, threads, stacks ------===//
//
// A Trace is a plain value: interned strings, a thread table, an interned
// table of stack frames and stacks (a prefix tree), and a flat array of
// small POD events. Every importer produces one, every exporter and every
// aggregation consumes one. Times are nanoseconds on one clock per trace.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PROFILER_TRACE_H
#define CUVIL_PROFILER_TRACE_H

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cuvil::profiler {

/// Index into a StringTable. Id 0 is always the empty string.
using StringId = uint32_t;
/// Index into Trace::frames.
using FrameId = uint32_t;
/// Index into Trace::stacks; kNoStack for "no Python stack".
using StackId = uint32_t;
inline constexpr StackId kNoStack = UINT32_MAX;
/// kNoOp marks an event that is not attributed to an IR op.
inline constexpr int64_t kNoOp = -1;
inline constexpr uint32_t kNoArgs = UINT32_MAX;
/// Event argument holding the model node an IR op came from ("node_7").
inline constexpr const char *kNodeArg = "node";
/// Process ids of GPU "processes" (one per device, tid = stream): above any
/// Linux pid (at most 2^22) yet within 31 bits, which trace viewers such as
/// Perfetto read pids and tids as.
inline constexpr int64_t kGpuProcessBase = 0x7F000000;
/// Ids given to threads and processes that a trace names by string.
inline constexpr int64_t kNamedIdBase = 0x7E000000;

/// What produced an event; views put each kind on its own track.
enum class EventKind : uint8_t {
  Python,     ///< a Python-level call (the frame that called compiled code)
  Nvtx,       ///< an NVTX range or marker
  CpuKernel,  ///< a compiled kernel or fused region run on the CPU
  GpuKernel,  ///< a kernel on a GPU stream
  Memcpy,     ///< a memory copy or memset on a GPU stream
  RuntimeApi, ///< a CUDA runtime/driver call on a host thread
  Other,      ///< anything else an imported trace contains
};
inline constexpr int kEventKindCount = 7;

/// Stable lower-case names ("python", "nvtx", "cpu_kernel", "gpu_kernel",
/// "memcpy", "runtime_api", "other"), used as the Chrome trace category.
const char *eventKindName(EventKind kind);
/// The inverse of eventKindName; false when the text names no kind.
bool parseEventKind(std::string_view text, EventKind &kind);

/// Interns strings: equal strings get equal ids, ids stay valid forever.
class StringTable {
public:
  StringTable();
  StringTable(const StringTable &other);
  StringTable &operator=(const StringTable &other);
  StringTable(StringTable &&) = default;
  StringTable &operator=(StringTable &&) = default;

  StringId intern(std::string_view text);
  std::string_view get(StringId id) const { return strings[id]; }
  size_t size() const { return strings.size(); }

private:
  void rebuildIndex();
  // A deque never moves its elements, so the views in `index` stay valid.
  std::deque<std::string> strings;
  std::unordered_map<std::string_view, StringId> index;
};

/// A source-level frame: a Python function at a line, or a named region.
struct Frame {
  StringId name = 0;
  StringId file = 0; ///< 0 when the frame has no source file
  uint32_t line = 0;
  bool operator==(const Frame &o) const {
    return name == o.name && file == o.file && line == o.line;
  }
};

/// One node of the stack prefix tree: a frame below its caller's stack.
struct StackNode {
  FrameId frame = 0;
  StackId parent = kNoStack;
};

/// A host thread or a device stream; events reference it by index.
struct ThreadInfo {
  int64_t pid = 0;
  int64_t tid = 0;
  StringId name = 0;        ///< thread or stream name, 0 when unknown
  StringId processName = 0; ///< 0 when unknown
};

/// A span of time (durationNs 0 for an instant). 64 bytes.
struct Event {
  int64_t startNs = 0;
  int64_t durationNs = 0;
  int64_t opId = kNoOp;     ///< the IR op this event ran, kNoOp if none
  uint64_t correlation = 0; ///< joins launches, kernels and NVTX; 0 if none
  StringId name = 0;
  StringId category = 0;    ///< the producer's own category text
  StringId loc = 0;         ///< "file:line:col" of the IR op, 0 if none
  uint32_t thread = 0;      ///< index into Trace::threads
  StackId stack = kNoStack; ///< the Python stack that launched it
  uint32_t args = kNoArgs;  ///< index into Trace::args
  EventKind kind = EventKind::Other;

  int64_t endNs() const { return startNs + durationNs; }
};

/// A flow arrow between two events (by index): launch → kernel.
struct Flow {
  uint32_t from = 0;
  uint32_t to = 0;
};

using ArgList = std::vector<std::pair<StringId, StringId>>;

/// A whole profile. Build it through the helpers so that strings, frames,
/// stacks and threads stay interned.
class Trace {
public:
  StringTable strings;
  std::vector<ThreadInfo> threads;
  std::vector<Frame> frames;
  std::vector<StackNode> stacks;
  std::vector<Event> events;
  std::vector<Flow> flows;
  std::vector<ArgList> args;

  Trace() = default;
  Trace(const Trace &other);
  Trace &operator=(const Trace &other);
  Trace(Trace &&) = default;
  Trace &operator=(Trace &&) = default;

  StringId intern(std::string_view text) { return strings.intern(text); }
  std::string_view str(StringId id) const { return strings.get(id); }

  /// The index of thread (pid, tid), created on first use.
  uint32_t thread(int64_t pid, int64_t tid);
  FrameId frame(std::string_view name, std::string_view file = {},
                uint32_t line = 0);
  FrameId frame(const Frame &f);
  /// The stack `parent` extended by `frame` (interned).
  StackId stack(StackId parent, FrameId frame);
  /// Interns a root-first list of frames; kNoStack for an empty list.
  StackId stack(const std::vector<FrameId> &rootFirst);
  /// The frames of `id`, root first.
  std::vector<FrameId> stackFrames(StackId id) const;
  /// Adds a key/value list and returns its index for Event::args.
  uint32_t addArgs(ArgList list);
  /// The value of argument `key` of `event`, empty when absent.
  std::string_view arg(const Event &event, std::string_view key) const;

  /// Adds every thread, event, flow and argument of `other` (its strings,
  /// frames and stacks interned here): a device trace joining the host's.
  void append(const Trace &other);

  /// Sorts events by thread, start time, then longest first (parents before
  /// children), keeping flows pointing at the same events.
  void sortEvents();
  /// Earliest start and latest end over all events (0, 0 when empty).
  std::pair<int64_t, int64_t> timeBounds() const;

  /// Joins device work to the host call that launched it: every GpuKernel or
  /// Memcpy event whose correlation id matches a RuntimeApi (or Python)
  /// event gets a flow from it and, when unset, the launcher's IR op, loc and
  /// a stack made of the launcher's own stack plus the names of the events
  /// enclosing it on its thread (NVTX ranges, Python calls) and itself.
  void linkLaunches();

private:
  struct PairHash {
    size_t operator()(const std::pair<uint64_t, uint64_t> &p) const {
      return std::hash<uint64_t>()(p.first * 0x9E3779B97F4A7C15ULL ^ p.second);
    }
  };
  void rebuildIndexes();
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, PairHash>
      threadIndex, frameIndex, stackIndex;
};

} // namespace cuvil::profiler

#endif // CUVIL_PROFILER_TRACE_H
