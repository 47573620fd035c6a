//===- TraceFiles.cpp - Format detection, file reading and writing --------===//

#include "FormatSupport.h"
#include "cuvil/Profiler/Formats.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace cuvil::profiler {

const std::vector<TraceFormatInfo> &traceFormats() {
  // Longer extensions first: ".speedscope.json" before ".json".
  static const std::vector<TraceFormatInfo> table = {
      {TraceFormat::Speedscope,
       "speedscope",
       "speedscope JSON",
       {".speedscope.json", ".speedscope"},
       {},
       true,
       true},
      {TraceFormat::Chrome,
       "chrome",
       "Chrome trace JSON (Cuvil, PyTorch profiler, ONNX Runtime, Perfetto)",
       {".json", ".json.trace"},
       {"json"},
       true,
       true},
      {TraceFormat::Folded,
       "folded",
       "folded stacks (flamegraph.pl)",
       {".folded", ".collapsed", ".txt"},
       {},
       true,
       true},
      {TraceFormat::NsysSqlite,
       "nsys-sqlite",
       "Nsight Systems SQLite export (nsys export --type sqlite)",
       {".sqlite", ".db"},
       {"sqlite", "nsys"},
       true,
       false},
  };
  return table;
}

const char *traceFormatName(TraceFormat format) {
  for (const TraceFormatInfo &info : traceFormats())
    if (info.format == format)
      return info.name;
  return "auto";
}

std::optional<TraceFormat> parseTraceFormat(std::string_view name) {
  if (name == "auto")
    return TraceFormat::Auto;
  for (const TraceFormatInfo &info : traceFormats()) {
    if (name == info.name)
      return info.format;
    for (const char *alias : info.aliases)
      if (name == alias)
        return info.format;
  }
  return std::nullopt;
}

static bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

TraceFormat formatFromPath(std::string_view path) {
  for (const TraceFormatInfo &info : traceFormats())
    for (const char *extension : info.extensions)
      if (endsWith(path, extension))
        return info.format;
  return TraceFormat::Auto;
}

std::string traceFileFilter(bool forWriting) {
  std::string all, each;
  for (const TraceFormatInfo &info : traceFormats()) {
    if (forWriting ? !info.writable : !info.readable)
      continue;
    std::string patterns;
    for (const char *extension : info.extensions)
      patterns += std::string(patterns.empty() ? "" : " ") + "*" + extension;
    all += (all.empty() ? "" : " ") + patterns;
    each += std::string(";;") + info.description + " (" + patterns + ")";
  }
  return "Traces (" + all + ")" + each + ";;All files (*)";
}

std::string TraceError::text() const {
  std::string out = path.empty() ? "<memory>" : path;
  if (line)
    out += ":" + std::to_string(line);
  out += ": ";
  if (byteOffset)
    out += "(byte " + std::to_string(byteOffset) + ") ";
  // Paths are bytes too; messages built outside errorAt may quote the file.
  return detail::escapeInvalidUtf8(out + message);
}

TraceFormat detectFormat(std::string_view content) {
  static const char sqliteMagic[] = "SQLite format 3";
  if (content.substr(0, sizeof sqliteMagic - 1) == sqliteMagic)
    return TraceFormat::NsysSqlite;
  size_t first = content.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos)
    return TraceFormat::Folded;
  char c = content[first];
  if (c == '[')
    return TraceFormat::Chrome;
  if (c == '{') {
    // speedscope files name their schema near the start.
    std::string_view head = content.substr(first, 4096);
    if (head.find("speedscope.app/file-format-schema") !=
        std::string_view::npos)
      return TraceFormat::Speedscope;
    return TraceFormat::Chrome;
  }
  return TraceFormat::Folded;
}

