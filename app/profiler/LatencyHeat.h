//===- LatencyHeat.h - Latency per source location and IR op, for overlays -*-
// C++ -*-===//
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
/// A colour ramp for heat in [0, 1]: pale yellow through orange to red.
QColor heatColor(double heat);

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_LATENCYHEAT_H
