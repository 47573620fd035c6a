//===- CompilationListModel.h - The compilations a run made ----*- C++ -*-===//
#ifndef CUVIL_WORKBENCH_COMPILATIONLISTMODEL_H
#define CUVIL_WORKBENCH_COMPILATIONLISTMODEL_H

#include "WorkbenchTypes.h"

#include <QAbstractTableModel>

namespace cuvil::workbench {

/// One row per compilation: function, input shapes, target, passes,
/// compile time.
class CompilationListModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Function, Inputs, Target, Passes, CompileMs, ColumnCount };

  using QAbstractTableModel::QAbstractTableModel;

  void clear();
  void add(const CompilationRecord &record);
  const CompilationRecord *record(int row) const;
  const QVector<CompilationRecord> &records() const { return list; }

  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role) const override;

private:
  QVector<CompilationRecord> list;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_COMPILATIONLISTMODEL_H
