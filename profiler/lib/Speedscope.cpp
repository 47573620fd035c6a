//===- Speedscope.cpp - speedscope file format import and export ----------===//
//
// https://www.speedscope.app/file-format-schema.json: shared frames, and one
// evented profile ("O"pen/"C"lose frame events at times) per thread. An
// event's Python stack is opened around it so the flame chart shows it.
//
//===----------------------------------------------------------------------===//

#include "FormatSupport.h"
#include "cuvil/Profiler/Analysis.h"
#include "cuvil/Profiler/Formats.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>

namespace cuvil::profiler {

static const char kSpeedscopeSchema[] =
    "https://www.speedscope.app/file-format-schema.json";

std::string writeSpeedscope(const Trace &input) {
  Trace sortedCopy;
  const Trace *trace = &input;
  for (size_t i = 1; i < input.events.size(); ++i)
    if (input.events[i - 1].thread > input.events[i].thread ||
        (input.events[i - 1].thread == input.events[i].thread &&
         input.events[i - 1].startNs > input.events[i].startNs)) {
      sortedCopy = input;
      sortedCopy.sortEvents();
      trace = &sortedCopy;
      break;
    }
  detail::Nesting nesting = detail::nestEvents(*trace);

  // Shared frames: Python frames by FrameId, events by name, loc and the
  // identity a flame frame has (model node, else IR op; see CallTree).
  using FrameKey =
      std::tuple<StringId, StringId, uint32_t, bool, std::string_view, int64_t>;
  std::vector<FrameKey> frames;
  std::map<FrameKey, uint32_t> frameIds;
  auto frameIndex = [&](StringId name, StringId file, uint32_t line, bool isLoc,
                        std::string_view node = {}, int64_t opId = kNoOp) {
    auto key = std::make_tuple(name, file, line, isLoc, node,
                               node.empty() ? opId : kNoOp);
    auto [it, inserted] = frameIds.emplace(key, uint32_t(frames.size()));
    if (inserted)
      frames.push_back(key);
    return it->second;
  };

  std::string out;
  out.reserve(256 + trace->events.size() * 70);
  std::string profiles;
  std::string name;
  size_t i = 0;
  int profileCount = 0;
  while (i < trace->events.size()) {
    uint32_t thread = trace->events[i].thread;
    size_t end = i;
    int64_t first = trace->events[i].startNs, last = first;
    while (end < trace->events.size() && trace->events[end].thread == thread) {
      last = std::max(last, nesting.clippedEndNs[end]);
      ++end;
    }
    const ThreadInfo &info = trace->threads[thread];
    name = info.name ? std::string(trace->str(info.name))
                     : "tid " + std::to_string(info.tid);
    if (info.processName)
      name = std::string(trace->str(info.processName)) + " / " + name;
    if (profileCount++)
      profiles += ",\n";
    profiles += "{\"type\":\"evented\",\"name\":\"";
    appendJsonEscaped(profiles, name);
    profiles +=
        "\",\"unit\":\"nanoseconds\",\"startValue\":" + std::to_string(first) +
        ",\"endValue\":" + std::to_string(last) + ",\"events\":[";

    struct Open {
      uint32_t frame;
      int64_t end;
    };
    std::vector<Open> open;
    bool firstEvent = true;
    auto emit = [&](char type, uint32_t frame, int64_t at) {
      if (!firstEvent)
        profiles += ',';
      firstEvent = false;
      profiles += "{\"type\":\"";
      profiles += type;
      profiles += "\",\"frame\":" + std::to_string(frame) +
                  ",\"at\":" + std::to_string(at) + "}";
    };
    auto closeUntil = [&](int64_t t) {
      while (!open.empty() && open.back().end <= t) {
        emit('C', open.back().frame, open.back().end);
        open.pop_back();
      }
    };
    for (; i < end; ++i) {
      const Event &e = trace->events[i];
      int64_t stop = nesting.clippedEndNs[i];
      closeUntil(e.startNs);
      if (open.empty() && e.stack != kNoStack)
        for (FrameId f : trace->stackFrames(e.stack)) {
          const Frame &frame = trace->frames[f];
          uint32_t id = frameIndex(frame.name, frame.file, frame.line, false);
          emit('O', id, e.startNs);
          open.push_back({id, stop});
        }
      uint32_t id =
          frameIndex(e.name, e.loc, 0, true, trace->arg(e, kNodeArg), e.opId);
      emit('O', id, e.startNs);
      open.push_back({id, stop});
    }
    closeUntil(INT64_MAX);
    profiles += "]}";
  }

  out += "{\"$schema\":\"";
  out += kSpeedscopeSchema;
  out += "\",\"exporter\":\"cuvil\",\"name\":\"cuvil profile\","
         "\"activeProfileIndex\":0,\"shared\":{\"frames\":[";
  for (size_t f = 0; f < frames.size(); ++f) {
    auto [frameName, file, line, isLoc, node, opId] = frames[f];
    if (f)
      out += ',';
    // speedscope shows only the name: it names the node too. "node" and
    // "op_id", which speedscope ignores, bring the identity back on reading.
    out += "{\"name\":\"";
    appendJsonEscaped(out, frameTitle(trace->str(frameName), node));
    out += '"';
    if (!node.empty()) {
      out += ",\"node\":\"";
      appendJsonEscaped(out, node);
      out += '"';
    }
    if (opId != kNoOp)
      out += ",\"op_id\":" + std::to_string(opId);
    if (file) {
      std::string_view fileText = trace->str(file);
      if (isLoc) { // "file:line:col" → file, line, col
        detail::SplitLoc parts = detail::splitLoc(fileText);
        fileText = parts.file;
        line = parts.line;
        if (parts.hasColumn)
          out += ",\"col\":" + std::to_string(parts.column);
      }
      out += ",\"file\":\"";
      appendJsonEscaped(out, fileText);
      out += '"';
      if (line)
        out += ",\"line\":" + std::to_string(line);
    }
    out += '}';
  }
  out += "]},\"profiles\":[\n";
  out += profiles;
  out += "]}\n";
  return out;
}

namespace {

/// A shared frame as the events that open it get it.
struct SharedFrame {
  StringId name = 0, loc = 0;
  uint32_t args = kNoArgs;
  int64_t opId = kNoOp;
};

/// `object[key]` when it is a string, `fallback` when it is absent or of
/// another type (a file from elsewhere may hold anything there).
std::string stringField(const nlohmann::json &object, const char *key,
                        const std::string &fallback) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>()
                                               : fallback;
}

/// One of "shared.frames" (an object with a "name" string): file, line and
/// col become the loc; Cuvil's own "name [node]" frames with "node" and
/// "op_id" get their model node and IR op back.
SharedFrame readFrame(const nlohmann::json &f, Trace &trace) {
  SharedFrame frame;
  std::string name = f["name"].get<std::string>();
  std::string node = stringField(f, "node", "");
  std::string suffix = " [" + node + "]";
  if (!node.empty() && name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    name.resize(name.size() - suffix.size());
    frame.args = trace.addArgs({{trace.intern(kNodeArg), trace.intern(node)}});
  }
  if (f.contains("op_id") && f["op_id"].is_number_integer())
    frame.opId = f["op_id"].get<int64_t>();
  frame.name = trace.intern(name);
  std::string loc;
  if (f.contains("file") && f["file"].is_string()) {
    loc = f["file"].get<std::string>();
    if (f.contains("line") && f["line"].is_number_integer())
      loc += ":" + std::to_string(f["line"].get<int64_t>());
    if (f.contains("col") && f["col"].is_number_integer())
      loc += ":" + std::to_string(f["col"].get<int64_t>());
  }
  frame.loc = loc.empty() ? 0 : trace.intern(loc);
  return frame;
}

int64_t unitScale(const std::string &unit) {
  if (unit == "seconds")
    return 1000000000;
  if (unit == "milliseconds")
    return 1000000;
  if (unit == "microseconds")
    return 1000;
  return 1; // nanoseconds, bytes, none
}

} // namespace

