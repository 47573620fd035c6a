//===- FormatSupport.h - Helpers shared by the importers and exporters ----===//

#ifndef CUVIL_PROFILER_LIB_FORMATSUPPORT_H
#define CUVIL_PROFILER_LIB_FORMATSUPPORT_H

#include "cuvil/Profiler/Formats.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil::profiler::detail {

/// A TraceError at `byteOffset` of `text`, with the line computed from it.
TraceError errorAt(const std::string &path, std::string_view text,
                   uint64_t byteOffset, std::string message);

/// `text` with every byte that is not part of valid UTF-8 written as "\xNN":
/// messages quote bytes from hostile files, and text that is not UTF-8 is
/// lost on its way to Python or a GUI. Valid UTF-8 comes back unchanged.
std::string escapeInvalidUtf8(std::string_view text);

/// A decimal number without sign that fits in uint32_t; false for anything
/// else (empty, other characters, too large) instead of throwing or wrapping.
bool parseUint32(std::string_view digits, uint32_t &value);

/// "file:line:col" or "file:line" split into its parts. When a number does
/// not fit uint32_t, all of `loc` is the file (no line): nothing is lost.
struct SplitLoc {
  std::string_view file;
  uint32_t line = 0;
  uint32_t column = 0;
  bool hasColumn = false;
};
SplitLoc splitLoc(std::string_view loc);

/// The event kind a producer's category (and name) stands for: Cuvil's own
/// names, PyTorch's ("cpu_op", "kernel", "cuda_runtime", ...), ONNX
/// Runtime's ("Node", "Session").
EventKind classifyCategory(std::string_view category);

/// Exact nanoseconds from a decimal microsecond literal ("12.345678");
/// false when the text is not a plain decimal or the time is beyond
/// ±kMaxTimeNs (declared below).
bool microsecondsTextToNs(std::string_view text, int64_t &ns);

/// Times a reader accepts lie strictly within ±2^62 ns (about 146 years). Any
/// two accepted times add and subtract within int64_t, so durations, ends
/// and sums of weights computed from them cannot overflow.
constexpr int64_t kMaxTimeNs = int64_t(1) << 62;

/// `value` units of `nsPerUnit` nanoseconds, rounded; false when the result
/// is not finite or not within ±kMaxTimeNs (instead of an undefined cast).
bool scaleToNs(double value, double nsPerUnit, int64_t &ns);

/// Appends nanoseconds as microseconds with three decimals ("12.345").
void appendMicroseconds(std::string &out, int64_t ns);

/// The display text of a frame: "name" or "name (file:line)".
std::string frameText(const Trace &trace, FrameId frame);

/// For each event (sorted with Trace::sortEvents), the index of the
/// innermost event enclosing it on its thread, or UINT32_MAX. An event that
/// starts inside another but ends after it counts as enclosed (exporters clip
/// it to its parent so that the output nests strictly).
/// `clippedEndNs` is each event's end clipped to its parent's clipped end.
struct Nesting {
  std::vector<uint32_t> parent;
  std::vector<int64_t> clippedEndNs;
};
Nesting nestEvents(const Trace &trace);

} // namespace cuvil::profiler::detail

#endif // CUVIL_PROFILER_LIB_FORMATSUPPORT_H
