//===- JsonScanner.h - A fast pull scanner over JSON text -----------------===//
//
// Trace files are large (a million events is ~160 MB), so the Chrome importer
// pulls tokens straight from the text instead of building a DOM or going
// through a general SAX interface: strings without escapes are views into the
// input, numbers stay literals until someone needs their value, and values
// nobody reads are skipped without recursion. Every error carries the byte
// offset where it was found.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_PROFILER_LIB_JSONSCANNER_H
#define CUVIL_PROFILER_LIB_JSONSCANNER_H

#include <cstdint>
#include <string>
#include <string_view>

namespace cuvil::profiler::detail {

class JsonScanner {
public:
  explicit JsonScanner(std::string_view text)
      : begin(text.data()), cursor(text.data()),
        end(text.data() + text.size()) {}

  size_t offset() const { return size_t(cursor - begin); }
  bool failed() const { return !message.empty(); }
  size_t errorOffset() const { return errorAt; }
  const std::string &errorMessage() const { return message; }

  /// The next significant character, or '\0' at the end of the input.
  char peek() {
    skipSpace();
    return cursor < end ? *cursor : '\0';
  }
  bool atEnd() { return peek() == '\0' && cursor >= end; }

  /// Consumes `c` if it is next.
  bool consume(char c) {
    if (peek() != c || cursor >= end)
      return false;
    ++cursor;
    return true;
  }

  /// Consumes `c` or fails saying that `what` was expected.
  bool expect(char c, const char *what) {
    if (consume(c))
      return true;
    return fail(what);
  }

  /// Reads a string; `out` views the input or, with escapes, `scratch`.
  bool string(std::string_view &out);

  /// Reads a number literal (validated JSON syntax).
  bool number(std::string_view &literal, bool &isInteger);

  /// Skips any value; `raw` gets its exact text.
  bool skipValue(std::string_view *raw = nullptr);

  /// Records "expected `what`" at the current position (first error wins).
  bool fail(const std::string &what);

private:
  void skipSpace() {
    while (cursor < end && (*cursor == ' ' || *cursor == '\n' ||
                            *cursor == '\r' || *cursor == '\t'))
      ++cursor;
  }
  bool literal(std::string_view word);

  const char *begin, *cursor, *end;
  std::string scratch;
  std::string message;
  size_t errorAt = 0;
};

} // namespace cuvil::profiler::detail

#endif // CUVIL_PROFILER_LIB_JSONSCANNER_H
