//===- TimelineView.h - Tracks of a profile over time -----------*- C++ -*-===//
#ifndef CUVIL_WORKBENCH_TIMELINEVIEW_H
#define CUVIL_WORKBENCH_TIMELINEVIEW_H

#include "TimelineLayout.h"

#include <QAbstractScrollArea>

#include <memory>
#include <unordered_map>

namespace cuvil::workbench {

/// One lane group per kind of track (Python stack, NVTX ranges, CPU
/// kernels, GPU kernels, ...), one lane per thread or stream, one row per
/// nesting depth. The wheel zooms around the cursor, dragging pans,
/// shift-dragging selects a time range (rangeSelected), a click picks an
/// event (eventClicked) and a double-click zooms to it; a click on empty
/// space clears the selection. Sub-pixel
/// events are merged (rowBoxes), so a million events draw quickly.
class TimelineView : public QAbstractScrollArea {
  Q_OBJECT
public:
  static constexpr int kLabelWidth = 190;

  explicit TimelineView(QWidget *parent = nullptr);

  void setProfile(std::shared_ptr<const Profile> profile);
  const Profile *profile() const { return data.get(); }

  const TimelineViewport &timeViewport() const { return view; }
  const TimelineLanes &lanes() const { return laneLayout; }
  /// Zooms by `factor` around x (viewport coordinates).
  void zoomAround(int x, double factor);
  void panByPixels(double dx);
  void showRange(double beginNs, double endNs);
  void resetZoom();

  /// The selected range, shown shaded; emits rangeSelected.
  void setSelection(int64_t beginNs, int64_t endNs);
  /// Clears the selection; emits selectionCleared.
  void clearSelection();
  bool hasSelection() const { return selBegin < selEnd; }
  int64_t selectionBeginNs() const { return selBegin; }
  int64_t selectionEndNs() const { return selEnd; }

  /// Events whose name contains `text` keep their colour, others fade.
  void setHighlightText(const QString &text);
  /// Shows only the header of lane group `group` ("GPU kernels"), or all
  /// of its lanes again; clicking a group header does the same.
  void setGroupCollapsed(const QString &group, bool collapsed);
  bool isGroupCollapsed(const QString &group) const {
    return collapsedGroups.contains(group);
  }

  /// Outlines event `index` (-1: none).
  void setCurrentEvent(int64_t index);
  int64_t currentEvent() const { return current; }

  /// The event at `pos` (viewport coordinates), or -1. On a Python
  /// caller row, the call whose stack holds that frame.
  int64_t eventAt(const QPoint &pos) const;
  /// The span at `pos` (an event, or a caller frame), or nullptr.
  const RowSpan *spanAt(const QPoint &pos) const;
  /// The x (viewport coordinates) of time `ns`.
  double xOf(double ns) const { return kLabelWidth + view.toPx(ns); }
  /// Paints into any device (benchmarks, screenshots).
  void paintTimeline(QPainter &painter, const QRect &area);

signals:
  void rangeSelected(qint64 beginNs, qint64 endNs);
  void selectionCleared();
  void eventClicked(qint64 index);
  /// A caller frame (a Python stack row) of call `event` was clicked.
  void frameClicked(qint64 event, quint32 frame);
  void visibleRangeChanged();

protected:
  void paintEvent(QPaintEvent *event) override;
  void resizeEvent(QResizeEvent *event) override;
  void wheelEvent(QWheelEvent *event) override;
  void mousePressEvent(QMouseEvent *event) override;
  void mouseMoveEvent(QMouseEvent *event) override;
  void mouseReleaseEvent(QMouseEvent *event) override;
  void mouseDoubleClickEvent(QMouseEvent *event) override;
  void keyPressEvent(QKeyEvent *event) override;
  bool viewportEvent(QEvent *event) override;

private:
  void updateScrollBar();
  void layoutLanes();
  QColor eventColor(prof::EventKind kind, prof::StringId name);
  bool highlighted(prof::StringId name) const;
  /// True when a merged run holds an event that matches the search.
  bool runHasMatch(const std::vector<RowSpan> &row,
                   const TimelineBox &box) const;
  void paintRuler(QPainter &painter, const QRect &area);
  /// Arrows between the current event and its flow partners.
  void paintFlows(QPainter &painter, const QRect &content, int laneTop);
  QString spanToolTip(const RowSpan &span) const;

  std::shared_ptr<const Profile> data;
  TimelineViewport view;
  TimelineLanes laneLayout;
  int64_t selBegin = 0, selEnd = 0;
  int64_t current = -1;
  std::vector<char> nameMatches;    ///< per string id, for highlighting
  std::vector<int32_t> laneOfEvent; ///< lane index per event, -1: none
  QSet<QString> collapsedGroups;
  bool highlighting = false;
  std::unordered_map<uint64_t, QRgb> colors;

  enum class Drag { None, Pan, Select } drag = Drag::None;
  QPoint pressPos, lastPos;
  bool moved = false;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_TIMELINEVIEW_H
