//===- RecentFiles.h - Recently opened model files (QSettings) ---*- C++
//-*-===//
#ifndef CUVIL_WORKBENCH_RECENTFILES_H
#define CUVIL_WORKBENCH_RECENTFILES_H

#include <QSettings>
#include <QStringList>

namespace cuvil::workbench {

/// Most recent first, no duplicates, at most `limit` entries; stored under
/// "recentFiles" and "lastFile" in the given settings.
class RecentFiles {
public:
  explicit RecentFiles(QSettings &settings, int limit = 10)
      : settings(settings), limit(limit) {}

  QStringList files() const;
  void add(const QString &path);
  void remove(const QString &path);
  QString lastFile() const;

private:
  QSettings &settings;
  int limit;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_RECENTFILES_H
