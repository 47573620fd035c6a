//===- PassExplorerCompare.cpp - Graphs before and after a pass -----------===//
//
// Side by side: the graph before the selected pass (left, marking the ops
// the pass replaced or removed) and after it (right, marking what it
// changed or made), one zoom and viewport for both. A node clicked in one
// selects its counterparts in the other: the same op where the pass left it
// alone (equal structural fingerprints), else ops of the same name on its
// source line, else all ops of its source line (what a fused or rewritten
// op became, or came from).
//
//===----------------------------------------------------------------------===//

#include "PassExplorerPage.h"

#include "GraphView.h"
#include "WorkbenchContext.h"

#include <QCheckBox>
#include <QSplitter>

namespace cuvil::workbench {

namespace {

bool sameLine(const graph::Node &a, const graph::Node &b) {
  return a.loc.valid() && b.loc.valid() && a.loc.file == b.loc.file &&
         a.loc.line == b.loc.line;
}

/// Nodes of `to` that correspond to node `id` of `from`: the same op (equal
/// fingerprints), else ops of its name on its source line (an argument, a
/// rewritten op), else every op of its source line.
QList<int> counterparts(const graph::IRGraph &from, int id,
                        const graph::IRGraph &to) {
  if (id < 0 || id >= static_cast<int>(from.nodes.size()))
    return {};
  const graph::Node &node = from.nodes[id];
  QList<int> same, named, line;
  for (const graph::Node &other : to.nodes) {
    bool onLine =
        sameLine(node, other) || (!node.loc.valid() && !other.loc.valid());
    if (!node.fingerprint.empty() && other.fingerprint == node.fingerprint)
      same << other.id;
    else if (onLine && other.opName == node.opName)
      named << other.id;
    else if (sameLine(node, other))
      line << other.id;
  }
  return !same.isEmpty() ? same : !named.isEmpty() ? named : line;
}

} // namespace

bool PassExplorerPage::sideBySide() const {
  return sideBySideBox->isChecked() && step > 0;
}

void PassExplorerPage::setSideBySide(bool on) {
  if (sideBySideBox->isChecked() != on)
    sideBySideBox->setChecked(on); // re-enters through toggled()
  beforeGraph->setVisible(on);
  if (on) { // half each
    int half = graphSplitter->width() / 2;
    graphSplitter->setSizes({half, graphSplitter->width() - half});
  }
  // Both sides are shown: "Before this pass" has nothing to switch.
  beforeBox->setEnabled(!on);
  if (step < 0)
    return;
  showShownIr();
  requestGraph();
}

void PassExplorerPage::showBeforeSide(const GraphJob &job) {
  if (!job.sideBySide) {
    beforeGraph->clearGraph(step == 0 ? tr("The first step has no before.")
                                      : QString());
    return;
  }
  if (!job.beforeError.isEmpty()) {
    beforeGraph->clearGraph(
        tr("No graph before this step: %1").arg(job.beforeError));
    return;
  }
  beforeGraph->setGraphLayout(job.beforeLayout,
                              tr("replaced or removed by this pass"));
}

void PassExplorerPage::selectCounterparts(GraphView *from, int id) {
  if (!shownGraph.sideBySide)
    return;
  bool fromBefore = from == beforeGraph;
  const graph::IRGraph &source =
      fromBefore ? shownGraph.beforeGraph.graph : shownGraph.stepGraph.graph;
  const graph::IRGraph &target =
      fromBefore ? shownGraph.stepGraph.graph : shownGraph.beforeGraph.graph;
  QList<int> matches = counterparts(source, id, target);
  GraphView *other = fromBefore ? graph : beforeGraph;
  if (fromBefore)
    from->selectNodes({id});
  other->selectNodes(matches);
  context.status(matches.isEmpty()
                     ? tr("No counterpart %1 the pass")
                           .arg(fromBefore ? tr("after") : tr("before"))
                     : tr("%n counterpart(s) %1 the pass", "", matches.size())
                           .arg(fromBefore ? tr("after") : tr("before")));
}

} // namespace cuvil::workbench
