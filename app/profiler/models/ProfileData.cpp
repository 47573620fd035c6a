//===- ProfileData.cpp - Loading, timeline rows and range aggregates ------===//

#include "ProfileData.h"

#include <QFileInfo>
#include <QtConcurrent>

#include <algorithm>
#include <chrono>
#include <map>

namespace cuvil::workbench {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

bool isSorted(const prof::Trace &trace) {
  const auto &events = trace.events;
  for (size_t i = 1; i < events.size(); ++i) {
    const prof::Event &a = events[i - 1], &b = events[i];
    if (a.thread != b.thread     ? a.thread > b.thread
        : a.startNs != b.startNs ? a.startNs > b.startNs
                                 : a.durationNs < b.durationNs)
      return false;
  }
  return true;
}

/// Lane groups top to bottom: what the user wrote, then what ran.
int kindOrder(prof::EventKind kind) {
  switch (kind) {
  case prof::EventKind::Python:
    return 0;
  case prof::EventKind::Nvtx:
    return 1;
  case prof::EventKind::CpuKernel:
    return 2;
  case prof::EventKind::GpuKernel:
    return 3;
  case prof::EventKind::Memcpy:
    return 4;
  case prof::EventKind::RuntimeApi:
    return 5;
  case prof::EventKind::Other:
    return 6;
  }
  return 6;
}

QString threadLabel(const prof::Trace &trace, uint32_t thread) {
  const prof::ThreadInfo &t = trace.threads[thread];
  QString process = t.processName ? displayText(trace.str(t.processName))
                                  : QString("pid %1").arg(t.pid);
  QString name =
      t.name ? displayText(trace.str(t.name)) : QString("tid %1").arg(t.tid);
  return process + " / " + name;
}

/// Puts the callers of the track's outermost calls above them: each frame
/// of a call's Python stack spans the call; equal frames of calls that
/// touch, below equal callers, make one span.
void addStackRows(const prof::Trace &trace, TimelineTrack &track) {
  if (track.rows.empty())
    return;
  std::vector<std::vector<RowSpan>> frames;
  for (const RowSpan &call : track.rows[0]) {
    const prof::Event &e = trace.events[call.event];
    if (e.stack == prof::kNoStack)
      continue;
    std::vector<prof::FrameId> stack = trace.stackFrames(e.stack);
    if (frames.size() < stack.size())
      frames.resize(stack.size());
    bool sameCallers = true;
    for (size_t d = 0; d < stack.size(); ++d) {
      std::vector<RowSpan> &row = frames[d];
      if (sameCallers && !row.empty() && row.back().frame == stack[d] &&
          row.back().endNs == call.startNs) {
        row.back().endNs = call.endNs;
        continue;
      }
      sameCallers = false;
      row.push_back({call.startNs, call.endNs, call.event, stack[d]});
    }
  }
  track.stackRows = frames.size();
  frames.insert(frames.end(), std::make_move_iterator(track.rows.begin()),
                std::make_move_iterator(track.rows.end()));
  track.rows = std::move(frames);
}

} // namespace

FlowIndex::FlowIndex(const prof::Trace &trace) {
  size_t n = trace.events.size();
  auto build = [&](bool outgoing, std::vector<uint32_t> &offsets,
                   std::vector<uint32_t> &values) {
    offsets.assign(n + 1, 0);
    for (const prof::Flow &f : trace.flows) {
      uint32_t key = outgoing ? f.from : f.to;
      if (key < n && (outgoing ? f.to : f.from) < n)
        ++offsets[key + 1];
    }
    for (size_t i = 0; i < n; ++i)
      offsets[i + 1] += offsets[i];
    values.assign(offsets[n], 0);
    std::vector<uint32_t> fill(offsets.begin(), offsets.end() - 1);
    for (const prof::Flow &f : trace.flows) {
      uint32_t key = outgoing ? f.from : f.to, other = outgoing ? f.to : f.from;
      if (key < n && other < n)
        values[fill[key]++] = other;
    }
  };
  if (trace.flows.empty())
    return;
  build(true, outOffsets, outEvents);
  build(false, inOffsets, inEvents);
}

std::vector<uint32_t> FlowIndex::slice(const std::vector<uint32_t> &offsets,
                                       const std::vector<uint32_t> &values,
                                       uint32_t event) {
  if (size_t(event) + 1 >= offsets.size())
    return {};
  return std::vector<uint32_t>(values.begin() + offsets[event],
                               values.begin() + offsets[event + 1]);
}

std::vector<uint32_t> FlowIndex::targets(uint32_t event) const {
  return slice(outOffsets, outEvents, event);
}

std::vector<uint32_t> FlowIndex::sources(uint32_t event) const {
  return slice(inOffsets, inEvents, event);
}

QString trackGroupName(prof::EventKind kind) {
  switch (kind) {
  case prof::EventKind::Python:
    return "Python stack";
  case prof::EventKind::Nvtx:
    return "NVTX ranges";
  case prof::EventKind::CpuKernel:
    return "CPU kernels";
  case prof::EventKind::GpuKernel:
    return "GPU kernels";
  case prof::EventKind::Memcpy:
    return "Memory copies";
  case prof::EventKind::RuntimeApi:
    return "CUDA runtime API";
  case prof::EventKind::Other:
    return "Other events";
  }
  return "Other events";
}

