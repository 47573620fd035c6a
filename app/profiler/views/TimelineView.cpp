//===- TimelineView.cpp - Tracks of a profile over time -------------------===//

#include "TimelineView.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace cuvil::workbench {
namespace {

uint32_t fnv1a(std::string_view text) {
  uint32_t hash = 2166136261u;
  for (char c : text) {
    hash ^= uint8_t(c);
    hash *= 16777619u;
  }
  return hash;
}

/// Base hue and hue spread per kind: blues for Python, purples for NVTX,
/// warm tones for CPU kernels, greens for GPU kernels.
void kindHue(prof::EventKind kind, int &hue, int &spread, int &saturation) {
  switch (kind) {
  case prof::EventKind::Python:
    hue = 200, spread = 30, saturation = 95;
    return;
  case prof::EventKind::Nvtx:
    hue = 262, spread = 40, saturation = 85;
    return;
  case prof::EventKind::CpuKernel:
    hue = 18, spread = 36, saturation = 120;
    return;
  case prof::EventKind::GpuKernel:
    hue = 92, spread = 55, saturation = 110;
    return;
  case prof::EventKind::Memcpy:
    hue = 345, spread = 20, saturation = 100;
    return;
  case prof::EventKind::RuntimeApi:
    hue = 180, spread = 20, saturation = 45;
    return;
  case prof::EventKind::Other:
    hue = 35, spread = 25, saturation = 60;
    return;
  }
}

QString rulerLabel(double ns, double step) {
  // The unit that keeps tick labels short: 4.5 ms rather than 4500 µs.
  double unit = step >= 1e8 ? 1e9 : step >= 1e5 ? 1e6 : step >= 1e2 ? 1e3 : 1;
  const char *name = unit == 1e9   ? "s"
                     : unit == 1e6 ? "ms"
                     : unit == 1e3 ? "µs"
                                   : "ns";
  int decimals = std::max(0, int(-std::floor(std::log10(step / unit) + 1e-9)));
  return QString("%1 %2").arg(ns / unit, 0, 'f', decimals).arg(name);
}

} // namespace

TimelineView::TimelineView(QWidget *parent) : QAbstractScrollArea(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  viewport()->setMouseTracking(true);
  viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
  connect(verticalScrollBar(), &QScrollBar::valueChanged, viewport(),
          qOverload<>(&QWidget::update));
}

void TimelineView::setProfile(std::shared_ptr<const Profile> profile) {
  data = std::move(profile);
  selBegin = selEnd = 0;
  current = -1;
  colors.clear();
  nameMatches.clear();
  highlighting = false;
  layoutLanes();
  double width = std::max(1, viewport()->width() - kLabelWidth);
  if (data)
    view.reset(data->beginNs, data->endNs, width);
  else
    view = TimelineViewport{};
  updateScrollBar();
  viewport()->update();
  emit visibleRangeChanged();
}

void TimelineView::layoutLanes() {
  laneLayout = data ? TimelineLanes::build(data->tracks, collapsedGroups)
                    : TimelineLanes{};
  laneOfEvent.assign(data ? data->trace->events.size() : 0, -1);
  for (size_t l = 0; l < laneLayout.lanes.size(); ++l) {
    const TimelineLanes::Lane &lane = laneLayout.lanes[l];
    if (lane.track < 0)
      continue;
    for (const RowSpan &span :
         data->tracks[size_t(lane.track)].rows[size_t(lane.row)])
      if (span.frame == RowSpan::kNoFrame)
        laneOfEvent[span.event] = int32_t(l);
  }
}

void TimelineView::setGroupCollapsed(const QString &group, bool collapsed) {
  if (collapsed)
    collapsedGroups.insert(group);
  else
    collapsedGroups.remove(group);
  layoutLanes();
  updateScrollBar();
  viewport()->update();
}

void TimelineView::updateScrollBar() {
  int content = laneLayout.contentHeight + TimelineLanes::kRulerHeight;
  verticalScrollBar()->setPageStep(viewport()->height());
  verticalScrollBar()->setRange(0, std::max(0, content - viewport()->height()));
}

void TimelineView::zoomAround(int x, double factor) {
  view.zoomAround(x - kLabelWidth, factor);
  viewport()->update();
  emit visibleRangeChanged();
}

void TimelineView::panByPixels(double dx) {
  view.panByPixels(dx);
  viewport()->update();
  emit visibleRangeChanged();
}

