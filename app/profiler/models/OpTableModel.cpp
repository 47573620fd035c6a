//===- OpTableModel.cpp - Per-op table of a profile -----------------------===//

#include "OpTableModel.h"

#include "ProfileData.h"

#include <QBrush>
#include <QColor>

namespace cuvil::workbench {
namespace {

/// The Location cell: "m.py:4:9"; an imported model's row names its node
/// first, "stem.0/convolution (cnn.py:37:0)", and a model file's location
/// without a line is its name alone ("/stem/Conv (resnet.onnx)").
QString locationText(const prof::OpRow &r) {
  QString where = shortLocation(QString::fromStdString(r.loc));
  if (where.endsWith(":0:0"))
    where.chop(4);
  if (r.node.empty())
    return where;
  QString node = QString::fromStdString(r.node);
  return where.isEmpty() ? node : QString("%1 (%2)").arg(node, where);
}

} // namespace

void OpTableModel::setRows(std::vector<prof::OpRow> rows,
                           std::vector<prof::OpRow> baseline) {
  beginResetModel();
  rowList = std::move(rows);
  diff = !baseline.empty();
  baselineTotal.assign(rowList.size(), -1);
  selfSum = 0;
  for (const prof::OpRow &r : rowList)
    selfSum += r.selfNs;
  if (diff) {
    // Op ids are numbered per compilation, so two runs are matched by the
    // kernel name (which names the IR ops it runs) and the source location;
    // a name alone matches when the baseline has it only once.
    QHash<QString, int64_t> byNameAndLoc;
    QHash<QString, int> nameCount;
    QHash<QString, int64_t> byName;
    for (const prof::OpRow &b : baseline) {
      QString name = displayText(b.name);
      byNameAndLoc[name + '\n' + QString::fromStdString(b.loc)] += b.totalNs;
      nameCount[name] += 1;
      byName[name] += b.totalNs;
    }
    for (size_t i = 0; i < rowList.size(); ++i) {
      QString name = displayText(rowList[i].name);
      QString key = name + '\n' + QString::fromStdString(rowList[i].loc);
      if (byNameAndLoc.contains(key))
        baselineTotal[i] = byNameAndLoc.value(key);
      else if (nameCount.value(name) == 1)
        baselineTotal[i] = byName.value(name);
    }
  }
  endResetModel();
}

void OpTableModel::clear() { setRows({}); }

int OpTableModel::rowForLocation(const QString &loc) const {
  for (size_t i = 0; i < rowList.size(); ++i) {
    const prof::OpRow &r = rowList[i];
    if ((r.loc.empty() ? displayText(r.name) : QString::fromStdString(r.loc)) ==
        loc)
      return int(i);
  }
  return -1;
}

int OpTableModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : int(rowList.size());
}

int OpTableModel::columnCount(const QModelIndex &parent) const {
  if (parent.isValid())
    return 0;
  return diff ? ColumnCount : BaselineTotal;
}

QVariant OpTableModel::data(const QModelIndex &index, int role) const {
  if (!index.isValid() || index.row() >= int(rowList.size()))
    return {};
  const prof::OpRow &r = rowList[size_t(index.row())];
  int64_t base = baselineTotal[size_t(index.row())];
  double selfShare = selfSum > 0 ? 100.0 * double(r.selfNs) / selfSum : 0.0;
  switch (role) {
  case LocRole:
    return QString::fromStdString(r.loc);
  case NodeRole:
    return QString::fromStdString(r.node);
  case OpIdRole:
    return qint64(r.opId);
  case NameRole:
    return displayText(r.name);
  case KindRole:
    return QString(prof::eventKindName(r.kind));
  case TotalNsRole:
    return qint64(r.totalNs);
  case Qt::TextAlignmentRole:
    if (index.column() >= Count)
      return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  case Qt::ToolTipRole:
    if (index.column() == Location)
      return r.node.empty() ? QString::fromStdString(r.loc)
                            : QString("%1\nnode %2")
                                  .arg(QString::fromStdString(r.loc),
                                       QString::fromStdString(r.node));
    if (index.column() == Op)
      return displayText(r.name) + (r.opId != prof::kNoOp
                                        ? QString(" (IR op #%1)").arg(r.opId)
                                        : QString());
    return {};
  case Qt::ForegroundRole:
    if (index.column() == DeltaTotal && base >= 0 && r.totalNs != base)
      return QBrush(r.totalNs > base ? QColor(190, 30, 30)
                                     : QColor(30, 80, 190));
    return {};
  case SortRole:
    switch (index.column()) {
    case Op:
      return displayText(r.name);
    case Kind:
      return QString(prof::eventKindName(r.kind));
    case Location:
      return QString::fromStdString(r.loc);
    case Count:
      return quint64(r.count);
    case Total:
      return qint64(r.totalNs);
    case Self:
    case SelfPercent:
      return qint64(r.selfNs);
    case P50:
      return qint64(r.p50Ns);
    case P99:
      return qint64(r.p99Ns);
    case Max:
      return qint64(r.maxNs);
    case BaselineTotal:
      return qint64(base);
    case DeltaTotal:
      return qint64(base < 0 ? r.totalNs : r.totalNs - base);
    }
    return {};
  case Qt::DisplayRole:
    switch (index.column()) {
    case Op:
      return displayText(r.name);
    case Kind:
      return QString(prof::eventKindName(r.kind));
    case Location:
      return locationText(r);
    case Count:
      return QString::number(r.count);
    case Total:
      return formatDuration(r.totalNs);
    case Self:
      return formatDuration(r.selfNs);
    case SelfPercent:
      return QString("%1%").arg(selfShare, 0, 'f', 1);
    case P50:
      return formatDuration(r.p50Ns);
    case P99:
      return formatDuration(r.p99Ns);
    case Max:
      return formatDuration(r.maxNs);
    case BaselineTotal:
      return base < 0 ? QString("new") : formatDuration(base);
    case DeltaTotal:
      return base < 0 ? formatDelta(r.totalNs) : formatDelta(r.totalNs - base);
    }
    return {};
  default:
    return {};
  }
}

QVariant OpTableModel::headerData(int section, Qt::Orientation orientation,
                                  int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  static const char *names[] = {"Op",    "Kind", "Location", "Count",
                                "Total", "Self", "Self %",   "p50",
                                "p99",   "Max",  "Baseline", "Δ Total"};
  if (section < 0 || section >= ColumnCount)
    return {};
  return QString::fromUtf8(names[section]);
}

OpTableProxy::OpTableProxy(QObject *parent) : QSortFilterProxyModel(parent) {
  setSortRole(OpTableModel::SortRole);
  setDynamicSortFilter(true);
}

void OpTableProxy::setFilterText(const QString &value) {
  text = value;
  invalidateFilter();
}

bool OpTableProxy::filterAcceptsRow(int sourceRow,
                                    const QModelIndex &sourceParent) const {
  if (text.isEmpty())
    return true;
  QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
  return index.data(OpTableModel::NameRole)
             .toString()
             .contains(text, Qt::CaseInsensitive) ||
         index.data(OpTableModel::LocRole)
             .toString()
             .contains(text, Qt::CaseInsensitive) ||
         index.data(OpTableModel::NodeRole)
             .toString()
             .contains(text, Qt::CaseInsensitive);
}

} // namespace cuvil::workbench
