//===- OpTableModel.h - Per-op table, with diff columns ---------*- C++ -*-===//
#ifndef CUVIL_WORKBENCH_OPTABLEMODEL_H
#define CUVIL_WORKBENCH_OPTABLEMODEL_H

#include "cuvil/Profiler/Analysis.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QSortFilterProxyModel>

#include <vector>

namespace cuvil::workbench {

namespace prof = cuvil::profiler;

/// One row per op (profiler::OpRow): count, total, self, p50, p99, max.
/// With a baseline the table also shows the baseline's total and the
/// change. The Location column names an imported model's node before the
/// source location. Display text is formatted; SortRole gives numbers, so an
/// OpTableProxy sorts numerically. LocRole/OpIdRole/NameRole let a click
/// jump to the IR op, graph node and Python line.
class OpTableModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column {
    Op,
    Kind,
    Location,
    Count,
    Total,
    Self,
    SelfPercent,
    P50,
    P99,
    Max,
    BaselineTotal, ///< diff mode only
    DeltaTotal,    ///< diff mode only
    ColumnCount
  };
  enum Role {
    SortRole = Qt::UserRole + 1,
    LocRole,  ///< "file:line:col" of the IR op, empty if none
    OpIdRole, ///< the IR op id, -1 if none
    NameRole, ///< the op or kernel name
    KindRole, ///< the event kind's name ("cpu_kernel")
    TotalNsRole,
    NodeRole, ///< an imported model's node ("stem.0/convolution"), or empty
  };

  using QAbstractTableModel::QAbstractTableModel;

  /// Replaces the rows. `baseline` non-empty turns on the diff columns;
  /// rows match baseline rows by name and location (op ids differ between
  /// compilations), or by name alone when the baseline has it once.
  void setRows(std::vector<prof::OpRow> rows,
               std::vector<prof::OpRow> baseline = {});
  void clear();
  const prof::OpRow &row(int r) const { return rowList[size_t(r)]; }
  bool hasBaseline() const { return diff; }
  /// The row of the op with this loc (or name when loc is empty), or -1.
  int rowForLocation(const QString &loc) const;

  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role) const override;

private:
  std::vector<prof::OpRow> rowList;
  std::vector<int64_t> baselineTotal; ///< -1: not in the baseline
  int64_t selfSum = 0;
  bool diff = false;
};

/// Sorts numerically (SortRole) and filters by a case-insensitive text
/// matched against the op name, location and model node.
class OpTableProxy : public QSortFilterProxyModel {
  Q_OBJECT
public:
  explicit OpTableProxy(QObject *parent = nullptr);
  void setFilterText(const QString &text);

protected:
  bool filterAcceptsRow(int sourceRow,
                        const QModelIndex &sourceParent) const override;

private:
  QString text;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_OPTABLEMODEL_H
