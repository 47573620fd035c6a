//===- GraphLayout.cpp - Graphviz layouts as plain geometry ---------------===//

#include "GraphLayout.h"

#include <QElapsedTimer>
#include <QMutex>
#include <QMutexLocker>

#ifdef CUVIL_HAVE_GRAPHVIZ
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#endif

namespace cuvil::workbench {

#ifdef CUVIL_HAVE_GRAPHVIZ
namespace {

QMutex &graphvizMutex() {
  static QMutex mutex;
  return mutex;
}

/// One Graphviz context for the process (plugin loading is slow).
GVC_t *context() {
  static GVC_t *gvc = gvContext();
  return gvc;
}

QString attr(void *object, const char *name) {
  char *value = agget(object, const_cast<char *>(name));
  return value ? QString::fromUtf8(value) : QString();
}

int nodeId(Agnode_t *node) {
  const char *name = agnameof(node);
  return name && name[0] == 'n' ? atoi(name + 1) : -1;
}

struct Flip {
  double height;
  QPointF operator()(pointf p) const { return QPointF(p.x, height - p.y); }
};

void collectClusters(Agraph_t *g, const Flip &flip, int depth,
                     QVector<LaidOutCluster> &out) {
  for (int i = 1; i <= GD_n_cluster(g); ++i) {
    Agraph_t *sub = GD_clust(g)[i];
    boxf bb = GD_bb(sub);
    LaidOutCluster c;
    c.rect =
        QRectF(flip(pointf{bb.LL.x, bb.UR.y}), flip(pointf{bb.UR.x, bb.LL.y}));
    c.label = attr(sub, "label");
    QString owner = attr(sub, "owner");
    c.owner = owner.startsWith('n') ? owner.mid(1).toInt() : -1;
    c.depth = depth;
    if (GD_label(sub))
      c.labelPos = flip(GD_label(sub)->pos);
    out.push_back(c);
    collectClusters(sub, flip, depth + 1, out);
  }
}

Agraph_t *readDot(const std::string &dot, QString &error) {
  Agraph_t *g = agmemread(dot.c_str());
  if (!g)
    error = "Graphviz could not read the graph (the DOT text does not parse)";
  return g;
}

} // namespace

bool graphLayoutAvailable() { return true; }

bool layoutGraph(const std::string &dot, GraphLayout &layout, QString &error) {
  QMutexLocker lock(&graphvizMutex());
  QElapsedTimer clock;
  clock.start();
  layout = GraphLayout();
  GVC_t *gvc = context();
  Agraph_t *g = readDot(dot, error);
  if (!g)
    return false;
  if (gvLayout(gvc, g, "dot") != 0) {
    agclose(g);
    error = "Graphviz could not lay out the graph (the dot layout plugin is "
            "missing; install libgvc6)";
    return false;
  }
  boxf bb = GD_bb(g);
  Flip flip{bb.UR.y};
  layout.bounds = QRectF(0, 0, bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y);

  for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n)) {
    LaidOutNode node;
    node.id = nodeId(n);
    QPointF center = flip(ND_coord(n));
    double w = ND_width(n) * 72.0, h = ND_height(n) * 72.0;
    node.rect = QRectF(center.x() - w / 2, center.y() - h / 2, w, h);
    node.label = attr(n, "label").replace("\\n", "\n");
    node.op = attr(n, "op");
    node.kind = attr(n, "kind");
    node.loc = attr(n, "loc");
    node.locName = attr(n, "locname");
    node.irLine = attr(n, "irline").toInt();
    node.changed = attr(n, "changed") == "true";
    node.ellipse = attr(n, "shape") == "ellipse";
    node.fill = QColor(attr(n, "fillcolor"));
    layout.nodes.push_back(node);

    for (Agedge_t *e = agfstout(g, n); e; e = agnxtout(g, e)) {
      LaidOutEdge edge;
      edge.from = nodeId(agtail(e));
      edge.to = nodeId(aghead(e));
      splines *spl = ED_spl(e);
      if (spl && spl->size > 0) {
        const bezier &bz = spl->list[0];
        for (int i = 0; i < bz.size; ++i)
          edge.points.push_back(flip(bz.list[i]));
        if (bz.eflag) {
          edge.hasArrow = true;
          edge.arrowTip = flip(bz.ep);
        }
      }
      layout.edges.push_back(edge);
    }
  }
  collectClusters(g, flip, 0, layout.clusters);
  gvFreeLayout(gvc, g);
  agclose(g);
  layout.layoutMs = clock.nsecsElapsed() / 1e6;
  return true;
}

bool renderGraph(const std::string &dot, const char *format, QByteArray &out,
                 QString &error) {
  QMutexLocker lock(&graphvizMutex());
  GVC_t *gvc = context();
  Agraph_t *g = readDot(dot, error);
  if (!g)
    return false;
  bool ok = gvLayout(gvc, g, "dot") == 0;
  char *data = nullptr;
  unsigned int length = 0;
  if (ok)
    ok = gvRenderData(gvc, g, format, &data, &length) == 0;
  if (ok)
    out = QByteArray(data, static_cast<int>(length));
  else
    error = QString("Graphviz could not render the graph as %1 (no renderer "
                    "plugin for it; install libgvc6 with its plugins)")
                .arg(format);
  if (data)
    gvFreeRenderData(data);
  gvFreeLayout(gvc, g);
  agclose(g);
  return ok;
}

#else

bool graphLayoutAvailable() { return false; }

bool layoutGraph(const std::string &, GraphLayout &layout, QString &error) {
  layout = GraphLayout();
  error = "this Workbench was built without Graphviz; install "
          "libgraphviz-dev and rebuild to see IR graphs";
  return false;
}

bool renderGraph(const std::string &, const char *, QByteArray &,
                 QString &error) {
  error = "this Workbench was built without Graphviz; install "
          "libgraphviz-dev and rebuild to export graph images";
  return false;
}

#endif

} // namespace cuvil::workbench
