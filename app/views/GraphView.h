//===- GraphView.h - Draws a laid-out IR graph with Qt items ----*- C++ -*-===//
#ifndef CUVIL_WORKBENCH_GRAPHVIEW_H
#define CUVIL_WORKBENCH_GRAPHVIEW_H

#include "GraphLayout.h"

#include <QGraphicsView>
#include <QHash>

class QLabel;

namespace cuvil::workbench {

class GraphNodeItem;

/// A QGraphicsView of one GraphLayout: nodes coloured by op kind, changed
/// nodes outlined, regions as clusters. Wheel zooms, dragging pans.
class GraphView : public QGraphicsView {
  Q_OBJECT
public:
  explicit GraphView(QWidget *parent = nullptr);

  /// Replaces the drawing; returns the milliseconds spent building items.
  /// `changedMeaning` names what outlined nodes are, for the legend.
  double
  setGraphLayout(const GraphLayout &layout,
                 const QString &changedMeaning = tr("changed by this pass"));
  void clearGraph(const QString &message = {});
  int nodeCount() const { return nodeItems.size(); }

  /// Selects (outlines) the given nodes and scrolls to the first.
  void selectNodes(const QList<int> &ids);
  QList<int> selectedNodes() const { return selection; }
  /// Selects the nodes whose op name contains `text`; returns how many.
  int search(const QString &text);
  /// Latency heat overlay: per node id, heat in [0, 1] and the kernel time
  /// (ns) of its source line; nodes not listed are drawn plain. Empty
  /// clears the overlay.
  void setHeat(const QHash<int, QPair<double, qint64>> &heatByNode);
  int heatedNodeCount() const { return heated; }

  /// Keeps `a` and `b` on the same zoom and scroll position (side-by-side
  /// graphs of one step).
  static void synchronize(GraphView *a, GraphView *b);

public slots:
  void zoomIn();
  void zoomOut();
  void fit();

signals:
  void nodeClicked(int id);
  /// The scale changed (zoom buttons, fit, wheel).
  void zoomed();

protected:
  void wheelEvent(QWheelEvent *event) override;
  void mousePressEvent(QMouseEvent *event) override;

private:
  void updateLegend(const GraphLayout &layout, const QString &changedMeaning);

  QHash<int, GraphNodeItem *> nodeItems;
  QLabel *legend = nullptr; ///< op kinds and their colours, top left
  QList<int> selection;
  int heated = 0;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_GRAPHVIEW_H
