//===- KernelLaunchModel.h - A step's GPU kernel launches -------*- C++ -*-===//
//
// The kernel table of the compile page: one row per kernel launch of the
// shown step's IR (read off it by cuvil-graph, see graph::KernelLaunch),
// with its grid, block, threads, shared memory, the fused ops it runs and
// where it comes from. Empty before the loops are mapped onto the GPU and
// for other targets.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_KERNELLAUNCHMODEL_H
#define CUVIL_WORKBENCH_KERNELLAUNCHMODEL_H

#include "cuvil/Graph/IRGraph.h"

#include <QAbstractTableModel>
#include <QString>

#include <vector>

namespace cuvil::workbench {

class KernelLaunchModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column {
    Kernel,
    Grid,
    Block,
    Threads,
    SharedMemory,
    Ops,
    IrLine,
    Source,
    ColumnCount
  };
  enum Role {
    IrLineRole = Qt::UserRole + 1,
    SourceFileRole,
    SourceLineRole,
  };

  using QAbstractTableModel::QAbstractTableModel;

  void setLaunches(const std::vector<graph::KernelLaunch> &launches);
  const std::vector<graph::KernelLaunch> &launches() const { return rows; }
  /// "7 kernel launches, 1 with shared memory (8.3 KiB per block at most),
  /// 1,792 threads in all"; what the table's empty state says otherwise.
  QString summary() const;

  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role) const override;

private:
  QVariant display(const graph::KernelLaunch &launch, int column) const;
  QString toolTip(const graph::KernelLaunch &launch, int column) const;

  std::vector<graph::KernelLaunch> rows;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_KERNELLAUNCHMODEL_H
