//===- TraceFiles.cpp - Format detection, file reading and writing --------===//

#include "FormatSupport.h"
#include "cuvil/Profiler/Formats.h"

#include <cerrno>
#include <cstring>
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

Expected<Trace> readTraceFile(const std::string &path, TraceFormat format) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    TraceError error;
    error.path = path;
    error.message =
        std::string("cannot open the trace file: ") + std::strerror(errno);
    return error;
  }
  if (format == TraceFormat::Auto) {
    char head[4096];
    in.read(head, sizeof head);
    format = detectFormat(std::string_view(head, size_t(in.gcount())));
    in.clear();
    in.seekg(0);
  }
  if (format == TraceFormat::NsysSqlite)
    return readNsysSqlite(path);

  std::string content;
  in.seekg(0, std::ios::end);
  content.resize(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
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
