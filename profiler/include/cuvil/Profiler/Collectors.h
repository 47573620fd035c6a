//===- Collectors.h - Recording events: steady clock, NVTX, CUPTI ---------===//
//
// EventRecorder is what the runtime calls around every kernel: when it is
// disabled a scope costs one relaxed atomic load. NvtxRange names a kernel
// for Nsight Systems (free without a tool attached). CuptiCollector gathers
// GPU activity through a dlopen'ed libcupti.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PROFILER_COLLECTORS_H
#define CUVIL_PROFILER_COLLECTORS_H

#include "cuvil/Profiler/Formats.h"
#include "cuvil/Profiler/Trace.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil::profiler {

/// Nanoseconds of std::chrono::steady_clock, the recorder's clock.
int64_t steadyNowNs();

/// One recorded span; ids refer to the recorder's tables.
struct RecordedEvent {
  int64_t startNs = 0;
  int64_t endNs = 0;
  int64_t opId = kNoOp;
  uint64_t correlation = 0;
  uint32_t name = 0; ///< from EventRecorder::intern
  uint32_t loc = 0;  ///< from EventRecorder::intern, 0 = none
  /// The model node the IR op came from (an ONNX node, an FX node, from a
  /// NameLoc), from EventRecorder::intern, 0 = none; becomes the event's
  /// "node" argument.
  uint32_t node = 0;
  uint32_t stack = kNoStack; ///< from EventRecorder::internStack
  uint32_t tid = 0;          ///< filled in by the recorder
  EventKind kind = EventKind::CpuKernel;
};

/// A Python frame as the runtime captures it.
struct PythonFrame {
  std::string function;
  std::string file;
  uint32_t line = 0;
};

/// Thread-safe recorder with a buffer per thread. Typical runtime use:
///
///   auto &rec = EventRecorder::global();
///   // once per compiled function:
///   uint32_t name = rec.intern("cuvil.matmul"), loc = rec.intern("m.py:3:9");
///   // per call, only when rec.enabled():
///   uint32_t stack = rec.internStack(framesOfTheCaller);
///   { EventRecorder::Scope s(rec, name, opId, loc, stack); runKernel(); }
///   Trace t = rec.takeTrace();
class EventRecorder {
public:
  EventRecorder();
  ~EventRecorder();
  EventRecorder(const EventRecorder &) = delete;
  EventRecorder &operator=(const EventRecorder &) = delete;

  /// The process-wide recorder the runtime and the Python API share.
  static EventRecorder &global();

  bool enabled() const { return on.load(std::memory_order_relaxed); }
  void setEnabled(bool enable) { on.store(enable, std::memory_order_relaxed); }

  /// Interns a name or loc string (thread-safe; do it once, not per event).
  uint32_t intern(std::string_view text);
  /// Interns a root-first Python stack; kNoStack for an empty one.
  uint32_t internStack(const std::vector<PythonFrame> &rootFirst);
  /// A fresh id joining a Python call to the kernels it launched.
  uint64_t newCorrelation() { return nextCorrelation.fetch_add(1) + 1; }

  /// Appends a finished event to the calling thread's buffer (if enabled).
  void record(RecordedEvent event);

  /// Times a region on the calling thread; inert when recording is off.
  class Scope {
  public:
    Scope(EventRecorder &recorder, uint32_t name, int64_t opId = kNoOp,
          uint32_t loc = 0, uint32_t stack = kNoStack,
          EventKind kind = EventKind::CpuKernel, uint64_t correlation = 0)
        : recorder(recorder.enabled() ? &recorder : nullptr) {
      if (this->recorder) {
        event.name = name;
        event.opId = opId;
        event.loc = loc;
        event.stack = stack;
        event.kind = kind;
        event.correlation = correlation;
        event.startNs = steadyNowNs();
      }
    }
    ~Scope() {
      if (recorder) {
        event.endNs = steadyNowNs();
        recorder->record(event);
      }
    }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    EventRecorder *recorder;
    RecordedEvent event;
  };

