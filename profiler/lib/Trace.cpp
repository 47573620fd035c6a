//===- Trace.cpp - Interning, sorting and launch joining of traces --------===//

#include "cuvil/Profiler/Trace.h"

#include "FormatSupport.h"

#include <algorithm>
#include <numeric>

namespace cuvil::profiler {

static const char *const kKindNames[kEventKindCount] = {
    "python", "nvtx",        "cpu_kernel", "gpu_kernel",
    "memcpy", "runtime_api", "other"};

const char *eventKindName(EventKind kind) {
  return kKindNames[static_cast<int>(kind)];
}

bool parseEventKind(std::string_view text, EventKind &kind) {
  for (int i = 0; i < kEventKindCount; ++i)
    if (text == kKindNames[i]) {
      kind = static_cast<EventKind>(i);
      return true;
    }
  return false;
}

//===----------------------------------------------------------------------===//
// StringTable
//===----------------------------------------------------------------------===//

StringTable::StringTable() { intern(""); }

StringTable::StringTable(const StringTable &other) : strings(other.strings) {
  rebuildIndex();
}

StringTable &StringTable::operator=(const StringTable &other) {
  if (this != &other) {
    strings = other.strings;
    rebuildIndex();
  }
  return *this;
}

void StringTable::rebuildIndex() {
  index.clear();
  index.reserve(strings.size());
  for (size_t i = 0; i < strings.size(); ++i)
    index.emplace(std::string_view(strings[i]), static_cast<StringId>(i));
}

StringId StringTable::intern(std::string_view text) {
  auto found = index.find(text);
  if (found != index.end())
    return found->second;
  auto id = static_cast<StringId>(strings.size());
  strings.emplace_back(text);
  index.emplace(std::string_view(strings.back()), id);
  return id;
}

//===----------------------------------------------------------------------===//
// Trace
//===----------------------------------------------------------------------===//

Trace::Trace(const Trace &other)
    : strings(other.strings), threads(other.threads), frames(other.frames),
      stacks(other.stacks), events(other.events), flows(other.flows),
      args(other.args) {
  rebuildIndexes();
}

Trace &Trace::operator=(const Trace &other) {
  if (this != &other) {
    strings = other.strings;
    threads = other.threads;
    frames = other.frames;
    stacks = other.stacks;
    events = other.events;
    flows = other.flows;
    args = other.args;
    rebuildIndexes();
  }
  return *this;
}

static std::pair<uint64_t, uint64_t> frameKey(const Frame &f) {
  return {(uint64_t(f.name) << 32) | f.file, f.line};
}

void Trace::rebuildIndexes() {
  threadIndex.clear();
  frameIndex.clear();
  stackIndex.clear();
  for (size_t i = 0; i < threads.size(); ++i)
    threadIndex.emplace(
        std::make_pair(uint64_t(threads[i].pid), uint64_t(threads[i].tid)),
        uint32_t(i));
  for (size_t i = 0; i < frames.size(); ++i)
    frameIndex.emplace(frameKey(frames[i]), uint32_t(i));
  for (size_t i = 0; i < stacks.size(); ++i)
    stackIndex.emplace(
        std::make_pair(uint64_t(stacks[i].parent), uint64_t(stacks[i].frame)),
        uint32_t(i));
}

uint32_t Trace::thread(int64_t pid, int64_t tid) {
  auto key = std::make_pair(uint64_t(pid), uint64_t(tid));
  auto found = threadIndex.find(key);
  if (found != threadIndex.end())
    return found->second;
  auto id = static_cast<uint32_t>(threads.size());
  ThreadInfo info;
  info.pid = pid;
  info.tid = tid;
  threads.push_back(info);
  threadIndex.emplace(key, id);
  return id;
}

FrameId Trace::frame(std::string_view name, std::string_view file,
                     uint32_t line) {
  Frame f;
  f.name = intern(name);
  f.file = file.empty() ? 0 : intern(file);
  f.line = line;
  return frame(f);
}

FrameId Trace::frame(const Frame &f) {
  auto key = frameKey(f);
  auto found = frameIndex.find(key);
  if (found != frameIndex.end())
    return found->second;
  auto id = static_cast<FrameId>(frames.size());
  frames.push_back(f);
  frameIndex.emplace(key, id);
  return id;
}

StackId Trace::stack(StackId parent, FrameId frame) {
  auto key = std::make_pair(uint64_t(parent), uint64_t(frame));
  auto found = stackIndex.find(key);
  if (found != stackIndex.end())
    return found->second;
  auto id = static_cast<StackId>(stacks.size());
  stacks.push_back({frame, parent});
  stackIndex.emplace(key, id);
  return id;
}

StackId Trace::stack(const std::vector<FrameId> &rootFirst) {
  StackId id = kNoStack;
  for (FrameId f : rootFirst)
    id = stack(id, f);
  return id;
}

std::vector<FrameId> Trace::stackFrames(StackId id) const {
  std::vector<FrameId> out;
  while (id != kNoStack && id < stacks.size()) {
    out.push_back(stacks[id].frame);
    id = stacks[id].parent;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

uint32_t Trace::addArgs(ArgList list) {
  if (list.empty())
    return kNoArgs;
  args.push_back(std::move(list));
  return static_cast<uint32_t>(args.size() - 1);
}

std::string_view Trace::arg(const Event &event, std::string_view key) const {
  if (event.args == kNoArgs)
    return {};
  for (const auto &[k, v] : args[event.args])
    if (str(k) == key)
      return str(v);
  return {};
}

void Trace::append(const Trace &other) {
  auto str = [&](StringId id) { return intern(other.str(id)); };
  std::vector<uint32_t> threadMap;
  for (const ThreadInfo &t : other.threads) {
    uint32_t index = thread(t.pid, t.tid);
    if (t.name)
      threads[index].name = str(t.name);
    if (t.processName)
      threads[index].processName = str(t.processName);
    threadMap.push_back(index);
  }
  std::vector<StackId> stackMap(other.stacks.size(), kNoStack);
  auto mapStack = [&](StackId id) -> StackId {
    if (id == kNoStack || id >= other.stacks.size())
      return kNoStack;
    if (stackMap[id] == kNoStack) {
      std::vector<FrameId> frames;
      for (FrameId f : other.stackFrames(id)) {
        const Frame &frame = other.frames[f];
        frames.push_back(this->frame(other.str(frame.name),
                                     other.str(frame.file), frame.line));
      }
      stackMap[id] = stack(frames);
    }
    return stackMap[id];
  };
  std::vector<uint32_t> argsMap;
  for (const ArgList &list : other.args) {
    ArgList copy;
    for (const auto &[key, value] : list)
      copy.emplace_back(str(key), str(value));
    argsMap.push_back(addArgs(std::move(copy)));
  }
  uint32_t base = static_cast<uint32_t>(events.size());
  for (const Event &e : other.events) {
    Event copy = e;
    copy.name = str(e.name);
    copy.category = str(e.category);
    copy.loc = str(e.loc);
    copy.thread = e.thread < threadMap.size() ? threadMap[e.thread] : 0;
    copy.stack = mapStack(e.stack);
    copy.args = e.args < argsMap.size() ? argsMap[e.args] : kNoArgs;
    events.push_back(copy);
  }
  for (const Flow &f : other.flows) {
    Flow copy = f;
    copy.from += base;
    copy.to += base;
    flows.push_back(copy);
  }
}

static bool before(const Event &x, const Event &y) {
  if (x.thread != y.thread)
    return x.thread < y.thread;
  if (x.startNs != y.startNs)
    return x.startNs < y.startNs;
  return x.durationNs > y.durationNs;
}

void Trace::sortEvents() {
  bool alreadySorted = true;
  for (size_t i = 1; i < events.size() && alreadySorted; ++i)
    alreadySorted = !before(events[i], events[i - 1]);
  if (alreadySorted)
    return;
  std::vector<uint32_t> order(events.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return before(events[a], events[b]);
  });
  std::vector<Event> reordered;
  reordered.reserve(events.size());
  std::vector<uint32_t> newIndex(events.size());
  for (size_t i = 0; i < order.size(); ++i) {
    newIndex[order[i]] = static_cast<uint32_t>(i);
    reordered.push_back(events[order[i]]);
  }
  events = std::move(reordered);
  for (Flow &flow : flows) {
    flow.from = newIndex[flow.from];
    flow.to = newIndex[flow.to];
  }
}

std::pair<int64_t, int64_t> Trace::timeBounds() const {
  if (events.empty())
    return {0, 0};
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const Event &e : events) {
    lo = std::min(lo, e.startNs);
    hi = std::max(hi, e.endNs());
  }
  return {lo, hi};
}

void Trace::linkLaunches() {
  sortEvents();
  std::unordered_map<uint64_t, uint32_t> launcher;
  for (uint32_t i = 0; i < events.size(); ++i) {
    const Event &e = events[i];
    if (e.correlation &&
        (e.kind == EventKind::RuntimeApi || e.kind == EventKind::Python))
      launcher.emplace(e.correlation, i); // keeps the first (outermost)
  }
  if (launcher.empty())
    return;

  std::vector<uint32_t> enclosing = detail::nestEvents(*this).parent;

  std::vector<std::pair<uint32_t, uint32_t>> found;
  for (uint32_t i = 0; i < events.size(); ++i) {
    Event &e = events[i];
    if (!e.correlation ||
        (e.kind != EventKind::GpuKernel && e.kind != EventKind::Memcpy &&
         e.kind != EventKind::CpuKernel))
      continue;
    auto it = launcher.find(e.correlation);
    if (it == launcher.end() || it->second == i)
      continue;
    found.emplace_back(it->second, i);
  }
  std::unordered_map<uint64_t, bool> existing;
  for (const Flow &flow : flows)
    existing.emplace((uint64_t(flow.from) << 32) | flow.to, true);
  for (auto [from, to] : found) {
    if (!existing.count((uint64_t(from) << 32) | to))
      flows.push_back({from, to});
    Event &target = events[to];
    if (target.stack != kNoStack)
      continue;
    // The launcher and its enclosing events become the device event's stack.
    std::vector<uint32_t> chain;
    for (uint32_t p = from; p != UINT32_MAX; p = enclosing[p])
      chain.push_back(p);
    std::reverse(chain.begin(), chain.end());
    StackId s = events[chain.front()].stack;
    for (uint32_t p : chain) {
      const Event &link = events[p];
      s = stack(s, frame(Frame{link.name, 0, 0}));
      if (target.opId == kNoOp && link.opId != kNoOp) {
        target.opId = link.opId;
        target.loc = link.loc;
      }
    }
    target.stack = s;
  }
}

} // namespace cuvil::profiler
