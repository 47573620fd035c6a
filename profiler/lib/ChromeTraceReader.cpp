//===- ChromeTraceReader.cpp - Chrome trace-event JSON importer -----------===//
//
// Pulls events straight from the text with JsonScanner (no DOM: a million
// events must load in well under three seconds). Accepts the object form
// ({"traceEvents": [...]}: PyTorch's profiler, Cuvil) and the array form
// (ONNX Runtime), whose closing ']' the format makes optional. Phases X,
// B/E, i/I/R, M and flows s/t/f are converted; counters, async and sample
// events are skipped.
//
//===----------------------------------------------------------------------===//

#include "FormatSupport.h"
#include "JsonScanner.h"
#include "cuvil/Profiler/Formats.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <unordered_map>

namespace cuvil::profiler {
namespace {

/// A JSON scalar or nested value kept as text.
struct Value {
  enum Type { None, Int, Float, String, Raw } type = None;
  int64_t integer = 0;
  std::string text; // string content, float literal, or raw JSON

  void clear() {
    type = None;
    text.clear();
  }
  bool isNumber() const { return type == Int || type == Float; }
  double number() const {
    return type == Int ? double(integer) : std::strtod(text.c_str(), nullptr);
  }
  /// Text for args: strings unquoted, numbers and raw JSON as written.
  const std::string &asText() {
    if (type == Int)
      text = std::to_string(integer);
    return text;
  }
};

struct PendingEvent {
  Value name, cat, ph, ts, dur, pid, tid, id, bp, sf, scope;
  ArgList args;
  int64_t opId = kNoOp;
  uint64_t correlation = 0;
  StringId loc = 0;

  void clear() {
    for (Value *v :
         {&name, &cat, &ph, &ts, &dur, &pid, &tid, &id, &bp, &sf, &scope})
      v->clear();
    args.clear();
    opId = kNoOp;
    correlation = 0;
    loc = 0;
  }
};

struct PendingFlow {
  char phase;
  std::string key; // category + id
  uint32_t thread;
  int64_t ts;
  bool bindEnclosing;
};

struct StackFrameEntry {
  std::string name, file, parent;
  uint32_t line = 0;
};

/// Turns scanned events into trace events; the scanner drives it.
class ChromeBuilder {
public:
  ChromeBuilder(Trace &trace) : trace(trace) {}

  Trace &trace;
  PendingEvent event;
  std::string currentKey; // the key being read
  std::string errorMessage;
  std::vector<PendingFlow> flows;
  std::vector<std::pair<uint32_t, std::string>> eventFrames; // event → sf
  std::map<std::string, StackFrameEntry> stackFrames;
  std::unordered_map<int64_t, StringId> processNames;

  /// Closes B events left open at the end of the trace.
  void closeOpenSpans() {
    int64_t end = trace.timeBounds().second;
    for (auto &[thread, stack] : openSpans)
      for (uint32_t index : stack)
        trace.events[index].durationNs =
            std::max<int64_t>(0, end - trace.events[index].startNs);
    openSpans.clear();
  }

  /// The keys the importer reads, found by length then bytes: comparing
  /// every key against every name was a third of the load time.
  enum Key {
    KName,
    KCat,
    KPh,
    KTs,
    KDur,
    KPid,
    KTid,
    KId,
    KBp,
    KSf,
    KScope,
    KArgs,
    KOpId,
    KCorrelation,
    KLoc,
    KOther
  };
  Key key = KOther;
  static Key classify(std::string_view k) {
    switch (k.size()) {
    case 1:
      return k[0] == 's' ? KScope : KOther;
    case 2:
      return k == "ph"   ? KPh
             : k == "ts" ? KTs
             : k == "id" ? KId
             : k == "bp" ? KBp
             : k == "sf" ? KSf
                         : KOther;
    case 3:
      return k == "cat"   ? KCat
             : k == "dur" ? KDur
             : k == "pid" ? KPid
             : k == "tid" ? KTid
             : k == "loc" ? KLoc
                          : KOther;
    case 4:
      return k == "name" ? KName : k == "args" ? KArgs : KOther;
    case 5:
      return k == "op_id" ? KOpId : KOther;
    case 11:
      return k == "correlation" ? KCorrelation : KOther;
    default:
      return KOther;
    }
  }

