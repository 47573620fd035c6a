//===- IrHighlighter.h - MLIR syntax highlighting ----------------*- C++
//-*-===//
#ifndef CUVIL_WORKBENCH_IRHIGHLIGHTER_H
#define CUVIL_WORKBENCH_IRHIGHLIGHTER_H

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <QVector>

namespace cuvil::workbench {

/// Colours op names, SSA values, types, attributes aliases, numbers,
/// strings, comments and trailing source locations of printed MLIR.
class IrHighlighter : public QSyntaxHighlighter {
  Q_OBJECT
public:
  explicit IrHighlighter(QTextDocument *document);

protected:
  void highlightBlock(const QString &text) override;

private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
  };
  QVector<Rule> rules;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_IRHIGHLIGHTER_H
