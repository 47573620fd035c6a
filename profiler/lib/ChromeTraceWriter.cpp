//===- ChromeTraceWriter.cpp - Chrome trace-event JSON exporter -----------===//
//
// Writes what Perfetto and chrome://tracing open: "M" metadata naming
// processes and threads, "X" complete events that nest strictly per thread
// (an event overlapping the end of its parent is clipped to it, its real
// duration kept in args.unclipped_dur_ns), "s"/"f" flow arrows from each
// launch to its kernel, and the Python stacks as "stackFrames" + "sf".
//
//===----------------------------------------------------------------------===//

#include "FormatSupport.h"
#include "JsonScanner.h"
#include "cuvil/Profiler/Formats.h"

#include <cstdio>
#include <cstring>
#include <set>

namespace cuvil::profiler {

void appendJsonEscaped(std::string &out, std::string_view text) {
  for (char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buffer[8];
        std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
        out += buffer;
      } else {
        out += c;
      }
    }
  }
}

namespace {

void appendString(std::string &out, std::string_view text) {
  out += '"';
  appendJsonEscaped(out, text);
  out += '"';
}

/// True when `text` is a JSON number, array, object or literal on its own:
/// such argument values (kept as JSON text by the importers) are written
/// unquoted, so numbers stay numbers and shapes stay arrays.
bool isJsonValue(std::string_view text) {
  if (text.empty() || !std::strchr("-0123456789[{tfn", text[0]))
    return false;
  detail::JsonScanner scanner(text);
  return scanner.skipValue() && scanner.atEnd() && !scanner.failed();
}

bool isSorted(const Trace &trace) {
  for (size_t i = 1; i < trace.events.size(); ++i) {
    const Event &a = trace.events[i - 1], &b = trace.events[i];
    if (a.thread != b.thread     ? a.thread > b.thread
        : a.startNs != b.startNs ? a.startNs > b.startNs
                                 : a.durationNs < b.durationNs)
      return false;
  }
  return true;
}

void appendIds(std::string &out, const ThreadInfo &thread) {
  out += "\"pid\":" + std::to_string(thread.pid) +
         ",\"tid\":" + std::to_string(thread.tid);
}

void appendMetadata(std::string &out, const Trace &trace) {
  std::set<int64_t> namedProcesses;
  for (const ThreadInfo &thread : trace.threads) {
    if (thread.processName && namedProcesses.insert(thread.pid).second) {
      out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" +
             std::to_string(thread.pid) + ",\"tid\":0,\"args\":{\"name\":";
      appendString(out, trace.str(thread.processName));
      out += "}},\n";
    }
    if (thread.name) {
      out += "{\"ph\":\"M\",\"name\":\"thread_name\",";
      appendIds(out, thread);
      out += ",\"args\":{\"name\":";
      appendString(out, trace.str(thread.name));
      out += "}},\n";
    }
  }
}

void appendEvent(std::string &out, const Trace &trace, const Event &e,
                 int64_t clippedEnd) {
  out += "{\"ph\":\"X\",\"name\":";
  appendString(out, trace.str(e.name));
  out += ",\"cat\":";
  std::string_view category = trace.str(e.category);
  appendString(out,
               !category.empty() && detail::classifyCategory(category) == e.kind
                   ? category
                   : std::string_view(eventKindName(e.kind)));
  out += ",\"ts\":";
  detail::appendMicroseconds(out, e.startNs);
  out += ",\"dur\":";
  detail::appendMicroseconds(out, clippedEnd - e.startNs);
  out += ',';
  appendIds(out, trace.threads[e.thread]);
  if (e.stack != kNoStack)
    out += ",\"sf\":" + std::to_string(e.stack);
  bool clipped = clippedEnd != e.endNs();
  if (e.opId != kNoOp || e.loc || e.correlation || e.args != kNoArgs ||
      clipped) {
    out += ",\"args\":{";
    bool first = true;
    auto next = [&] {
      if (!first)
        out += ',';
      first = false;
    };
    if (e.opId != kNoOp) {
      next();
      out += "\"op_id\":" + std::to_string(e.opId);
    }
    if (e.loc) {
      next();
      out += "\"loc\":";
      appendString(out, trace.str(e.loc));
    }
    if (e.correlation) {
      next();
      out += "\"correlation\":" + std::to_string(e.correlation);
    }
    if (clipped) {
      next();
      out += "\"unclipped_dur_ns\":" + std::to_string(e.durationNs);
    }
    if (e.args != kNoArgs)
      for (const auto &[key, value] : trace.args[e.args]) {
        next();
        appendString(out, trace.str(key));
        out += ':';
        std::string_view text = trace.str(value);
        if (isJsonValue(text))
          out += text;
        else
          appendString(out, text);
      }
    out += '}';
  }
  out += "},\n";
}

void appendStackFrames(std::string &out, const Trace &trace) {
  out += "\"stackFrames\":{";
  for (size_t i = 0; i < trace.stacks.size(); ++i) {
    const StackNode &node = trace.stacks[i];
    const Frame &frame = trace.frames[node.frame];
    if (i)
      out += ',';
    out += "\n\"" + std::to_string(i) + "\":{\"name\":";
    appendString(out, trace.str(frame.name));
    out += ",\"category\":\"python\"";
    if (frame.file) {
      out += ",\"file\":";
      appendString(out, trace.str(frame.file));
      out += ",\"line\":" + std::to_string(frame.line);
    }
    if (node.parent != kNoStack)
      out += ",\"parent\":\"" + std::to_string(node.parent) + "\"";
    out += '}';
  }
  out += "},\n";
}

/// Where a flow arrow attaches to `e`: 1 ns after its start, so that a
/// viewer that orders events by time finds `e` already open there, not a
/// slice that ends as it begins.
int64_t insideStart(const Event &e) {
  return e.startNs + (e.durationNs >= 2 ? 1 : 0);
}

} // namespace

std::string writeChromeTrace(const Trace &input) {
  Trace sortedCopy;
  const Trace *trace = &input;
  if (!isSorted(input)) {
    sortedCopy = input;
    sortedCopy.sortEvents();
    trace = &sortedCopy;
  }
  detail::Nesting nesting = detail::nestEvents(*trace);

  std::string out;
  out.reserve(64 + trace->events.size() * 160);
  out +=
      "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"cuvil\"},\n";
  if (!trace->stacks.empty())
    appendStackFrames(out, *trace);
  out += "\"traceEvents\":[\n";
  appendMetadata(out, *trace);
  for (size_t i = 0; i < trace->events.size(); ++i)
    appendEvent(out, *trace, trace->events[i], nesting.clippedEndNs[i]);
  uint64_t flowId = 0;
  for (const Flow &flow : trace->flows) {
    const Event &from = trace->events[flow.from], &to = trace->events[flow.to];
    std::string id = std::to_string(++flowId);
    out += "{\"ph\":\"s\",\"name\":\"launch\",\"cat\":\"launch\",\"id\":" + id +
           ",\"ts\":";
    detail::appendMicroseconds(out, insideStart(from));
    out += ',';
    appendIds(out, trace->threads[from.thread]);
    out += "},\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"launch\",\"cat\":"
           "\"launch\",\"id\":" +
           id + ",\"ts\":";
    detail::appendMicroseconds(out, insideStart(to));
    out += ',';
    appendIds(out, trace->threads[to.thread]);
    out += "},\n";
  }
  if (out.size() >= 2 && out.compare(out.size() - 2, 2, ",\n") == 0)
    out.erase(out.size() - 2, 1);
  out += "]}\n";
  return out;
}

} // namespace cuvil::profiler
