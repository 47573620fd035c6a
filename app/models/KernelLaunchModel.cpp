//===- KernelLaunchModel.cpp - A step's GPU kernel launches, for a table --===//

#include "KernelLaunchModel.h"

#include "IrOpModel.h"

#include <QLocale>

namespace cuvil::workbench {
namespace {

QString bytesText(int bytes) {
  if (bytes < 0)
    return QObject::tr("?");
  if (bytes < 1024)
    return QObject::tr("%1 B").arg(bytes);
  return QObject::tr("%1 KiB").arg(bytes / 1024.0, 0, 'f', 1);
}

QString countText(long long count) {
  return count < 0 ? QObject::tr("?") : QLocale().toString(count);
}

QString extents(const int (&e)[3]) {
  return QString::fromStdString(graph::extentsText(e));
}

/// Shared memory per block: the static buffers plus the dynamic amount.
int sharedBytes(const graph::KernelLaunch &launch) {
  if (launch.staticSharedBytes < 0 || launch.dynamicSharedBytes < 0)
    return -1;
  return launch.staticSharedBytes + launch.dynamicSharedBytes;
}

} // namespace

void KernelLaunchModel::setLaunches(
    const std::vector<graph::KernelLaunch> &launches) {
  beginResetModel();
  rows = launches;
  endResetModel();
}

QString KernelLaunchModel::summary() const {
  if (rows.empty())
    return tr("No GPU kernel launches in this step's IR: kernels appear "
              "once convert-parallel-loops-to-gpu maps the loops onto "
              "blocks and threads (target cuda).");
  int withShared = 0, mostShared = 0;
  long long threads = 0;
  for (const graph::KernelLaunch &launch : rows) {
    int shared = sharedBytes(launch);
    if (shared != 0)
      ++withShared;
    mostShared =
        shared < 0 || mostShared < 0 ? -1 : std::max(mostShared, shared);
    long long n =
        graph::extentProduct(launch.grid) * graph::extentProduct(launch.block);
    threads = n < 0 || threads < 0 ? -1 : threads + n;
  }
  QString text = rows.size() == 1 ? tr("1 kernel launch")
                                  : tr("%1 kernel launches").arg(rows.size());
  if (withShared > 0)
    text += tr(", %1 with shared memory (%2 per block at most)")
                .arg(withShared)
                .arg(bytesText(mostShared));
  text += threads < 0 ? tr(", some extents decided at run time")
                      : tr(", %1 threads in all").arg(countText(threads));
  return text;
}

int KernelLaunchModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows.size());
}

int KernelLaunchModel::columnCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelLaunchModel::display(const graph::KernelLaunch &launch,
                                    int column) const {
  switch (column) {
  case Kernel: {
    // The kernel's own name; its module's is in the tooltip.
    QString kernel = QString::fromStdString(launch.kernel);
    return kernel.isEmpty() ? tr("gpu.launch (inline)")
                            : kernel.mid(kernel.lastIndexOf("::") + 2);
  }
  case Grid:
    return extents(launch.grid);
  case Block:
    return extents(launch.block);
  case Threads:
    return countText(graph::extentProduct(launch.block));
  case SharedMemory:
    return bytesText(sharedBytes(launch));
  case Ops:
    return QString::fromStdString(launch.ops);
  case IrLine:
    return launch.irLine;
  case Source:
    return shortLocation(launch.loc);
  }
  return {};
}

QString KernelLaunchModel::toolTip(const graph::KernelLaunch &launch,
                                   int column) const {
  switch (column) {
  case Kernel:
    return launch.kernel.empty()
               ? tr("A gpu.launch with its body inline: gpu-kernel-outlining "
                    "makes it a kernel of a gpu.module")
               : tr("@%1 of gpu.module @%2")
                     .arg(QString::fromStdString(launch.kernel)
                              .section("::", -1),
                          QString::fromStdString(launch.kernel)
                              .section("::", 0, -2));
  case Grid:
  case Block:
    return tr("Blocks in the grid and threads per block, x, y, z; \"?\" is "
              "an extent computed at run time (a dynamic shape, or one a "
              "later pass folds)");
  case SharedMemory:
    if (launch.staticSharedBytes < 0)
      return tr("The kernel is already a binary: its shared memory is no "
                "longer in the IR");
    return tr("%1 of static shared memory (workgroup buffers) and %2 "
              "requested at launch, per block")
        .arg(bytesText(launch.staticSharedBytes),
             bytesText(launch.dynamicSharedBytes));
  case Ops:
    return launch.ops.empty()
               ? tr("No fused op is named for this launch's location")
               : QString::fromStdString(launch.ops);
  case Source:
    if (!launch.loc.valid())
      return {};
    return QString("%1:%2:%3")
        .arg(QString::fromStdString(launch.loc.file))
        .arg(launch.loc.line)
        .arg(launch.loc.column);
  }
  return {};
}

QVariant KernelLaunchModel::data(const QModelIndex &index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() ||
      index.column() >= ColumnCount)
    return {};
  const graph::KernelLaunch &launch = rows[index.row()];
  switch (role) {
  case Qt::DisplayRole:
    return display(launch, index.column());
  case Qt::ToolTipRole: {
    QString tip = toolTip(launch, index.column());
    return tip.isEmpty() ? QVariant() : QVariant(tip);
  }
  case Qt::TextAlignmentRole:
    if (index.column() == Threads || index.column() == SharedMemory ||
        index.column() == IrLine)
      return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  case IrLineRole:
    return launch.irLine;
  case SourceFileRole:
    return QString::fromStdString(launch.loc.file);
  case SourceLineRole:
    return launch.loc.line;
  }
  return {};
}

QVariant KernelLaunchModel::headerData(int section, Qt::Orientation orientation,
                                       int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case Kernel:
    return tr("Kernel");
  case Grid:
    return tr("Grid");
  case Block:
    return tr("Block");
  case Threads:
    return tr("Threads/block");
  case SharedMemory:
    return tr("Shared memory");
  case Ops:
    return tr("Runs");
  case IrLine:
    return tr("IR line");
  case Source:
    return tr("Source");
  }
  return {};
}

} // namespace cuvil::workbench
