//===- OpTableTest.cpp - Per-op count/total/self/p50/p99 and tracks -------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace cuvil::profiler;
using namespace cuvil::profiler::test;

TEST(OpTable, Percentiles) {
  EXPECT_EQ(percentile({}, 50), 0);
  EXPECT_EQ(percentile({7}, 99), 7);
  std::vector<int64_t> hundred;
  for (int i = 100; i >= 1; --i)
    hundred.push_back(i);
  EXPECT_EQ(percentile(hundred, 50), 50);
  EXPECT_EQ(percentile(hundred, 99), 99);
  EXPECT_EQ(percentile(hundred, 100), 100);
  EXPECT_EQ(percentile({1, 2, 3, 1000}, 50), 2);
  EXPECT_EQ(percentile({1, 2, 3, 1000}, 99), 1000);
}

TEST(OpTable, CountTotalSelfAndPercentiles) {
  Trace trace;
  // Three calls of one op, each with a kernel inside, and a lone op.
  int64_t at = 0;
  for (int64_t dur : {100, 200, 300}) {
    uint32_t op = addEvent(trace, "cuvil.matmul", at, dur);
    trace.events[op].opId = 3;
    trace.events[op].loc = trace.intern("m.py:4:5");
    addEvent(trace, "gemm", at + 10, dur / 2);
    at += 1000;
  }
  addEvent(trace, "cuvil.add", 5000, 40);
  trace.sortEvents();

  auto rows = opTable(trace);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "cuvil.matmul");
  EXPECT_EQ(rows[0].count, 3u);
  EXPECT_EQ(rows[0].totalNs, 600);
  EXPECT_EQ(rows[0].selfNs, 300);
  EXPECT_EQ(rows[0].p50Ns, 200);
  EXPECT_EQ(rows[0].p99Ns, 300);
  EXPECT_EQ(rows[0].maxNs, 300);
  EXPECT_EQ(rows[0].opId, 3);
  EXPECT_EQ(rows[0].loc, "m.py:4:5");
  EXPECT_EQ(rows[1].name, "gemm");
  EXPECT_EQ(rows[1].totalNs, 300);
  EXPECT_EQ(rows[1].selfNs, 300);
  EXPECT_EQ(rows[2].name, "cuvil.add");

  std::string text = formatOpTable(rows, 2);
  EXPECT_NE(text.find("cuvil.matmul"), std::string::npos);
  EXPECT_NE(text.find("#3 m.py:4:5"), std::string::npos);
  EXPECT_NE(text.find("(1 more rows)"), std::string::npos);
  EXPECT_EQ(text.find("cuvil.add"), std::string::npos);
}

TEST(OpTable, GroupByOpIdSeparatesOpsWithTheSameName) {
  Trace trace;
  for (int64_t id : {1, 2, 2}) {
    uint32_t e =
        addEvent(trace, "cuvil.add", id * 100 + trace.events.size(), 10);
    trace.events[e].opId = id;
  }
  trace.sortEvents();
  EXPECT_EQ(opTable(trace, {}, GroupBy::Name).size(), 1u);
  auto byOp = opTable(trace, {}, GroupBy::OpId);
  ASSERT_EQ(byOp.size(), 2u);
  EXPECT_EQ(byOp[0].opId, 2);
  EXPECT_EQ(byOp[0].count, 2u);
}

TEST(OpTable, SelectionByRangeAndKind) {
  Trace trace;
  addEvent(trace, "call", 0, 100, EventKind::Python);
  addEvent(trace, "k1", 10, 20);
  addEvent(trace, "k2", 50, 40);
  addEvent(trace, "gpu", 0, 100, EventKind::GpuKernel, 9);
  trace.sortEvents();
  Selection range;
  range.beginNs = 20;
  range.endNs = 60;
  range.kindMask =
      Selection::bit(EventKind::Python) | Selection::bit(EventKind::CpuKernel);
  auto rows = opTable(trace, range);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "call");
  EXPECT_EQ(rows[0].totalNs, 40);
  EXPECT_EQ(rows[0].selfNs, 20); // minus k1's 10 and k2's 10 in range
  EXPECT_EQ(rows[1].totalNs, 10);
  EXPECT_EQ(rows[2].totalNs, 10);
}

TEST(Tracks, OneTrackPerThreadAndKindWithDepth) {
  Trace trace;
  addEvent(trace, "call", 0, 100, EventKind::Python);
  addEvent(trace, "op", 10, 50);
  addEvent(trace, "inner", 20, 10);
  addEvent(trace, "range", 5, 90, EventKind::Nvtx);
  addEvent(trace, "gpu", 30, 10, EventKind::GpuKernel, 9);
  trace.threads[0].name = trace.intern("main");
  trace.sortEvents();
  auto tracks = buildTracks(trace);
  ASSERT_EQ(tracks.size(), 4u);
  EXPECT_EQ(tracks[0].label, "pid 1 / main \u00b7 python");
  EXPECT_EQ(tracks[1].kind, EventKind::Nvtx);
  EXPECT_EQ(tracks[2].kind, EventKind::CpuKernel);
  EXPECT_EQ(tracks[2].events.size(), 2u);
  EXPECT_EQ(tracks[2].maxDepth, 1u);
  EXPECT_EQ(tracks[3].kind, EventKind::GpuKernel);

  EXPECT_EQ(eventsInRange(trace, 0, 15).size(), 3u); // call, range, op
  EXPECT_EQ(eventsInRange(trace, 100, 200).size(), 0u);
}
