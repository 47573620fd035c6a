//===- MainWindowSteps.cpp - Stepping through passes and cross-links ------===//

#include "MainWindow.h"

#include "LatencyHeat.h"
#include "ProfilerPage.h"

#include "GraphView.h"
#include "SourceEditor.h"

#include <QCheckBox>
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>
#include <QTextBlock>
#include <QtConcurrent/QtConcurrentRun>

namespace cuvil::workbench {
namespace {

/// Above this many nodes a step's graph is drawn with regions collapsed.
constexpr size_t kAutoCollapseNodes = 2000;

GraphJob buildJob(int sequence, int step, const QString &ir,
                  const QString &previousIr, bool collapse, bool before) {
  GraphJob job;
  job.sequence = sequence;
  job.step = step;
  job.before = before;
  graph::GraphOptions options;
  options.collapseRegions = collapse;
  job.stepGraph = buildStepGraph(ir, previousIr, options);
  if (!collapse && job.stepGraph.error.isEmpty() &&
      job.stepGraph.graph.nodes.size() > kAutoCollapseNodes) {
    options.collapseRegions = true;
    job.stepGraph = buildStepGraph(ir, previousIr, options);
  }
  job.collapsed = options.collapseRegions;
  job.error = job.stepGraph.error;
  if (job.error.isEmpty())
    layoutGraph(job.stepGraph.dot, job.layout, job.error);
  return job;
}

} // namespace

void MainWindow::showCompilation(int row) {
  const CompilationRecord *record = compilations.record(row);
  if (!record || row == compilation)
    return;
  compilation = row;
  step = -1;
  steps.setSteps(record->steps);
  updateActions();
  int first = 0;
  if (!initialPass.isEmpty()) {
    for (int i = 0; i < record->steps.size(); ++i)
      if (record->steps[i].name == initialPass) {
        first = i;
        break;
      }
    if (first == 0)
      appendConsole(tr("No pass named %1 in %2; showing the input IR.\n")
                        .arg(initialPass, record->function),
                    QColor(0xc0, 0x20, 0x20));
    initialPass.clear();
  }
  selectStep(first);
}

void MainWindow::selectStep(int index) {
  if (index < 0 || index >= steps.rowCount())
    return;
  QModelIndex visible = visibleSteps.mapFromSource(steps.index(index, 0));
  if (visible.isValid() && stepTable->currentIndex().row() != visible.row())
    stepTable->setCurrentIndex(visible); // re-enters with the same index
  if (index == step)
    return;
  step = index;
  const PassStep &current = steps.steps()[index];
  QString previous = index > 0 ? steps.steps()[index - 1].ir : QString();
  showShownIr();
  diff.setTexts(previous, current.ir);
  statusBar()->showMessage(
      tr("Step %1 of %2: %3 (%4, %5 ms)%6")
          .arg(index)
          .arg(steps.rowCount() - 1)
          .arg(current.name, current.stage)
          .arg(current.ms, 0, 'f', 3)
          .arg(current.changed ? tr(", changed the IR") : tr(", no change")));
  requestGraph();
}

bool MainWindow::stepForward() {
  QModelIndex next = visibleSteps.mapFromSource(steps.index(step, 0));
  int row = next.isValid() ? next.row() + 1 : 0;
  if (row >= visibleSteps.rowCount())
    return false;
  selectStep(visibleSteps.mapToSource(visibleSteps.index(row, 0)).row());
  return true;
}

bool MainWindow::stepBack() {
  QModelIndex current = visibleSteps.mapFromSource(steps.index(step, 0));
  if (!current.isValid() || current.row() == 0)
    return false;
  selectStep(
      visibleSteps.mapToSource(visibleSteps.index(current.row() - 1, 0)).row());
  return true;
}

bool MainWindow::showingBefore() const {
  return beforeBox->isChecked() && step > 0;
}

void MainWindow::showShownIr() {
  const QVector<PassStep> &all = steps.steps();
  linking = true;
  irText->setPlainText(all[showingBefore() ? step - 1 : step].ir);
  linking = false;
}

void MainWindow::requestGraph() {
  if (step < 0 || step >= steps.rowCount())
    return;
  const QVector<PassStep> &all = steps.steps();
  QString ir = all[step].ir;
  QString previous = step > 0 ? all[step - 1].ir : QString();
  // Before the pass: the previous step's graph, marking the ops this pass
  // replaces or removes (those with no counterpart after it).
  if (showingBefore())
    std::swap(ir, previous);
  int sequence = ++graphSequence;
  int s = step;
  bool collapse = collapseBox->isChecked();
  bool before = showingBefore();
  graphStatus->setText(tr("Laying out the graph..."));
  if (graphWatcher.isRunning())
    return; // graphReady() picks up the newest request
  graphWatcher.setFuture(QtConcurrent::run(
      [=] { return buildJob(sequence, s, ir, previous, collapse, before); }));
}

void MainWindow::graphReady() {
  GraphJob job = graphWatcher.result();
  if (job.sequence != graphSequence) {
    // The user moved on while this one was laid out: lay out the latest.
    --graphSequence;
    requestGraph();
    return;
  }
  shownGraph = job;
  ops.setGraph(job.stepGraph.graph);
  if (!job.error.isEmpty()) {
    graph->clearGraph(tr("No graph for this step: %1").arg(job.error));
    graphStatus->setText(job.error);
    emit stepShown(job.step, 0);
    return;
  }
  double drawMs = graph->setGraphLayout(
      job.layout, job.before ? tr("replaced or removed by this pass")
                             : tr("changed by this pass"));
  applyHeat();
  graph->fit();
  const graph::IRGraph &g = job.stepGraph.graph;
  QString marks = job.before
                      ? tr("%1 replaced or removed by the pass, %2 added by it")
                            .arg(g.changedCount)
                            .arg(g.removedCount)
                      : tr("%1 changed, %2 removed")
                            .arg(g.changedCount)
                            .arg(g.removedCount);
  graphStatus->setText(
      tr("@%1%2: %3 nodes, %4%5 (layout %6 ms, draw %7 ms)")
          .arg(QString::fromStdString(g.function),
               job.before ? tr(" before the pass") : QString())
          .arg(g.nodes.size())
          .arg(marks, job.collapsed ? tr(", regions collapsed") : QString())
          .arg(job.layout.layoutMs, 0, 'f', 0)
          .arg(drawMs, 0, 'f', 0));
  if (!searchEdit->text().isEmpty())
    graph->search(searchEdit->text());
  emit stepShown(job.step, static_cast<int>(g.nodes.size()));
}

void MainWindow::markIrLine(int line) {
  QList<QTextEdit::ExtraSelection> selections;
  QTextBlock block = irText->document()->findBlockByNumber(line - 1);
  if (line > 0 && block.isValid()) {
    QTextEdit::ExtraSelection sel;
    sel.format.setBackground(QColor(0xcc, 0xdd, 0xff));
    sel.format.setProperty(QTextFormat::FullWidthSelection, true);
    sel.cursor = QTextCursor(block);
    selections << sel;
    linking = true;
    irText->setTextCursor(sel.cursor);
    irText->centerCursor();
    linking = false;
  }
  irText->setExtraSelections(selections);
}

void MainWindow::selectNode(int id) {
  const graph::IRGraph &g = ops.graph();
  if (id < 0 || id >= static_cast<int>(g.nodes.size()) || linking)
    return;
  const graph::Node &node = g.nodes[id];
  graph->selectNodes({id});
  QModelIndex row = opFilter->mapFromSource(ops.index(id, 0));
  if (row.isValid())
    opTable->setCurrentIndex(row);
  markIrLine(node.irLine);
  QString nodeFile = QString::fromStdString(node.loc.file);
  if (node.loc.valid() &&
      (nodeFile == file ||
       QFileInfo(nodeFile).fileName() == QFileInfo(file).fileName())) {
    linking = true;
    source->markLine(node.loc.line);
    linking = false;
  }
  statusBar()->showMessage(
      tr("%1 %2 at IR line %3%4")
          .arg(QString::fromStdString(node.opName),
               QString::fromStdString(node.results))
          .arg(node.irLine)
          .arg(node.loc.valid() ? tr(", %1:%2")
                                      .arg(QFileInfo(nodeFile).fileName())
                                      .arg(node.loc.line)
                                : QString()));
}

void MainWindow::selectIrLine(int line) {
  if (linking)
    return;
  int id = ops.nodeForIrLine(line);
  if (id < 0)
    return;
  const graph::Node &node = ops.graph().nodes[id];
  graph->selectNodes({id});
  linking = true;
  if (node.loc.valid())
    source->markLine(node.loc.line);
  linking = false;
}

void MainWindow::selectSourceLine(int line) {
  if (linking)
    return;
  QList<int> ids = ops.nodesForSourceLine(file, line);
  graph->selectNodes(ids);
  if (!ids.isEmpty())
    markIrLine(ops.graph().nodes[ids.first()].irLine);
  linking = true;
  source->markLine(line);
  linking = false;
  statusBar()->showMessage(tr("%1:%2 - %n op(s) in this step", "", ids.size())
                               .arg(QFileInfo(file).fileName())
                               .arg(line));
}

void MainWindow::applyHeat() {
  const LatencyHeatIndex &index = profiler->heatIndex();
  heatBox->setEnabled(!index.isEmpty());
  QHash<int, QPair<double, qint64>> heat;
  if (heatBox->isChecked() && !index.isEmpty()) {
    for (const LaidOutNode &node : shownGraph.layout.nodes) {
      // Node locations are "file:line"; kernels of a line add up.
      int colon = node.loc.lastIndexOf(':');
      if (colon <= 0)
        continue;
      QString nodeFile = node.loc.left(colon);
      int line = node.loc.mid(colon + 1).toInt();
      qint64 ns = index.latencyNs(nodeFile, line);
      if (ns > 0)
        heat.insert(node.id, {index.heat(nodeFile, line), ns});
    }
  }
  graph->setHeat(heat);
}

void MainWindow::showProfiledLocation(const QString &loc) {
  // "file:line:col" of a kernel or "file:line" of a Python frame.
  static const QRegularExpression pattern("^(.+?):(\\d+)(?::\\d+)?$");
  QRegularExpressionMatch match = pattern.match(loc);
  if (!match.hasMatch())
    return;
  QString path = match.captured(1);
  int line = match.captured(2).toInt();
  if (QFileInfo(path).fileName() != QFileInfo(file).fileName()) {
    statusBar()->showMessage(
        tr("%1 is in %2, not in the open file").arg(loc, path));
    return;
  }
  selectSourceLine(line);
  if (auto *sourceDock = findChild<QDockWidget *>("sourceDock"))
    sourceDock->raise();
}

} // namespace cuvil::workbench