void TimelineView::showRange(double beginNs, double endNs) {
  view.showRange(beginNs, endNs);
  viewport()->update();
  emit visibleRangeChanged();
}

void TimelineView::resetZoom() {
  if (data)
    view.reset(data->beginNs, data->endNs, view.widthPx());
  viewport()->update();
  emit visibleRangeChanged();
}

void TimelineView::setSelection(int64_t beginNs, int64_t endNs) {
  if (endNs < beginNs)
    std::swap(beginNs, endNs);
  selBegin = beginNs;
  selEnd = endNs;
  viewport()->update();
  emit rangeSelected(selBegin, selEnd);
}

void TimelineView::clearSelection() {
  bool had = hasSelection();
  selBegin = selEnd = 0;
  viewport()->update();
  if (had)
    emit selectionCleared();
}

void TimelineView::setHighlightText(const QString &text) {
  highlighting = !text.isEmpty() && data;
  nameMatches.clear();
  if (highlighting) {
    const prof::StringTable &strings = data->trace->strings;
    nameMatches.resize(strings.size());
    QByteArray needle = text.toUtf8().toLower();
    for (size_t i = 0; i < strings.size(); ++i) {
      QByteArray name(strings.get(prof::StringId(i)).data(),
                      int(strings.get(prof::StringId(i)).size()));
      nameMatches[i] = name.toLower().contains(needle);
    }
  }
  viewport()->update();
}

void TimelineView::setCurrentEvent(int64_t index) {
  current = index;
  viewport()->update();
}

bool TimelineView::highlighted(prof::StringId name) const {
  return !highlighting || (name < nameMatches.size() && nameMatches[name]);
}

bool TimelineView::runHasMatch(const std::vector<RowSpan> &row,
                               const TimelineBox &box) const {
  // Only while searching; bounded by the events visible in the view.
  if (!highlighting || box.merged < 2)
    return false;
  const prof::Trace &trace = *data->trace;
  for (uint32_t j = box.span + 1; j < box.span + box.merged; ++j) {
    const RowSpan &s = row[j];
    prof::StringId name = s.frame != RowSpan::kNoFrame
                              ? trace.frames[s.frame].name
                              : trace.events[s.event].name;
    if (highlighted(name))
      return true;
  }
  return false;
}

QColor TimelineView::eventColor(prof::EventKind kind, prof::StringId name) {
  uint64_t key = (uint64_t(kind) << 32) | name;
  auto found = colors.find(key);
  if (found != colors.end())
    return QColor::fromRgb(found->second);
  int hue = 0, spread = 1, saturation = 60;
  kindHue(kind, hue, spread, saturation);
  uint32_t hash = fnv1a(data->trace->str(name));
  QColor color = QColor::fromHsv((hue + int(hash % uint32_t(spread))) % 360,
                                 saturation + int((hash >> 8) % 40),
                                 235 + int((hash >> 16) % 16));
  colors.emplace(key, color.rgb());
  return color;
}

const RowSpan *TimelineView::spanAt(const QPoint &pos) const {
  if (!data || pos.x() < kLabelWidth || pos.y() < TimelineLanes::kRulerHeight)
    return nullptr;
  int y = pos.y() - TimelineLanes::kRulerHeight + verticalScrollBar()->value();
  const TimelineLanes::Lane *lane = laneLayout.laneAt(y);
  if (!lane || lane->track < 0)
    return nullptr;
  const TimelineTrack &track = data->tracks[size_t(lane->track)];
  return spanAtPixel(track.rows[size_t(lane->row)], view,
                     pos.x() - kLabelWidth);
}

int64_t TimelineView::eventAt(const QPoint &pos) const {
  const RowSpan *span = spanAt(pos);
  return span ? int64_t(span->event) : -1;
}

void TimelineView::paintEvent(QPaintEvent *) {
  QPainter painter(viewport());
  paintTimeline(painter, viewport()->rect());
}

