//===- PassDocs.cpp - What each pass does, from its declaration -----------===//

#include "PassDocs.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>

using namespace cuvil::workbench;

namespace {

/// `func.func(cse)` -> `cse`; `cuvil-cpu-schedule{vector-lanes=16}` ->
/// `cuvil-cpu-schedule`.
QString passArgument(QString name) {
  name = name.trimmed();
  static const QRegularExpression anchored(R"(^[\w.]+\((.*)\)$)");
  for (QRegularExpressionMatch m = anchored.match(name); m.hasMatch();
       m = anchored.match(name))
    name = m.captured(1).trimmed();
  int brace = name.indexOf('{');
  return (brace < 0 ? name : name.left(brace)).trimmed();
}

} // namespace

const PassDocs &PassDocs::instance() {
  static const PassDocs docs = [] {
    PassDocs d;
    QDir dir(":/passdocs");
    for (const QString &file : dir.entryList({"*.md"}, QDir::Files)) {
      QFile f(dir.filePath(file));
      if (f.open(QIODevice::ReadOnly | QIODevice::Text))
        d.addMarkdown(QString::fromUtf8(f.readAll()));
    }
    return d;
  }();
  return docs;
}

void PassDocs::addMarkdown(const QString &text) {
  // Each pass starts with a heading "### `-name`".
  static const QRegularExpression heading(R"(^### `-([\w.-]+)`\s*$)",
                                          QRegularExpression::MultilineOption);
  QRegularExpressionMatchIterator it = heading.globalMatch(text);
  QString name;
  qsizetype start = -1;
  auto close = [&](qsizetype end) {
    if (start >= 0)
      byName.insert(name, text.mid(start, end - start).trimmed());
  };
  while (it.hasNext()) {
    QRegularExpressionMatch m = it.next();
    close(m.capturedStart());
    name = m.captured(1);
    start = m.capturedStart();
  }
  close(text.size());
}

QString PassDocs::markdown(const QString &name) const {
  return byName.value(passArgument(name));
}

QString PassDocs::summary(const QString &name) const {
  // The line after the heading: "_Summary_".
  static const QRegularExpression line(R"(^_(.+)_\s*$)",
                                       QRegularExpression::MultilineOption);
  QRegularExpressionMatch m = line.match(markdown(name));
  return m.hasMatch() ? m.captured(1) : QString();
}

QStringList PassDocs::passes() const {
  QStringList names = byName.keys();
  names.sort();
  return names;
}
