//===- WorkbenchContext.cpp - What the Workbench's pages share ------------===//

#include "WorkbenchContext.h"

#include <QCoreApplication>
#include <QFileInfo>

namespace cuvil::workbench {

WorkbenchContext::WorkbenchContext(QObject *parent) : QObject(parent) {
  // Connected before any page's handlers, so pages see the new row.
  connect(&client, &WorkerClient::compilationReported, this,
          [this](const CompilationRecord &record) { records.add(record); });
}

void WorkbenchContext::beginFile(const QString &file, const QString &source) {
  openFile = file;
  records.clear();
  setCurrentCompilation(-1);
  emit fileOpened(file, source);
}

const CompilationRecord *WorkbenchContext::currentRecord() const {
  return records.record(current);
}

void WorkbenchContext::setCurrentCompilation(int row) {
  if (!records.record(row))
    row = -1;
  if (row == current)
    return;
  current = row;
  emit currentCompilationChanged(row);
}

void WorkbenchContext::setLatencyHeat(const LatencyHeatIndex &index) {
  heat = index;
  emit latencyHeatChanged();
}

void WorkbenchContext::console(const QString &text, Tone tone) {
  if (!text.isEmpty())
    emit consoleText(text, tone);
}

void WorkbenchContext::status(const QString &text) { emit statusText(text); }

void WorkbenchContext::showPage(const QString &id) { emit pageRequested(id); }

void WorkbenchContext::showLocation(const QString &loc) {
  emit locationRequested(loc);
}

QString bundledResource(const QString &relative) {
  QStringList roots;
  QString fromEnv = qEnvironmentVariable("CUVIL_SOURCE_DIR");
  if (!fromEnv.isEmpty())
    roots << fromEnv;
#ifdef CUVIL_SOURCE_DIR
  roots << QStringLiteral(CUVIL_SOURCE_DIR);
#endif
  roots << QCoreApplication::applicationDirPath() + "/../share/cuvil";
  for (const QString &root : roots) {
    QString path = root + "/" + relative;
    if (QFileInfo::exists(path))
      return QFileInfo(path).absoluteFilePath();
  }
  return {};
}

} // namespace cuvil::workbench
