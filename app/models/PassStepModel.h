//===- PassStepModel.h - The pipeline of one compilation, step by step -*- C++
//-*-===//
#ifndef CUVIL_WORKBENCH_PASSSTEPMODEL_H
#define CUVIL_WORKBENCH_PASSSTEPMODEL_H

#include "WorkbenchTypes.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

namespace cuvil::workbench {

/// One row per step: the input IR, then every pass with its stage, wall
/// time and whether it changed the IR.
class PassStepModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Step, Pass, Stage, Milliseconds, Changed, ColumnCount };
  enum Role { IrRole = Qt::UserRole + 1, ChangedRole, StepRole };

  using QAbstractTableModel::QAbstractTableModel;

  void setSteps(const QVector<PassStep> &steps);
  const QVector<PassStep> &steps() const { return list; }

  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role) const override;

private:
  QVector<PassStep> list;
};

/// Hides passes that left the IR unchanged (the input step always shows).
class ChangedStepFilter : public QSortFilterProxyModel {
  Q_OBJECT
public:
  using QSortFilterProxyModel::QSortFilterProxyModel;
  void setHideUnchanged(bool hide);
  bool hideUnchanged() const { return hiding; }

protected:
  bool filterAcceptsRow(int sourceRow,
                        const QModelIndex &sourceParent) const override;

private:
  bool hiding = false;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_PASSSTEPMODEL_H
