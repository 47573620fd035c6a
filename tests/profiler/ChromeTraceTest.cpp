//===- ChromeTraceTest.cpp - Chrome trace JSON: read back, real producers -===//

#include "TestUtil.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>

using namespace cuvil::profiler;
using namespace cuvil::profiler::test;
using json = nlohmann::json;

namespace {

/// A trace with everything the writer handles: two processes, named
/// threads, nesting (one partial overlap), a Python stack, op ids, locs,
/// args, and a flow from a Python call to a kernel on a GPU stream.
Trace richTrace() {
  Trace trace;
  uint32_t call = addEvent(trace, "forward", 1000, 9000, EventKind::Python);
  trace.events[call].stack = trace.stack(
      {trace.frame("<module>", "run.py", 3), trace.frame("main", "run.py", 9)});
  trace.events[call].correlation = 5;
  uint32_t op = addEvent(trace, "cuvil.matmul", 2000, 3000);
  trace.events[op].opId = 12;
  trace.events[op].loc = trace.intern("model.py:3:9");
  trace.events[op].args =
      trace.addArgs({{trace.intern("shape"), trace.intern("8x64 \"f32\"")}});
  addEvent(trace, "straddling", 9500, 1000); // ends 500 ns after forward
  uint32_t kernel =
      addEvent(trace, "gemm_kernel", 2500, 1500, EventKind::GpuKernel, 7, 2);
  trace.events[kernel].correlation = 5;
  trace.threads[trace.thread(1, 1)].name = trace.intern("main thread");
  trace.threads[trace.thread(1, 1)].processName = trace.intern("python3");
  trace.threads[trace.thread(2, 7)].name = trace.intern("stream 7");
  trace.threads[trace.thread(2, 7)].processName = trace.intern("GPU 0");
  trace.linkLaunches();
  return trace;
}

} // namespace

TEST(ChromeTrace, WrittenTraceIsValidStrictlyNestedJson) {
  std::string text = writeChromeTrace(richTrace());
  json doc = json::parse(text);
  ASSERT_TRUE(doc.contains("traceEvents"));
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>>
      spans;
  int metadata = 0, flowStarts = 0, flowEnds = 0;
  for (const json &e : doc["traceEvents"]) {
    std::string ph = e["ph"];
    if (ph == "M") {
      ++metadata;
      EXPECT_TRUE(e["args"].contains("name"));
    } else if (ph == "X") {
      spans[{e["pid"], e["tid"]}].emplace_back(e["ts"], e["dur"]);
    } else if (ph == "s") {
      ++flowStarts;
    } else if (ph == "f") {
      ++flowEnds;
      EXPECT_EQ(e["bp"], "e");
    }
  }
  EXPECT_EQ(metadata, 4); // two process names, two thread names
  EXPECT_EQ(flowStarts, 1);
  EXPECT_EQ(flowEnds, 1);
  // Per thread, any two spans are disjoint or one contains the other.
  for (auto &[thread, list] : spans)
    for (size_t i = 0; i < list.size(); ++i)
      for (size_t j = 0; j < list.size(); ++j) {
        if (i == j)
          continue;
        double a0 = list[i].first, a1 = a0 + list[i].second;
        double b0 = list[j].first, b1 = b0 + list[j].second;
        bool disjoint = a1 <= b0 || b1 <= a0;
        bool nested = (a0 <= b0 && b1 <= a1) || (b0 <= a0 && a1 <= b1);
        EXPECT_TRUE(disjoint || nested) << a0 << "+" << list[i].second << " vs "
                                        << b0 << "+" << list[j].second;
      }
}

