//===- FormatSupport.cpp - Helpers shared by the importers and exporters --===//

#include "FormatSupport.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace cuvil::profiler::detail {

TraceError errorAt(const std::string &path, std::string_view text,
                   uint64_t byteOffset, std::string message) {
  TraceError error;
  error.path = path;
  error.byteOffset = byteOffset;
  uint64_t end = std::min<uint64_t>(byteOffset, text.size());
  error.line = 1 + std::count(text.begin(), text.begin() + end, '\n');
  error.message = std::move(message);
  return error;
}

static bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

EventKind classifyCategory(std::string_view category) {
  EventKind kind;
  if (parseEventKind(category, kind))
    return kind;
  struct Rule {
    const char *category;
    EventKind kind;
  };
  static const Rule rules[] = {
      {"python_function", EventKind::Python},
      {"python", EventKind::Python},
      {"cpu_op", EventKind::CpuKernel},
      {"operator", EventKind::CpuKernel},
      {"node", EventKind::CpuKernel}, // ONNX Runtime
      {"kernel", EventKind::GpuKernel},
      {"gpu_memcpy", EventKind::Memcpy},
      {"gpu_memset", EventKind::Memcpy},
      {"cuda_runtime", EventKind::RuntimeApi},
      {"cuda_driver", EventKind::RuntimeApi},
      {"user_annotation", EventKind::Nvtx},
      {"gpu_user_annotation", EventKind::Nvtx},
      {"nvtx", EventKind::Nvtx},
  };
  for (const Rule &rule : rules)
    if (equalsIgnoreCase(category, rule.category))
      return rule.kind;
  return EventKind::Other;
}

bool microsecondsTextToNs(std::string_view text, int64_t &ns) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && text[i] == '-') {
    negative = true;
    ++i;
  }
  int64_t whole = 0;
  size_t digits = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));
       ++i, ++digits) {
    if (whole > (INT64_MAX - 9) / 10 / 1000)
      return false;
    whole = whole * 10 + (text[i] - '0');
  }
  if (digits == 0)
    return false;
  int64_t fraction = 0;
  int scale = 100;
  bool roundUp = false;
  if (i < text.size() && text[i] == '.') {
    for (++i;
         i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));
         ++i) {
      if (scale > 0) {
        fraction += (text[i] - '0') * scale;
        scale /= 10;
      } else if (scale == 0) {
        roundUp = text[i] >= '5';
        scale = -1;
      }
    }
  }
  if (i != text.size())
    return false; // exponent or garbage: let the caller use the double
  ns = whole * 1000 + fraction + (roundUp ? 1 : 0);
  if (negative)
    ns = -ns;
  return true;
}

void appendMicroseconds(std::string &out, int64_t ns) {
  char buffer[32];
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  int n = std::snprintf(buffer, sizeof buffer, "%lld.%03lld",
                        static_cast<long long>(ns / 1000),
                        static_cast<long long>(ns % 1000));
  out.append(buffer, n);
}

std::string frameText(const Trace &trace, FrameId frame) {
  const Frame &f = trace.frames[frame];
  std::string text(trace.str(f.name));
  if (f.file) {
    text += " (";
    text += trace.str(f.file);
    if (f.line)
      text += ":" + std::to_string(f.line);
    text += ")";
  }
  return text;
}

Nesting nestEvents(const Trace &trace) {
  Nesting nesting;
  size_t n = trace.events.size();
  nesting.parent.assign(n, UINT32_MAX);
  nesting.clippedEndNs.resize(n);
  std::vector<uint32_t> open;
  for (uint32_t i = 0; i < n; ++i) {
    const Event &e = trace.events[i];
    while (!open.empty() && (trace.events[open.back()].thread != e.thread ||
                             nesting.clippedEndNs[open.back()] <= e.startNs))
      open.pop_back();
    int64_t end = e.endNs();
    if (!open.empty()) {
      nesting.parent[i] = open.back();
      end = std::min(end, nesting.clippedEndNs[open.back()]);
    }
    nesting.clippedEndNs[i] = end;
    open.push_back(i);
  }
  return nesting;
}

} // namespace cuvil::profiler::detail
