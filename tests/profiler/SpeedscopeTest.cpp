//===- SpeedscopeTest.cpp - speedscope export checked field by field ------===//
//
// The schema (https://www.speedscope.app/file-format-schema.json) is not
// available offline, so the required properties it lists are checked here:
// $schema, shared.frames[].name, profiles[] with type, name, unit,
// startValue, endValue and, for evented profiles, events[] of type O/C with
// frame and at, opened and closed in order, at never decreasing.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace cuvil::profiler;
using namespace cuvil::profiler::test;
using json = nlohmann::json;

static Trace sampleTrace() {
  Trace trace;
  uint32_t call = addEvent(trace, "forward", 0, 100, EventKind::Python);
  trace.events[call].stack = trace.stack({trace.frame("main", "run.py", 7)});
  uint32_t op = addEvent(trace, "cuvil.matmul", 10, 60);
  trace.events[op].loc = trace.intern("model.py:3:9");
  addEvent(trace, "gemm", 20, 30);
  addEvent(trace, "overlaps", 90, 40); // clipped at 100
  addEvent(trace, "gpu_kernel", 5, 50, EventKind::GpuKernel, 2);
  trace.threads[0].name = trace.intern("main");
  trace.sortEvents();
  return trace;
}

TEST(Speedscope, RequiredFieldsOfTheSchema) {
  json doc = json::parse(writeSpeedscope(sampleTrace()));
  EXPECT_EQ(doc["$schema"],
            "https://www.speedscope.app/file-format-schema.json");
  ASSERT_TRUE(doc["shared"]["frames"].is_array());
  size_t frameCount = doc["shared"]["frames"].size();
  for (const json &frame : doc["shared"]["frames"]) {
    ASSERT_TRUE(frame["name"].is_string());
    if (frame.contains("line")) {
      EXPECT_TRUE(frame["line"].is_number_integer());
    }
  }
  ASSERT_EQ(doc["profiles"].size(), 2u);
  for (const json &profile : doc["profiles"]) {
    EXPECT_EQ(profile["type"], "evented");
    EXPECT_TRUE(profile["name"].is_string());
    EXPECT_EQ(profile["unit"], "nanoseconds");
    double start = profile["startValue"], end = profile["endValue"];
    std::vector<int64_t> open;
    double last = start;
    for (const json &event : profile["events"]) {
      std::string type = event["type"];
      int64_t frame = event["frame"];
      double at = event["at"];
      ASSERT_GE(frame, 0);
      ASSERT_LT(size_t(frame), frameCount);
      EXPECT_GE(at, last);
      EXPECT_LE(at, end);
      last = at;
      if (type == "O") {
        open.push_back(frame);
      } else {
        ASSERT_EQ(type, "C");
        ASSERT_FALSE(open.empty());
        EXPECT_EQ(open.back(), frame);
        open.pop_back();
      }
    }
    EXPECT_TRUE(open.empty());
  }
  // Locs become file/line/col of frames.
  bool sawLoc = false;
  for (const json &frame : doc["shared"]["frames"])
    if (frame["name"] == "cuvil.matmul") {
      sawLoc = true;
      EXPECT_EQ(frame["file"], "model.py");
      EXPECT_EQ(frame["line"], 3);
      EXPECT_EQ(frame["col"], 9);
    }
  EXPECT_TRUE(sawLoc);
}

TEST(Speedscope, ReadsBackToTheSameCallTree) {
  Trace trace = sampleTrace();
  auto read = parseSpeedscope(writeSpeedscope(trace));
  ASSERT_TRUE(read) << read.error().text();
  // Python frames come back as events; names and weights are the same.
  const char *expected = "main (run.py:7) total=100 self=0\n"
                         "  forward total=100 self=30\n"
                         "    cuvil.matmul (model.py:3) total=60 self=30\n"
                         "      gemm total=30 self=30\n"
                         "    overlaps total=10 self=10\n"
                         "gpu_kernel total=50 self=50\n";
  EXPECT_EQ(CallTree::build(*read).print(), expected);
  EXPECT_EQ(CallTree::build(trace).print(), expected);
}

