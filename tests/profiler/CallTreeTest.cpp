//===- CallTreeTest.cpp - Flame trees: stacks, diff, search, zoom, ranges -===//

#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace cuvil::profiler;
using namespace cuvil::profiler::test;

static CallTree treeOf(const std::string &goldenName) {
  auto trace = parseFoldedStacks(readText(golden(goldenName)));
  EXPECT_TRUE(trace) << trace.error().text();
  return CallTree::build(*trace);
}

TEST(CallTree, DiffOfTwoProfilesMatchesGolden) {
  DiffTree diff =
      DiffTree::build(treeOf("model.folded"), treeOf("model_faster.folded"));
  EXPECT_EQ(diff.print(), readText(golden("model.diff")));
}

TEST(CallTree, SearchCountsNestedMatchesOnce) {
  CallTree tree = treeOf("model.folded");
  auto result = tree.search("CUVIL.");
  EXPECT_EQ(result.matches.size(), 4u);
  EXPECT_EQ(result.coveredNs, 850 + 120 + 90 + 80);
  auto nested = tree.search("m"); // main matches, and everything is in main
  EXPECT_EQ(nested.coveredNs, 1465);
  EXPECT_TRUE(tree.search("").matches.empty());
}

TEST(CallTree, ZoomIntoAFrame) {
  CallTree tree = treeOf("model.folded");
  uint32_t matmul =
      tree.child(tree.child(tree.child(0, "main"), "forward"), "cuvil.matmul");
  ASSERT_NE(matmul, 0u);
  EXPECT_EQ(tree.path(matmul).size(), 3u);
  CallTree zoomed = tree.subtree(matmul);
  EXPECT_EQ(zoomed.print(), "cuvil.matmul total=850 self=50\n"
                            "  gemm_64x128 total=800 self=800\n");
  EXPECT_EQ(tree.print(2), "main total=1465 self=0\n"
                           "  forward total=1165 self=25\n"
                           "  load_weights total=300 self=300\n");
}

TEST(CallTree, PythonStacksPrefixOutermostEventsAndLocsBecomeFiles) {
  Trace trace;
  StackId stack = trace.stack({trace.frame("<module>", "run.py", 3),
                               trace.frame("forward", "model.py", 12)});
  uint32_t call = addEvent(trace, "f", 0, 100, EventKind::Python);
  trace.events[call].stack = stack;
  uint32_t op = addEvent(trace, "cuvil.matmul", 10, 60);
  trace.events[op].loc = trace.intern("/src/model.py:14:9");
  addEvent(trace, "gemm", 15, 50, EventKind::CpuKernel);
  // A kernel on another thread, outermost there, with its own stack.
  uint32_t gpu = addEvent(trace, "gemm_gpu", 20, 30, EventKind::GpuKernel, 7);
  trace.events[gpu].stack = stack;
  trace.sortEvents();

  CallTree tree = CallTree::build(trace);
  EXPECT_EQ(tree.print(),
            "<module> (run.py:3) total=130 self=0\n"
            "  forward (model.py:12) total=130 self=0\n"
            "    f total=100 self=40\n"
            "      cuvil.matmul (/src/model.py:14) total=60 self=10\n"
            "        gemm total=50 self=50\n"
            "    gemm_gpu total=30 self=30\n");
  uint32_t module = tree.child(0, "<module>", "run.py", 3);
  EXPECT_EQ(tree.module(module), "run");
  uint32_t forward = tree.child(module, "forward", "model.py", 12);
  uint32_t f = tree.child(forward, "f");
  uint32_t matmul = tree.child(f, "cuvil.matmul", "/src/model.py", 14);
  ASSERT_NE(matmul, 0u);
  EXPECT_EQ(tree.module(matmul), "model");
  EXPECT_EQ(tree.module(tree.child(matmul, "gemm")), "");
  EXPECT_EQ(tree.module(f), "");

  // Only GPU kernels: the Python prefix stays, CPU events are gone.
  Selection gpuOnly;
  gpuOnly.kindMask = Selection::bit(EventKind::GpuKernel);
  EXPECT_EQ(CallTree::build(trace, gpuOnly).folded(),
            "<module> (run.py:3);forward (model.py:12);gemm_gpu 30\n");
}

TEST(CallTree, TimeRangeClipsEvents) {
  Trace trace;
  addEvent(trace, "outer", 0, 100);
  addEvent(trace, "inner", 20, 20);
  addEvent(trace, "late", 60, 30);
  trace.sortEvents();
  Selection range;
  range.beginNs = 30;
  range.endNs = 70;
  EXPECT_EQ(CallTree::build(trace, range).print(), "outer total=40 self=20\n"
                                                   "  inner total=10 self=10\n"
                                                   "  late total=10 self=10\n");
  range.beginNs = 100; // nothing overlaps [100, 200)
  range.endNs = 200;
  EXPECT_EQ(CallTree::build(trace, range).print(), "");
}