Expected<Trace> parseSpeedscope(std::string_view text,
                                const std::string &path) {
  using json = nlohmann::json;
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  auto bad = [&](const std::string &what) {
    return detail::errorAt(path, text, 0,
                           "speedscope file: " + what + " (see " +
                               kSpeedscopeSchema + ")");
  };
  if (doc.is_discarded()) {
    // Find the offset of the syntax error with the SAX parser's report.
    struct Probe : nlohmann::json_sax<json> {
      size_t at = 0;
      bool null() override { return true; }
      bool boolean(bool) override { return true; }
      bool number_integer(number_integer_t) override { return true; }
      bool number_unsigned(number_unsigned_t) override { return true; }
      bool number_float(number_float_t, const string_t &) override {
        return true;
      }
      bool string(string_t &) override { return true; }
      bool binary(binary_t &) override { return true; }
      bool start_object(std::size_t) override { return true; }
      bool key(string_t &) override { return true; }
      bool end_object() override { return true; }
      bool start_array(std::size_t) override { return true; }
      bool end_array() override { return true; }
      bool parse_error(std::size_t position, const std::string &,
                       const nlohmann::detail::exception &) override {
        at = position > 0 ? position - 1 : 0; // position counts the bad char
        return false;
      }
    } probe;
    json::sax_parse(text.begin(), text.end(), &probe);
    probe.at = std::min(probe.at, text.size());
    return detail::errorAt(path, text, probe.at,
                           probe.at >= text.size() ? "truncated speedscope JSON"
                                                   : "invalid speedscope JSON");
  }
  if (!doc.is_object() || !doc.contains("shared") ||
      !doc["shared"].is_object() || !doc["shared"].contains("frames") ||
      !doc["shared"]["frames"].is_array())
    return bad("expected \"shared\": {\"frames\": [...]}");
  if (!doc.contains("profiles") || !doc["profiles"].is_array())
    return bad("expected a \"profiles\" array");

  Trace trace;
  std::vector<SharedFrame> frames;
  for (const nlohmann::json &f : doc["shared"]["frames"]) {
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string())
      return bad("every frame needs a \"name\" string");
    frames.push_back(readFrame(f, trace));
  }
  StringId category = trace.intern("speedscope");

  int64_t tid = 0;
  for (const json &profile : doc["profiles"]) {
    if (!profile.is_object() || !profile.contains("type"))
      return bad("every profile needs a \"type\"");
    std::string type = stringField(profile, "type", "");
    if (profile.contains("unit") && !profile["unit"].is_string())
      return bad("a profile's \"unit\" is a string, not " +
                 profile["unit"].dump());
    int64_t scale = unitScale(stringField(profile, "unit", "none"));
    uint32_t thread = trace.thread(0, tid++);
    trace.threads[thread].name =
        trace.intern(stringField(profile, "name", "profile"));
    auto frameOk = [&](const json &f) {
      return f.is_number_integer() && f.get<int64_t>() >= 0 &&
             f.get<size_t>() < frames.size();
    };
    auto add = [&](uint32_t frame, int64_t start, int64_t end) {
      Event e;
      e.startNs = start;
      e.durationNs = std::max<int64_t>(0, end - start);
      e.name = frames[frame].name;
      e.loc = frames[frame].loc;
      e.args = frames[frame].args;
      e.opId = frames[frame].opId;
      e.category = category;
      e.thread = thread;
      trace.events.push_back(e);
    };
    if (type == "evented") {
      if (!profile.contains("events") || !profile["events"].is_array())
        return bad("an evented profile needs an \"events\" array");
      // Events are added when opened (parents before children); closing
      // sets the duration.
      std::vector<std::pair<uint32_t, uint32_t>> open; // frame, event
      for (const json &ev : profile["events"]) {
        if (!ev.is_object() || !ev.contains("frame") || !frameOk(ev["frame"]) ||
            !ev.contains("at") || !ev["at"].is_number())
          return bad("an event needs \"type\", a valid \"frame\" index and "
                     "\"at\"");
        auto frame = ev["frame"].get<uint32_t>();
        int64_t at = 0;
        if (!detail::scaleToNs(ev["at"].get<double>(), double(scale), at))
          return bad("event \"at\" " + ev["at"].dump() +
                     " is beyond ±146 years");
        std::string kind = stringField(ev, "type", "");
        if (kind == "O") {
          open.emplace_back(frame, uint32_t(trace.events.size()));
          add(frame, at, at);
        } else if (kind == "C") {
          if (open.empty() || open.back().first != frame)
            return bad("a \"C\" event closes frame " + std::to_string(frame) +
                       ", which is not the innermost open frame");
          Event &e = trace.events[open.back().second];
          e.durationNs = std::max<int64_t>(0, at - e.startNs);
          open.pop_back();
        } else {
          return bad("event type \"" + kind + "\" is neither \"O\" nor \"C\"");
        }
      }
      if (!open.empty())
        return bad("profile \"" + stringField(profile, "name", "") +
                   "\" ends with open frames");
    } else if (type == "sampled") {
      if (!profile.contains("samples") || !profile["samples"].is_array() ||
          !profile.contains("weights") || !profile["weights"].is_array() ||
          profile["samples"].size() != profile["weights"].size())
        return bad("a sampled profile needs \"samples\" and \"weights\" of "
                   "equal length");
      int64_t now = 0;
      const json &weights = profile["weights"];
      size_t index = 0;
      for (const json &sample : profile["samples"]) {
        if (!sample.is_array() || !weights[index].is_number())
          return bad("a sample is an array of frame indices");
        int64_t w = 0;
        if (!detail::scaleToNs(weights[index].get<double>(), double(scale),
                               w) ||
            std::abs(now + w) >= detail::kMaxTimeNs)
          return bad("the weights up to sample " + std::to_string(index) +
                     " add up to more than ±146 years");
        ++index;
        for (const json &f : sample) {
          if (!frameOk(f))
            return bad("a sample names a frame index out of range");
          add(f.get<uint32_t>(), now, now + w);
        }
        now += w;
      }
    } else {
      return bad("profile type \"" + type +
                 "\" is neither \"evented\" nor \"sampled\"");
    }
  }
  trace.sortEvents();
  return trace;
}

} // namespace cuvil::profiler
