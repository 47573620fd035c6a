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

} // namespace cuvil::workbench
