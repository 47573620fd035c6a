//===- FrameIdentityTest.cpp - Flame frames are ops: trees, diffs, formats ===//
//
// Two ops made on one source line (an nn.Sequential line, a loop) are two
// frames, told apart by their model node or, without one, their IR op; one
// op called many times is one frame. The identity survives Chrome, folded
// and speedscope round trips, and diffs match frames by it across runs
// whose op ids differ.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace cuvil::profiler;
using namespace cuvil::profiler::test;

namespace {

struct Op {
  const char *node; ///< model node name, "" for none
  int64_t opId;
};

/// `calls` calls of `forward` (each with its Python stack), each running
/// one `kernel` per op at `loc`, the ops taking 10, 20, 30... ns.
Trace callsOf(const std::vector<Op> &ops, int calls,
              const char *kernel = "linalg.conv_2d_nchw_fchw",
              const char *loc = "/src/model.py:7:0") {
  Trace trace;
  StackId stack = trace.stack({trace.frame("<module>", "run.py", 3)});
  StringId nodeKey = trace.intern(kNodeArg);
  int64_t at = 0;
  for (int call = 0; call < calls; ++call) {
    uint32_t forward = addEvent(trace, "forward", at, 0, EventKind::Python);
    trace.events[forward].stack = stack;
    int64_t start = at;
    for (size_t i = 0; i < ops.size(); ++i) {
      int64_t duration = 10 * int64_t(i + 1);
      uint32_t e = addEvent(trace, kernel, at, duration);
      trace.events[e].opId = ops[i].opId;
      trace.events[e].loc = trace.intern(loc);
      if (*ops[i].node)
        trace.events[e].args =
            trace.addArgs({{nodeKey, trace.intern(ops[i].node)}});
      at += duration;
    }
    trace.events[forward].durationNs = at - start;
    at += 5;
  }
  trace.sortEvents();
  return trace;
}

} // namespace

TEST(FrameIdentity, TwoNodesOnOneLineAreTwoFramesAndCallsMerge) {
  CallTree tree =
      CallTree::build(callsOf({{"features.0", 0}, {"features.2", 1}}, 3));
  EXPECT_EQ(tree.print(),
            "<module> (run.py:3) total=90 self=0\n"
            "  forward total=90 self=0\n"
            "    linalg.conv_2d_nchw_fchw [features.2] (/src/model.py:7) "
            "total=60 self=60\n"
            "    linalg.conv_2d_nchw_fchw [features.0] (/src/model.py:7) "
            "total=30 self=30\n");
  uint32_t forward =
      tree.child(tree.child(0, "<module>", "run.py", 3), "forward");
  uint32_t first = tree.child(forward, "linalg.conv_2d_nchw_fchw",
                              "/src/model.py", 7, "features.0");
  uint32_t second = tree.child(forward, "linalg.conv_2d_nchw_fchw",
                               "/src/model.py", 7, "features.2");
  ASSERT_NE(first, 0u);
  ASSERT_NE(second, 0u);
  EXPECT_NE(first, second);
  EXPECT_EQ(tree.nodes()[first].count, 3u); // one frame for the three calls
  EXPECT_EQ(tree.nodes()[second].opId, 1);
  EXPECT_EQ(tree.search("FEATURES.2").matches, std::vector<uint32_t>{second});
}

TEST(FrameIdentity, OneNodeIsOneFrameWhateverItsOpIds) {
  // One node's kernels from two compilations (two op ids) are one frame.
  CallTree tree =
      CallTree::build(callsOf({{"features.0", 0}, {"features.0", 4}}, 1));
  EXPECT_EQ(tree.folded(),
            "<module> (run.py:3);forward;linalg.conv_2d_nchw_fchw "
            "[features.0] (/src/model.py:7) 30\n");
  EXPECT_EQ(tree.nodes().back().count, 2u);
}

