//===- IrOpModel.cpp - The ops of one IR graph, for lists and cross-links -===//

#include "IrOpModel.h"

#include "GraphTool.h"

#include <QBrush>
#include <QColor>
#include <QFileInfo>

namespace cuvil::workbench {
namespace {

/// "m.py:12"; with a NameLoc (an imported model's node) "node_7 (m.py:12)",
/// or the name alone.
QString sourceText(const graph::Node &node) {
  QString where = shortLocation(node.loc);
  if (node.locName.empty())
    return where;
  QString name = QString::fromStdString(node.locName);
  return where.isEmpty() ? name : QString("%1 (%2)").arg(name, where);
}

} // namespace

QString shortLocation(const graph::SourceLoc &loc) {
  if (!loc.valid())
    return {};
  return QString("%1:%2")
      .arg(QFileInfo(QString::fromStdString(loc.file)).fileName())
      .arg(loc.line);
}

StepGraph buildStepGraph(const QString &ir, const QString &previousIr,
                         const graph::GraphOptions &options) {
  StepGraph result;
  if (!runGraphTool(ir, previousIr, options, result.graph, result.error))
    return result;
  graph::DotOptions dotOptions;
  // Crossing minimization and curved routing explode on big or edge-dense
  // graphs (minutes for a 400-block CFG); bounded, they take a second.
  if (result.graph.nodes.size() + result.graph.edges.size() > 800) {
    dotOptions.splines = "line";
    dotOptions.fastLayout = true;
  }
  result.dot = graph::toDot(result.graph, dotOptions);
  return result;
}

void IrOpModel::setGraph(const graph::IRGraph &graph) {
  beginResetModel();
  ops = graph;
  endResetModel();
}

int IrOpModel::nodeForIrLine(int line) const {
  int best = -1;
  for (const graph::Node &node : ops.nodes) {
    if (node.kind == graph::OpKind::Argument)
      continue;
    if (node.irLine == line)
      return node.id;
    // Lines inside a region (block labels, closing braces) belong to the
    // nearest op above them.
    if (node.irLine < line)
      best = node.id;
  }
  return best;
}

QList<int> IrOpModel::nodesForSourceLine(const QString &file, int line) const {
  QList<int> nodes;
  QString name = QFileInfo(file).fileName();
  for (const graph::Node &node : ops.nodes) {
    if (node.kind == graph::OpKind::Argument || node.loc.line != line)
      continue;
    QString nodeFile = QString::fromStdString(node.loc.file);
    if (nodeFile == file || QFileInfo(nodeFile).fileName() == name)
      nodes << node.id;
  }
  return nodes;
}

int IrOpModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : static_cast<int>(ops.nodes.size());
}

int IrOpModel::columnCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant IrOpModel::data(const QModelIndex &index, int role) const {
  if (!index.isValid() || index.row() >= rowCount())
    return {};
  const graph::Node &n = ops.nodes[index.row()];
  QString file = QString::fromStdString(n.loc.file);
  switch (role) {
  case Qt::DisplayRole:
    switch (index.column()) {
    case Op:
      return QString::fromStdString(n.opName);
    case Kind:
      return QString(graph::opKindName(n.kind));
    case Results:
      return QString::fromStdString(n.results);
    case Type:
      return QString::fromStdString(n.type);
    case IrLine:
      return n.irLine;
    case Source:
      return sourceText(n);
    case Changed:
      return n.changed ? tr("changed") : QString();
    }
    return {};
  case Qt::DecorationRole:
    if (index.column() == Op)
      return QColor(graph::opKindColor(n.kind));
    return {};
  case Qt::ForegroundRole:
    if (n.changed && index.column() == Changed)
      return QBrush(QColor(0xd6, 0x27, 0x28));
    return {};
  case NodeIdRole:
    return n.id;
  case IrLineRole:
    return n.irLine;
  case SourceFileRole:
    return file;
  case SourceLineRole:
    return n.loc.line;
  case LocNameRole:
    return QString::fromStdString(n.locName);
  case ChangedRole:
    return n.changed;
  }
  return {};
}

QVariant IrOpModel::headerData(int section, Qt::Orientation orientation,
                               int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case Op:
    return tr("Op");
  case Kind:
    return tr("Kind");
  case Results:
    return tr("Results");
  case Type:
    return tr("Type");
  case IrLine:
    return tr("IR line");
  case Source:
    return tr("Source");
  case Changed:
    return tr("Changed");
  }
  return {};
}

} // namespace cuvil::workbench