TEST(Speedscope, SampledProfilesAndErrors) {
  auto sampled = parseSpeedscope(R"({
    "$schema": "https://www.speedscope.app/file-format-schema.json",
    "shared": {"frames": [{"name": "a"}, {"name": "b"}]},
    "profiles": [{"type": "sampled", "name": "p", "unit": "milliseconds",
                  "startValue": 0, "endValue": 5,
                  "samples": [[0, 1], [0], [0, 1]], "weights": [1, 2, 2]}]})");
  ASSERT_TRUE(sampled) << sampled.error().text();
  EXPECT_EQ(writeFoldedStacks(*sampled), "a 2000000\na;b 3000000\n");

  auto badClose =
      parseSpeedscope(R"({"shared": {"frames": [{"name": "a"}, {"name": "b"}]},
    "profiles": [{"type": "evented", "name": "p", "unit": "none", "startValue": 0,
    "endValue": 2, "events": [{"type": "O", "frame": 0, "at": 0},
                              {"type": "C", "frame": 1, "at": 1}]}]})");
  ASSERT_FALSE(badClose);
  EXPECT_NE(badClose.error().message.find("not the innermost"),
            std::string::npos);

  auto badFrame = parseSpeedscope(R"({"shared": {"frames": []},
    "profiles": [{"type": "evented", "events": [{"type": "O", "frame": 3, "at": 0}]}]})");
  ASSERT_FALSE(badFrame);

  // Fields of the wrong type: a name that is not a string falls back to
  // "profile", a unit that is not a string is refused by name.
  auto oddName = parseSpeedscope(R"({"shared": {"frames": [{"name": "a"}]},
    "profiles": [{"type": "sampled", "name": [4e9, 4e9],
                  "samples": [[0]], "weights": [3]}]})");
  ASSERT_TRUE(oddName) << oddName.error().text();
  EXPECT_EQ(writeFoldedStacks(*oddName), "a 3\n");
  auto oddUnit = parseSpeedscope(R"({"shared": {"frames": [{"name": "a"}]},
    "profiles": [{"type": "sampled", "unit": 5, "samples": [[0]], "weights": [3]}]})");
  ASSERT_FALSE(oddUnit);
  EXPECT_NE(oddUnit.error().message.find("\"unit\" is a string, not 5"),
            std::string::npos)
      << oddUnit.error().message;
  auto oddEventType = parseSpeedscope(R"({"shared": {"frames": [{"name": "a"}]},
    "profiles": [{"type": "evented", "events": [{"type": 7, "frame": 0, "at": 0}]}]})");
  ASSERT_FALSE(oddEventType);
  EXPECT_NE(oddEventType.error().message.find("neither"), std::string::npos);

  auto truncated = parseSpeedscope("{\"shared\": {\"frames\": [");
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.error().message.find("truncated"), std::string::npos);
}

TEST(Speedscope, LineNumbersBeyondUint32AreKeptAsText) {
  Trace trace;
  uint32_t op = addEvent(trace, "huge", 0, 10);
  trace.events[op].loc = trace.intern("model.py:99999999999:3");
  uint32_t max = addEvent(trace, "max", 20, 10);
  trace.events[max].loc = trace.intern("model.py:4294967295:1");
  trace.sortEvents();
  json doc = json::parse(writeSpeedscope(trace)); // used to throw stoul's
  for (const json &frame : doc["shared"]["frames"]) {
    if (frame["name"] == "huge") {
      EXPECT_EQ(frame["file"], "model.py:99999999999:3");
      EXPECT_FALSE(frame.contains("line"));
    } else if (frame["name"] == "max") {
      EXPECT_EQ(frame["file"], "model.py");
      EXPECT_EQ(frame["line"], 4294967295u);
    }
  }
}