TEST(FrameIdentity, OpsWithoutNodesAreToldApartByOpIdInOrder) {
  // A loop in NumPy code: no node names, two IR ops on one line.
  Trace trace = callsOf({{"", 41}, {"", 40}}, 2, "cuvil.add", "loop.py:4:8");
  CallTree tree = CallTree::build(trace);
  EXPECT_EQ(tree.folded(), "<module> (run.py:3);forward;cuvil.add #1 "
                           "(loop.py:4) 40\n"
                           "<module> (run.py:3);forward;cuvil.add #2 "
                           "(loop.py:4) 20\n");
  // A frame with no sibling of its kind keeps its plain name.
  EXPECT_EQ(CallTree::build(callsOf({{"", 40}}, 2, "cuvil.add", "loop.py:4:8"))
                .folded(),
            "<module> (run.py:3);forward;cuvil.add (loop.py:4) 20\n");
  // Events without op ids or nodes (imported traces) merge as before.
  EXPECT_EQ(
      CallTree::build(callsOf({{"", kNoOp}, {"", kNoOp}}, 1, "op", "")).print(),
      "<module> (run.py:3) total=30 self=0\n"
      "  forward total=30 self=0\n"
      "    op total=30 self=30\n");
}

TEST(FrameIdentity, ChromeFoldedAndSpeedscopeKeepTheFrames) {
  for (const Trace &trace :
       {callsOf({{"features.0", 0}, {"features.2", 1}}, 2),
        callsOf({{"", 8}, {"", 9}}, 2, "cuvil.add", "loop.py:4:8")}) {
    std::string printed = CallTree::build(trace).print();
    std::string folded = CallTree::build(trace).folded();

    auto chrome = parseChromeTrace(writeChromeTrace(trace));
    ASSERT_TRUE(chrome) << chrome.error().text();
    EXPECT_EQ(CallTree::build(*chrome).print(), printed);

    auto speedscope = parseSpeedscope(writeSpeedscope(trace));
    ASSERT_TRUE(speedscope) << speedscope.error().text();
    EXPECT_EQ(CallTree::build(*speedscope).print(), printed);

    // Folded frames are text: the labels carry node and instance.
    auto refolded = parseFoldedStacks(folded);
    ASSERT_TRUE(refolded) << refolded.error().text();
    EXPECT_EQ(CallTree::build(*refolded).folded(), folded);
  }
}

TEST(FrameIdentity, DiffMatchesByNodeAndInstanceNotOpId) {
  // The current run compiled other code first: every op id moved.
  Trace baseline = callsOf({{"features.0", 0}, {"features.2", 1}}, 1);
  Trace current = callsOf({{"features.0", 12}, {"features.2", 13}}, 2);
  DiffTree diff =
      DiffTree::build(CallTree::build(baseline), CallTree::build(current));
  EXPECT_EQ(diff.print(),
            "<module> (run.py:3) 30 -> 60 (+30, slower)\n"
            "  forward 30 -> 60 (+30, slower)\n"
            "    linalg.conv_2d_nchw_fchw [features.2] (/src/model.py:7) "
            "20 -> 40 (+20, slower)\n"
            "    linalg.conv_2d_nchw_fchw [features.0] (/src/model.py:7) "
            "10 -> 20 (+10, slower)\n");

  Trace loopBase = callsOf({{"", 3}, {"", 4}}, 1, "cuvil.add", "loop.py:4:8");
  Trace loopCur = callsOf({{"", 20}, {"", 21}}, 1, "cuvil.add", "loop.py:4:8");
  DiffTree loopDiff =
      DiffTree::build(CallTree::build(loopBase), CallTree::build(loopCur));
  EXPECT_EQ(loopDiff.nodes().size(), 5u); // root, <module>, forward, #1, #2

  // One op fewer on the line: the remaining op matches the first instance.
  Trace oneOp = callsOf({{"", 30}}, 1, "cuvil.add", "loop.py:4:8");
  EXPECT_EQ(DiffTree::build(CallTree::build(loopBase), CallTree::build(oneOp))
                .print(),
            "<module> (run.py:3) 30 -> 10 (-20, faster)\n"
            "  forward 30 -> 10 (-20, faster)\n"
            "    cuvil.add #2 (loop.py:4) 20 -> 0 (-20, faster)\n"
            "    cuvil.add #1 (loop.py:4) 10 -> 10 (0)\n");

  // A tree read back from its folded stacks matches the tree it came from.
  auto folded = parseFoldedStacks(CallTree::build(current).folded());
  ASSERT_TRUE(folded);
  DiffTree across =
      DiffTree::build(CallTree::build(*folded), CallTree::build(current));
  for (const DiffNode &n : across.nodes())
    EXPECT_EQ(n.deltaTotalNs(), 0) << n.label();
}
