//===- WorkbenchTypes.cpp - Formatting of the Workbench's value types -----===//

#include "WorkbenchTypes.h"

#include <QFileInfo>
#include <QStringList>

namespace cuvil::workbench {

QString TensorInfo::toString() const {
  QStringList dims;
  for (qint64 d : shape)
    dims << QString::number(d);
  return dtype + "[" + dims.join(", ") + "]";
}

QString CompilationRecord::inputSummary() const {
  QStringList parts;
  for (const TensorInfo &t : inputs)
    parts << t.toString();
  return parts.join(", ");
}

QString UserException::summary() const {
  QString text = type + ": " + message;
  if (!file.isEmpty() && line > 0)
    text += QString(" (%1:%2)").arg(QFileInfo(file).fileName()).arg(line);
  return text;
}

bool splitLocation(const QString &loc, QString &file, int &line) {
  // "path:line" or "path:line:col"; paths may contain ':' themselves.
  QStringList parts = loc.split(':');
  bool ok = false;
  if (parts.size() >= 3) {
    parts.last().toInt(&ok);
    if (ok) {
      int l = parts[parts.size() - 2].toInt(&ok);
      if (ok) {
        file = parts.mid(0, parts.size() - 2).join(':');
        line = l;
        return line > 0 && !file.isEmpty();
      }
    }
  }
  if (parts.size() >= 2) {
    int l = parts.last().toInt(&ok);
    if (ok) {
      file = parts.mid(0, parts.size() - 1).join(':');
      line = l;
      return line > 0 && !file.isEmpty();
    }
  }
  return false;
}

} // namespace cuvil::workbench
