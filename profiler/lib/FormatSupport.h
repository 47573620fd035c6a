//===- FormatSupport.h - Helpers shared by the importers and exporters ----===//

#ifndef CUVIL_PROFILER_LIB_FORMATSUPPORT_H
#define CUVIL_PROFILER_LIB_FORMATSUPPORT_H

#include "cuvil/Profiler/Formats.h"

#include <string>
#include <string_view>
#include <vector>

namespace cuvil::profiler::detail {

/// A TraceError at `byteOffset` of `text`, with the line computed from it.
TraceError errorAt(const std::string &path, std::string_view text,
                   uint64_t byteOffset, std::string message);

/// The event kind a producer's category (and name) stands for: Cuvil's own
/// names, PyTorch's ("cpu_op", "kernel", "cuda_runtime", ...), ONNX
/// Runtime's ("Node", "Session").
EventKind classifyCategory(std::string_view category);

/// Exact nanoseconds from a decimal microsecond literal ("12.345678");
/// false when the text is not a plain decimal.
bool microsecondsTextToNs(std::string_view text, int64_t &ns);

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