std::vector<TimelineTrack> buildTimelineTracks(const prof::Trace &trace) {
  std::map<std::pair<int, uint32_t>, TimelineTrack> byKey;
  // Open spans per track: clipped ends, innermost last.
  std::map<std::pair<int, uint32_t>, std::vector<int64_t>> open;
  TimelineTrack *last = nullptr;
  std::vector<int64_t> *lastOpen = nullptr;
  std::pair<int, uint32_t> lastKey{-1, 0};
  for (uint32_t i = 0; i < trace.events.size(); ++i) {
    const prof::Event &e = trace.events[i];
    std::pair<int, uint32_t> key{kindOrder(e.kind), e.thread};
    if (key != lastKey || !last) {
      auto [it, inserted] = byKey.try_emplace(key);
      if (inserted) {
        it->second.kind = e.kind;
        it->second.thread = e.thread;
        it->second.group = trackGroupName(e.kind);
        it->second.label = threadLabel(trace, e.thread);
      }
      last = &it->second;
      lastOpen = &open[key];
      lastKey = key;
    }
    std::vector<int64_t> &stack = *lastOpen;
    while (!stack.empty() && stack.back() <= e.startNs)
      stack.pop_back();
    int64_t end = e.endNs();
    if (!stack.empty())
      end = std::min(end, stack.back());
    size_t depth = stack.size();
    if (last->rows.size() <= depth)
      last->rows.resize(depth + 1);
    last->rows[depth].push_back({e.startNs, end, i});
    ++last->eventCount;
    stack.push_back(end);
  }
  std::vector<TimelineTrack> tracks;
  tracks.reserve(byKey.size());
  for (auto &entry : byKey) {
    if (entry.second.kind == prof::EventKind::Python)
      addStackRows(trace, entry.second);
    tracks.push_back(std::move(entry.second));
  }
  return tracks;
}

namespace {
std::shared_ptr<Profile> analyze(prof::Trace trace, const QString &name) {
  auto start = std::chrono::steady_clock::now();
  if (!isSorted(trace))
    trace.sortEvents();
  auto profile = std::make_shared<Profile>();
  auto shared = std::make_shared<const prof::Trace>(std::move(trace));
  profile->trace = shared;
  profile->path = name;
  std::tie(profile->beginNs, profile->endNs) = shared->timeBounds();
  // The three passes only read the trace: run two of them alongside.
  QFuture<prof::CallTree> tree =
      QtConcurrent::run([shared] { return prof::CallTree::build(*shared); });
  QFuture<std::vector<prof::OpRow>> ops = QtConcurrent::run(
      [shared] { return prof::opTable(*shared, {}, prof::GroupBy::OpId); });
  profile->tracks = buildTimelineTracks(*shared);
  profile->flows = FlowIndex(*shared);
  profile->callTree = tree.result();
  profile->ops = ops.result();
  profile->analyzeSeconds = secondsSince(start);
  return profile;
}
} // namespace

std::shared_ptr<const Profile> analyzeProfile(prof::Trace trace,
                                              const QString &name) {
  return analyze(std::move(trace), name);
}

ProfileLoad loadProfile(const QString &path) {
  ProfileLoad result;
  if (!QFileInfo(path).isFile()) {
    result.error = QString("%1: no such trace file; pass the path of a Chrome "
                           "trace (.json), folded stacks, speedscope JSON or "
                           "an Nsight Systems SQLite export")
                       .arg(path);
    return result;
  }
  auto start = std::chrono::steady_clock::now();
  prof::Expected<prof::Trace> trace =
      prof::readTraceFile(path.toStdString(), prof::TraceFormat::Auto);
  if (!trace) {
    result.error = QString::fromStdString(trace.error().text());
    return result;
  }
  double readSeconds = secondsSince(start);
  std::shared_ptr<Profile> profile = analyze(std::move(*trace), path);
  profile->readSeconds = readSeconds;
  result.profile = profile;
  return result;
}

Aggregates aggregate(const prof::Trace &trace,
                     const prof::Selection &selection) {
  Aggregates result;
  result.selection = selection;
  result.callTree = prof::CallTree::build(trace, selection);
  result.ops = prof::opTable(trace, selection, prof::GroupBy::OpId);
  return result;
}

QString displayText(std::string_view text) {
  // A character takes at most 4 bytes: this prefix holds more than the limit.
  size_t take = std::min(text.size(), size_t(kMaxDisplayChars) * 4 + 4);
  QString out = QString::fromUtf8(text.data(), qsizetype(take));
  if (take == text.size() && out.size() <= kMaxDisplayChars)
    return out;
  out.truncate(kMaxDisplayChars - 1);
  if (!out.isEmpty() && out.back().isHighSurrogate())
    out.chop(1); // never half a character
  return out + QChar(0x2026);
}

QString formatDuration(int64_t ns) {
  int64_t magnitude = ns < 0 ? -ns : ns;
  if (magnitude < 1000)
    return QString("%1 ns").arg(ns);
  if (magnitude < 1000000)
    return QString("%1 µs").arg(ns / 1e3, 0, 'f', 2);
  if (magnitude < 1000000000)
    return QString("%1 ms").arg(ns / 1e6, 0, 'f', 2);
  return QString("%1 s").arg(ns / 1e9, 0, 'f', 3);
}

QString formatDelta(int64_t ns) {
  return (ns > 0 ? "+" : "") + formatDuration(ns);
}

QString shortLocation(const QString &loc) {
  int slash = std::max(loc.lastIndexOf('/'), loc.lastIndexOf('\\'));
  return slash < 0 ? loc : loc.mid(slash + 1);
}

} // namespace cuvil::workbench
