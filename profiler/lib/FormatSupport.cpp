//===- FormatSupport.cpp - Helpers shared by the importers and exporters --===//

#include "FormatSupport.h"

#include <cmath>

#include <algorithm>
#include <cctype>
#include <charconv>
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
  error.message = escapeInvalidUtf8(message);
  return error;
}

/// Length of the valid UTF-8 sequence at `text[i]`, or 0 when it is not one
/// (overlong forms, surrogates and values past U+10FFFF are invalid).
static size_t utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  if (lead < 0x80)
    return 1;
  size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                  : lead >= 0xE0 && lead <= 0xEF ? 3
                  : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                 : 0;
  if (!length || i + length > text.size())
    return 0;
  for (size_t k = 1; k < length; ++k)
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
  unsigned char second = byte(i + 1);
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) ||
      (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F))
    return 0;
  return length;
}

std::string escapeInvalidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (size_t length = utf8SequenceLength(text, i)) {
      out.append(text, i, length);
      i += length;
      continue;
    }
    static const char hex[] = "0123456789abcdef";
    auto value = static_cast<unsigned char>(text[i++]);
    out += "\\x";
    out += hex[value >> 4];
    out += hex[value & 15];
  }
  return out;
}

bool parseUint32(std::string_view digits, uint32_t &value) {
  if (digits.empty() ||
      digits.find_first_not_of("0123456789") != std::string_view::npos)
    return false;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return ec == std::errc() && end == digits.data() + digits.size();
}

SplitLoc splitLoc(std::string_view loc) {
  SplitLoc out;
  out.file = loc;
  uint32_t numbers[2] = {0, 0};
  int found = 0;
  for (; found < 2; ++found) {
    size_t colon = out.file.rfind(':');
    if (colon == std::string_view::npos)
      break;
    std::string_view digits = out.file.substr(colon + 1);
    if (!parseUint32(digits, numbers[found])) {
      if (!digits.empty() &&
          digits.find_first_not_of("0123456789") == std::string_view::npos)
        return SplitLoc{loc}; // a number too large: no line, keep it all
      break;
    }
    out.file = out.file.substr(0, colon);
  }
  out.hasColumn = found == 2;
  out.line = found == 2 ? numbers[1] : numbers[0];
  out.column = found == 2 ? numbers[0] : 0;
  return out;
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
    if (whole > kMaxTimeNs / 10000) // whole * 1000 must stay in range
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
  return ns > -kMaxTimeNs && ns < kMaxTimeNs;
}

bool scaleToNs(double value, double nsPerUnit, int64_t &ns) {
  double scaled = std::round(value * nsPerUnit);
  // NaN fails both comparisons.
  if (!(scaled > -double(kMaxTimeNs) && scaled < double(kMaxTimeNs)))
    return false;
  ns = static_cast<int64_t>(scaled);
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
