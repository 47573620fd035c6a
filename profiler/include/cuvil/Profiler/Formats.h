//===- Formats.h - Reading and writing trace files ------------------------===//
//
// Importers (Chrome trace JSON from PyTorch, ONNX Runtime and Cuvil, Nsight
// Systems SQLite exports, folded stacks, speedscope) and exporters (Chrome
// trace JSON, folded stacks, speedscope JSON). Malformed input is reported as
// a TraceError value naming the file, the place and what was expected.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PROFILER_FORMATS_H
#define CUVIL_PROFILER_FORMATS_H

#include "cuvil/Profiler/Trace.h"

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cuvil::profiler {

enum class TraceFormat { Auto, Chrome, Folded, Speedscope, NsysSqlite };

/// One row of the trace format table: the CLI, the Python package and the
/// Workbench's file dialogs all read this table.
struct TraceFormatInfo {
  TraceFormat format;
  const char *name;        ///< "chrome", "folded", ...
  const char *description; ///< one line for help texts and file dialogs
  std::vector<const char *> extensions; ///< with the dot, longest first
  std::vector<const char *> aliases;    ///< other names parseTraceFormat takes
  bool readable;
  bool writable;
};

/// Every trace format, in the order their extensions are matched.
const std::vector<TraceFormatInfo> &traceFormats();
/// A Qt file dialog filter ("Traces (*.json ...);;Chrome trace JSON
/// (*.json *.json.trace);;...;;All files (*)") of the formats that can be
/// read, or written with `forWriting`.
std::string traceFileFilter(bool forWriting = false);

/// "chrome", "folded", "speedscope", "nsys-sqlite" ("auto" for Auto).
const char *traceFormatName(TraceFormat format);
/// Accepts the names above plus "json" for Chrome and "sqlite" for nsys.
std::optional<TraceFormat> parseTraceFormat(std::string_view name);
/// The format a file name suggests (.json → Chrome, .folded/.txt → Folded,
/// .speedscope.json → Speedscope, .sqlite → NsysSqlite), Auto if none.
TraceFormat formatFromPath(std::string_view path);

/// Why a trace could not be read or written.
struct TraceError {
  std::string path; ///< the file, or "<memory>"
  uint64_t byteOffset = 0;
  uint64_t line = 0;   ///< 1-based; 0 when not meaningful
  std::string message; ///< what was found and what was expected

  /// "path:line: (byte N) message", always valid UTF-8 (other bytes "\xNN").
  std::string text() const;
};

/// A value or the TraceError that prevented it.
template <typename T> class Expected {
public:
  Expected(T value) : storage(std::move(value)) {}
  Expected(TraceError error) : storage(std::move(error)) {}
  explicit operator bool() const { return storage.index() == 0; }
  T &operator*() { return std::get<0>(storage); }
  T *operator->() { return &std::get<0>(storage); }
  const TraceError &error() const { return std::get<1>(storage); }

private:
  std::variant<T, TraceError> storage;
};

/// Reads a file in `format`, detecting it from the content when Auto.
/// Text formats are read whole, so a file larger than
/// `maxTraceFileBytes(format)` is refused with its size and the limit.
Expected<Trace> readTraceFile(const std::string &path,
                              TraceFormat format = TraceFormat::Auto);

/// The largest text trace file read: reading one takes about 2.3 times its
/// size (a speedscope document, parsed as a whole, about 8), so the default
/// (160 MiB of Chrome trace, about 1.4 million events) keeps a reader under
/// 512 MiB. $CUVIL_MAX_TRACE_MIB raises or lowers it, for the Chrome size.
uint64_t maxTraceFileBytes(TraceFormat format);
/// Writes `trace` in `format` (Auto: from the path, Chrome by default).
std::optional<TraceError>
writeTraceFile(const Trace &trace, const std::string &path,
               TraceFormat format = TraceFormat::Auto);

/// Detects the format of in-memory content (SQLite magic, speedscope
/// "$schema", JSON object/array, else folded stacks).
TraceFormat detectFormat(std::string_view content);

// Parsers of in-memory text; `path` only names the source in errors.
Expected<Trace> parseChromeTrace(std::string_view text,
                                 const std::string &path = "<memory>");
Expected<Trace> parseFoldedStacks(std::string_view text,
                                  const std::string &path = "<memory>");
Expected<Trace> parseSpeedscope(std::string_view text,
                                const std::string &path = "<memory>");
/// Reads an Nsight Systems export (`nsys export --type sqlite`).
Expected<Trace> readNsysSqlite(const std::string &path);

/// Chrome trace-event JSON: strictly nested "X" events per thread, "M"
/// process/thread names, "s"/"f" flow arrows, "stackFrames" for stacks.
std::string writeChromeTrace(const Trace &trace);
/// Brendan Gregg's folded stacks, "root;child;leaf <ns>", one line per
/// distinct stack, weighted by self time, sorted.
std::string writeFoldedStacks(const Trace &trace);
/// speedscope's file format: one evented profile per thread.
std::string writeSpeedscope(const Trace &trace);

/// JSON string escaping (without the quotes), shared by the writers.
void appendJsonEscaped(std::string &out, std::string_view text);

} // namespace cuvil::profiler

#endif // CUVIL_PROFILER_FORMATS_H
