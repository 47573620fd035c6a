//===- LatencyHeat.cpp - Latency per source location and IR op ------------===//

#include "LatencyHeat.h"

#include <algorithm>
#include <cmath>

namespace cuvil::workbench {
namespace {

QString locationKey(const std::string &loc, HeatKey key) {
  QString text = QString::fromStdString(loc);
  if (key == HeatKey::Line) {
    // "file:line:col" → "file:line"; a loc without a column stays as is.
    int last = text.lastIndexOf(':');
    int previous = last > 0 ? text.lastIndexOf(':', last - 1) : -1;
    bool numeric = false;
    if (previous > 0) {
      text.mid(last + 1).toUInt(&numeric);
      bool lineNumeric = false;
      text.mid(previous + 1, last - previous - 1).toUInt(&lineNumeric);
      if (numeric && lineNumeric)
        text.truncate(last);
    }
  }
  return text;
}

} // namespace

QHash<QString, qint64> latencyByLocation(const std::vector<prof::OpRow> &rows,
                                         HeatKey key) {
  QHash<QString, qint64> out;
  for (const prof::OpRow &row : rows)
    if (!row.loc.empty())
      out[locationKey(row.loc, key)] += row.selfNs;
  return out;
}

QHash<QString, qint64> latencyByLocation(const prof::Trace &trace, HeatKey key,
                                         const prof::Selection &selection) {
  return latencyByLocation(prof::opTable(trace, selection, prof::GroupBy::OpId),
                           key);
}

QHash<qint64, qint64> latencyByOpId(const prof::Trace &trace,
                                    const prof::Selection &selection) {
  QHash<qint64, qint64> out;
  for (const prof::OpRow &row :
       prof::opTable(trace, selection, prof::GroupBy::OpId))
    if (row.opId != prof::kNoOp)
      out[row.opId] += row.selfNs;
  return out;
}

QHash<QString, double> heatByLocation(const prof::Trace &trace, HeatKey key,
                                      const prof::Selection &selection) {
  return heatByLocation(prof::opTable(trace, selection, prof::GroupBy::OpId),
                        key);
}

QHash<QString, double> heatByLocation(const std::vector<prof::OpRow> &rows,
                                      HeatKey key) {
  QHash<QString, qint64> latency = latencyByLocation(rows, key);
  qint64 hottest = 0;
  for (qint64 ns : latency)
    hottest = std::max(hottest, ns);
  QHash<QString, double> out;
  for (auto it = latency.cbegin(); it != latency.cend(); ++it)
    out.insert(it.key(), hottest > 0 ? double(it.value()) / hottest : 0.0);
  return out;
}

QColor heatColor(double heat) {
  heat = std::clamp(heat, 0.0, 1.0);
  // Stops: pale yellow, orange, red.
  struct Stop {
    double at;
    int r, g, b;
  };
  static const Stop stops[] = {
      {0.0, 255, 247, 204}, {0.5, 253, 141, 60}, {1.0, 200, 30, 30}};
  for (int i = 1; i < 3; ++i) {
    if (heat <= stops[i].at) {
      const Stop &a = stops[i - 1], &b = stops[i];
      double t = (heat - a.at) / (b.at - a.at);
      return QColor(int(std::lround(a.r + (b.r - a.r) * t)),
                    int(std::lround(a.g + (b.g - a.g) * t)),
                    int(std::lround(a.b + (b.b - a.b) * t)));
    }
  }
  return QColor(stops[2].r, stops[2].g, stops[2].b);
}

} // namespace cuvil::workbench
