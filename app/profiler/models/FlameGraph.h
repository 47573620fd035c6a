//===- FlameGraph.h - Flame graph tree, layout, colours, search -*- C++ -*-===//
//
// A FlameTree holds either one call tree or the diff of two (baseline →
// current) in one shape, with children sorted heaviest first. layoutFlame
// turns it into rectangles for a zoomed frame; the colour functions give
// colour by source module and the red/blue of diff mode. No widgets here.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_WORKBENCH_FLAMEGRAPH_H
#define CUVIL_WORKBENCH_FLAMEGRAPH_H

#include "cuvil/Profiler/Analysis.h"

#include <QColor>
#include <QString>

#include <vector>

namespace cuvil::workbench {

namespace prof = cuvil::profiler;

class FlameTree {
public:
  struct Node {
    /// What the frame shows: the name, then the model node and instance
    /// that tell frames of one line apart (prof::frameTitle).
    QString name;
    QString eventName;         ///< the event's or function's own name
    QString node;              ///< model node name, empty if none
    qint64 opId = prof::kNoOp; ///< the frame's IR op (call trees only)
    QString file;              ///< source file, empty when the frame has none
    uint32_t line = 0;
    QString module; ///< file stem, or the prefix of a dotted name
    uint32_t parent = 0;
    uint32_t depth = 0;
    std::vector<uint32_t> children;  ///< heaviest (by weight) first
    int64_t totalNs = 0, selfNs = 0; ///< the current profile
    int64_t baselineTotalNs = 0, baselineSelfNs = 0; ///< diff mode only
    uint64_t count = 0;
    int64_t deltaTotalNs() const { return totalNs - baselineTotalNs; }
    int64_t deltaSelfNs() const { return selfNs - baselineSelfNs; }
  };

  /// Which profile's time sets a frame's width in diff mode.
  enum class DiffWidth { Current, Baseline };

  FlameTree();
  static FlameTree fromCallTree(const prof::CallTree &tree);
  /// The diff of two call trees. Frames match by name, file and model node
  /// (or instance, see prof::DiffTree); their line numbers are ignored
  /// unless `matchLines`, so that edits between the two runs (which move
  /// calls to other lines) do not split frames apart.
  static FlameTree fromDiff(const prof::CallTree &baseline,
                            const prof::CallTree &current,
                            DiffWidth width = DiffWidth::Current,
                            bool matchLines = false);

  bool isDiff() const { return diff; }
  size_t size() const { return nodeList.size(); }
  const Node &node(uint32_t id) const { return nodeList[id]; }
  const std::vector<Node> &nodes() const { return nodeList; }
  /// The time that sets the node's width.
  int64_t weight(uint32_t id) const;
  uint32_t maxDepth() const { return deepest; }
  /// "file:line" of the frame, or empty.
  QString location(uint32_t id) const;
  /// The path from the root's child down to `id`.
  std::vector<uint32_t> path(uint32_t id) const;
  /// True when `ancestor` is `id` or above it.
  bool isAncestorOrSelf(uint32_t ancestor, uint32_t id) const;

  /// Frames whose name contains `text` (case-insensitive) and the weight
  /// they cover, a match inside another match counted once.
  struct SearchResult {
    std::vector<uint32_t> matches;
    std::vector<bool> isMatch; ///< per node
    int64_t coveredNs = 0;
  };
  SearchResult search(const QString &text) const;

  /// Indented text of the tree ("name (loc) total self" or, in diff mode,
  /// "name base -> cur (delta)"), for tests and logs.
  QString print() const;

private:
  void sortChildren();
  std::vector<Node> nodeList;
  bool diff = false;
  DiffWidth diffWidth = DiffWidth::Current;
  uint32_t deepest = 0;
};

/// `tree` with every frame's line set to 0, equal frames (same name, file,
/// model node or IR op) merged.
prof::CallTree withoutLines(const prof::CallTree &tree);

/// The module a frame belongs to: its file's stem, else the text before
/// the first '.', ':', '(' or ' ' of its name ("cuvil.matmul" → "cuvil").
QString frameModule(const QString &name, const QString &file);

/// One frame to draw. x0, x1 are fractions of the view's width; row 0 is
/// the root ("all"), ancestors of the zoomed frame fill the full width.
struct FlameRect {
  uint32_t node = 0;
  uint32_t row = 0;
  double x0 = 0, x1 = 0;
  bool ancestor = false; ///< above the zoomed frame (drawn full width)
};

/// Lays out the tree zoomed into `zoom` (0: everything). Frames narrower
/// than `minFraction` of the width are left out with their subtrees.
std::vector<FlameRect> layoutFlame(const FlameTree &tree, uint32_t zoom,
                                   double minFraction);
/// The rectangle at fraction `x` on `row`, or nullptr.
const FlameRect *flameRectAt(const std::vector<FlameRect> &rects, double x,
                             uint32_t row);

/// A light, readable colour for a module: equal modules get equal colours,
/// names vary the shade a little so that neighbours stay distinct.
QColor moduleColor(const QString &module, const QString &name);
/// Diff mode: red when slower, blue when faster, near white when equal;
/// the more the relative change (saturating at ±40%), the deeper the colour.
/// A frame missing from the baseline is full red.
QColor diffColor(int64_t baselineNs, int64_t currentNs);
/// Black or white, whichever reads better on `background`.
QColor textColorOn(const QColor &background);

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_FLAMEGRAPH_H
