//===- FlameGraphModel.h - A flame graph's frames as a tree -----*- C++ -*-===//
#ifndef CUVIL_WORKBENCH_FLAMEGRAPHMODEL_H
#define CUVIL_WORKBENCH_FLAMEGRAPHMODEL_H

#include "FlameGraph.h"

#include <QAbstractItemModel>

namespace cuvil::workbench {

/// The frames of a FlameTree (a call tree or the diff of two) as a tree:
/// children heaviest first. Columns: Frame, Location, Total, Self, Total %,
/// Count; in diff mode Frame, Location, Baseline, Current, Δ, Δ %. The
/// FlameGraphView paints the same FlameTree, which this model owns.
class FlameGraphModel : public QAbstractItemModel {
  Q_OBJECT
public:
  enum Column {
    Frame,
    Location,
    Total,
    Self,
    TotalPercent,
    Count,
    ColumnCount
  };
  enum DiffColumn { Baseline = 2, Current, Delta, DeltaPercent };
  enum Role {
    SortRole = Qt::UserRole + 1,
    NodeIdRole, ///< the frame's id in tree()
    FileRole,
    LineRole,
    TotalNsRole,
    DeltaNsRole,
    MatchRole, ///< true when the frame matches the search text
  };

  using QAbstractItemModel::QAbstractItemModel;

  void setTree(FlameTree tree);
  const FlameTree &tree() const { return flame; }
  /// Marks frames whose name contains `text`; returns the search result.
  const FlameTree::SearchResult &setSearchText(const QString &text);
  const FlameTree::SearchResult &searchResult() const { return found; }
  /// The index (column 0) of frame `node`; invalid for the root.
  QModelIndex indexOfNode(uint32_t node) const;
  uint32_t nodeOf(const QModelIndex &index) const;

  QModelIndex index(int row, int column,
                    const QModelIndex &parent = {}) const override;
  QModelIndex parent(const QModelIndex &child) const override;
  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role) const override;

private:
  FlameTree flame;
  std::vector<int> rowInParent;
  FlameTree::SearchResult found;
  QString searchText;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_FLAMEGRAPHMODEL_H
