//===- FlameGraphView.cpp - Paints a FlameGraphModel as flame or icicle ---===//

#include "FlameGraphView.h"

#include "FlameGraphModel.h"
#include "ProfileData.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

namespace cuvil::workbench {

FlameGraphView::FlameGraphView(QWidget *parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void FlameGraphView::setModel(FlameGraphModel *model) {
  if (source)
    disconnect(source, nullptr, this, nullptr);
  source = model;
  if (source) {
    connect(source, &QAbstractItemModel::modelReset, this,
            &FlameGraphView::treeChanged);
    connect(source, &QAbstractItemModel::layoutChanged, this,
            qOverload<>(&QWidget::update));
  }
  treeChanged();
}

void FlameGraphView::treeChanged() {
  zoom = 0;
  hovered = kNoFrame;
  updateGeometry();
  relayout();
}

void FlameGraphView::setEmptyText(const QString &text) {
  emptyText = text;
  update();
}

void FlameGraphView::setOrientation(Orientation orientation) {
  direction = orientation;
  update();
}

void FlameGraphView::zoomTo(uint32_t node) {
  if (!source || node >= source->tree().size())
    node = 0;
  if (node == zoom)
    return;
  zoom = node;
  relayout();
  emit zoomChanged(zoom);
}

void FlameGraphView::relayout() {
  rects.clear();
  if (source && width() > 0)
    rects = layoutFlame(source->tree(), zoom, 1.0 / width());
  update();
}

int FlameGraphView::contentHeight() const {
  int rows = source ? int(source->tree().maxDepth()) + 1 : 1;
  return rows * kRowHeight;
}

QSize FlameGraphView::sizeHint() const {
  return {600, std::max(200, contentHeight() + 4)};
}

QSize FlameGraphView::minimumSizeHint() const {
  return {200, contentHeight() + 4};
}

QRectF FlameGraphView::rectOf(const FlameRect &r) const {
  double y = direction == Orientation::Icicle
                 ? double(r.row * kRowHeight)
                 : double(height() - int(r.row + 1) * kRowHeight);
  return QRectF(r.x0 * width(), y, (r.x1 - r.x0) * width(), kRowHeight);
}

uint32_t FlameGraphView::frameAt(const QPoint &pos) const {
  for (const FlameRect &r : rects)
    if (rectOf(r).contains(pos))
      return r.node;
  return kNoFrame;
}

QRectF FlameGraphView::frameRect(uint32_t node) const {
  for (const FlameRect &r : rects)
    if (r.node == node)
      return rectOf(r);
  return {};
}

QColor FlameGraphView::frameColor(uint32_t node) const {
  if (!source)
    return {};
  const FlameTree &tree = source->tree();
  const FlameTree::Node &n = tree.node(node);
  QColor color = node == 0       ? QColor(208, 208, 212)
                 : tree.isDiff() ? diffColor(n.baselineTotalNs, n.totalNs)
                                 : moduleColor(n.module, n.name);
  const FlameTree::SearchResult &found = source->searchResult();
  if (!found.isMatch.empty() && !found.matches.empty() &&
      !found.isMatch[node]) {
    // Fade non-matches towards light grey so the matches stand out.
    int grey = qGray(color.rgb());
    return QColor((grey + 3 * 236) / 4, (grey + 3 * 236) / 4,
                  (grey + 3 * 236) / 4);
  }
  return color;
}

void FlameGraphView::paintEvent(QPaintEvent *) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().base());
  if (!source || source->tree().size() <= 1) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect(), Qt::AlignCenter, emptyText);
    return;
  }
  const FlameTree &tree = source->tree();
  const FlameTree::SearchResult &found = source->searchResult();
  bool searching = !found.matches.empty();
  QFont font = painter.font();
  font.setPointSizeF(std::max(7.5, font.pointSizeF() * 0.9));
  painter.setFont(font);
  QFontMetrics metrics(font);
  QRectF clip = rect();
  for (const FlameRect &r : rects) {
    QRectF box = rectOf(r).adjusted(0, 0, -1, -1);
    if (!box.intersects(clip))
      continue;
    QColor fill = frameColor(r.node);
    if (r.ancestor)
      fill = fill.lighter(112);
    painter.fillRect(box, fill);
    if (r.node == hovered) {
      painter.setPen(QPen(QColor(20, 20, 20), 1.5));
      painter.drawRect(box.adjusted(0.75, 0.75, -0.75, -0.75));
    } else if (searching && found.isMatch[r.node]) {
      painter.setPen(QPen(QColor(120, 0, 140), 1.5));
      painter.drawRect(box.adjusted(0.75, 0.75, -0.75, -0.75));
    }
    if (box.width() < 28)
      continue;
    const FlameTree::Node &n = tree.node(r.node);
    QString label = n.name;
    if (r.node == 0)
      label = QString("all (%1)").arg(formatDuration(tree.weight(0)));
    else if (tree.isDiff() && box.width() > 200)
      label += QString("  %1").arg(formatDelta(n.deltaTotalNs()));
    painter.setPen(textColorOn(fill));
    painter.drawText(
        box.adjusted(4, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft,
        metrics.elidedText(label, Qt::ElideRight, int(box.width()) - 7));
  }
}