void TimelineView::paintTimeline(QPainter &painter, const QRect &area) {
  painter.fillRect(area, QColor(252, 252, 252));
  if (!data) {
    painter.setPen(QColor(130, 130, 130));
    painter.drawText(area, Qt::AlignCenter,
                     "Open a trace (Chrome JSON, folded stacks, speedscope, "
                     "Nsight Systems SQLite)");
    return;
  }
  const prof::Trace &trace = *data->trace;
  QFont font = painter.font();
  font.setPointSizeF(std::max(7.5, font.pointSizeF() * 0.9));
  QFont bold = font;
  bold.setBold(true);
  painter.setFont(font);
  QFontMetrics metrics(font);
  int scroll = verticalScrollBar()->value();
  int top = area.top() + TimelineLanes::kRulerHeight;
  int right = area.right() + 1;
  QRect content(area.left() + kLabelWidth, top, right - kLabelWidth,
                area.bottom() + 1 - top);

  // Lanes: backgrounds and boxes.
  int trackIndex = -1;
  for (const TimelineLanes::Lane &lane : laneLayout.lanes) {
    int y = top + lane.y - scroll;
    if (y + lane.height < top || y > area.bottom())
      continue;
    if (lane.track < 0) {
      painter.fillRect(QRect(area.left(), y, area.width(), lane.height),
                       QColor(232, 236, 242));
      continue;
    }
    if (lane.track != trackIndex && lane.row == 0) {
      painter.setPen(QColor(222, 222, 226));
      painter.drawLine(area.left(), y - 3, right, y - 3);
    }
    trackIndex = lane.track;
    const TimelineTrack &track = data->tracks[size_t(lane.track)];
    painter.save();
    painter.setClipRect(content);
    for (const TimelineBox &box :
         rowBoxes(track.rows[size_t(lane.row)], view)) {
      const prof::Event &e = trace.events[box.event];
      bool isFrame = box.frame != RowSpan::kNoFrame;
      // A caller row names the frame; it is coloured like a call of that name.
      prof::StringId nameId = isFrame ? trace.frames[box.frame].name : e.name;
      QRectF r(content.left() + box.x0, y + 1, box.x1 - box.x0,
               lane.height - 2);
      r = r.intersected(
          QRectF(content.left() - 2, y, content.width() + 4, lane.height));
      QColor fill = eventColor(e.kind, nameId);
      if (isFrame)
        fill = fill.lighter(108);
      if (box.merged > 1)
        fill = fill.darker(112);
      if (!highlighted(nameId) &&
          !runHasMatch(track.rows[size_t(lane.row)], box))
        fill = QColor(226, 226, 226);
      painter.fillRect(r, fill);
      if (box.merged == 1 && r.width() >= 4) {
        painter.setPen(fill.darker(130));
        painter.drawRect(r.adjusted(0, 0, -1, -1));
      }
      if (box.merged == 1 && r.width() > 30) {
        painter.setPen(QColor(25, 25, 25));
        QString name = displayText(trace.str(nameId));
        painter.drawText(
            r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
            metrics.elidedText(name, Qt::ElideRight, int(r.width()) - 5));
      }
      if (int64_t(box.event) == current && box.merged == 1 && !isFrame) {
        painter.setPen(QPen(QColor(20, 20, 20), 2));
        painter.drawRect(r.adjusted(1, 1, -1, -1));
      }
    }
    painter.restore();
  }

  paintFlows(painter, content, top - scroll);

  // Label column and group titles on top of the boxes.
  painter.fillRect(QRect(area.left(), top, kLabelWidth, content.height()),
                   QColor(244, 245, 247));
  painter.setPen(QColor(210, 210, 214));
  painter.drawLine(area.left() + kLabelWidth - 1, top,
                   area.left() + kLabelWidth - 1, area.bottom());
  for (const TimelineLanes::Lane &lane : laneLayout.lanes) {
    int y = top + lane.y - scroll;
    if (y + lane.height < top || y > area.bottom() || lane.text.isEmpty())
      continue;
    QRect labelRect(area.left() + (lane.track < 0 ? 6 : 14), y,
                    kLabelWidth - 20, lane.height);
    if (lane.track < 0) {
      painter.fillRect(QRect(area.left(), y, kLabelWidth, lane.height),
                       QColor(232, 236, 242));
      painter.setFont(bold);
      painter.setPen(QColor(40, 50, 70));
      auto threads = std::count_if(
          data->tracks.begin(), data->tracks.end(),
          [&](const TimelineTrack &t) { return t.group == lane.text; });
      QString title = QString(isGroupCollapsed(lane.text) ? "▸ " : "▾ ") +
                      lane.text +
                      QString("  ·  %1 %2")
                          .arg(threads)
                          .arg(threads == 1 ? "lane" : "lanes");
      painter.drawText(
          QRect(area.left() + 6, y, area.width() - 12, lane.height),
          Qt::AlignVCenter | Qt::AlignLeft, title);
      painter.setFont(font);
      continue;
    }
    painter.setPen(QColor(60, 60, 66));
    painter.drawText(
        labelRect, Qt::AlignVCenter | Qt::AlignLeft,
        metrics.elidedText(lane.text, Qt::ElideMiddle, labelRect.width()));
  }

  paintRuler(painter, area);

  // The selected range.
  if (hasSelection()) {
    double x0 = std::max<double>(content.left(), xOf(double(selBegin)));
    double x1 = std::min<double>(right, xOf(double(selEnd)));
    if (x1 > x0 - 1) {
      QRectF band(x0, area.top(), std::max(1.0, x1 - x0), area.height());
      painter.fillRect(band, QColor(40, 110, 220, 40));
      painter.setPen(QPen(QColor(40, 110, 220), 1));
      painter.drawLine(QPointF(x0, area.top()), QPointF(x0, area.bottom()));
      painter.drawLine(QPointF(x1, area.top()), QPointF(x1, area.bottom()));
      QString label = formatDuration(selEnd - selBegin);
      QRectF tag(x0 + 2, area.top() + 2, metrics.horizontalAdvance(label) + 10,
                 TimelineLanes::kRulerHeight - 6);
      painter.fillRect(tag, QColor(40, 110, 220));
      painter.setPen(Qt::white);
      painter.drawText(tag, Qt::AlignCenter, label);
    }
  }
}

