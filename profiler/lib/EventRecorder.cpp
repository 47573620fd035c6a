//===- EventRecorder.cpp - Per-thread steady-clock event buffers ----------===//

#include "cuvil/Profiler/Collectors.h"

#include <chrono>
#include <sys/syscall.h>
#include <unistd.h>
#include <unordered_map>

namespace cuvil::profiler {

int64_t steadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct EventRecorder::ThreadBuffer {
  std::mutex mutex; // uncontended except while takeTrace drains it
  std::vector<RecordedEvent> events;
  uint32_t tid = 0;
};

namespace {
std::atomic<uint64_t> recorderGenerations{0};

/// The buffers this thread writes to, per recorder generation (a recorder
/// destroyed and another built at its address get different generations).
struct LocalBuffers {
  std::vector<std::pair<uint64_t, void *>> entries;
};
thread_local LocalBuffers localBuffers;
} // namespace

EventRecorder::EventRecorder() : generation(++recorderGenerations) {}
EventRecorder::~EventRecorder() = default;

EventRecorder &EventRecorder::global() {
  static EventRecorder *recorder = new EventRecorder(); // never destroyed:
  return *recorder; // threads may still record during static destruction
}

EventRecorder::ThreadBuffer &EventRecorder::localBuffer() {
  for (auto &[gen, buffer] : localBuffers.entries)
    if (gen == generation)
      return *static_cast<ThreadBuffer *>(buffer);
  auto buffer = std::make_unique<ThreadBuffer>();
  buffer->tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  buffer->events.reserve(1024);
  ThreadBuffer *raw = buffer.get();
  {
    std::lock_guard<std::mutex> lock(buffersMutex);
    buffers.push_back(std::move(buffer));
  }
  localBuffers.entries.emplace_back(generation, raw);
  return *raw;
}

uint32_t EventRecorder::intern(std::string_view text) {
  std::lock_guard<std::mutex> lock(tablesMutex);
  return tables.intern(text);
}

uint32_t EventRecorder::internStack(const std::vector<PythonFrame> &rootFirst) {
  std::lock_guard<std::mutex> lock(tablesMutex);
  StackId stack = kNoStack;
  for (const PythonFrame &f : rootFirst)
    stack = tables.stack(stack, tables.frame(f.function, f.file, f.line));
  return stack;
}

void EventRecorder::record(RecordedEvent event) {
  if (!enabled())
    return;
  ThreadBuffer &buffer = localBuffer();
  event.tid = buffer.tid;
  std::lock_guard<std::mutex> lock(buffer.mutex);
  buffer.events.push_back(event);
}

size_t EventRecorder::size() const {
  std::lock_guard<std::mutex> lock(buffersMutex);
  size_t total = 0;
  for (const auto &buffer : buffers) {
    std::lock_guard<std::mutex> bufferLock(buffer->mutex);
    total += buffer->events.size();
  }
  return total;
}

void EventRecorder::clear() {
  std::lock_guard<std::mutex> lock(buffersMutex);
  for (auto &buffer : buffers) {
    std::lock_guard<std::mutex> bufferLock(buffer->mutex);
    buffer->events.clear();
  }
}

Trace EventRecorder::takeTrace(const std::string &processName) {
  std::vector<std::pair<uint32_t, std::vector<RecordedEvent>>> drained;
  {
    std::lock_guard<std::mutex> lock(buffersMutex);
    for (auto &buffer : buffers) {
      std::vector<RecordedEvent> events;
      {
        std::lock_guard<std::mutex> bufferLock(buffer->mutex);
        events.swap(buffer->events);
      }
      if (!events.empty())
        drained.emplace_back(buffer->tid, std::move(events));
    }
  }
  Trace trace;
  {
    std::lock_guard<std::mutex> lock(tablesMutex);
    trace = tables; // strings, frames, stacks: recorder ids are trace ids
  }
  int64_t pid = ::getpid();
  StringId process = trace.intern(processName);
  StringId categories[kEventKindCount];
  for (int k = 0; k < kEventKindCount; ++k)
    categories[k] = trace.intern(eventKindName(static_cast<EventKind>(k)));
  // One argument list per node name, shared by its events.
  StringId nodeKey = trace.intern(kNodeArg);
  std::unordered_map<uint32_t, uint32_t> nodeArgs;
  for (auto &[tid, events] : drained) {
    uint32_t thread = trace.thread(pid, tid);
    trace.threads[thread].processName = process;
    trace.threads[thread].name = trace.intern("thread " + std::to_string(tid));
    for (const RecordedEvent &r : events) {
      Event e;
      e.startNs = r.startNs;
      e.durationNs = r.endNs >= r.startNs ? r.endNs - r.startNs : 0;
      e.opId = r.opId;
      e.correlation = r.correlation;
      e.name = r.name;
      e.loc = r.loc;
      e.stack = r.stack;
      e.kind = r.kind;
      e.category = categories[static_cast<int>(r.kind)];
      e.thread = thread;
      if (r.node) {
        auto [it, inserted] = nodeArgs.emplace(r.node, 0);
        if (inserted)
          it->second = trace.addArgs({{nodeKey, r.node}});
        e.args = it->second;
      }
      trace.events.push_back(e);
    }
  }
  trace.sortEvents();
  trace.linkLaunches();
  return trace;
}

} // namespace cuvil::profiler
