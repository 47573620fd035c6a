//===- IrOpModel.h - The ops of one IR graph, for lists ---------*- C++ -*-===//
#ifndef CUVIL_WORKBENCH_IROPMODEL_H
#define CUVIL_WORKBENCH_IROPMODEL_H

#include "cuvil/Graph/IRGraph.h"

#include <QAbstractTableModel>
#include <QString>

namespace cuvil::workbench {

/// The graph of one pipeline step: built from its IR, compared with the
/// step before, and written as DOT for layout.
struct StepGraph {
  graph::IRGraph graph;
  std::string dot;
  QString error; ///< why no graph could be built, for the user
};

/// Builds the graph of `ir` (the first function with a body), marking what
/// changed since `previousIr` (empty: nothing marked). Runs cuvil-graph in a
/// child process and waits for it: call it off the GUI thread.
StepGraph buildStepGraph(const QString &ir, const QString &previousIr,
                         const graph::GraphOptions &options);

/// "m.py:12": the file name and line of `loc`; empty when it has no file.
QString shortLocation(const graph::SourceLoc &loc);

/// One row per graph node: op, kind, results, type, IR line, source
/// location (with the NameLoc's name, "node_7 (m.py:12)"), changed. Rows
/// are in IR order, so a node's id is its row.
class IrOpModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Op, Kind, Results, Type, IrLine, Source, Changed, ColumnCount };
  enum Role {
    NodeIdRole = Qt::UserRole + 1,
    IrLineRole,
    SourceFileRole,
    SourceLineRole,
    ChangedRole,
    LocNameRole, ///< the op's NameLoc name (an imported model's node)
  };

  using QAbstractTableModel::QAbstractTableModel;

  void setGraph(const graph::IRGraph &graph);
  const graph::IRGraph &graph() const { return ops; }

  /// The node drawn for IR line `line` (the op on that line, or the op
  /// whose region contains it); -1 when none.
  int nodeForIrLine(int line) const;
  /// Nodes whose location is `line` of a file named like `file` (same
  /// path, or same file name when the IR has a different absolute path).
  QList<int> nodesForSourceLine(const QString &file, int line) const;

  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role) const override;

private:
  graph::IRGraph ops;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_IROPMODEL_H