  /// An event field (`key`) with its scalar value.
  void eventField(Value &v) {
    static Value PendingEvent::*const fields[] = {
        &PendingEvent::name, &PendingEvent::cat,  &PendingEvent::ph,
        &PendingEvent::ts,   &PendingEvent::dur,  &PendingEvent::pid,
        &PendingEvent::tid,  &PendingEvent::id,   &PendingEvent::bp,
        &PendingEvent::sf,   &PendingEvent::scope};
    if (key <= KScope)
      std::swap(event.*fields[key], v);
  }
  bool wantsField() const { return key <= KScope; }

  void argField(Value &v) {
    if (key == KOpId && v.type == Value::Int) {
      event.opId = v.integer;
      return;
    }
    if (key == KCorrelation && v.type == Value::Int) {
      event.correlation = static_cast<uint64_t>(v.integer);
      return;
    }
    if (key == KLoc && v.type == Value::String) {
      event.loc = trace.intern(v.text);
      return;
    }
    event.args.emplace_back(trace.intern(currentKey), trace.intern(v.asText()));
  }

  void frameField(StackFrameEntry &entry, Value &v) {
    if (currentKey == "name")
      entry.name = v.asText();
    else if (currentKey == "parent")
      entry.parent = v.asText();
    else if (currentKey == "file")
      entry.file = v.asText();
    else if (currentKey == "line" && v.type == Value::Int)
      entry.line = static_cast<uint32_t>(v.integer);
  }

  uint64_t eventCount = 0;

  bool finishEvent() {
    ++eventCount;
    return finishEventImpl();
  }

private:
  bool fail(const std::string &expected, const std::string &found) {
    errorMessage = "event " + std::to_string(eventCount) + ": expected " +
                   expected + ", found " + found;
    return false;
  }

  /// What a field held, for messages: "none" or its JSON text.
  static std::string valueText(Value &v) {
    if (v.type == Value::None)
      return "none";
    std::string text =
        v.type == Value::String ? "\"" + v.text + "\"" : v.asText();
    return text.size() > 60 ? text.substr(0, 60) + "..." : text;
  }

  /// pid/tid may be numbers or strings ("stream 7"); strings get stable ids.
  int64_t idOf(Value &v, bool &named) {
    named = false;
    if (v.type == Value::Int)
      return v.integer;
    if (v.type == Value::Float) {
      // Ids are labels: a fraction or a huge value is kept as what the
      // conversion can hold (the cast itself is undefined out of range).
      double d = v.number();
      return d >= -9.2e18 && d <= 9.2e18 ? int64_t(d) : 0;
    }
    if (v.type == Value::String) {
      named = true;
      auto [it, inserted] =
          namedIds.emplace(v.text, kNamedIdBase + int64_t(namedIds.size()));
      return it->second;
    }
    return 0;
  }

  /// A time in microseconds as nanoseconds; false for a value that is not
  /// a number or is beyond ±detail::kMaxTimeNs.
  bool timeOf(Value &v, int64_t &ns) {
    if (v.type == Value::Int) {
      if (v.integer <= -detail::kMaxTimeNs / 1000 ||
          v.integer >= detail::kMaxTimeNs / 1000)
        return false;
      ns = v.integer * 1000;
      return true;
    }
    if (v.type == Value::Float)
      return detail::microsecondsTextToNs(v.text, ns) ||
             detail::scaleToNs(v.number(), 1000.0, ns);
    if (v.type == Value::String) // some producers quote numbers
      return detail::microsecondsTextToNs(v.text, ns);
    return false;
  }

