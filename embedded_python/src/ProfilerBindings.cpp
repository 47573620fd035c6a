//===- ProfilerBindings.cpp - The profiler library for Python -------------===//
//
// Traces cross into Python as an opaque Trace handle with aggregation
// methods; only aggregated rows and text are converted to Python objects,
// so a million-event trace never becomes a million Python objects.
//
//===----------------------------------------------------------------------===//

#include "ProfilerBindings.h"
#include "ProfilingBindings.h"
#include "PyText.h"

#include "cuvil/Profiler/Profiler.h"

#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>

namespace py = pybind11;
using namespace cuvil::profiler;
using cuvil::python::pyText;

namespace {

/// Raised for unreadable or malformed traces (a ValueError).
struct TraceFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using TraceHandle = std::shared_ptr<Trace>;

TraceFormat formatArg(const std::string &name) {
  auto format = parseTraceFormat(name);
  if (!format)
    throw py::value_error("unknown trace format '" + name +
                          "'; use auto, chrome, folded, speedscope or "
                          "nsys-sqlite");
  return *format;
}

EventKind kindArg(const std::string &name) {
  EventKind kind;
  if (!parseEventKind(name, kind))
    throw py::value_error("unknown event kind '" + name +
                          "'; use python, nvtx, cpu_kernel, gpu_kernel, "
                          "memcpy, runtime_api or other");
  return kind;
}

Selection selectionArg(const py::object &begin, const py::object &end,
                       const py::object &kinds) {
  Selection selection;
  if (!begin.is_none())
    selection.beginNs = begin.cast<int64_t>();
  if (!end.is_none())
    selection.endNs = end.cast<int64_t>();
  if (!kinds.is_none()) {
    selection.kindMask = 0;
    for (const py::handle &kind : kinds)
      selection.kindMask |= Selection::bit(kindArg(kind.cast<std::string>()));
  }
  return selection;
}

GroupBy groupArg(const std::string &name) {
  if (name == "name")
    return GroupBy::Name;
  if (name == "op")
    return GroupBy::OpId;
  throw py::value_error("group_by is 'name' or 'op', not '" + name + "'");
}

TraceHandle unwrap(Expected<Trace> result) {
  if (!result)
    throw TraceFileError(result.error().text());
  return std::make_shared<Trace>(std::move(*result));
}

py::dict rowDict(const OpRow &row) {
  py::dict d;
  d["name"] = pyText(row.name);
  d["kind"] = eventKindName(row.kind);
  d["op_id"] = row.opId == kNoOp ? py::object(py::none()) : py::int_(row.opId);
  d["loc"] = pyText(row.loc);
  d["node"] = pyText(row.node);
  d["count"] = row.count;
  d["total_ns"] = row.totalNs;
  d["self_ns"] = row.selfNs;
  d["p50_ns"] = row.p50Ns;
  d["p99_ns"] = row.p99Ns;
  d["max_ns"] = row.maxNs;
  return d;
}

py::dict eventDict(const Trace &trace, const Event &e) {
  py::dict d;
  const ThreadInfo &thread = trace.threads[e.thread];
  d["name"] = pyText(trace.str(e.name));
  d["kind"] = eventKindName(e.kind);
  d["category"] = pyText(trace.str(e.category));
  d["start_ns"] = e.startNs;
  d["duration_ns"] = e.durationNs;
  d["pid"] = thread.pid;
  d["tid"] = thread.tid;
  d["op_id"] = e.opId == kNoOp ? py::object(py::none()) : py::int_(e.opId);
  d["loc"] = pyText(trace.str(e.loc));
  d["correlation"] = e.correlation;
  py::list stack;
  for (FrameId f : trace.stackFrames(e.stack)) {
    const Frame &frame = trace.frames[f];
    stack.append(py::make_tuple(pyText(trace.str(frame.name)),
                                pyText(trace.str(frame.file)), frame.line));
  }
  d["stack"] = stack;
  py::dict args;
  if (e.args != kNoArgs)
    for (const auto &[key, value] : trace.args[e.args])
      args[pyText(trace.str(key))] = pyText(trace.str(value));
  d["args"] = args;
  return d;
}

void bindTrace(py::module_ &m) {
  py::class_<Trace, TraceHandle>(m, "Trace",
                                 "A profile: events on threads and streams, "
                                 "Python stacks, flows.")
      .def_property_readonly("event_count",
                             [](const Trace &t) { return t.events.size(); })
      .def_property_readonly("flow_count",
                             [](const Trace &t) { return t.flows.size(); })
      .def_property_readonly("thread_count",
                             [](const Trace &t) { return t.threads.size(); })
      .def_property_readonly("time_bounds", &Trace::timeBounds,
                             "(first start, last end) in nanoseconds.")
      .def(
          "events",
          [](const Trace &t, const py::object &kind, size_t limit) {
            py::list out;
            bool filter = !kind.is_none();
            EventKind wanted =
                filter ? kindArg(kind.cast<std::string>()) : EventKind::Other;
            for (const Event &e : t.events) {
              if (filter && e.kind != wanted)
                continue;
              if (limit && out.size() >= limit)
                break;
              out.append(eventDict(t, e));
            }
            return out;
          },
          py::arg("kind") = py::none(), py::arg("limit") = 0,
          "Events as dicts (at most `limit`, 0 = all), optionally of one kind.")
      .def(
          "flows",
          [](const Trace &t) {
            std::vector<std::pair<uint32_t, uint32_t>> out;
            for (const Flow &f : t.flows)
              out.emplace_back(f.from, f.to);
            return out;
          },
          "Flow arrows as (from event index, to event index).")
      .def(
          "op_table",
          [](const Trace &t, const py::object &begin, const py::object &end,
             const py::object &kinds, const std::string &groupBy) {
            py::list out;
            for (const OpRow &row :
                 opTable(t, selectionArg(begin, end, kinds), groupArg(groupBy)))
              out.append(rowDict(row));
            return out;
          },
          py::arg("begin_ns") = py::none(), py::arg("end_ns") = py::none(),
          py::arg("kinds") = py::none(), py::arg("group_by") = "name",
          "Per-op rows (count, total, self, p50, p99, max in ns), by total.")
      .def(
          "summary",
          [](const Trace &t, size_t top, const py::object &kinds,
             const std::string &groupBy) {
            return pyText(formatOpTable(
                opTable(t, selectionArg(py::none(), py::none(), kinds),
                        groupArg(groupBy)),
                top));
          },
          py::arg("top") = 0, py::arg("kinds") = py::none(),
          py::arg("group_by") = "name", "The per-op table as text.")
      .def(
          "call_tree",
          [](const Trace &t, const py::object &begin, const py::object &end,
             const py::object &kinds, uint32_t maxDepth) {
            return pyText(CallTree::build(t, selectionArg(begin, end, kinds))
                              .print(maxDepth));
          },
          py::arg("begin_ns") = py::none(), py::arg("end_ns") = py::none(),
          py::arg("kinds") = py::none(), py::arg("max_depth") = UINT32_MAX,
          "The flame graph's tree as indented text: name total= self=.")
      .def(
          "tracks",
          [](const Trace &t) {
            py::list out;
            for (const Track &track : buildTracks(t)) {
              py::dict d;
              d["label"] = pyText(track.label);
              d["kind"] = eventKindName(track.kind);
              d["events"] = track.events.size();
              d["max_depth"] = track.maxDepth;
              out.append(d);
            }
            return out;
          },
          "Timeline tracks: one per thread and event kind.")
      .def(
          "to_chrome",
          [](const Trace &t) { return pyText(writeChromeTrace(t)); },
          "Chrome trace-event JSON text.")
      .def(
          "to_folded",
          [](const Trace &t) { return pyText(writeFoldedStacks(t)); },
          "Folded stacks text.")
      .def(
          "to_speedscope",
          [](const Trace &t) { return pyText(writeSpeedscope(t)); },
          "speedscope JSON text.")
      .def(
          "write",
          [](const Trace &t, const std::string &path,
             const std::string &format) {
            if (auto error = writeTraceFile(t, path, formatArg(format)))
              throw TraceFileError(error->text());
          },
          py::arg("path"), py::arg("format") = "auto",
          "Writes chrome, folded or speedscope (auto: from the file name).");
}

/// What finishGpuCollection said for the last trace taken.
std::string &lastGpuProblem() {
  static std::string problem;
  return problem;
}

void bindRecorder(py::module_ &m) {
  auto &recorder = EventRecorder::global();
  m.def(
      "set_recording", [&recorder](bool on) { recorder.setEnabled(on); },
      py::arg("enabled"), "Turns the process-wide event recorder on or off.");
  m.def("recording", [&recorder] { return recorder.enabled(); });
  m.def(
      "intern",
      [&recorder](const std::string &text) { return recorder.intern(text); },
      py::arg("text"), "Id of a name or loc string for record().");
  m.def(
      "intern_stack",
      [&recorder](
          const std::vector<std::tuple<std::string, std::string, uint32_t>>
              &frames) {
        std::vector<PythonFrame> stack;
        for (const auto &[function, file, line] : frames)
          stack.push_back({function, file, line});
        return recorder.internStack(stack);
      },
      py::arg("frames"),
      "Id of a root-first stack of (function, file, line) frames.");
  m.def(
      "new_correlation", [&recorder] { return recorder.newCorrelation(); },
      "A fresh id joining a Python call to the kernels it ran.");
  m.def("now_ns", &steadyNowNs, "The recorder's clock (steady, ns).");
  m.def(
      "record",
      [&recorder](uint32_t name, int64_t startNs, int64_t endNs,
                  const std::string &kind, int64_t opId, uint32_t loc,
                  uint32_t stack, uint64_t correlation) {
        RecordedEvent e;
        e.name = name;
        e.startNs = startNs;
        e.endNs = endNs;
        e.kind = kindArg(kind);
        e.opId = opId;
        e.loc = loc;
        e.stack = stack;
        e.correlation = correlation;
        recorder.record(e);
      },
      py::arg("name"), py::arg("start_ns"), py::arg("end_ns"),
      py::arg("kind") = "cpu_kernel", py::arg("op_id") = kNoOp,
      py::arg("loc") = 0, py::arg("stack") = kNoStack,
      py::arg("correlation") = 0,
      "Records a finished event on the calling thread (if recording).");
  m.def("recorded_count", [&recorder] { return recorder.size(); });
  m.def(
      "take_trace",
      [&recorder](const std::string &processName) {
        auto trace = std::make_shared<Trace>(recorder.takeTrace(processName));
        // A profile that ran GPU code gets CUPTI's lanes.
        lastGpuProblem() = cuvil::python::finishGpuCollection(*trace);
        return trace;
      },
      py::arg("process_name") = "cuvil",
      "Moves the recorded events out into a Trace (with the GPU's lanes "
      "from CUPTI when calls ran GPU code).");
  m.def("clear_recording", [&recorder] { recorder.clear(); });
  m.def(
      "gpu_lanes_problem", [] { return lastGpuProblem(); },
      "Why the last trace taken has no GPU lanes although it ran GPU code "
      "(no libcupti, no GPU), or ''");
  m.attr("NO_STACK") = kNoStack;
  m.attr("NO_OP") = kNoOp;
}

} // namespace

