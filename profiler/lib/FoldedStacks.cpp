//===- FoldedStacks.cpp - Folded stacks ("a;b;c 42") import and export ----===//
//
// Reading lays the stacks out one after the other on a single thread, the
// way speedscope shows folded input: consecutive lines that share a prefix
// extend the same open frames, so the call tree of the result has exactly
// the weights of the input. Writing folds the trace's call tree.
//
//===----------------------------------------------------------------------===//

#include "FormatSupport.h"
#include "cuvil/Profiler/Analysis.h"
#include "cuvil/Profiler/Formats.h"

#include <cctype>

namespace cuvil::profiler {

Expected<Trace> parseFoldedStacks(std::string_view text,
                                  const std::string &path) {
  Trace trace;
  uint32_t thread = trace.thread(0, 0);
  trace.threads[thread].name = trace.intern("folded stacks");
  StringId category = trace.intern("folded");

  struct Open {
    StringId name;
    uint32_t event;
  };
  std::vector<Open> open;
  std::vector<StringId> frames;
  int64_t now = 0;
  auto closeDownTo = [&](size_t depth) {
    while (open.size() > depth) {
      Event &e = trace.events[open.back().event];
      e.durationNs = now - e.startNs;
      open.pop_back();
    }
  };

  size_t offset = 0;
  while (offset < text.size()) {
    size_t end = text.find('\n', offset);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view line = text.substr(offset, end - offset);
    size_t lineStart = offset;
    offset = end + 1;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.empty() || line[0] == '#')
      continue;

    size_t space = line.find_last_of(' ');
    auto bad = [&](const std::string &what) {
      return detail::errorAt(
          path, text, lineStart,
          what + " (expected \"frame;frame;...;frame COUNT\" with an integer "
                 "count after the last space)");
    };
    if (space == std::string_view::npos || space == 0)
      return bad("line without a count");
    std::string_view count = line.substr(space + 1);
    if (count.empty() || count.size() > 18)
      return bad("invalid count '" + std::string(count) + "'");
    int64_t weight = 0;
    for (char c : count) {
      if (!std::isdigit(static_cast<unsigned char>(c)))
        return bad("invalid count '" + std::string(count) + "'");
      weight = weight * 10 + (c - '0');
    }
    std::string_view stack = line.substr(0, space);
    while (!stack.empty() && stack.back() == ' ')
      stack.remove_suffix(1);
    if (stack.empty())
      return bad("empty stack");
    if (weight == 0)
      continue;

    frames.clear();
    size_t from = 0;
    while (from <= stack.size()) {
      size_t semi = stack.find(';', from);
      if (semi == std::string_view::npos)
        semi = stack.size();
      if (semi == from)
        return bad("empty frame name");
      frames.push_back(trace.intern(stack.substr(from, semi - from)));
      from = semi + 1;
    }

    size_t shared = 0;
    while (shared < open.size() && shared < frames.size() &&
           open[shared].name == frames[shared])
      ++shared;
    // Frames deeper than the shared prefix end here; a line that is a prefix
    // of the open stack adds self time to its last frame.
    closeDownTo(shared);
    for (size_t i = shared; i < frames.size(); ++i) {
      Event e;
      e.startNs = now;
      e.name = frames[i];
      e.category = category;
      e.kind = EventKind::Other;
      e.thread = thread;
      open.push_back({frames[i], static_cast<uint32_t>(trace.events.size())});
      trace.events.push_back(e);
    }
    now += weight;
  }
  closeDownTo(0);
  trace.sortEvents();
  return trace;
}

std::string writeFoldedStacks(const Trace &trace) {
  return CallTree::build(trace).folded();
}

} // namespace cuvil::profiler