void TimelineView::paintFlows(QPainter &painter, const QRect &content,
                              int laneTop) {
  if (current < 0 || size_t(current) >= laneOfEvent.size())
    return;
  const prof::Trace &trace = *data->trace;
  auto point = [&](uint32_t event, double ns) {
    const TimelineLanes::Lane &lane =
        laneLayout.lanes[size_t(laneOfEvent[event])];
    return QPointF(xOf(ns), laneTop + lane.y + lane.height / 2.0);
  };
  // From the moment of the source closest to the target's start, to the
  // target's start: a launch points at its kernel, a call at its kernels.
  auto arrow = [&](uint32_t from, uint32_t to) {
    if (laneOfEvent[from] < 0 || laneOfEvent[to] < 0)
      return;
    const prof::Event &a = trace.events[from], &b = trace.events[to];
    double at = std::clamp<double>(double(b.startNs), double(a.startNs),
                                   double(a.endNs()));
    QPointF p0 = point(from, at), p1 = point(to, double(b.startNs));
    double bend = std::max(12.0, std::abs(p1.y() - p0.y()) / 2);
    QPainterPath path(p0);
    path.cubicTo(p0 + QPointF(0, p1.y() > p0.y() ? bend : -bend),
                 p1 - QPointF(0, p1.y() > p0.y() ? bend : -bend), p1);
    painter.drawPath(path);
    double dir = p1.y() >= p0.y() ? -1 : 1;
    QPolygonF head({p1, p1 + QPointF(-4, 7 * dir), p1 + QPointF(4, 7 * dir)});
    painter.drawPolygon(head);
  };
  painter.save();
  painter.setClipRect(content);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(QPen(QColor(30, 30, 30, 200), 1.3));
  painter.setBrush(QColor(30, 30, 30, 200));
  auto self = uint32_t(current);
  std::vector<uint32_t> targets = data->flows.targets(self);
  std::vector<uint32_t> sources = data->flows.sources(self);
  // Bounded, so a call with thousands of kernels stays cheap to draw.
  for (size_t i = 0; i < targets.size() && i < 256; ++i)
    arrow(self, targets[i]);
  for (size_t i = 0; i < sources.size() && i < 256; ++i)
    arrow(sources[i], self);
  painter.restore();
}

