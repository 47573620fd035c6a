//===- PassStepModel.cpp - The pipeline of one compilation, step by step --===//

#include "PassStepModel.h"

#include "PassDocs.h"

#include <QBrush>
#include <QColor>

namespace cuvil::workbench {

void PassStepModel::setSteps(const QVector<PassStep> &steps) {
  beginResetModel();
  list = steps;
  endResetModel();
}

int PassStepModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : list.size();
}

int PassStepModel::columnCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant PassStepModel::data(const QModelIndex &index, int role) const {
  if (!index.isValid() || index.row() >= list.size())
    return {};
  const PassStep &s = list[index.row()];
  switch (role) {
  case Qt::DisplayRole:
    switch (index.column()) {
    case Step:
      return index.row();
    case Pass:
      return s.name;
    case Stage:
      return s.stage;
    case Milliseconds:
      return QString::number(s.ms, 'f', 3);
    case Changed:
      return s.changed ? tr("changed") : tr("-");
    }
    return {};
  case Qt::ToolTipRole:
    // What the pass does, from its declaration ("trace" and Python passes
    // have none).
    if (index.column() == Pass)
      if (QString summary = PassDocs::instance().summary(s.name);
          !summary.isEmpty())
        return s.name + ": " + summary;
    return {};
  case Qt::ForegroundRole:
    if (!s.changed)
      return QBrush(QColor(0x88, 0x88, 0x88));
    return {};
  case Qt::TextAlignmentRole:
    if (index.column() == Step || index.column() == Milliseconds)
      return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  case IrRole:
    return s.ir;
  case ChangedRole:
    return s.changed;
  case StepRole:
    return index.row();
  }
  return {};
}

QVariant PassStepModel::headerData(int section, Qt::Orientation orientation,
                                   int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case Step:
    return tr("#");
  case Pass:
    return tr("Pass");
  case Stage:
    return tr("Stage");
  case Milliseconds:
    return tr("Time (ms)");
  case Changed:
    return tr("Changed");
  }
  return {};
}

void ChangedStepFilter::setHideUnchanged(bool hide) {
  if (hide == hiding)
    return;
  hiding = hide;
  invalidateFilter();
}

bool ChangedStepFilter::filterAcceptsRow(
    int sourceRow, const QModelIndex &sourceParent) const {
  if (!hiding || sourceRow == 0)
    return true;
  QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
  return index.data(PassStepModel::ChangedRole).toBool();
}

} // namespace cuvil::workbench
