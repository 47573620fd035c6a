//===- TimelineLayout.cpp - Timeline viewport, lanes, level of detail -----===//

#include "TimelineLayout.h"

#include <algorithm>
#include <cmath>

namespace cuvil::workbench {

void TimelineViewport::reset(int64_t beginNs, int64_t endNs, double widthPx) {
  traceBegin = double(beginNs);
  traceEnd = double(std::max(endNs, beginNs + 1));
  // A little air on both sides so the first and last events are visible.
  double margin = (traceEnd - traceBegin) * 0.01;
  traceBegin -= margin;
  traceEnd += margin;
  begin = traceBegin;
  end = traceEnd;
  width = std::max(1.0, widthPx);
}

void TimelineViewport::setWidth(double widthPx) {
  width = std::max(1.0, widthPx);
}

void TimelineViewport::clamp() {
  double span = end - begin;
  double full = traceEnd - traceBegin;
  if (span >= full) {
    begin = traceBegin;
    end = traceEnd;
    return;
  }
  if (begin < traceBegin) {
    begin = traceBegin;
    end = begin + span;
  }
  if (end > traceEnd) {
    end = traceEnd;
    begin = end - span;
  }
}

void TimelineViewport::zoomAround(double px, double factor) {
  if (factor <= 0)
    return;
  double anchor = toNs(px);
  double span = std::max(kMinSpanNs, (end - begin) / factor);
  double share = std::clamp(px / width, 0.0, 1.0);
  begin = anchor - share * span;
  end = begin + span;
  clamp();
}

void TimelineViewport::panByPixels(double dxPx) {
  double shift = dxPx * nsPerPixel();
  begin -= shift;
  end -= shift;
  clamp();
}

void TimelineViewport::showRange(double beginNs, double endNs) {
  if (endNs - beginNs < kMinSpanNs) {
    double middle = (beginNs + endNs) / 2;
    beginNs = middle - kMinSpanNs / 2;
    endNs = middle + kMinSpanNs / 2;
  }
  begin = beginNs;
  end = endNs;
  clamp();
}

TimelineLanes TimelineLanes::build(const std::vector<TimelineTrack> &tracks,
                                   const QSet<QString> &collapsed) {
  TimelineLanes out;
  int y = 0;
  QString group;
  for (size_t t = 0; t < tracks.size(); ++t) {
    const TimelineTrack &track = tracks[t];
    if (track.group != group) {
      group = track.group;
      if (y > 0)
        y += kTrackGap;
      out.lanes.push_back({-1, 0, y, kGroupHeaderHeight, group});
      y += kGroupHeaderHeight;
    } else if (!collapsed.contains(track.group)) {
      y += kTrackGap;
    }
    if (collapsed.contains(track.group))
      continue;
    for (size_t r = 0; r < track.rows.size(); ++r) {
      out.lanes.push_back(
          {int(t), int(r), y, kRowHeight, r == 0 ? track.label : QString()});
      y += kRowHeight;
    }
  }
  out.contentHeight = y;
  return out;
}

const TimelineLanes::Lane *TimelineLanes::laneAt(int y) const {
  auto it = std::upper_bound(
      lanes.begin(), lanes.end(), y,
      [](int value, const Lane &lane) { return value < lane.y; });
  if (it == lanes.begin())
    return nullptr;
  const Lane &lane = *std::prev(it);
  return y < lane.y + lane.height ? &lane : nullptr;
}

std::vector<TimelineBox> rowBoxes(const std::vector<RowSpan> &row,
                                  const TimelineViewport &viewport,
                                  double minPx) {
  std::vector<TimelineBox> boxes;
  double viewBegin = viewport.visibleBeginNs(),
         viewEnd = viewport.visibleEndNs();
  // Ends grow along a row, so the first visible span is a binary search.
  auto first =
      std::partition_point(row.begin(), row.end(), [&](const RowSpan &s) {
        return double(s.endNs) < viewBegin;
      });
  size_t i = size_t(first - row.begin());
  while (i < row.size() && double(row[i].startNs) < viewEnd) {
    const RowSpan &s = row[i];
    double x0 = viewport.toPx(double(s.startNs));
    double x1 = viewport.toPx(double(s.endNs));
    if (x1 - x0 >= minPx) {
      boxes.push_back({x0, x1, s.event, 1, s.frame, uint32_t(i)});
      ++i;
      continue;
    }
    // Merge every span that starts before the next pixel boundary; only
    // the last of them can be wide (starts and ends both grow).
    double boundaryNs = viewport.toNs(std::floor(x0) + 1.0);
    auto next = std::partition_point(
        row.begin() + long(i) + 1, row.end(),
        [&](const RowSpan &r) { return double(r.startNs) < boundaryNs; });
    size_t k = size_t(next - row.begin());
    if (k - 1 > i) {
      const RowSpan &lastSpan = row[k - 1];
      if (viewport.toPx(double(lastSpan.endNs)) -
              viewport.toPx(double(lastSpan.startNs)) >=
          minPx)
        --k;
    }
    double runEnd = viewport.toPx(double(row[k - 1].endNs));
    boxes.push_back({x0, std::max(runEnd, x0 + 1.0), s.event, uint32_t(k - i),
                     s.frame, uint32_t(i)});
    i = k;
  }
  return boxes;
}

const RowSpan *spanAtPixel(const std::vector<RowSpan> &row,
                           const TimelineViewport &viewport, double px,
                           double tolerancePx) {
  if (row.empty())
    return nullptr;
  double t = viewport.toNs(px);
  // The last span starting at or before t, else the one after it.
  auto after =
      std::partition_point(row.begin(), row.end(), [&](const RowSpan &s) {
        return double(s.startNs) <= t;
      });
  const RowSpan *best = nullptr;
  double bestDistance = 0;
  auto consider = [&](const RowSpan &span) {
    double x0 = viewport.toPx(double(span.startNs));
    double x1 = viewport.toPx(double(span.endNs));
    double distance = px < x0 ? x0 - px : px > x1 ? px - x1 : 0.0;
    if (distance <= tolerancePx && (!best || distance < bestDistance)) {
      best = &span;
      bestDistance = distance;
    }
  };
  if (after != row.begin())
    consider(*(after - 1));
  if (after != row.end() && (!best || bestDistance > 0))
    consider(*after);
  return best;
}

int64_t eventAtPixel(const std::vector<RowSpan> &row,
                     const TimelineViewport &viewport, double px,
                     double tolerancePx) {
  const RowSpan *span = spanAtPixel(row, viewport, px, tolerancePx);
  return span ? int64_t(span->event) : -1;
}

double rulerStepNs(const TimelineViewport &viewport, double minSpacingPx) {
  double raw = viewport.nsPerPixel() * minSpacingPx;
  double power = std::pow(10.0, std::floor(std::log10(std::max(raw, 1.0))));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw)
      return m * power;
  return 10.0 * power;
}

} // namespace cuvil::workbench
