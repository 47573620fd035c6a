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

namespace {

/// Splits "file:line:col" (or "file:line"); false when there is no line.
bool splitLocation(const QString &loc, QString &file, int &line, int &column) {
  int last = loc.lastIndexOf(':');
  if (last <= 0)
    return false;
  bool ok = false;
  int tail = loc.mid(last + 1).toInt(&ok);
  if (!ok)
    return false;
  int previous = loc.lastIndexOf(':', last - 1);
  bool lineOk = false;
  int head = previous > 0
                 ? loc.mid(previous + 1, last - previous - 1).toInt(&lineOk)
                 : 0;
  if (lineOk) {
    file = loc.left(previous);
    line = head;
    column = tail;
  } else {
    file = loc.left(last);
    line = tail;
    column = 0;
  }
  return true;
}

QString fileName(const QString &path) {
  int slash = std::max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return path.mid(slash + 1);
}

QString positionKey(const QString &file, int line, int column) {
  return column > 0 ? QString("%1:%2:%3").arg(file).arg(line).arg(column)
                    : QString("%1:%2").arg(file).arg(line);
}

} // namespace

LatencyHeatIndex::LatencyHeatIndex(const QHash<QString, qint64> &latencyByLoc) {
  for (auto it = latencyByLoc.cbegin(); it != latencyByLoc.cend(); ++it) {
    QString file;
    int line = 0, column = 0;
    if (!splitLocation(it.key(), file, line, column))
      continue;
    QString name = fileName(file);
    if (column > 0) {
      byPath[positionKey(file, line, column)] += it.value();
      byName[positionKey(name, line, column)] += it.value();
    }
    lineByPath[positionKey(file, line, 0)] += it.value();
    lineByName[positionKey(name, line, 0)] += it.value();
  }
  for (qint64 ns : byPath)
    hottest = std::max(hottest, ns);
  for (qint64 ns : lineByPath)
    hottestLine = std::max(hottestLine, ns);
}

qint64 LatencyHeatIndex::latencyNs(const QString &file, int line,
                                   int column) const {
  const QHash<QString, qint64> &path = column > 0 ? byPath : lineByPath;
  const QHash<QString, qint64> &name = column > 0 ? byName : lineByName;
  auto found = path.constFind(positionKey(file, line, column));
  if (found != path.cend())
    return found.value();
  return name.value(positionKey(fileName(file), line, column), 0);
}

double LatencyHeatIndex::heat(const QString &file, int line, int column) const {
  qint64 max = column > 0 ? hottest : hottestLine;
  return max > 0 ? double(latencyNs(file, line, column)) / double(max) : 0.0;
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