TEST(ChromeTrace, ReadingBackKeepsEverything) {
  Trace original = richTrace();
  auto read = parseChromeTrace(writeChromeTrace(original));
  ASSERT_TRUE(read) << read.error().text();
  ASSERT_EQ(read->events.size(), original.events.size());
  for (size_t i = 0; i < original.events.size(); ++i) {
    const Event &a = original.events[i], &b = read->events[i];
    EXPECT_EQ(original.str(a.name), read->str(b.name));
    EXPECT_EQ(a.startNs, b.startNs);
    EXPECT_EQ(a.kind, b.kind) << original.str(a.name);
    EXPECT_EQ(a.opId, b.opId);
    EXPECT_EQ(a.correlation, b.correlation);
    EXPECT_EQ(original.str(a.loc), read->str(b.loc));
    const ThreadInfo &ta = original.threads[a.thread],
                     &tb = read->threads[b.thread];
    EXPECT_EQ(ta.pid, tb.pid);
    EXPECT_EQ(ta.tid, tb.tid);
    EXPECT_EQ(original.str(ta.name), read->str(tb.name));
    EXPECT_EQ(original.str(ta.processName), read->str(tb.processName));
    if (original.str(a.name) == "straddling") {
      EXPECT_EQ(b.durationNs, 500); // clipped to its parent
      EXPECT_EQ(read->arg(b, "unclipped_dur_ns"), "1000");
    } else {
      EXPECT_EQ(a.durationNs, b.durationNs);
    }
    if (original.str(a.name) == "gemm_kernel") {
      // Its stack is its launcher's plus the launcher itself.
      auto frames = read->stackFrames(b.stack);
      ASSERT_EQ(frames.size(), 3u);
      EXPECT_EQ(read->str(read->frames[frames[2]].name), "forward");
    }
    if (original.str(a.name) == "forward") {
      auto frames = read->stackFrames(b.stack);
      ASSERT_EQ(frames.size(), 2u);
      EXPECT_EQ(read->str(read->frames[frames[1]].name), "main");
      EXPECT_EQ(read->str(read->frames[frames[1]].file), "run.py");
      EXPECT_EQ(read->frames[frames[1]].line, 9u);
    }
  }
  const Event &matmul = read->events[1];
  EXPECT_EQ(read->arg(matmul, "shape"), "8x64 \"f32\"");
  ASSERT_EQ(read->flows.size(), 1u);
  EXPECT_EQ(read->str(read->events[read->flows[0].from].name), "forward");
  EXPECT_EQ(read->str(read->events[read->flows[0].to].name), "gemm_kernel");
  // Writing what was read gives the same bytes: the format is stable.
  EXPECT_EQ(writeChromeTrace(*read),
            writeChromeTrace(*parseChromeTrace(writeChromeTrace(*read))));
}

TEST(ChromeTrace, OnnxRuntimeProfile) {
  auto trace = readTraceFile(fixture("ort_profile.json"));
  ASSERT_TRUE(trace) << trace.error().text();
  EXPECT_EQ(trace->events.size(), 20u);
  size_t nodes = 0;
  for (const Event &e : trace->events)
    if (e.kind == EventKind::CpuKernel) {
      ++nodes;
      EXPECT_EQ(trace->arg(e, "provider"), "CPUExecutionProvider");
      EXPECT_FALSE(trace->arg(e, "op_name").empty());
      // Nested JSON in args is kept as JSON text.
      EXPECT_EQ(trace->arg(e, "output_type_shape").substr(0, 10),
                "[{\"float\":");
    }
  EXPECT_EQ(nodes, 12u);
  auto rows = opTable(*trace, {}, GroupBy::Name);
  const OpRow *matmul = nullptr;
  for (const OpRow &r : rows)
    if (r.name == "fc/MatMul_kernel_time")
      matmul = &r;
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->count, 3u);
  EXPECT_EQ(matmul->kind, EventKind::CpuKernel);
  // JSON-valued args are written back as JSON, strings as strings.
  std::string written = writeChromeTrace(*trace);
  EXPECT_NE(written.find("\"output_type_shape\":[{\"float\":[8,32]}]"),
            std::string::npos);
  EXPECT_NE(written.find("\"provider\":\"CPUExecutionProvider\""),
            std::string::npos);
  auto again = parseChromeTrace(written);
  ASSERT_TRUE(again) << again.error().text();
  EXPECT_EQ(writeChromeTrace(*again), written);
  // Node events nest inside the session's model_run events.
  CallTree tree = CallTree::build(*trace);
  uint32_t run = tree.child(0, "model_run");
  ASSERT_NE(run, 0u);
  EXPECT_GT(tree.nodes()[run].totalNs, matmul->totalNs);
}

TEST(ChromeTrace, PyTorchProfile) {
  auto trace = readTraceFile(fixture("pytorch_profile.json"));
  ASSERT_TRUE(trace) << trace.error().text();
  std::map<EventKind, int> kinds;
  for (const Event &e : trace->events)
    ++kinds[e.kind];
  EXPECT_EQ(kinds[EventKind::Python], 2);
  EXPECT_EQ(kinds[EventKind::Nvtx], 1); // user_annotation
  EXPECT_EQ(kinds[EventKind::CpuKernel], 4);
  EXPECT_EQ(kinds[EventKind::RuntimeApi], 3);
  EXPECT_EQ(kinds[EventKind::GpuKernel], 2);
  EXPECT_EQ(kinds[EventKind::Memcpy], 1);
  EXPECT_EQ(kinds[EventKind::Other], 1); // the [memory] instant
  // ac2g flows bind the launches to their kernels, and no duplicates come
  // from the correlation ids that say the same.
  ASSERT_EQ(trace->flows.size(), 3u);
  for (const Flow &flow : trace->flows) {
    const Event &from = trace->events[flow.from], &to = trace->events[flow.to];
    EXPECT_EQ(from.kind, EventKind::RuntimeApi);
    EXPECT_EQ(from.correlation, to.correlation);
  }
  // Exact timestamps despite microseconds since the epoch.
  const Event *gemm = nullptr;
  for (const Event &e : trace->events)
    if (trace->str(e.name) == "ampere_sgemm_32x32_sliced1x4_tn")
      gemm = &e;
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->startNs, 1733000000000070000);
  EXPECT_EQ(gemm->durationNs, 45750);
  // The kernel's stack is the CPU-side chain that launched it.
  std::string stack;
  for (FrameId f : trace->stackFrames(gemm->stack))
    stack += std::string(trace->str(trace->frames[f].name)) + ";";
  EXPECT_EQ(stack, "run.py(20): <module>;model.py(31): forward;inference;"
                   "aten::linear;aten::addmm;cudaLaunchKernel;");
  const ThreadInfo &stream = trace->threads[gemm->thread];
  EXPECT_EQ(trace->str(stream.name), "stream 7 ");
}