uint64_t maxTraceFileBytes(TraceFormat format) {
  uint64_t mib = 160;
  if (const char *text = std::getenv("CUVIL_MAX_TRACE_MIB")) {
    char *end = nullptr;
    unsigned long long value = std::strtoull(text, &end, 10);
    if (end != text && *end == '\0' && value > 0 && value < (1ull << 40))
      mib = value;
  }
  uint64_t bytes = mib << 20;
  return format == TraceFormat::Speedscope ? bytes / 4 : bytes;
}

/// The whole of `in` (a file, a pipe), or an error once it passes `limit`.
static std::optional<TraceError> readBounded(std::ifstream &in,
                                             const std::string &path,
                                             TraceFormat format,
                                             std::string &content) {
  uint64_t limit = maxTraceFileBytes(format);
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  bool tooLarge = !ec && size > limit;
  if (!tooLarge) {
    if (!ec)
      content.reserve(static_cast<size_t>(size));
    // A pipe has no size: read it in chunks up to the limit.
    char chunk[1 << 16];
    while (in.read(chunk, sizeof chunk), in.gcount() > 0) {
      content.append(chunk, static_cast<size_t>(in.gcount()));
      if (content.size() > limit) {
        tooLarge = true;
        break;
      }
    }
  }
  if (!tooLarge)
    return std::nullopt;
  TraceError error;
  error.path = path;
  std::string what = ec ? "more than " + std::to_string(limit >> 20) + " MiB"
                        : std::to_string(size >> 20) + " MiB";
  error.message = "the " + std::string(traceFormatName(format)) + " trace is " +
                  what + "; Cuvil reads " + traceFormatName(format) +
                  " traces up to " + std::to_string(limit >> 20) +
                  " MiB, which keeps reading one under 512 MiB of memory. "
                  "Record a shorter window, or set CUVIL_MAX_TRACE_MIB (now " +
                  std::to_string(maxTraceFileBytes(TraceFormat::Chrome) >> 20) +
                  ") higher to read it with about 2.3 times its size in memory";
  content.clear();
  content.shrink_to_fit();
  return error;
}

Expected<Trace> readTraceFile(const std::string &path, TraceFormat format) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    TraceError error;
    error.path = path;
    error.message =
        std::string("cannot open the trace file: ") + std::strerror(errno);
    return error;
  }
  std::string content;
  if (format == TraceFormat::Auto) {
    // The head read to detect the format is kept: a pipe cannot seek back.
    content.resize(4096);
    in.read(content.data(), static_cast<std::streamsize>(content.size()));
    content.resize(static_cast<size_t>(in.gcount()));
    format = detectFormat(content);
  }
  if (format == TraceFormat::NsysSqlite)
    return readNsysSqlite(path);
  if (std::optional<TraceError> error = readBounded(in, path, format, content))
    return *error;
  switch (format) {
  case TraceFormat::Folded:
    return parseFoldedStacks(content, path);
  case TraceFormat::Speedscope:
    return parseSpeedscope(content, path);
  default:
    return parseChromeTrace(content, path);
  }
}

std::optional<TraceError> writeTraceFile(const Trace &trace,
                                         const std::string &path,
                                         TraceFormat format) {
  if (format == TraceFormat::Auto) {
    format = formatFromPath(path);
    if (format == TraceFormat::Auto)
      format = TraceFormat::Chrome;
  }
  TraceError error;
  error.path = path;
  std::string content;
  switch (format) {
  case TraceFormat::Folded:
    content = writeFoldedStacks(trace);
    break;
  case TraceFormat::Speedscope:
    content = writeSpeedscope(trace);
    break;
  case TraceFormat::NsysSqlite:
    error.message = "writing Nsight Systems SQLite is not supported; write "
                    "chrome, folded or speedscope";
    return error;
  default:
    content = writeChromeTrace(trace);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    error.message = std::string("cannot write: ") + std::strerror(errno);
    return error;
  }
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) {
    error.message = std::string("write failed: ") + std::strerror(errno);
    return error;
  }
  return std::nullopt;
}

} // namespace cuvil::profiler
