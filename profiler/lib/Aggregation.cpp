//===- Aggregation.cpp - Per-op tables, timeline tracks, range queries ----===//

#include "FormatSupport.h"
#include "cuvil/Profiler/Analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

namespace cuvil::profiler {

int64_t percentile(std::vector<int64_t> values, double p) {
  if (values.empty())
    return 0;
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * values.size()));
  rank = std::clamp<size_t>(rank, 1, values.size());
  std::nth_element(values.begin(), values.begin() + (rank - 1), values.end());
  return values[rank - 1];
}

std::vector<OpRow> opTable(const Trace &input, const Selection &selection,
                           GroupBy groupBy) {
  Trace sortedCopy;
  const Trace *trace = &input;
  for (size_t i = 1; i < input.events.size() && trace == &input; ++i) {
    const Event &a = input.events[i - 1], &b = input.events[i];
    if (a.thread != b.thread     ? a.thread > b.thread
        : a.startNs != b.startNs ? a.startNs > b.startNs
                                 : a.durationNs < b.durationNs) {
      sortedCopy = input;
      sortedCopy.sortEvents();
      trace = &sortedCopy;
    }
  }
  const auto &events = trace->events;
  detail::Nesting nesting = detail::nestEvents(*trace);

  std::vector<int64_t> duration(events.size(), -1), childTime(events.size(), 0);
  for (uint32_t i = 0; i < events.size(); ++i) {
    const Event &e = events[i];
    if (!selection.includes(e.kind))
      continue;
    int64_t begin = std::max(e.startNs, selection.beginNs);
    int64_t end = std::min(e.endNs(), selection.endNs);
    if (end < begin || (end == begin && e.durationNs > 0) ||
        e.startNs >= selection.endNs)
      continue;
    duration[i] = end - begin;
    uint32_t parent = nesting.parent[i];
    while (parent != UINT32_MAX && duration[parent] < 0)
      parent = nesting.parent[parent];
    if (parent != UINT32_MAX)
      childTime[parent] +=
          std::min(nesting.clippedEndNs[i], selection.endNs) - begin;
  }

  struct Group {
    OpRow row;
    std::vector<int64_t> durations;
  };
  std::vector<Group> groups;
  std::unordered_map<uint64_t, uint32_t> byKey;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (duration[i] < 0)
      continue;
    const Event &e = events[i];
    uint64_t key = groupBy == GroupBy::OpId && e.opId != kNoOp
                       ? (uint64_t(1) << 63) | uint64_t(e.opId)
                       : uint64_t(e.name);
    auto [it, inserted] = byKey.emplace(key, uint32_t(groups.size()));
    if (inserted) {
      Group g;
      g.row.name = std::string(trace->str(e.name));
      g.row.kind = e.kind;
      g.row.opId = e.opId;
      g.row.loc = std::string(trace->str(e.loc));
      groups.push_back(std::move(g));
    }
    Group &g = groups[it->second];
    if (g.row.node.empty() && e.args != kNoArgs)
      g.row.node = std::string(trace->arg(e, kNodeArg));
    if (g.row.loc.empty() && e.loc)
      g.row.loc = std::string(trace->str(e.loc));
    if (g.row.opId == kNoOp)
      g.row.opId = e.opId;
    g.row.count += 1;
    g.row.totalNs += duration[i];
    g.row.selfNs += std::max<int64_t>(0, duration[i] - childTime[i]);
    g.row.maxNs = std::max(g.row.maxNs, duration[i]);
    g.durations.push_back(duration[i]);
  }

  std::vector<OpRow> rows;
  rows.reserve(groups.size());
  for (Group &g : groups) {
    g.row.p50Ns = percentile(g.durations, 50);
    g.row.p99Ns = percentile(std::move(g.durations), 99);
    rows.push_back(std::move(g.row));
  }
  std::sort(rows.begin(), rows.end(), [](const OpRow &a, const OpRow &b) {
    if (a.totalNs != b.totalNs)
      return a.totalNs > b.totalNs;
    return a.name < b.name;
  });
  return rows;
}

