//===- RecorderTest.cpp - Steady-clock recorder and NVTX ranges -----------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace cuvil::profiler;
using namespace cuvil::profiler::test;

TEST(Recorder, NothingIsRecordedWhileDisabled) {
  EventRecorder recorder;
  uint32_t name = recorder.intern("cuvil.add");
  {
    EventRecorder::Scope scope(recorder, name, 1);
  }
  recorder.record(RecordedEvent{});
  EXPECT_EQ(recorder.size(), 0u);
  EXPECT_TRUE(recorder.takeTrace().events.empty());
}

TEST(Recorder, PythonCallsKernelsStacksAndFlows) {
  EventRecorder recorder;
  recorder.setEnabled(true);
  uint32_t call = recorder.intern("forward");
  uint32_t matmul = recorder.intern("cuvil.matmul");
  uint32_t loc = recorder.intern("model.py:3:9");
  uint32_t stack =
      recorder.internStack({{"<module>", "run.py", 5}, {"main", "run.py", 11}});
  EXPECT_EQ(stack, recorder.internStack(
                       {{"<module>", "run.py", 5}, {"main", "run.py", 11}}));
  EXPECT_EQ(recorder.internStack({}), kNoStack);
  uint64_t correlation = recorder.newCorrelation();
  {
    EventRecorder::Scope python(recorder, call, kNoOp, 0, stack,
                                EventKind::Python, correlation);
    for (int i = 0; i < 3; ++i) {
      EventRecorder::Scope kernel(recorder, matmul, 7, loc, stack,
                                  EventKind::CpuKernel, correlation);
    }
  }
  EXPECT_EQ(recorder.size(), 4u);
  Trace trace = recorder.takeTrace("test-process");
  EXPECT_EQ(recorder.size(), 0u);
  ASSERT_EQ(trace.events.size(), 4u);
  EXPECT_EQ(trace.str(trace.events[0].name), "forward"); // parents first
  EXPECT_EQ(trace.events[0].kind, EventKind::Python);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(trace.events[i].opId, 7);
    EXPECT_EQ(trace.str(trace.events[i].loc), "model.py:3:9");
    EXPECT_GE(trace.events[i].startNs, trace.events[0].startNs);
    EXPECT_LE(trace.events[i].endNs(), trace.events[0].endNs());
  }
  ASSERT_EQ(trace.flows.size(), 3u);
  for (const Flow &flow : trace.flows)
    EXPECT_EQ(flow.from, 0u);
  const ThreadInfo &thread = trace.threads[trace.events[0].thread];
  EXPECT_EQ(thread.pid, getpid());
  EXPECT_EQ(trace.str(thread.processName), "test-process");

  CallTree tree = CallTree::build(trace);
  uint32_t main =
      tree.child(tree.child(0, "<module>", "run.py", 5), "main", "run.py", 11);
  uint32_t forward = tree.child(main, "forward");
  uint32_t op = tree.child(forward, "cuvil.matmul", "model.py", 3);
  ASSERT_NE(op, 0u);
  EXPECT_EQ(tree.nodes()[op].count, 3u);

  // The Chrome export carries the flows and the stack.
  auto back = parseChromeTrace(writeChromeTrace(trace));
  ASSERT_TRUE(back) << back.error().text();
  EXPECT_EQ(back->flows.size(), 3u);
}

TEST(Recorder, ThreadsRecordIntoTheirOwnBuffers) {
  EventRecorder recorder;
  recorder.setEnabled(true);
  uint32_t name = recorder.intern("kernel");
  const int threads = 4, perThread = 2000;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      uint32_t own = recorder.intern("worker op " + std::to_string(t));
      for (int i = 0; i < perThread; ++i) {
        EventRecorder::Scope scope(recorder, i % 2 ? name : own, i);
      }
    });
  // Draining while the workers record must be safe.
  size_t drained = recorder.takeTrace().events.size();
  for (std::thread &w : workers)
    w.join();
  Trace trace = recorder.takeTrace();
  EXPECT_EQ(drained + trace.events.size(), size_t(threads * perThread));
  std::set<int64_t> tids;
  for (const Event &e : trace.events)
    tids.insert(trace.threads[e.thread].tid);
  if (drained == 0) {
    EXPECT_EQ(tids.size(), size_t(threads));
  }
}

TEST(Recorder, ClearDropsEventsButKeepsNames) {
  EventRecorder recorder;
  recorder.setEnabled(true);
  uint32_t name = recorder.intern("op");
  {
    EventRecorder::Scope scope(recorder, name);
  }
  recorder.clear();
  EXPECT_EQ(recorder.size(), 0u);
  EXPECT_EQ(recorder.intern("op"), name);
}

/// NVTX loads the tool named by NVTX_INJECTION64_PATH at its first call, as
/// Nsight Systems injects itself; the recording tool logs every push and pop,
/// so the ranges' names, op ids and nesting are checked, not just survived.
TEST(Nvtx, RangesReachAnInjectedTool) {
#ifndef CUVIL_NVTX_RECORDING_TOOL
  GTEST_SKIP() << "the NVTX recording tool was not built (no nvtx3 headers)";
#else
  if (!nvtxAvailable())
    GTEST_SKIP() << "this build compiles NVTX ranges out (no nvtx3 headers)";
  std::string log = ::testing::TempDir() + "cuvil-nvtx-recorder-test.log";
  std::remove(log.c_str());
  ::setenv("NVTX_INJECTION64_PATH", CUVIL_NVTX_RECORDING_TOOL, 1);
  ::setenv("CUVIL_NVTX_LOG", log.c_str(), 1);
  for (int i = 0; i < 3; ++i) {
    NvtxRange outer("cuvil.matmul", i);
    NvtxRange inner("cuvil.add"); // no op id: no payload
  }
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "push cuvil cuvil.matmul|0\npush cuvil cuvil.add|-1\n"
                        "pop\npop\n"
                        "push cuvil cuvil.matmul|1\npush cuvil cuvil.add|-1\n"
                        "pop\npop\n"
                        "push cuvil cuvil.matmul|2\npush cuvil cuvil.add|-1\n"
                        "pop\npop\n");
#endif
}