TEST(CallTree, PartialOverlapIsClippedToTheParent) {
  Trace trace;
  addEvent(trace, "parent", 0, 50);
  addEvent(trace, "straddles", 40, 30); // ends 20 after its parent
  trace.sortEvents();
  EXPECT_EQ(CallTree::build(trace).print(), "parent total=50 self=40\n"
                                            "  straddles total=10 self=10\n");
}

TEST(CallTree, UnsortedTracesAreSortedFirst) {
  Trace trace;
  addEvent(trace, "child", 10, 5);
  addEvent(trace, "parent", 0, 50);
  EXPECT_EQ(CallTree::build(trace).print(), "parent total=50 self=45\n"
                                            "  child total=5 self=5\n");
}

/// One folded line 100,000 frames deep: every walk of the tree (build,
/// print, folded, zoom, diff) must finish without running out of stack.
TEST(CallTree, HundredThousandFrameStackWorks) {
  constexpr int kDepth = 100000;
  std::string line;
  for (int i = 0; i < kDepth; ++i)
    line += (i ? ";f" : "f") + std::to_string(i);
  auto trace = parseFoldedStacks(line + " 7\n");
  ASSERT_TRUE(trace) << trace.error().text();
  CallTree tree = CallTree::build(*trace);
  ASSERT_EQ(tree.nodes().size(), size_t(kDepth) + 1);
  EXPECT_EQ(tree.nodes().back().depth, uint32_t(kDepth));
  EXPECT_EQ(tree.nodes()[1].totalNs, 7);

  std::string printed = tree.print();
  EXPECT_NE(printed.find("[depth 100000] f99999 total=7 self=7\n"),
            std::string::npos);
  // Indentation stops growing at 64 levels, so the text stays linear.
  EXPECT_LT(printed.size(), size_t(kDepth) * 200);
  EXPECT_EQ(tree.folded(), line + " 7\n");
  CallTree zoomed = tree.subtree(2);
  EXPECT_EQ(zoomed.nodes().size(), size_t(kDepth));
  DiffTree diff = DiffTree::build(tree, zoomed);
  EXPECT_EQ(diff.nodes().size(), size_t(2 * kDepth));
  EXPECT_NE(diff.print().find("f99999 7 -> 0 (-7, faster)"), std::string::npos);
}

TEST(CallTree, LineNumbersBeyondUint32StayInTheFileName) {
  Trace trace;
  uint32_t big = addEvent(trace, "big", 0, 10, EventKind::CpuKernel);
  trace.events[big].loc = trace.intern("model.py:99999999999:3");
  uint32_t fits = addEvent(trace, "fits", 20, 10, EventKind::CpuKernel);
  trace.events[fits].loc = trace.intern("model.py:4294967295");
  std::string printed = CallTree::build(trace).print();
  EXPECT_NE(printed.find("big (model.py:99999999999:3)"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("fits (model.py:4294967295)"), std::string::npos)
      << printed;
}

TEST(TraceAppend, DeviceLanesJoinTheHostTrace) {
  // The host's trace: a Python call with a stack; the device's: a stream
  // with a kernel, a copy and a flow, its own strings and stacks.
  Trace host;
  uint32_t hostThread = host.thread(1, 1);
  Event call;
  call.name = host.intern("mlp");
  call.thread = hostThread;
  call.stack = host.stack({host.frame("main", "m.py", 3)});
  call.durationNs = 100;
  host.events.push_back(call);

  Trace device;
  device.intern("padding so ids differ");
  uint32_t stream = device.thread(1, 1000007);
  device.threads[stream].name = device.intern("stream 7");
  Event launch, kernel;
  launch.name = device.intern("cuLaunchKernel");
  launch.thread = device.thread(1, 1);
  launch.kind = EventKind::RuntimeApi;
  launch.correlation = 5;
  kernel.name = device.intern("mlp_k1");
  kernel.loc = device.intern("m.py:3:9");
  kernel.thread = stream;
  kernel.kind = EventKind::GpuKernel;
  kernel.correlation = 5;
  kernel.args = device.addArgs({{device.intern("grid"), device.intern("4")}});
  kernel.stack = device.stack({device.frame("main", "m.py", 3)});
  device.events.push_back(launch);
  device.events.push_back(kernel);
  device.flows.push_back({0, 1});

  host.append(device);
  ASSERT_EQ(host.events.size(), 3u);
  const Event &k = host.events[2];
  EXPECT_EQ(host.str(k.name), "mlp_k1");
  EXPECT_EQ(host.str(k.loc), "m.py:3:9");
  EXPECT_EQ(host.str(host.threads[k.thread].name), "stream 7");
  EXPECT_EQ(host.events[1].thread, hostThread); // the same host thread
  EXPECT_EQ(k.stack, host.events[0].stack);     // stacks interned once
  EXPECT_EQ(host.arg(k, "grid"), "4");
  ASSERT_EQ(host.flows.size(), 1u);
  EXPECT_EQ(host.flows[0].from, 1u);
  EXPECT_EQ(host.flows[0].to, 2u);
}