  bool finishEventImpl() {
    if (event.ph.type != Value::String || event.ph.text.empty())
      return fail("a \"ph\" (phase) string", "an event without one");
    char phase = event.ph.text[0];
    bool pidNamed, tidNamed;
    int64_t pid = idOf(event.pid, pidNamed);
    int64_t tid = idOf(event.tid, tidNamed);

    if (phase == 'M') {
      std::string_view name = event.name.text;
      std::string_view value;
      for (auto &[k, v] : event.args)
        if (trace.str(k) == "name")
          value = trace.str(v);
      if (name == "process_name")
        processNames[pid] = trace.intern(value);
      else if (name == "thread_name")
        trace.threads[trace.thread(pid, tid)].name = trace.intern(value);
      return true;
    }

    uint32_t thread = trace.thread(pid, tid);
    if (tidNamed && !trace.threads[thread].name)
      trace.threads[thread].name = trace.intern(event.tid.text);
    if (pidNamed && !processNames.count(pid))
      processNames[pid] = trace.intern(event.pid.text);

    int64_t ts = 0;
    bool hasTs = timeOf(event.ts, ts);
    if (phase == 'X' || phase == 'B' || phase == 'E' || phase == 'i' ||
        phase == 'I' || phase == 'R' || phase == 's' || phase == 't' ||
        phase == 'f') {
      if (!hasTs)
        return fail("a numeric \"ts\" within ±146 years in event \"" +
                        event.name.text + "\" (phase " + event.ph.text + ")",
                    valueText(event.ts));
    }

    if (phase == 's' || phase == 't' || phase == 'f') {
      PendingFlow flow;
      flow.phase = phase;
      flow.key = event.cat.text + '\x1f' + event.id.asText();
      flow.thread = thread;
      flow.ts = ts;
      flow.bindEnclosing = phase != 'f' || event.bp.text == "e";
      flows.push_back(std::move(flow));
      return true;
    }

    Event e;
    e.startNs = ts;
    e.name = trace.intern(event.name.text);
    e.category = trace.intern(event.cat.text);
    auto known = kinds.find(e.category);
    if (known == kinds.end())
      known =
          kinds.emplace(e.category, detail::classifyCategory(event.cat.text))
              .first;
    e.kind = known->second;
    e.thread = thread;
    e.opId = event.opId;
    e.correlation = event.correlation;
    e.loc = event.loc;

    switch (phase) {
    case 'X': {
      int64_t dur = 0;
      if (event.dur.type != Value::None && !timeOf(event.dur, dur))
        return fail("a numeric \"dur\" within ±146 years in event \"" +
                        event.name.text + "\"",
                    valueText(event.dur));
      e.durationNs = std::max<int64_t>(0, dur);
      break;
    }
    case 'B': {
      // Added now, in begin order, so that a parent precedes its children
      // even when both start and end together; E sets the duration.
      e.args = trace.addArgs(std::move(event.args));
      auto index = static_cast<uint32_t>(trace.events.size());
      rememberFrame(index);
      trace.events.push_back(e);
      openSpans[thread].push_back(index);
      return true;
    }
    case 'E': {
      auto &stack = openSpans[thread];
      if (stack.empty())
        return true; // an E without its B: nothing to close
      Event &begun = trace.events[stack.back()];
      stack.pop_back();
      begun.durationNs = std::max<int64_t>(0, ts - begun.startNs);
      return true;
    }
    case 'i':
    case 'I':
    case 'R':
      e.durationNs = 0;
      break;
    default:
      return true; // counters, async, samples, objects: not converted
    }
    e.args = trace.addArgs(std::move(event.args));
    rememberFrame(static_cast<uint32_t>(trace.events.size()));
    trace.events.push_back(e);
    return true;
  }

  void rememberFrame(uint32_t eventIndex) {
    if (eventIndex != UINT32_MAX && event.sf.type != Value::None)
      eventFrames.emplace_back(eventIndex, event.sf.asText());
  }

