//===- IrHighlighter.cpp - MLIR syntax highlighting -----------------------===//

#include "IrHighlighter.h"

namespace cuvil::workbench {
namespace {

QTextCharFormat makeFormat(const QColor &color, bool bold = false,
                           bool italic = false) {
  QTextCharFormat f;
  f.setForeground(color);
  if (bold)
    f.setFontWeight(QFont::Bold);
  f.setFontItalic(italic);
  return f;
}

} // namespace

IrHighlighter::IrHighlighter(QTextDocument *document)
    : QSyntaxHighlighter(document) {
  // Later rules win where matches overlap.
  rules.push_back({QRegularExpression(R"(\b\d+(\.\d+)?(e[+-]?\d+)?\b)"),
                   makeFormat(QColor(0x98, 0x58, 0x00))});
  rules.push_back(
      {QRegularExpression(
           R"(\b(tensor|memref|vector|!llvm\.\w+)<[^>]*>|\b(index|[isuf]\d+|bf16)\b|!llvm\.\w+)"),
       makeFormat(QColor(0x1a, 0x7f, 0x37))});
  rules.push_back(
      {QRegularExpression(
           R"(\b[a-z_]+(\.[a-z_0-9]+)+\b|^\s*(%[^=]+=\s*)?(return)\b)"),
       makeFormat(QColor(0x00, 0x3d, 0xb8), true)});
  rules.push_back({QRegularExpression(R"([%^][\w$.\-]+(#\d+)?)"),
                   makeFormat(QColor(0x7a, 0x2e, 0x8e))});
  rules.push_back({QRegularExpression(R"(@[\w$.\-]+)"),
                   makeFormat(QColor(0x00, 0x6d, 0x7a), true)});
  rules.push_back({QRegularExpression(R"(#[\w$.\-]+)"),
                   makeFormat(QColor(0x9a, 0x6e, 0x00))});
  rules.push_back({QRegularExpression(R"("(?:[^"\\]|\\.)*")"),
                   makeFormat(QColor(0xa3, 0x15, 0x15))});
  // Locations ("file.py:14:25", "[unknown]", "loc(...)").
  rules.push_back(
      {QRegularExpression(R"(\S+:\d+:\d+|\[unknown\]|\bloc\([^)]*\))"),
       makeFormat(QColor(0x99, 0x99, 0x99), false, true)});
  rules.push_back({QRegularExpression(R"(//.*$)"),
                   makeFormat(QColor(0x6a, 0x73, 0x7d), false, true)});
}

void IrHighlighter::highlightBlock(const QString &text) {
  for (const Rule &rule : rules) {
    auto it = rule.pattern.globalMatch(text);
    while (it.hasNext()) {
      QRegularExpressionMatch match = it.next();
      setFormat(match.capturedStart(), match.capturedLength(), rule.format);
    }
  }
}

} // namespace cuvil::workbench
