//===- CompilationListModel.cpp - The compilations a run made -------------===//

#include "CompilationListModel.h"

#include <QFileInfo>

namespace cuvil::workbench {

void CompilationListModel::clear() {
  if (list.isEmpty())
    return;
  beginResetModel();
  list.clear();
  endResetModel();
}

void CompilationListModel::add(const CompilationRecord &record) {
  beginInsertRows({}, list.size(), list.size());
  list.push_back(record);
  endInsertRows();
}

const CompilationRecord *CompilationListModel::record(int row) const {
  return row >= 0 && row < list.size() ? &list[row] : nullptr;
}

int CompilationListModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : list.size();
}

int CompilationListModel::columnCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompilationListModel::data(const QModelIndex &index, int role) const {
  if (!index.isValid() || index.row() >= list.size())
    return {};
  const CompilationRecord &r = list[index.row()];
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
    case Function:
      return r.function;
    case Inputs:
      return r.inputSummary();
    case Target:
      return r.target;
    case Passes:
      return static_cast<int>(r.steps.size()) - 1;
    case CompileMs:
      return QString::number(r.compileMs, 'f', 1);
    }
  } else if (role == Qt::ToolTipRole) {
    return QString("%1 defined at %2\nfingerprint %3")
        .arg(r.function, r.source, r.fingerprint.left(16));
  } else if (role == Qt::TextAlignmentRole &&
             (index.column() == Passes || index.column() == CompileMs)) {
    return int(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant CompilationListModel::headerData(int section,
                                          Qt::Orientation orientation,
                                          int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case Function:
    return tr("Function");
  case Inputs:
    return tr("Inputs");
  case Target:
    return tr("Target");
  case Passes:
    return tr("Passes");
  case CompileMs:
    return tr("Compile (ms)");
  }
  return {};
}

} // namespace cuvil::workbench