void TimelineView::paintRuler(QPainter &painter, const QRect &area) {
  QRect ruler(area.left(), area.top(), area.width(),
              TimelineLanes::kRulerHeight);
  painter.fillRect(ruler, QColor(238, 239, 242));
  painter.setPen(QColor(200, 200, 205));
  painter.drawLine(ruler.bottomLeft(), ruler.bottomRight());
  QFontMetrics metrics(painter.font());
  double step = rulerStepNs(view, 90);
  double origin = double(data->beginNs);
  double first = std::ceil((view.visibleBeginNs() - origin) / step) * step;
  for (double t = first; origin + t < view.visibleEndNs(); t += step) {
    double x = xOf(origin + t);
    if (x < kLabelWidth)
      continue;
    painter.setPen(QColor(150, 150, 156));
    painter.drawLine(QPointF(x, ruler.bottom() - 6),
                     QPointF(x, ruler.bottom()));
    painter.setPen(QColor(70, 70, 76));
    painter.drawText(QPointF(x + 3, ruler.bottom() - 8), rulerLabel(t, step));
  }
  painter.fillRect(QRect(area.left(), area.top(), kLabelWidth, ruler.height()),
                   QColor(238, 239, 242));
  painter.setPen(QColor(70, 70, 76));
  painter.drawText(
      QRect(area.left() + 6, area.top(), kLabelWidth - 12, ruler.height()),
      Qt::AlignVCenter | Qt::AlignLeft,
      QString("visible %1")
          .arg(formatDuration(
              int64_t(view.visibleEndNs() - view.visibleBeginNs()))));
}

void TimelineView::resizeEvent(QResizeEvent *event) {
  QAbstractScrollArea::resizeEvent(event);
  view.setWidth(std::max(1, viewport()->width() - kLabelWidth));
  updateScrollBar();
}

void TimelineView::wheelEvent(QWheelEvent *event) {
  if (!data)
    return;
  QPoint delta = event->angleDelta();
  if (delta.y() != 0 && !(event->modifiers() & Qt::AltModifier)) {
    zoomAround(int(event->position().x()), std::pow(1.0015, delta.y()));
  } else if (delta.x() != 0) {
    panByPixels(delta.x() / 2.0);
  } else if (delta.y() != 0) {
    verticalScrollBar()->setValue(verticalScrollBar()->value() - delta.y() / 2);
  }
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent *event) {
  if (event->button() != Qt::LeftButton || !data)
    return QAbstractScrollArea::mousePressEvent(event);
  pressPos = lastPos = event->position().toPoint();
  moved = false;
  drag = (event->modifiers() & Qt::ShiftModifier) ? Drag::Select : Drag::Pan;
  if (drag == Drag::Pan)
    viewport()->setCursor(Qt::ClosedHandCursor);
}

void TimelineView::mouseMoveEvent(QMouseEvent *event) {
  QPoint pos = event->position().toPoint();
  if (drag == Drag::None)
    return;
  if ((pos - pressPos).manhattanLength() > 3)
    moved = true;
  if (drag == Drag::Pan) {
    panByPixels(pos.x() - lastPos.x());
    verticalScrollBar()->setValue(verticalScrollBar()->value() -
                                  (pos.y() - lastPos.y()));
  } else if (moved) {
    double a = view.toNs(pressPos.x() - kLabelWidth);
    double b = view.toNs(pos.x() - kLabelWidth);
    selBegin = int64_t(std::min(a, b));
    selEnd = int64_t(std::max(a, b));
    viewport()->update();
  }
  lastPos = pos;
}

void TimelineView::mouseReleaseEvent(QMouseEvent *event) {
  if (event->button() != Qt::LeftButton || drag == Drag::None)
    return QAbstractScrollArea::mouseReleaseEvent(event);
  Drag was = drag;
  drag = Drag::None;
  viewport()->unsetCursor();
  QPoint pos = event->position().toPoint();
  if (was == Drag::Select && moved) {
    double a = view.toNs(pressPos.x() - kLabelWidth);
    double b = view.toNs(pos.x() - kLabelWidth);
    setSelection(int64_t(std::min(a, b)), int64_t(std::max(a, b)));
    return;
  }
  if (moved)
    return;
  if (pos.y() >= TimelineLanes::kRulerHeight) {
    const TimelineLanes::Lane *lane = laneLayout.laneAt(
        pos.y() - TimelineLanes::kRulerHeight + verticalScrollBar()->value());
    if (lane && lane->track < 0) {
      setGroupCollapsed(lane->text, !isGroupCollapsed(lane->text));
      return;
    }
  }
  const RowSpan *span = spanAt(pos);
  if (span && span->frame != RowSpan::kNoFrame) {
    emit frameClicked(span->event, span->frame);
  } else if (span) {
    setCurrentEvent(span->event);
    emit eventClicked(span->event);
  } else {
    setCurrentEvent(-1);
    clearSelection();
  }
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent *event) {
  const RowSpan *span = spanAt(event->position().toPoint());
  if (event->button() != Qt::LeftButton || !span)
    return QAbstractScrollArea::mouseDoubleClickEvent(event);
  // The event (or caller frame) with a tenth of its length on each side.
  double margin = double(span->endNs - span->startNs) / 10;
  showRange(double(span->startNs) - margin, double(span->endNs) + margin);
}

