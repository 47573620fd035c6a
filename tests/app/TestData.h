//===- TestData.h - Paths of the Workbench tests' fixtures ------*- C++ -*-===//
#ifndef CUVIL_TESTS_APP_TESTDATA_H
#define CUVIL_TESTS_APP_TESTDATA_H

#include <QDir>
#include <QFile>
#include <QString>
#include <QTextStream>
#include <QtTest>

namespace cuvil::workbench::test {

inline QString testData(const QString &relative) {
  return QDir(qEnvironmentVariable("CUVIL_APP_TEST_DATA")).filePath(relative);
}

inline QString example(const QString &name) {
  return QDir(qEnvironmentVariable("CUVIL_SOURCE_DIR"))
      .filePath("resources/examples/" + name);
}

/// Compares `actual` with golden/<name>; CUVIL_UPDATE_GOLDEN=1 rewrites it.
inline void compareGolden(const QString &name, const QString &actual) {
  QString path = testData("golden/" + name);
  if (qEnvironmentVariableIntValue("CUVIL_UPDATE_GOLDEN")) {
    QFile out(path);
    QVERIFY2(out.open(QIODevice::WriteOnly), qPrintable(path));
    out.write(actual.toUtf8());
    return;
  }
  QFile in(path);
  QVERIFY2(in.open(QIODevice::ReadOnly),
           qPrintable("missing golden file " + path +
                      "; run with CUVIL_UPDATE_GOLDEN=1 to create it"));
  QString expected = QString::fromUtf8(in.readAll());
  if (expected != actual) {
    QStringList e = expected.split('\n'), a = actual.split('\n');
    for (int i = 0; i < std::max(e.size(), a.size()); ++i) {
      QString el = i < e.size() ? e[i] : "<end>",
              al = i < a.size() ? a[i] : "<end>";
      if (el != al)
        QFAIL(qPrintable(
            QString("%1 differs at line %2:\n  expected: %3\n  actual:   %4")
                .arg(name)
                .arg(i + 1)
                .arg(el, al)));
    }
  }
}

} // namespace cuvil::workbench::test

#endif // CUVIL_TESTS_APP_TESTDATA_H