TEST(ChromeTrace, BeginEndPairsInstantsAndStringThreadIds) {
  auto trace = parseChromeTrace(R"([
    {"ph":"B","name":"outer","pid":1,"tid":"worker","ts":1},
    {"ph":"B","name":"inner","pid":1,"tid":"worker","ts":2},
    {"ph":"E","pid":1,"tid":"worker","ts":3.5},
    {"ph":"i","name":"tick","pid":1,"tid":"worker","ts":4,"s":"t"},
    {"ph":"E","pid":1,"tid":"worker","ts":10},
    {"ph":"C","name":"counter","pid":1,"ts":5,"args":{"v":1}}
  ])");
  ASSERT_TRUE(trace) << trace.error().text();
  ASSERT_EQ(trace->events.size(), 3u);
  EXPECT_EQ(trace->str(trace->events[0].name), "outer");
  EXPECT_EQ(trace->events[0].durationNs, 9000);
  EXPECT_EQ(trace->events[1].durationNs, 1500);
  EXPECT_EQ(trace->events[2].durationNs, 0);
  EXPECT_EQ(trace->str(trace->threads[trace->events[0].thread].name), "worker");
}

TEST(ChromeTrace, ErrorsSayWhereAndWhat) {
  auto notJson = parseChromeTrace("{\"traceEvents\": [\n {\"ph\": \"X\",, }]}",
                                  "bad.json");
  ASSERT_FALSE(notJson);
  EXPECT_EQ(notJson.error().line, 2u);
  EXPECT_GT(notJson.error().byteOffset, 0u);
  EXPECT_NE(notJson.error().text().find("bad.json:2"), std::string::npos);

  auto noEvents = parseChromeTrace("{\"other\": 1}");
  ASSERT_FALSE(noEvents);
  EXPECT_NE(noEvents.error().message.find("traceEvents"), std::string::npos);

  auto noTs = parseChromeTrace("[{\"ph\":\"X\",\"name\":\"k\",\"dur\":1}]");
  ASSERT_FALSE(noTs);
  EXPECT_NE(noTs.error().message.find("\"ts\""), std::string::npos);

  auto noPhase = parseChromeTrace("[{\"name\":\"k\",\"ts\":1}]");
  ASSERT_FALSE(noPhase);
  EXPECT_NE(noPhase.error().message.find("\"ph\""), std::string::npos);

  auto scalar = parseChromeTrace("[1, 2]");
  ASSERT_FALSE(scalar);

  auto truncated =
      parseChromeTrace("{\"traceEvents\": [{\"ph\":\"X\",\"ts\":1");
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.error().message.find("truncated"), std::string::npos);
}

TEST(ChromeTrace, FormatDetection) {
  EXPECT_EQ(detectFormat("  [ {}]"), TraceFormat::Chrome);
  EXPECT_EQ(detectFormat("{\"traceEvents\":[]}"), TraceFormat::Chrome);
  EXPECT_EQ(detectFormat("{\"$schema\":\"https://www.speedscope.app/"
                         "file-format-schema.json\"}"),
            TraceFormat::Speedscope);
  EXPECT_EQ(detectFormat("a;b 1\n"), TraceFormat::Folded);
  EXPECT_EQ(detectFormat(std::string("SQLite format 3\0", 16)),
            TraceFormat::NsysSqlite);
  EXPECT_EQ(formatFromPath("x.speedscope.json"), TraceFormat::Speedscope);
  EXPECT_EQ(formatFromPath("x.json"), TraceFormat::Chrome);
  EXPECT_EQ(formatFromPath("x.folded"), TraceFormat::Folded);
  EXPECT_EQ(formatFromPath("x.sqlite"), TraceFormat::NsysSqlite);
  EXPECT_EQ(parseTraceFormat("chrome"), TraceFormat::Chrome);
  EXPECT_FALSE(parseTraceFormat("perfetto-proto"));
}