  std::unordered_map<std::string, int64_t> namedIds;
  std::unordered_map<StringId, EventKind> kinds; // by category
  std::unordered_map<uint32_t, std::vector<uint32_t>> openSpans;
};

/// Resolves "stackFrames" ids to interned stacks.
StackId stackOf(Trace &trace, const std::map<std::string, StackFrameEntry> &all,
                const std::string &id, std::map<std::string, StackId> &memo,
                int depth = 0) {
  auto known = memo.find(id);
  if (known != memo.end())
    return known->second;
  auto entry = all.find(id);
  if (entry == all.end() || depth > 4096)
    return kNoStack;
  StackId parent =
      entry->second.parent.empty()
          ? kNoStack
          : stackOf(trace, all, entry->second.parent, memo, depth + 1);
  StackId s =
      trace.stack(parent, trace.frame(entry->second.name, entry->second.file,
                                      entry->second.line));
  memo[id] = s;
  return s;
}

/// The innermost event of `thread` containing `ts` (or, when not
/// `enclosing`, the first one starting at or after it); UINT32_MAX if none.
uint32_t bindFlow(const Trace &trace, const std::vector<size_t> &threadBegin,
                  uint32_t thread, int64_t ts, bool enclosing) {
  size_t lo = threadBegin[thread], hi = threadBegin[thread + 1];
  auto first = trace.events.begin() + lo, last = trace.events.begin() + hi;
  auto after = std::upper_bound(
      first, last, ts, [](int64_t t, const Event &e) { return t < e.startNs; });
  if (!enclosing)
    return after == last ? UINT32_MAX
                         : static_cast<uint32_t>(after - trace.events.begin());
  // Walk back from the last event starting at or before ts.
  int steps = 0;
  for (auto it = after; it != first && steps < 4096; ++steps) {
    --it;
    if (it->startNs <= ts && ts < it->endNs())
      return static_cast<uint32_t>(it - trace.events.begin());
    if (it->startNs == ts && it->durationNs == 0)
      return static_cast<uint32_t>(it - trace.events.begin());
  }
  return UINT32_MAX;
}

/// Reads a scalar (or, when `raw`, any value as JSON text) into `v`.
bool scanValue(detail::JsonScanner &scanner, Value &v, bool raw) {
  v.clear();
  std::string_view text;
  char c = scanner.peek();
  if (c == '"') {
    if (!scanner.string(text))
      return false;
    v.type = Value::String;
    v.text.assign(text);
    return true;
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    bool isInteger;
    if (!scanner.number(text, isInteger))
      return false;
    if (isInteger && text.size() <= 18) {
      int64_t value = 0;
      size_t i = text[0] == '-' ? 1 : 0;
      for (; i < text.size(); ++i)
        value = value * 10 + (text[i] - '0');
      v.type = Value::Int;
      v.integer = text[0] == '-' ? -value : value;
      return true;
    }
    v.type = Value::Float;
    v.text.assign(text);
    return true;
  }
  if (c == '{' || c == '[') {
    if (!scanner.skipValue(&text))
      return false;
    if (raw) {
      v.type = Value::Raw;
      v.text.assign(text);
    }
    return true;
  }
  if (!scanner.skipValue(&text)) // true, false, null
    return false;
  if (text != "null") {
    v.type = Value::Raw;
    v.text.assign(text);
  }
  return true;
}

/// Reads `"key":` into builder.currentKey and builder.key.
bool scanKey(detail::JsonScanner &scanner, ChromeBuilder &builder) {
  std::string_view key;
  if (!scanner.string(key) || !scanner.expect(':', "':' after an object key"))
    return false;
  builder.currentKey.assign(key);
  builder.key = ChromeBuilder::classify(key);
  return true;
}

/// Iterates an object's members: `member` is called after each key.
template <typename F>
bool scanObject(detail::JsonScanner &scanner, ChromeBuilder &builder,
                const char *what, F &&member) {
  if (!scanner.expect('{', what))
    return false;
  if (scanner.consume('}'))
    return true;
  for (;;) {
    if (!scanKey(scanner, builder) || !member())
      return false;
    if (scanner.consume(','))
      continue;
    return scanner.expect('}', "',' or '}' after an object member");
  }
}

/// `openEnded`: the JSON Array Format, whose closing ']' the Trace Event
/// Format makes optional so that a writer can stream events and stop.
bool scanEvents(detail::JsonScanner &scanner, ChromeBuilder &builder,
                size_t &eventStart, bool openEnded) {
  if (!scanner.expect('[', "the '[' of the event array"))
    return false;
  if (scanner.consume(']') || (openEnded && scanner.atEnd()))
    return true;
  Value value;
  for (;;) {
    builder.event.clear();
    scanner.peek();
    eventStart = scanner.offset();
    bool ok = scanObject(scanner, builder, "an event object ('{')", [&] {
      if (builder.key == ChromeBuilder::KArgs && scanner.peek() == '{')
        return scanObject(scanner, builder, "an args object", [&] {
          if (!scanValue(scanner, value, true))
            return false;
          if (value.type != Value::None)
            builder.argField(value);
          return true;
        });
      if (!builder.wantsField())
        return scanner.skipValue();
      if (!scanValue(scanner, value, false))
        return false;
      builder.eventField(value);
      return true;
    });
    if (!ok || !builder.finishEvent())
      return false;
    if (scanner.consume(',')) {
      if (openEnded && scanner.atEnd())
        return true;
      continue;
    }
    if (openEnded && scanner.atEnd())
      return true;
    return scanner.expect(']', "',' or ']' after an event");
  }
}

bool scanStackFrames(detail::JsonScanner &scanner, ChromeBuilder &builder) {
  Value value;
  return scanObject(scanner, builder, "a stackFrames object", [&] {
    std::string id = builder.currentKey;
    StackFrameEntry entry;
    if (!scanObject(scanner, builder, "a stack frame object", [&] {
          if (!scanValue(scanner, value, false))
            return false;
          builder.frameField(entry, value);
          return true;
        }))
      return false;
    builder.stackFrames[id] = std::move(entry);
    return true;
  });
}

bool scanChrome(detail::JsonScanner &scanner, ChromeBuilder &builder,
                size_t &eventStart) {
  char first = scanner.peek();
  bool sawEvents = false;
  if (first == '[') {
    if (!scanEvents(scanner, builder, eventStart, true))
      return false;
    sawEvents = true;
  } else if (first == '{') {
    if (!scanObject(scanner, builder, "'{'", [&] {
          if (builder.currentKey == "traceEvents") {
            sawEvents = true;
            return scanEvents(scanner, builder, eventStart, false);
          }
          if (builder.currentKey == "stackFrames" && scanner.peek() == '{')
            return scanStackFrames(scanner, builder);
          return scanner.skipValue();
        }))
      return false;
  } else {
    return scanner.fail("a JSON object with \"traceEvents\" or an array of "
                        "trace events");
  }
  if (!scanner.atEnd())
    return scanner.fail("the end of the document");
  if (!sawEvents) {
    eventStart = 0;
    builder.errorMessage = "no \"traceEvents\" array: this JSON is not a "
                           "Chrome trace (expected {\"traceEvents\": [...]} "
                           "or [...])";
    return false;
  }
  return true;
}

} // namespace

Expected<Trace> parseChromeTrace(std::string_view text,
                                 const std::string &path) {
  Trace trace;
  ChromeBuilder handler(trace);
  detail::JsonScanner scanner(text);
  size_t eventStart = 0;
  bool ok = scanChrome(scanner, handler, eventStart);
  if (!ok) {
    if (scanner.failed())
      return detail::errorAt(
          path, text, scanner.errorOffset(),
          scanner.errorMessage() +
              " (a Chrome trace is a JSON object with a \"traceEvents\" "
              "array, or a JSON array of events)");
    return detail::errorAt(path, text, eventStart, handler.errorMessage);
  }
  handler.closeOpenSpans();

  for (auto &[pid, name] : handler.processNames)
    for (ThreadInfo &t : trace.threads)
      if (t.pid == pid)
        t.processName = name;

  // Stack frames before sorting (event indices are still the parse order).
  std::map<std::string, StackId> memo;
  for (auto &[eventIndex, sf] : handler.eventFrames)
    trace.events[eventIndex].stack =
        stackOf(trace, handler.stackFrames, sf, memo);

  trace.sortEvents();

  if (!handler.flows.empty()) {
    std::vector<size_t> threadBegin(trace.threads.size() + 1, 0);
    for (const Event &e : trace.events)
      ++threadBegin[e.thread + 1];
    for (size_t i = 1; i < threadBegin.size(); ++i)
      threadBegin[i] += threadBegin[i - 1];
    std::unordered_map<std::string, uint32_t> started;
    for (const PendingFlow &flow : handler.flows) {
      uint32_t bound = bindFlow(trace, threadBegin, flow.thread, flow.ts,
                                flow.bindEnclosing);
      if (bound == UINT32_MAX)
        continue;
      if (flow.phase == 's') {
        started[flow.key] = bound;
        continue;
      }
      auto from = started.find(flow.key);
      if (from == started.end() || from->second == bound)
        continue;
      trace.flows.push_back({from->second, bound});
      if (flow.phase == 't')
        from->second = bound; // a step continues the chain
    }
  }
  trace.linkLaunches();
  return trace;
}

} // namespace cuvil::profiler
