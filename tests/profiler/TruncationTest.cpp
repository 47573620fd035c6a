//===- TruncationTest.cpp - Truncated and corrupted traces never crash ----===//
//
// Every fixture and every written format is cut at every N bytes (and has
// bytes flipped); the readers must return either a trace or an error that
// names the file and a place, never crash or hang.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace cuvil::profiler;
using namespace cuvil::profiler::test;

namespace {

Expected<Trace> parse(TraceFormat format, std::string_view text) {
  switch (format) {
  case TraceFormat::Folded:
    return parseFoldedStacks(text, "cut.folded");
  case TraceFormat::Speedscope:
    return parseSpeedscope(text, "cut.speedscope.json");
  default:
    return parseChromeTrace(text, "cut.json");
  }
}

/// A JSON Array Format trace may stop after any complete event: its closing
/// ']' is optional. True when the first `cut` bytes of `text` end so.
bool endsBetweenArrayEvents(const std::string &text, size_t cut) {
  size_t first = text.find_first_not_of(" \r\n\t");
  if (first == std::string::npos || text[first] != '[')
    return false;
  size_t last = text.find_last_not_of(" \r\n\t", cut ? cut - 1 : 0);
  if (last == std::string::npos || last >= cut)
    return false;
  if (text[last] == ',' && last > 0)
    last = text.find_last_not_of(" \r\n\t", last - 1);
  return last != std::string::npos && (text[last] == '}' || text[last] == '[');
}

void cutEverywhere(const std::string &text, TraceFormat format, size_t step,
                   bool prefixesAreInvalid) {
  size_t errors = 0;
  // Cutting only trailing white space would leave a complete file.
  size_t limit = text.find_last_not_of(" \r\n\t") + 1;
  for (size_t cut = 0; cut < limit; cut += step) {
    auto result = parse(format, std::string_view(text).substr(0, cut));
    if (!result) {
      ++errors;
      const TraceError &error = result.error();
      EXPECT_FALSE(error.message.empty());
      EXPECT_FALSE(error.path.empty());
      EXPECT_LE(error.byteOffset, cut);
    } else if (prefixesAreInvalid && !endsBetweenArrayEvents(text, cut)) {
      ADD_FAILURE() << "a " << cut << "-byte prefix of a "
                    << traceFormatName(format) << " trace parsed";
    }
  }
  if (prefixesAreInvalid) {
    EXPECT_GT(errors, 0u);
  }
}

/// True when `text` is well-formed UTF-8 (what Python and Qt can show).
bool isUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    auto lead = static_cast<unsigned char>(text[i]);
    size_t length = lead < 0x80         ? 1
                    : (lead >> 5) == 6  ? 2
                    : (lead >> 4) == 14 ? 3
                    : (lead >> 3) == 30 ? 4
                                        : 0;
    if (!length || i + length > text.size() || (length == 2 && lead < 0xC2))
      return false;
    for (size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80)
        return false;
    i += length;
  }
  return true;
}

/// Flips bytes; the readers must not crash, and a refusal must say what was
/// wrong and where, in text a user can read whatever bytes were flipped in.
void corrupt(const std::string &text, TraceFormat format) {
  std::string path = format == TraceFormat::Folded       ? "cut.folded"
                     : format == TraceFormat::Speedscope ? "cut.speedscope.json"
                                                         : "cut.json";
  size_t refusals = 0;
  for (size_t at = 0; at < text.size(); at += 97) {
    for (char garbage : {'\0', '"', '}', ']', ',', 'x', '\xff'}) {
      std::string broken = text;
      broken[at] = garbage;
      auto result = parse(format, broken);
      if (result)
        continue;
      ++refusals;
      const TraceError &error = result.error();
      std::string shown = error.text();
      EXPECT_FALSE(error.message.empty()) << "byte " << at;
      EXPECT_EQ(shown.rfind(path + ":", 0), 0u) << shown;
      EXPECT_TRUE(isUtf8(shown)) << "byte " << at << ": " << shown;
    }
  }
  EXPECT_GT(refusals, 0u);
}

Trace sample() {
  auto trace = readTraceFile(fixture("pytorch_profile.json"));
  EXPECT_TRUE(trace) << trace.error().text();
  return std::move(*trace);
}

} // namespace

TEST(Truncation, OnnxRuntimeFixture) {
  std::string text = readText(fixture("ort_profile.json"));
  ASSERT_FALSE(text.empty());
  cutEverywhere(text, TraceFormat::Chrome, 7, true);
  corrupt(text, TraceFormat::Chrome);
}

TEST(Truncation, PyTorchFixture) {
  std::string text = readText(fixture("pytorch_profile.json"));
  ASSERT_FALSE(text.empty());
  cutEverywhere(text, TraceFormat::Chrome, 5, true);
  corrupt(text, TraceFormat::Chrome);
}

TEST(Truncation, WrittenChromeSpeedscopeAndFolded) {
  Trace trace = sample();
  cutEverywhere(writeChromeTrace(trace), TraceFormat::Chrome, 3, true);
  cutEverywhere(writeSpeedscope(trace), TraceFormat::Speedscope, 3, true);
  corrupt(writeSpeedscope(trace), TraceFormat::Speedscope);
  // A prefix of a folded file may itself be valid folded stacks.
  cutEverywhere(writeFoldedStacks(trace), TraceFormat::Folded, 1, false);
  corrupt(writeFoldedStacks(trace), TraceFormat::Folded);
}

TEST(Truncation, ArrayFormMayOmitItsClosingBracket) {
  std::string text = readText(fixture("ort_profile.json"));
  size_t third =
      text.find("},\n{", text.find("},\n{", text.find("},\n{") + 1) + 1);
  ASSERT_NE(third, std::string::npos);
  auto open = parseChromeTrace(std::string_view(text).substr(0, third + 2));
  ASSERT_TRUE(open) << open.error().text();
  EXPECT_EQ(open->events.size(), 3u);
  // The object form has no such allowance.
  auto object = parseChromeTrace("{\"traceEvents\": [{\"ph\":\"X\",\"ts\":1}");
  EXPECT_FALSE(object);
}

TEST(Truncation, ErrorPointsAtTheCut) {
  std::string text = readText(fixture("ort_profile.json"));
  auto result = parseChromeTrace(std::string_view(text).substr(0, 1000),
                                 "ort_profile.json");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().byteOffset, 1000u);
  EXPECT_EQ(result.error().line, 5u); // four line breaks before the cut
  EXPECT_NE(result.error().text().find("ort_profile.json:5: (byte 1000)"),
            std::string::npos);
  EXPECT_NE(result.error().message.find("truncated"), std::string::npos);
}

TEST(Truncation, MessagesQuotingInvalidUtf8StayReadable) {
  auto result = parseChromeTrace("[{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,"
                                 "\"dur\":2, \xff\xfe}]",
                                 "bad.json");
  ASSERT_FALSE(result);
  std::string shown = result.error().text();
  EXPECT_TRUE(isUtf8(shown)) << shown;
  EXPECT_EQ(shown.rfind("bad.json:1: (byte ", 0), 0u) << shown;
  EXPECT_NE(shown.find("\\xff"), std::string::npos) << shown;
}
