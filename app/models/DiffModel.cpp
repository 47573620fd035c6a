//===- DiffModel.cpp - Side-by-side line diff of two IR snapshots ---------===//

#include "DiffModel.h"

#include <QBrush>
#include <QColor>

#include <vector>

namespace cuvil::workbench {
namespace {

enum class Op { Keep, Delete, Insert };

/// Myers' greedy shortest edit script over [a0, a1) x [b0, b1); false when
/// it needs more than `maxEdits` edits.
bool myers(const QStringList &a, const QStringList &b, int a0, int a1, int b0,
           int b1, int maxEdits, std::vector<Op> &script) {
  int n = a1 - a0, m = b1 - b0;
  int max = std::min(n + m, maxEdits);
  int offset = max + 1;
  std::vector<int> v(2 * max + 3, 0);
  std::vector<std::vector<int>> trace;
  int found = -1;
  for (int d = 0; d <= max && found < 0; ++d) {
    trace.push_back(std::vector<int>(v.begin() + offset - d - 1,
                                     v.begin() + offset + d + 2));
    for (int k = -d; k <= d; k += 2) {
      int x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
                  ? v[offset + k + 1]
                  : v[offset + k - 1] + 1;
      int y = x - k;
      while (x < n && y < m && a[a0 + x] == b[b0 + y])
        ++x, ++y;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0)
    return false;
  // Walk back through the saved frontiers.
  std::vector<Op> reversed;
  int x = n, y = m;
  for (int d = found; d > 0; --d) {
    const std::vector<int> &prev = trace[d]; // frontier before step d
    auto at = [&](int k) { return prev[k + d + 1]; };
    int k = x - y;
    int prevK = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
    int prevX = at(prevK);
    int prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      reversed.push_back(Op::Keep);
      --x, --y;
    }
    reversed.push_back(x == prevX ? Op::Insert : Op::Delete);
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    reversed.push_back(Op::Keep);
    --x, --y;
  }
  script.assign(reversed.rbegin(), reversed.rend());
  return true;
}

} // namespace

QVector<DiffRow> diffLines(const QStringList &left, const QStringList &right,
                           int maxEdits) {
  int a0 = 0, b0 = 0, a1 = left.size(), b1 = right.size();
  while (a0 < a1 && b0 < b1 && left[a0] == right[b0])
    ++a0, ++b0;
  while (a1 > a0 && b1 > b0 && left[a1 - 1] == right[b1 - 1])
    --a1, --b1;

  std::vector<Op> script;
  if (!myers(left, right, a0, a1, b0, b1, maxEdits, script)) {
    script.assign(a1 - a0, Op::Delete);
    script.insert(script.end(), b1 - b0, Op::Insert);
  }

  QVector<DiffRow> rows;
  rows.reserve(std::max(left.size(), right.size()) + 16);
  for (int i = 0; i < a0; ++i)
    rows.push_back({DiffRow::Same, i + 1, i + 1});
  int a = a0, b = b0;
  size_t i = 0;
  while (i < script.size()) {
    if (script[i] == Op::Keep) {
      rows.push_back({DiffRow::Same, ++a, ++b});
      ++i;
      continue;
    }
    // A run of deletions and insertions: pair them up side by side.
    QVector<int> deleted, inserted;
    while (i < script.size() && script[i] != Op::Keep) {
      if (script[i] == Op::Delete)
        deleted << ++a;
      else
        inserted << ++b;
      ++i;
    }
    int paired = std::min(deleted.size(), inserted.size());
    for (int j = 0; j < paired; ++j)
      rows.push_back({DiffRow::Modified, deleted[j], inserted[j]});
    for (int j = paired; j < deleted.size(); ++j)
      rows.push_back({DiffRow::Removed, deleted[j], 0});
    for (int j = paired; j < inserted.size(); ++j)
      rows.push_back({DiffRow::Added, 0, inserted[j]});
  }
  for (int j = a1, k = b1; j < left.size(); ++j, ++k)
    rows.push_back({DiffRow::Same, j + 1, k + 1});
  return rows;
}

void DiffModel::setTexts(const QString &before, const QString &after) {
  beginResetModel();
  left = before.split('\n');
  right = after.split('\n');
  if (!left.isEmpty() && left.last().isEmpty())
    left.removeLast();
  if (!right.isEmpty() && right.last().isEmpty())
    right.removeLast();
  rows = diffLines(left, right);
  changes = 0;
  for (const DiffRow &row : rows)
    changes += row.kind != DiffRow::Same;
  endResetModel();
}

int DiffModel::rowForRightLine(int line) const {
  for (int i = 0; i < rows.size(); ++i)
    if (rows[i].rightLine == line)
      return i;
  return -1;
}

int DiffModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : rows.size();
}

int DiffModel::columnCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant DiffModel::data(const QModelIndex &index, int role) const {
  if (!index.isValid() || index.row() >= rows.size())
    return {};
  const DiffRow &row = rows[index.row()];
  bool leftSide = index.column() == LeftLine || index.column() == LeftText;
  int line = leftSide ? row.leftLine : row.rightLine;
  switch (role) {
  case Qt::DisplayRole:
    if (line == 0)
      return {};
    if (index.column() == LeftLine || index.column() == RightLine)
      return line;
    return leftSide ? left[line - 1] : right[line - 1];
  case Qt::BackgroundRole:
    if (row.kind == DiffRow::Same)
      return {};
    if (line == 0)
      return QBrush(QColor(0xee, 0xee, 0xee));
    if (row.kind == DiffRow::Modified)
      return QBrush(leftSide ? QColor(0xff, 0xe0, 0xe0)
                             : QColor(0xdc, 0xf5, 0xdc));
    return QBrush(row.kind == DiffRow::Removed ? QColor(0xff, 0xd0, 0xd0)
                                               : QColor(0xc8, 0xf0, 0xc8));
  case KindRole:
    return static_cast<int>(row.kind);
  }
  return {};
}

QVariant DiffModel::headerData(int section, Qt::Orientation orientation,
                               int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case LeftLine:
  case RightLine:
    return tr("Line");
  case LeftText:
    return tr("Before");
  case RightText:
    return tr("After");
  }
  return {};
}

} // namespace cuvil::workbench