void TimelineView::keyPressEvent(QKeyEvent *event) {
  int middle = kLabelWidth + int(view.widthPx() / 2);
  switch (event->key()) {
  case Qt::Key_Escape:
    clearSelection();
    return;
  case Qt::Key_Home:
  case Qt::Key_0:
    resetZoom();
    return;
  case Qt::Key_Plus:
  case Qt::Key_Equal:
  case Qt::Key_W:
    zoomAround(middle, 1.5);
    return;
  case Qt::Key_Minus:
  case Qt::Key_S:
    zoomAround(middle, 1 / 1.5);
    return;
  case Qt::Key_A:
  case Qt::Key_Left:
    panByPixels(view.widthPx() / 8);
    return;
  case Qt::Key_D:
  case Qt::Key_Right:
    panByPixels(-view.widthPx() / 8);
    return;
  case Qt::Key_Z:
    if (hasSelection())
      showRange(double(selBegin), double(selEnd));
    return;
  default:
    QAbstractScrollArea::keyPressEvent(event);
  }
}

QString TimelineView::spanToolTip(const RowSpan &span) const {
  const prof::Trace &trace = *data->trace;
  const prof::Event &e = trace.events[span.event];
  auto text = [&](prof::StringId id) {
    return displayText(trace.str(id)).toHtmlEscaped();
  };
  size_t out = data->flows.targets(span.event).size();
  size_t in = data->flows.sources(span.event).size();
  QString flows;
  if (out + in > 0)
    flows = QString("<br>flows: %1 out, %2 in (click to draw them)")
                .arg(out)
                .arg(in);
  if (span.frame != RowSpan::kNoFrame) {
    const prof::Frame &f = trace.frames[span.frame];
    QString tip = "<b>" + text(f.name) + "</b>";
    if (f.file)
      tip += "<br>" + text(f.file) + QString(":%1").arg(f.line);
    return tip + QString("<br>on the Python stack of %1 (%2)")
                     .arg(text(e.name), formatDuration(e.durationNs));
  }
  QString tip = "<b>" + text(e.name) + "</b><br>" +
                QString(prof::eventKindName(e.kind)) + ", " +
                formatDuration(e.durationNs) + " at +" +
                formatDuration(e.startNs - data->beginNs);
  if (e.loc)
    tip += "<br>" + text(e.loc);
  std::string_view node = trace.arg(e, prof::kNodeArg);
  if (!node.empty())
    tip += "<br>node " + displayText(node).toHtmlEscaped();
  if (e.opId != prof::kNoOp)
    tip += QString("<br>IR op #%1").arg(e.opId);
  if (e.stack != prof::kNoStack) {
    tip += "<br><i>Python stack</i>";
    std::vector<prof::FrameId> frames = trace.stackFrames(e.stack);
    // Innermost first; a tooltip of a 30,000-frame stack would not fit.
    constexpr size_t kMaxFrames = 40;
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
      if (size_t(it - frames.rbegin()) == kMaxFrames) {
        tip += QString("<br>&nbsp;&nbsp;… %1 more frames")
                   .arg(frames.size() - kMaxFrames);
        break;
      }
      const prof::Frame &f = trace.frames[*it];
      tip += "<br>&nbsp;&nbsp;" + text(f.name);
      if (f.file)
        tip += " — " + text(f.file) + QString(":%1").arg(f.line);
    }
  }
  return tip + flows;
}

bool TimelineView::viewportEvent(QEvent *event) {
  if (event->type() == QEvent::ToolTip && data) {
    auto *help = static_cast<QHelpEvent *>(event);
    const RowSpan *span = spanAt(help->pos());
    if (span)
      QToolTip::showText(help->globalPos(), spanToolTip(*span), viewport());
    else
      QToolTip::hideText();
    return true;
  }
  return QAbstractScrollArea::viewportEvent(event);
}

} // namespace cuvil::workbench
