//===- LatencyHeat.h - Latency per source location, IR op -------*- C++ -*-===//
//
// The IR graph shows latency as heat: each op's node is tinted by the self
// time of the kernels that ran it. These free functions compute that from a
// trace; the graph view only maps keys to nodes and paints.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_WORKBENCH_LATENCYHEAT_H
#define CUVIL_WORKBENCH_LATENCYHEAT_H

#include "cuvil/Profiler/Analysis.h"

#include <QColor>
#include <QHash>
#include <QString>

#include <vector>

namespace cuvil::workbench {

namespace prof = cuvil::profiler;

/// How locations are keyed.
enum class HeatKey {
  Location, ///< the IR op's loc as recorded, "file:line:col"
  Line,     ///< "file:line", summing the columns of one source line
};

/// Self time (ns) of the events carrying a source location, summed per
/// location, within `selection`. Events without a loc are left out.
QHash<QString, qint64> latencyByLocation(const prof::Trace &trace,
                                         HeatKey key = HeatKey::Location,
                                         const prof::Selection &selection = {});
/// The same, per IR op id (events with kNoOp are left out).
QHash<qint64, qint64> latencyByOpId(const prof::Trace &trace,
                                    const prof::Selection &selection = {});
/// Heat in [0, 1] per location: its self time over the hottest location's.
QHash<QString, double> heatByLocation(const prof::Trace &trace,
                                      HeatKey key = HeatKey::Location,
                                      const prof::Selection &selection = {});
/// The same from per-op rows already aggregated (GroupBy::OpId).
QHash<QString, qint64> latencyByLocation(const std::vector<prof::OpRow> &rows,
                                         HeatKey key = HeatKey::Location);
QHash<QString, double> heatByLocation(const std::vector<prof::OpRow> &rows,
                                      HeatKey key = HeatKey::Location);
/// Latency by source position, for painting IR graph nodes: the IR's
/// locations and the trace's name the same files, possibly by different
/// paths (absolute in one, relative in the other), so a lookup tries the
/// exact path, then the file name. Times of several columns of a line add
/// up when the column is not given.
class LatencyHeatIndex {
public:
  LatencyHeatIndex() = default;
  /// From latencyByLocation(..., HeatKey::Location) ("file:line:col").
  explicit LatencyHeatIndex(const QHash<QString, qint64> &latencyByLoc);

  /// Self time of the kernels at `file`:`line`(:`column`), 0 when none;
  /// column 0 sums the whole line.
  qint64 latencyNs(const QString &file, int line, int column = 0) const;
  /// latencyNs over the hottest location's (with a column) or the
  /// hottest line's (without), in [0, 1].
  double heat(const QString &file, int line, int column = 0) const;
  bool isEmpty() const { return lineByPath.isEmpty(); }

private:
  QHash<QString, qint64> byPath, byName;         ///< "file:line:col"
  QHash<QString, qint64> lineByPath, lineByName; ///< "file:line"
  qint64 hottest = 0, hottestLine = 0;
};

/// A colour ramp for heat in [0, 1]: pale yellow through orange to red.
QColor heatColor(double heat);

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_LATENCYHEAT_H
