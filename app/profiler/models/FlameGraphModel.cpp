//===- FlameGraphModel.cpp - The flame graph's frames as a tree model -----===//

#include "FlameGraphModel.h"

#include "ProfileData.h"

#include <QBrush>
#include <QFont>

namespace cuvil::workbench {

void FlameGraphModel::setTree(FlameTree tree) {
  beginResetModel();
  flame = std::move(tree);
  rowInParent.assign(flame.size(), 0);
  for (const FlameTree::Node &n : flame.nodes())
    for (size_t i = 0; i < n.children.size(); ++i)
      rowInParent[n.children[i]] = int(i);
  found = flame.search(searchText);
  endResetModel();
}

const FlameTree::SearchResult &
FlameGraphModel::setSearchText(const QString &text) {
  searchText = text;
  found = flame.search(text);
  if (flame.size() > 1)
    emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
  // Nested rows change too; views repaint on layoutChanged without moves.
  emit layoutAboutToBeChanged();
  emit layoutChanged();
  return found;
}

QModelIndex FlameGraphModel::indexOfNode(uint32_t node) const {
  if (node == 0 || node >= flame.size())
    return {};
  return createIndex(rowInParent[node], 0, quintptr(node));
}

uint32_t FlameGraphModel::nodeOf(const QModelIndex &index) const {
  return index.isValid() ? uint32_t(index.internalId()) : 0;
}

QModelIndex FlameGraphModel::index(int row, int column,
                                   const QModelIndex &parent) const {
  if (row < 0 || column < 0 || column >= ColumnCount)
    return {};
  if (parent.isValid() && parent.column() != 0)
    return {};
  const FlameTree::Node &p = flame.node(nodeOf(parent));
  if (row >= int(p.children.size()))
    return {};
  return createIndex(row, column, quintptr(p.children[size_t(row)]));
}

QModelIndex FlameGraphModel::parent(const QModelIndex &child) const {
  uint32_t node = nodeOf(child);
  if (node == 0)
    return {};
  return indexOfNode(flame.node(node).parent);
}

int FlameGraphModel::rowCount(const QModelIndex &parent) const {
  if (parent.isValid() && parent.column() != 0)
    return 0;
  return int(flame.node(nodeOf(parent)).children.size());
}

int FlameGraphModel::columnCount(const QModelIndex &) const {
  return ColumnCount;
}

QVariant FlameGraphModel::data(const QModelIndex &index, int role) const {
  if (!index.isValid())
    return {};
  uint32_t id = nodeOf(index);
  const FlameTree::Node &n = flame.node(id);
  int64_t rootWeight = flame.weight(0);
  bool diff = flame.isDiff();
  auto percent = [](int64_t part, int64_t whole) {
    return whole > 0 ? 100.0 * double(part) / double(whole) : 0.0;
  };
  double deltaPercent = n.baselineTotalNs > 0
                            ? percent(n.deltaTotalNs(), n.baselineTotalNs)
                            : (n.totalNs > 0 ? 100.0 : 0.0);
  switch (role) {
  case NodeIdRole:
    return quint32(id);
  case FileRole:
    return n.file;
  case LineRole:
    return n.line;
  case TotalNsRole:
    return qint64(n.totalNs);
  case DeltaNsRole:
    return qint64(n.deltaTotalNs());
  case MatchRole:
    return found.isMatch.size() > id && found.isMatch[id];
  case Qt::TextAlignmentRole:
    if (index.column() >= Total)
      return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  case Qt::FontRole:
    if (index.column() == Frame && found.isMatch.size() > id &&
        found.isMatch[id]) {
      QFont bold;
      bold.setBold(true);
      return bold;
    }
    return {};
  case Qt::ForegroundRole:
    if (diff && (index.column() == Delta || index.column() == DeltaPercent) &&
        n.deltaTotalNs() != 0)
      return QBrush(n.deltaTotalNs() > 0 ? QColor(190, 30, 30)
                                         : QColor(30, 80, 190));
    return {};
  case Qt::ToolTipRole:
    if (index.column() == Frame || index.column() == Location)
      return n.file.isEmpty() ? n.name : n.name + "\n" + flame.location(id);
    return {};
  case SortRole:
  case Qt::DisplayRole: {
    bool sort = role == SortRole;
    switch (index.column()) {
    case Frame:
      return n.name;
    case Location:
      return sort ? flame.location(id) : shortLocation(flame.location(id));
    }
    if (diff) {
      switch (index.column()) {
      case Baseline:
        return sort ? QVariant(qint64(n.baselineTotalNs))
                    : QVariant(formatDuration(n.baselineTotalNs));
      case Current:
        return sort ? QVariant(qint64(n.totalNs))
                    : QVariant(formatDuration(n.totalNs));
      case Delta:
        return sort ? QVariant(qint64(n.deltaTotalNs()))
                    : QVariant(formatDelta(n.deltaTotalNs()));
      case DeltaPercent:
        if (sort)
          return deltaPercent;
        if (n.baselineTotalNs == 0 && n.totalNs > 0)
          return QString("new");
        return QString("%1%2%")
            .arg(deltaPercent > 0 ? "+" : "")
            .arg(deltaPercent, 0, 'f', 1);
      }
      return {};
    }
    switch (index.column()) {
    case Total:
      return sort ? QVariant(qint64(n.totalNs))
                  : QVariant(formatDuration(n.totalNs));
    case Self:
      return sort ? QVariant(qint64(n.selfNs))
                  : QVariant(formatDuration(n.selfNs));
    case TotalPercent: {
      double share = percent(n.totalNs, rootWeight);
      return sort ? QVariant(share)
                  : QVariant(QString("%1%").arg(share, 0, 'f', 1));
    }
    case Count:
      return sort ? QVariant(quint64(n.count))
                  : QVariant(QString::number(n.count));
    }
    return {};
  }
  default:
    return {};
  }
}

QVariant FlameGraphModel::headerData(int section, Qt::Orientation orientation,
                                     int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 ||
      section >= ColumnCount)
    return {};
  static const char *plain[] = {"Frame", "Location", "Total",
                                "Self",  "Total %",  "Count"};
  static const char *diff[] = {"Frame",   "Location", "Baseline",
                               "Current", "Δ Total",  "Δ %"};
  return QString::fromUtf8(flame.isDiff() ? diff[section] : plain[section]);
}

} // namespace cuvil::workbench
