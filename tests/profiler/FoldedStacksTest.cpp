//===- FoldedStacksTest.cpp - Folded stacks in, call trees out (golden) ---===//

#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace cuvil::profiler;
using namespace cuvil::profiler::test;

TEST(FoldedStacks, TreeOfGoldenStacksMatchesGolden) {
  auto trace =
      parseFoldedStacks(readText(golden("model.folded")), "model.folded");
  ASSERT_TRUE(trace) << trace.error().text();
  EXPECT_EQ(CallTree::build(*trace).print(), readText(golden("model.tree")));
}

TEST(FoldedStacks, WritingFoldsMergesAndSorts) {
  auto trace = parseFoldedStacks(readText(golden("model.folded")));
  ASSERT_TRUE(trace) << trace.error().text();
  EXPECT_EQ(writeFoldedStacks(*trace), readText(golden("model.refolded")));
  // Folding is a fixed point: the written stacks read back to themselves.
  auto again = parseFoldedStacks(writeFoldedStacks(*trace));
  ASSERT_TRUE(again);
  EXPECT_EQ(writeFoldedStacks(*again), readText(golden("model.refolded")));
}

TEST(FoldedStacks, ConsecutiveLinesShareOpenFrames) {
  auto trace = parseFoldedStacks("a;b;c 5\na;b 3\na;d 2\n");
  ASSERT_TRUE(trace);
  // a is one event spanning all three lines; b spans the first two.
  ASSERT_EQ(trace->events.size(), 4u);
  EXPECT_EQ(trace->str(trace->events[0].name), "a");
  EXPECT_EQ(trace->events[0].durationNs, 10);
  EXPECT_EQ(trace->str(trace->events[1].name), "b");
  EXPECT_EQ(trace->events[1].durationNs, 8);
}

TEST(FoldedStacks, FramesWithSpacesAndWindowsLineEnds) {
  auto trace = parseFoldedStacks("main;forward (model.py:12);op x 7\r\n");
  ASSERT_TRUE(trace) << trace.error().text();
  CallTree tree = CallTree::build(*trace);
  uint32_t main = tree.child(0, "main");
  uint32_t forward = tree.child(main, "forward (model.py:12)");
  ASSERT_NE(forward, 0u);
  EXPECT_EQ(tree.nodes()[tree.child(forward, "op x")].selfNs, 7);
}

TEST(FoldedStacks, ErrorsNameLineAndExpectation) {
  auto missing = parseFoldedStacks("a;b 3\na;b;c\n", "x.folded");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().line, 2u);
  EXPECT_EQ(missing.error().byteOffset, 6u);
  EXPECT_NE(missing.error().text().find("x.folded:2"), std::string::npos);
  EXPECT_NE(missing.error().message.find("expected"), std::string::npos);

  auto notANumber = parseFoldedStacks("a;b 3\n\na;b 1.5\n");
  ASSERT_FALSE(notANumber);
  EXPECT_EQ(notANumber.error().line, 3u);
  EXPECT_NE(notANumber.error().message.find("'1.5'"), std::string::npos);

  auto emptyFrame = parseFoldedStacks("a;;b 3\n");
  ASSERT_FALSE(emptyFrame);
  EXPECT_NE(emptyFrame.error().message.find("empty frame"), std::string::npos);
}

TEST(FoldedStacks, CommentsBlankLinesAndZeroWeightsAreSkipped) {
  auto trace = parseFoldedStacks("# header\n\na 0\nb 4\n");
  ASSERT_TRUE(trace);
  EXPECT_EQ(writeFoldedStacks(*trace), "b 4\n");
}
