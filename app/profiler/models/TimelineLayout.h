//===- TimelineLayout.h - Viewport, lanes, level of detail ------*- C++ -*-===//
//
// The geometry behind TimelineView, without widgets: which time range is
// visible (zoom around a point, pan, clamp), where each track's rows sit,
// which boxes to draw for a row at the current scale (events narrower than
// a pixel are merged into runs, so a million events draw as at most a few
// boxes per pixel column), and which event lies under a point.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_WORKBENCH_TIMELINELAYOUT_H
#define CUVIL_WORKBENCH_TIMELINELAYOUT_H

#include "ProfileData.h"

#include <QSet>

#include <vector>

namespace cuvil::workbench {

/// The visible time range over a width in pixels.
class TimelineViewport {
public:
  /// The whole trace, [beginNs, endNs), visible at `widthPx`.
  void reset(int64_t beginNs, int64_t endNs, double widthPx);
  void setWidth(double widthPx);

  double widthPx() const { return width; }
  double visibleBeginNs() const { return begin; }
  double visibleEndNs() const { return end; }
  double nsPerPixel() const { return (end - begin) / width; }
  double toPx(double ns) const { return (ns - begin) / (end - begin) * width; }
  double toNs(double px) const { return begin + px / width * (end - begin); }

  /// Zooms by `factor` (> 1 zooms in) keeping the time under `px` fixed.
  /// Never zooms in below kMinSpanNs nor out past the whole trace.
  void zoomAround(double px, double factor);
  /// Moves the view by `dxPx` pixels (positive: later times come in view
  /// from the left, i.e. content follows the mouse to the right).
  void panByPixels(double dxPx);
  /// Shows [beginNs, endNs) (clamped to the trace).
  void showRange(double beginNs, double endNs);

  static constexpr double kMinSpanNs = 100;

private:
  void clamp();
  double traceBegin = 0, traceEnd = 1;
  double begin = 0, end = 1;
  double width = 1;
};

/// Where tracks and their rows are drawn, top to bottom.
struct TimelineLanes {
  static constexpr int kRulerHeight = 26;
  static constexpr int kGroupHeaderHeight = 20;
  static constexpr int kRowHeight = 18;
  static constexpr int kTrackGap = 6;

  struct Lane {
    int track = -1; ///< index into Profile::tracks; -1 for a group header
    int row = 0;    ///< nesting depth within the track
    int y = 0;      ///< top, in content coordinates (below the ruler)
    int height = 0;
    QString text; ///< group title, or the track label on its first row
  };
  std::vector<Lane> lanes;
  int contentHeight = 0;

  /// Lanes of `tracks`; groups named in `collapsed` show their header only.
  static TimelineLanes build(const std::vector<TimelineTrack> &tracks,
                             const QSet<QString> &collapsed = {});
  /// The lane at content y, or nullptr.
  const Lane *laneAt(int y) const;
};

/// A box to draw: one event, or a run of merged sub-pixel events.
struct TimelineBox {
  double x0 = 0, x1 = 0; ///< pixels; merged runs are at least 1 px wide
  uint32_t event = 0;    ///< the event, or the first event of a run
  uint32_t merged = 1;   ///< events in the box
  uint32_t frame = RowSpan::kNoFrame; ///< the caller frame, in stack rows
  uint32_t span = 0;                  ///< index of the (first) span in the row
};

/// The boxes of one row over the viewport. Events of at least `minPx`
/// pixels are boxes of their own; smaller ones starting within the same
/// pixel are merged into runs.
std::vector<TimelineBox> rowBoxes(const std::vector<RowSpan> &row,
                                  const TimelineViewport &viewport,
                                  double minPx = 1.0);

/// The span of `row` at pixel `px` (within `tolerancePx` of it when none
/// covers it exactly); nullptr when none.
const RowSpan *spanAtPixel(const std::vector<RowSpan> &row,
                           const TimelineViewport &viewport, double px,
                           double tolerancePx = 2.0);
/// The event of that span, or -1.
int64_t eventAtPixel(const std::vector<RowSpan> &row,
                     const TimelineViewport &viewport, double px,
                     double tolerancePx = 2.0);

/// A tidy ruler: the tick step (1, 2 or 5 × 10^k ns) for ticks at least
/// `minSpacingPx` apart.
double rulerStepNs(const TimelineViewport &viewport, double minSpacingPx);

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_TIMELINELAYOUT_H
