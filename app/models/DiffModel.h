//===- DiffModel.h - Side-by-side line diff of two IR snapshots -*- C++ -*-===//
#ifndef CUVIL_WORKBENCH_DIFFMODEL_H
#define CUVIL_WORKBENCH_DIFFMODEL_H

#include <QAbstractTableModel>
#include <QStringList>
#include <QVector>

namespace cuvil::workbench {

/// One row of a side-by-side diff. Line numbers are 1-based, 0 for none.
struct DiffRow {
  enum Kind { Same, Removed, Added, Modified };
  Kind kind = Same;
  int leftLine = 0;
  int rightLine = 0;
};

/// Line diff (Myers, shortest edit script). A removal followed by an
/// addition pairs up as Modified rows. Past `maxEdits` differences the rest
/// is shown as one replaced block.
QVector<DiffRow> diffLines(const QStringList &left, const QStringList &right,
                           int maxEdits = 2500);

/// Before/after columns of a diff: line number and text on each side.
class DiffModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { LeftLine, LeftText, RightLine, RightText, ColumnCount };
  enum Role { KindRole = Qt::UserRole + 1 };

  using QAbstractTableModel::QAbstractTableModel;

  void setTexts(const QString &before, const QString &after);
  int changedRows() const { return changes; }
  /// The row showing line `line` of the after text, -1 when none.
  int rowForRightLine(int line) const;

  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role) const override;

private:
  QStringList left, right;
  QVector<DiffRow> rows;
  int changes = 0;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_DIFFMODEL_H
