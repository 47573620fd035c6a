//===- GraphLayout.h - Graphviz layouts as plain geometry --------*- C++
//-*-===//
//
// Lays out DOT with Graphviz's "dot" engine (libgvc) and returns positions,
// edge splines and cluster boxes in Qt's coordinates (y down, points), so a
// view can draw the graph with its own items. Safe to call from a worker
// thread; calls are serialized because Graphviz keeps global state.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_GRAPHLAYOUT_H
#define CUVIL_WORKBENCH_GRAPHLAYOUT_H

#include <QByteArray>
#include <QColor>
#include <QMetaType>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <QVector>

#include <string>

namespace cuvil::workbench {

struct LaidOutNode {
  int id = -1; ///< graph node id (from the DOT name "n<id>")
  QString label;
  QString op;
  QString kind;
  QString loc;     ///< "file:line", may be empty
  QString locName; ///< an imported model's node name, unshortened; may be empty
  int irLine = 0;
  bool changed = false;
  bool ellipse = false;
  QRectF rect;
  QColor fill;
};

struct LaidOutEdge {
  int from = -1;
  int to = -1;
  /// Cubic Bezier control points: start, then (c1, c2, end) triples.
  QVector<QPointF> points;
  bool hasArrow = false;
  QPointF arrowTip;
};

struct LaidOutCluster {
  QString label;
  int owner = -1; ///< node id of the op that owns the region
  QRectF rect;
  QPointF labelPos;
  int depth = 0;
};

struct GraphLayout {
  QRectF bounds;
  QVector<LaidOutNode> nodes;
  QVector<LaidOutEdge> edges;
  QVector<LaidOutCluster> clusters;
  double layoutMs = 0;
};

/// Whether this build has Graphviz.
bool graphLayoutAvailable();

/// Lays out `dot` with the "dot" engine. False with `error` set when the
/// DOT does not parse or Graphviz is missing.
bool layoutGraph(const std::string &dot, GraphLayout &layout, QString &error);

/// Renders `dot` with Graphviz to `format` ("svg", "png", "plain").
bool renderGraph(const std::string &dot, const char *format, QByteArray &out,
                 QString &error);

} // namespace cuvil::workbench

Q_DECLARE_METATYPE(cuvil::workbench::GraphLayout)

#endif // CUVIL_WORKBENCH_GRAPHLAYOUT_H