namespace cuvil::python {

void bindProfiler(py::module_ &parent) {
  py::module_ m = parent.def_submodule(
      "profiler", "Traces: collection, file formats and aggregation.");
  cuvil::python::registerException<TraceFileError>(m, "TraceError",
                                                   PyExc_ValueError);
  bindTrace(m);
  bindRecorder(m);

  m.def(
      "read_trace",
      [](const std::string &path, const std::string &format) {
        Expected<Trace> result(Trace{});
        {
          py::gil_scoped_release unlocked; // big files take a while
          result = readTraceFile(path, formatArg(format));
        }
        return unwrap(std::move(result));
      },
      py::arg("path"), py::arg("format") = "auto",
      "Reads a Chrome (PyTorch, ONNX Runtime, Cuvil), folded, speedscope or "
      "Nsight Systems SQLite trace; raises TraceError naming the place.");
  m.def(
      "parse_trace",
      [](const std::string &text, const std::string &format,
         const std::string &name) {
        TraceFormat f = formatArg(format);
        if (f == TraceFormat::Auto)
          f = detectFormat(text);
        switch (f) {
        case TraceFormat::Folded:
          return unwrap(parseFoldedStacks(text, name));
        case TraceFormat::Speedscope:
          return unwrap(parseSpeedscope(text, name));
        case TraceFormat::NsysSqlite:
          throw py::value_error("Nsight Systems exports are files; use "
                                "read_trace(path)");
        default:
          return unwrap(parseChromeTrace(text, name));
        }
      },
      py::arg("text"), py::arg("format") = "auto", py::arg("name") = "<string>",
      "Parses trace text held in memory.");
  m.def(
      "diff_call_trees",
      [](const Trace &baseline, const Trace &current) {
        return pyText(
            DiffTree::build(CallTree::build(baseline), CallTree::build(current))
                .print());
      },
      py::arg("baseline"), py::arg("current"),
      "Per-frame difference of two profiles' flame trees, as text.");
  m.def(
      "format_for_path",
      [](const std::string &path) {
        return std::string(traceFormatName(formatFromPath(path)));
      },
      py::arg("path"), "The format a file name suggests ('auto' if none).");
  m.def(
      "trace_formats",
      [] {
        py::list list;
        for (const TraceFormatInfo &info : traceFormats()) {
          std::vector<std::string> extensions(info.extensions.begin(),
                                              info.extensions.end());
          list.append(py::make_tuple(info.name, info.description, extensions,
                                     info.readable, info.writable));
        }
        return list;
      },
      "(name, description, extensions, readable, writable) of every trace "
      "format");
  m.def("nvtx_available", &nvtxAvailable,
        "True when kernels are wrapped in NVTX ranges.");
  m.def("cupti_supported", &cuptiSupported,
        "True when this build can collect CUPTI activity.");
}

} // namespace cuvil::python