void FlameGraphView::resizeEvent(QResizeEvent *event) {
  QWidget::resizeEvent(event);
  relayout();
}

void FlameGraphView::mousePressEvent(QMouseEvent *event) {
  if (event->button() != Qt::LeftButton)
    return QWidget::mousePressEvent(event);
  uint32_t node = frameAt(event->position().toPoint());
  if (node == kNoFrame)
    return;
  // A frame above the zoomed one (or the root) zooms back out to it.
  zoomTo(node);
  emit frameClicked(node);
}

void FlameGraphView::mouseMoveEvent(QMouseEvent *event) {
  uint32_t node = frameAt(event->position().toPoint());
  if (node != hovered) {
    hovered = node;
    setCursor(node == kNoFrame ? Qt::ArrowCursor : Qt::PointingHandCursor);
    update();
  }
  QWidget::mouseMoveEvent(event);
}

void FlameGraphView::leaveEvent(QEvent *event) {
  hovered = kNoFrame;
  update();
  QWidget::leaveEvent(event);
}

void FlameGraphView::keyPressEvent(QKeyEvent *event) {
  if (!source)
    return QWidget::keyPressEvent(event);
  if (event->key() == Qt::Key_Escape || event->key() == Qt::Key_Home) {
    resetZoom();
    return;
  }
  if (event->key() == Qt::Key_Backspace && zoom != 0) {
    zoomTo(source->tree().node(zoom).parent);
    return;
  }
  QWidget::keyPressEvent(event);
}

bool FlameGraphView::event(QEvent *event) {
  if (event->type() != QEvent::ToolTip || !source)
    return QWidget::event(event);
  auto *help = static_cast<QHelpEvent *>(event);
  uint32_t node = frameAt(help->pos());
  if (node == kNoFrame) {
    QToolTip::hideText();
    return true;
  }
  const FlameTree &tree = source->tree();
  const FlameTree::Node &n = tree.node(node);
  int64_t rootWeight = std::max<int64_t>(1, tree.weight(0));
  QString text = "<b>" + n.name.toHtmlEscaped() + "</b>";
  if (!n.file.isEmpty())
    text += "<br>" + tree.location(node).toHtmlEscaped();
  if (tree.isDiff()) {
    text += QString("<br>baseline %1 → current %2 (%3)")
                .arg(formatDuration(n.baselineTotalNs),
                     formatDuration(n.totalNs), formatDelta(n.deltaTotalNs()));
    text +=
        QString("<br>self %1 → %2")
            .arg(formatDuration(n.baselineSelfNs), formatDuration(n.selfNs));
  } else {
    text += QString("<br>total %1 (%2%), self %3, %4 calls")
                .arg(formatDuration(n.totalNs))
                .arg(100.0 * double(n.totalNs) / double(rootWeight), 0, 'f', 1)
                .arg(formatDuration(n.selfNs))
                .arg(n.count);
  }
  if (!n.module.isEmpty())
    text += "<br>module " + n.module.toHtmlEscaped();
  QToolTip::showText(help->globalPos(), text, this);
  return true;
}

} // namespace cuvil::workbench