  /// Number of events buffered so far, over all threads.
  size_t size() const;
  /// Moves every buffered event out and builds a Trace of them: one thread
  /// per recording thread of this process, the interned stacks as frames,
  /// and flows from each Python event to the kernels sharing its
  /// correlation id. The string and stack tables are kept.
  Trace takeTrace(const std::string &processName = "cuvil");
  /// Drops buffered events (tables are kept).
  void clear();

private:
  struct ThreadBuffer;
  ThreadBuffer &localBuffer();

  std::atomic<bool> on{false};
  std::atomic<uint64_t> nextCorrelation{0};
  mutable std::mutex tablesMutex;
  Trace tables; // strings, frames and stacks only
  mutable std::mutex buffersMutex;
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;
  uint64_t generation;
};

/// True when this build wraps kernels in NVTX ranges (nvtx3 headers found).
bool nvtxAvailable();

/// An NVTX push/pop range in the "cuvil" domain, named after an IR op with
/// the op id as payload. Without an attached tool (Nsight Systems, CUPTI)
/// each call returns at once.
class NvtxRange {
public:
  NvtxRange(const char *opName, int64_t opId = kNoOp);
  ~NvtxRange();
  NvtxRange(const NvtxRange &) = delete;
  NvtxRange &operator=(const NvtxRange &) = delete;
};

/// Turns CUPTI activity records into trace events. Records are handed over
/// one by one as `const void *` pointing at a CUpti_Activity* struct of the
/// CUDA toolkit this was built against; strings are copied immediately.
class CuptiRecordParser {
public:
  CuptiRecordParser();
  /// Names runtime (true) or driver (false) API callbacks by id; without
  /// one, API events are named "cuda runtime <cbid>".
  std::function<std::string(bool runtime, uint32_t cbid)> callbackName;
  /// Returns false (and counts it) for a kind it does not convert.
  bool add(const void *record);
  /// Pairs NVTX start/end markers, applies external correlation ids as IR
  /// op ids, joins kernels to their launches, and returns the trace.
  Trace finish();
  uint64_t ignoredRecords() const { return ignored; }

private:
  struct OpenMarker {
    int64_t startNs;
    uint32_t thread;
    StringId name;
    bool cuvilDomain;
  };
  Trace trace;
  std::unordered_map<uint32_t, OpenMarker> openMarkers;
  std::unordered_map<uint32_t, int64_t> markerPayloads;    // marker id → op
  std::vector<std::pair<uint32_t, uint32_t>> cuvilMarkers; // event, marker
  std::unordered_map<uint32_t, uint64_t> externalIds;      // correlation → id
  uint64_t ignored = 0;
};

/// True when this build knows the CUPTI activity structs (headers found).
bool cuptiSupported();

/// Collects GPU kernels, memcpys/memsets, runtime/driver calls, NVTX
/// markers and external correlations through libcupti loaded with dlopen.
class CuptiCollector {
public:
  /// Loads libcupti (from $CUPTI_LIBRARY, $CUDA_HOME, /usr/local/cuda, the
  /// loader path); the error lists every place tried.
  static Expected<std::unique_ptr<CuptiCollector>> open();
  ~CuptiCollector();

  /// Enables activity collection; false with `error()` set on failure.
  bool start();
  /// Flushes and disables collection.
  void stop();
  /// Tags the GPU work launched until popExternalId with an id (an IR op
  /// id): CUPTI reports it in external correlation records.
  void pushExternalId(uint64_t id);
  void popExternalId();
  /// The trace collected since start (after stop).
  Trace takeTrace();
  const std::string &error() const { return lastError; }
  const std::string &libraryPath() const { return library; }

  struct Api; // the resolved libcupti entry points (implementation detail)

private:
  CuptiCollector() = default;
  std::unique_ptr<Api> api;
  std::string library;
  std::string lastError;
};

} // namespace cuvil::profiler

#endif // CUVIL_PROFILER_COLLECTORS_H
