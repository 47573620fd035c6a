//===- GraphView.cpp - Draws a laid-out IR graph with Qt items ------------===//

#include "GraphView.h"

#include "LatencyHeat.h"

#include <QElapsedTimer>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QLabel>
#include <QMap>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <QStyleOptionGraphicsItem>
#include <QWheelEvent>

#include <cmath>

namespace cuvil::workbench {

/// One op: a filled box (ellipse for arguments) with its label.
class GraphNodeItem : public QGraphicsItem {
public:
  explicit GraphNodeItem(const LaidOutNode &node) : node(node) {
    updateToolTip();
    setZValue(2);
  }
  QRectF boundingRect() const override {
    return node.rect.adjusted(-7, -7, 7, 7);
  }
  /// Heat in [0, 1] (negative: none) and the kernel time behind it.
  void setHeat(double value, qint64 ns) {
    heat = value;
    heatNs = ns;
    updateToolTip();
    update();
  }
  void updateToolTip() {
    // The label shortens a long node name; the tooltip gives it whole.
    QString tip =
        QString("%1\nIR line %2%3%4")
            .arg(node.label)
            .arg(node.irLine)
            .arg(node.loc.isEmpty() ? QString() : "\n" + node.loc)
            .arg(node.locName.isEmpty() ? QString() : "\nnode " + node.locName);
    if (heat >= 0)
      tip += QString("\nkernel time of this line: %1 us (%2% of the hottest)")
                 .arg(heatNs / 1000.0, 0, 'f', 1)
                 .arg(heat * 100.0, 0, 'f', 0);
    setToolTip(tip);
  }
  void paint(QPainter *painter, const QStyleOptionGraphicsItem *option,
             QWidget *) override {
    if (heat >= 0) {
      // A halo in the heat ramp's colour: the op's kind stays readable.
      painter->setPen(Qt::NoPen);
      QColor halo = heatColor(heat);
      halo.setAlpha(90 + int(150 * heat));
      painter->setBrush(halo);
      painter->drawRoundedRect(node.rect.adjusted(-6, -6, 6, 6), 8, 8);
    }
    QPen pen(QColor(0x44, 0x44, 0x44), 1);
    if (node.changed)
      pen = QPen(QColor(0xd6, 0x27, 0x28), 2.5);
    if (selected)
      pen = QPen(QColor(0x10, 0x60, 0xff), 3.5);
    painter->setPen(pen);
    painter->setBrush(node.fill.isValid() ? node.fill : QColor(Qt::white));
    if (node.ellipse)
      painter->drawEllipse(node.rect);
    else
      painter->drawRoundedRect(node.rect, 4, 4);
    // Text is unreadable when zoomed far out; skip it there.
    if (option->levelOfDetailFromTransform(painter->worldTransform()) < 0.3)
      return;
    painter->setPen(Qt::black);
    painter->setFont(labelFont());
    painter->drawText(node.rect, Qt::AlignCenter, node.label);
  }
  static const QFont &labelFont() {
    static QFont font = [] {
      QFont f("Helvetica");
      f.setPointSizeF(7.5);
      return f;
    }();
    return font;
  }
  void setSelectedNode(bool on) {
    selected = on;
    update();
  }
  const LaidOutNode &data() const { return node; }

private:
  LaidOutNode node;
  bool selected = false;
  double heat = -1;
  qint64 heatNs = 0;
};

GraphView::GraphView(QWidget *parent) : QGraphicsView(parent) {
  setScene(new QGraphicsScene(this));
  setDragMode(QGraphicsView::ScrollHandDrag);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setBackgroundBrush(QColor(0xfb, 0xfb, 0xfb));
  legend = new QLabel(viewport());
  legend->setAttribute(Qt::WA_TransparentForMouseEvents);
  legend->setStyleSheet("QLabel { background: rgba(255, 255, 255, 220); "
                        "border: 1px solid #cccccc; padding: 3px; }");
  legend->move(6, 6);
  legend->hide();
}

void GraphView::updateLegend(const GraphLayout &layout,
                             const QString &changedMeaning) {
  // The kinds present in this graph, alphabetically.
  QMap<QString, QColor> kinds;
  bool changed = false;
  for (const LaidOutNode &n : layout.nodes) {
    kinds.insert(n.kind, n.fill);
    changed |= n.changed;
  }
  QString html;
  for (auto it = kinds.begin(); it != kinds.end(); ++it)
    html += QString("<span style='background:%1'>&nbsp;&nbsp;&nbsp;</span>"
                    "&nbsp;%2&nbsp;&nbsp;")
                .arg(it.value().name(), it.key());
  if (changed)
    html += "<span style='color:#d62728'><b>&#9633;</b> " +
            changedMeaning.toHtmlEscaped() + "</span>";
  legend->setText(html);
  legend->adjustSize();
  legend->setVisible(!kinds.isEmpty());
}

void GraphView::clearGraph(const QString &message) {
  legend->hide();
  scene()->clear();
  nodeItems.clear();
  selection.clear();
  if (!message.isEmpty())
    scene()->addText(message);
}

double GraphView::setGraphLayout(const GraphLayout &layout,
                                 const QString &changedMeaning) {
  QElapsedTimer clock;
  clock.start();
  clearGraph();
  QGraphicsScene *s = scene();
  s->setItemIndexMethod(QGraphicsScene::NoIndex);
  QFont clusterFont("Helvetica");
  clusterFont.setPointSizeF(8);
  for (const LaidOutCluster &c : layout.clusters) {
    auto *box =
        s->addRect(c.rect, QPen(QColor(0x7f, 0x7f, 0xb2), 1, Qt::DashLine),
                   QColor(0x7f, 0x7f, 0xb2, 18 + 10 * c.depth));
    box->setZValue(0);
    auto *label = s->addSimpleText(c.label, clusterFont);
    label->setBrush(QColor(0x55, 0x55, 0x88));
    QRectF r = label->boundingRect();
    label->setPos(c.labelPos.x() - r.width() / 2, c.rect.top() + 2);
    label->setZValue(0.5);
  }
  QPen edgePen(QColor(0x77, 0x77, 0x77), 1);
  QBrush arrowBrush(QColor(0x77, 0x77, 0x77));
  for (const LaidOutEdge &e : layout.edges) {
    if (e.points.isEmpty())
      continue;
    QPainterPath path(e.points[0]);
    for (int i = 1; i + 2 < e.points.size(); i += 3)
      path.cubicTo(e.points[i], e.points[i + 1], e.points[i + 2]);
    auto *item = s->addPath(path, edgePen);
    item->setZValue(1);
    if (e.hasArrow) {
      QPointF tip = e.arrowTip, from = e.points.last();
      QLineF line(from, tip);
      double angle = std::atan2(-line.dy(), line.dx());
      double size = 6;
      QPointF p1 = tip - QPointF(std::cos(angle + M_PI / 7) * size,
                                 -std::sin(angle + M_PI / 7) * size);
      QPointF p2 = tip - QPointF(std::cos(angle - M_PI / 7) * size,
                                 -std::sin(angle - M_PI / 7) * size);
      auto *arrow =
          s->addPolygon(QPolygonF({tip, p1, p2}), Qt::NoPen, arrowBrush);
      arrow->setZValue(1);
      s->addLine(line, edgePen)->setZValue(1);
    }
  }
  for (const LaidOutNode &n : layout.nodes) {
    auto *item = new GraphNodeItem(n);
    s->addItem(item);
    nodeItems.insert(n.id, item);
  }
  s->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  s->setSceneRect(layout.bounds.adjusted(-20, -20, 20, 20));
  updateLegend(layout, changedMeaning);
  return clock.nsecsElapsed() / 1e6;
}

void GraphView::selectNodes(const QList<int> &ids) {
  for (int id : selection)
    if (GraphNodeItem *item = nodeItems.value(id))
      item->setSelectedNode(false);
  selection.clear();
  for (int id : ids) {
    if (GraphNodeItem *item = nodeItems.value(id)) {
      item->setSelectedNode(true);
      selection << id;
    }
  }
  if (!selection.isEmpty())
    centerOn(nodeItems.value(selection.first()));
}

void GraphView::setHeat(const QHash<int, QPair<double, qint64>> &heatByNode) {
  heated = 0;
  for (auto it = nodeItems.begin(); it != nodeItems.end(); ++it) {
    auto found = heatByNode.constFind(it.key());
    if (found == heatByNode.constEnd()) {
      it.value()->setHeat(-1, 0);
      continue;
    }
    it.value()->setHeat(found->first, found->second);
    ++heated;
  }
}

int GraphView::search(const QString &text) {
  QList<int> found;
  if (!text.isEmpty())
    for (auto it = nodeItems.begin(); it != nodeItems.end(); ++it)
      if (it.value()->data().op.contains(text, Qt::CaseInsensitive))
        found << it.key();
  std::sort(found.begin(), found.end());
  selectNodes(found);
  return found.size();
}

void GraphView::zoomIn() {
  scale(1.25, 1.25);
  emit zoomed();
}

void GraphView::zoomOut() {
  scale(0.8, 0.8);
  emit zoomed();
}

void GraphView::fit() {
  fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
  emit zoomed();
}

void GraphView::wheelEvent(QWheelEvent *event) {
  double factor = std::pow(1.0015, event->angleDelta().y());
  scale(factor, factor);
  event->accept();
  emit zoomed();
}

void GraphView::synchronize(GraphView *a, GraphView *b) {
  // Setting a scroll bar to its own value emits nothing, so following each
  // other settles at once.
  auto follow = [](GraphView *from, GraphView *to) {
    connect(from, &GraphView::zoomed, to,
            [from, to] { to->setTransform(from->transform()); });
    connect(from->horizontalScrollBar(), &QScrollBar::valueChanged,
            to->horizontalScrollBar(), &QScrollBar::setValue);
    connect(from->verticalScrollBar(), &QScrollBar::valueChanged,
            to->verticalScrollBar(), &QScrollBar::setValue);
  };
  follow(a, b);
  follow(b, a);
}

void GraphView::mousePressEvent(QMouseEvent *event) {
  if (event->button() == Qt::LeftButton) {
    for (QGraphicsItem *item : QGraphicsView::items(event->pos())) {
      if (auto *node = dynamic_cast<GraphNodeItem *>(item)) {
        emit nodeClicked(node->data().id);
        break;
      }
    }
  }
  QGraphicsView::mousePressEvent(event);
}

} // namespace cuvil::workbench