std::string formatOpTable(const std::vector<OpRow> &rows, size_t top) {
  size_t count = top ? std::min(top, rows.size()) : rows.size();
  size_t nameWidth = 4;
  for (size_t i = 0; i < count; ++i)
    nameWidth = std::max(nameWidth, std::min<size_t>(rows[i].name.size(), 60));
  std::string out;
  char buffer[512];
  std::snprintf(buffer, sizeof buffer,
                "%-*s  %-11s %8s %12s %12s %11s %11s  %s\n", int(nameWidth),
                "Name", "Kind", "Count", "Total (ms)", "Self (ms)", "P50 (us)",
                "P99 (us)", "Op / loc");
  out += buffer;
  for (size_t i = 0; i < count; ++i) {
    const OpRow &r = rows[i];
    std::string name =
        r.name.size() > 60 ? r.name.substr(0, 57) + "..." : r.name;
    std::string where;
    if (r.opId != kNoOp)
      where = "#" + std::to_string(r.opId);
    if (!r.loc.empty())
      where += (where.empty() ? "" : " ") + r.loc;
    std::snprintf(buffer, sizeof buffer,
                  "%-*s  %-11s %8llu %12.3f %12.3f %11.3f %11.3f  %s\n",
                  int(nameWidth), name.c_str(), eventKindName(r.kind),
                  static_cast<unsigned long long>(r.count), r.totalNs / 1e6,
                  r.selfNs / 1e6, r.p50Ns / 1e3, r.p99Ns / 1e3, where.c_str());
    out += buffer;
  }
  if (count < rows.size())
    out += "(" + std::to_string(rows.size() - count) + " more rows)\n";
  return out;
}

std::vector<Track> buildTracks(const Trace &trace) {
  detail::Nesting nesting = detail::nestEvents(trace);
  std::map<std::pair<uint32_t, int>, Track> tracks;
  std::vector<uint32_t> depth(trace.events.size(), 0);
  for (uint32_t i = 0; i < trace.events.size(); ++i) {
    const Event &e = trace.events[i];
    uint32_t parent = nesting.parent[i];
    while (parent != UINT32_MAX && trace.events[parent].kind != e.kind)
      parent = nesting.parent[parent];
    depth[i] = parent == UINT32_MAX ? 0 : depth[parent] + 1;
    Track &track = tracks[{e.thread, int(e.kind)}];
    if (track.events.empty()) {
      const ThreadInfo &t = trace.threads[e.thread];
      track.thread = e.thread;
      track.kind = e.kind;
      std::string process = t.processName
                                ? std::string(trace.str(t.processName))
                                : "pid " + std::to_string(t.pid);
      std::string thread = t.name ? std::string(trace.str(t.name))
                                  : "tid " + std::to_string(t.tid);
      track.label =
          process + " / " + thread + " \u00b7 " + eventKindName(e.kind);
    }
    track.events.push_back(i);
    track.maxDepth = std::max(track.maxDepth, depth[i]);
  }
  std::vector<Track> out;
  for (auto &[key, track] : tracks) {
    std::stable_sort(track.events.begin(), track.events.end(),
                     [&](uint32_t a, uint32_t b) {
                       return trace.events[a].startNs < trace.events[b].startNs;
                     });
    out.push_back(std::move(track));
  }
  return out;
}

std::vector<uint32_t> eventsInRange(const Trace &trace, int64_t beginNs,
                                    int64_t endNs) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < trace.events.size(); ++i) {
    const Event &e = trace.events[i];
    if (e.startNs < endNs &&
        (e.endNs() > beginNs || (e.durationNs == 0 && e.startNs >= beginNs)))
      out.push_back(i);
  }
  return out;
}

} // namespace cuvil::profiler
