//===- RecentFiles.cpp - Recently opened model files (QSettings) ----------===//

#include "RecentFiles.h"

#include <QFileInfo>

namespace cuvil::workbench {

QStringList RecentFiles::files() const {
  return settings.value("recentFiles").toStringList();
}

void RecentFiles::add(const QString &path) {
  QString absolute = QFileInfo(path).absoluteFilePath();
  QStringList list = files();
  list.removeAll(absolute);
  list.prepend(absolute);
  while (list.size() > limit)
    list.removeLast();
  settings.setValue("recentFiles", list);
  settings.setValue("lastFile", absolute);
}

void RecentFiles::remove(const QString &path) {
  QStringList list = files();
  list.removeAll(QFileInfo(path).absoluteFilePath());
  settings.setValue("recentFiles", list);
}

QString RecentFiles::lastFile() const {
  return settings.value("lastFile").toString();
}

} // namespace cuvil::workbench
