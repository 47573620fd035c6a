//===- PassDocs.h - What each pass does, from its declaration ---*- C++ -*-===//
//
// The documentation of the passes the pass explorer steps through: summary,
// description (with its before/after example) and options, as Markdown
// generated at build time from each pass's TableGen declaration (Cuvil's
// and the upstream passes its pipelines run) and shipped in the app.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_PASSDOCS_H
#define CUVIL_WORKBENCH_PASSDOCS_H

#include <QHash>
#include <QString>
#include <QStringList>

namespace cuvil::workbench {

class PassDocs {
public:
  /// The documentation of every pass the app ships (read once).
  static const PassDocs &instance();

  /// Markdown for pass `name` (its argument, `cuvil-plan-memory`; an
  /// anchored form such as `func.func(cse)` is taken apart), or empty.
  QString markdown(const QString &name) const;
  /// One line: the pass's summary, or empty.
  QString summary(const QString &name) const;
  bool contains(const QString &name) const { return !markdown(name).isEmpty(); }
  /// Every documented pass, sorted.
  QStringList passes() const;

  /// Splits mlir-tblgen's -gen-pass-doc Markdown into passes (public for
  /// tests).
  void addMarkdown(const QString &text);

private:
  QHash<QString, QString> byName;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_PASSDOCS_H
