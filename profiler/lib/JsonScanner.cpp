//===- JsonScanner.cpp - A fast pull scanner over JSON text ---------------===//

#include "JsonScanner.h"

#include <cstring>
#include <vector>

namespace cuvil::profiler::detail {

bool JsonScanner::fail(const std::string &what) {
  if (!message.empty())
    return false;
  errorAt = offset();
  if (cursor >= end)
    message = "truncated JSON: the input ends where " + what + " was expected";
  else
    message = "expected " + what + ", found '" + std::string(1, *cursor) + "'";
  return false;
}

static void appendUtf8(std::string &out, uint32_t code) {
  if (code < 0x80) {
    out += char(code);
  } else if (code < 0x800) {
    out += char(0xC0 | (code >> 6));
    out += char(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += char(0xE0 | (code >> 12));
    out += char(0x80 | ((code >> 6) & 0x3F));
    out += char(0x80 | (code & 0x3F));
  } else {
    out += char(0xF0 | (code >> 18));
    out += char(0x80 | ((code >> 12) & 0x3F));
    out += char(0x80 | ((code >> 6) & 0x3F));
    out += char(0x80 | (code & 0x3F));
  }
}

static int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

bool JsonScanner::string(std::string_view &out) {
  if (!expect('"', "a string"))
    return false;
  const char *start = cursor;
  // Fast path: no escapes, the view points into the input.
  const char *stop = cursor;
  while (stop < end && *stop != '"' && *stop != '\\' &&
         static_cast<unsigned char>(*stop) >= 0x20)
    ++stop;
  if (stop < end && *stop == '"') {
    out = std::string_view(start, size_t(stop - start));
    cursor = stop + 1;
    return true;
  }
  scratch.assign(start, size_t(stop - start));
  cursor = stop;
  while (cursor < end) {
    char c = *cursor;
    if (c == '"') {
      ++cursor;
      out = scratch;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x20)
      return fail("an escaped control character (\\u00XX) in a string");
    if (c != '\\') {
      scratch += c;
      ++cursor;
      continue;
    }
    if (++cursor >= end)
      break;
    char e = *cursor++;
    switch (e) {
    case '"':
    case '\\':
    case '/':
      scratch += e;
      break;
    case 'b':
      scratch += '\b';
      break;
    case 'f':
      scratch += '\f';
      break;
    case 'n':
      scratch += '\n';
      break;
    case 'r':
      scratch += '\r';
      break;
    case 't':
      scratch += '\t';
      break;
    case 'u': {
      auto hex4 = [&](uint32_t &value) {
        if (end - cursor < 4)
          return false;
        value = 0;
        for (int i = 0; i < 4; ++i) {
          int h = hexValue(cursor[i]);
          if (h < 0)
            return false;
          value = value * 16 + uint32_t(h);
        }
        cursor += 4;
        return true;
      };
      uint32_t code;
      if (!hex4(code))
        return fail("four hex digits after \\u");
      if (code >= 0xD800 && code < 0xDC00 && end - cursor >= 2 &&
          cursor[0] == '\\' && cursor[1] == 'u') {
        cursor += 2;
        uint32_t low;
        if (!hex4(low))
          return fail("four hex digits after \\u");
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
      }
      appendUtf8(scratch, code);
      break;
    }
    default:
      --cursor;
      return fail("a valid escape sequence");
    }
  }
  return fail("the closing '\"' of a string");
}

bool JsonScanner::number(std::string_view &text, bool &isInteger) {
  skipSpace();
  const char *start = cursor;
  isInteger = true;
  if (cursor < end && *cursor == '-')
    ++cursor;
  const char *digits = cursor;
  while (cursor < end && *cursor >= '0' && *cursor <= '9')
    ++cursor;
  if (cursor == digits)
    return fail("a number");
  if (cursor < end && *cursor == '.') {
    isInteger = false;
    const char *fraction = ++cursor;
    while (cursor < end && *cursor >= '0' && *cursor <= '9')
      ++cursor;
    if (cursor == fraction)
      return fail("digits after the decimal point");
  }
  if (cursor < end && (*cursor == 'e' || *cursor == 'E')) {
    isInteger = false;
    ++cursor;
    if (cursor < end && (*cursor == '+' || *cursor == '-'))
      ++cursor;
    const char *exponent = cursor;
    while (cursor < end && *cursor >= '0' && *cursor <= '9')
      ++cursor;
    if (cursor == exponent)
      return fail("digits in the exponent");
  }
  text = std::string_view(start, size_t(cursor - start));
  return true;
}

bool JsonScanner::literal(std::string_view word) {
  if (size_t(end - cursor) < word.size() ||
      std::memcmp(cursor, word.data(), word.size()) != 0)
    return fail("a JSON value");
  cursor += word.size();
  return true;
}

bool JsonScanner::skipValue(std::string_view *raw) {
  char c = peek();
  const char *start = cursor;
  std::string_view ignored;
  bool isInteger;
  switch (c) {
  case '"':
    if (!string(ignored))
      return false;
    break;
  case 't':
    if (!literal("true"))
      return false;
    break;
  case 'f':
    if (!literal("false"))
      return false;
    break;
  case 'n':
    if (!literal("null"))
      return false;
    break;
  case '{':
  case '[': {
    // Containers are skipped with an explicit stack: no recursion, so deep
    // nesting in a hostile file cannot overflow the call stack.
    std::vector<char> open;
    open.push_back(*cursor == '{' ? '}' : ']');
    ++cursor;
    bool expectKey = open.back() == '}';
    if (peek() == open.back()) {
      ++cursor;
      break;
    }
    while (!open.empty()) {
      if (expectKey) {
        if (!string(ignored) || !expect(':', "':' after an object key"))
          return false;
      }
      char v = peek();
      if (v == '{' || v == '[') {
        open.push_back(v == '{' ? '}' : ']');
        ++cursor;
        expectKey = open.back() == '}';
        if (peek() == open.back()) {
          ++cursor;
          open.pop_back();
        } else {
          continue;
        }
      } else if (v == '"') {
        if (!string(ignored))
          return false;
      } else if (v == 't' || v == 'f' || v == 'n') {
        if (!literal(v == 't' ? "true" : v == 'f' ? "false" : "null"))
          return false;
      } else {
        if (!number(ignored, isInteger))
          return false;
      }
      // After a value: ',' continues, a closer pops.
      for (;;) {
        if (open.empty())
          break;
        char next = peek();
        if (next == ',') {
          ++cursor;
          expectKey = open.back() == '}';
          break;
        }
        if (next == open.back()) {
          ++cursor;
          open.pop_back();
          continue;
        }
        return fail(open.back() == '}' ? "',' or '}' in an object"
                                       : "',' or ']' in an array");
      }
    }
    break;
  }
  default:
    if (!number(ignored, isInteger))
      return false;
  }
  if (raw)
    *raw = std::string_view(start, size_t(cursor - start));
  return true;
}

} // namespace cuvil::profiler::detail
