//===- PassExplorerSteps.cpp - Compilations, pass steps and their graphs --===//

#include "PassExplorerPage.h"

#include "PassDocs.h"

#include "GraphView.h"
#include "SourceEditor.h"
#include "WorkbenchContext.h"

#include <QCheckBox>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSettings>
#include <QTableView>
#include <QTextBrowser>
#include <QtConcurrent/QtConcurrentRun>

namespace cuvil::workbench {
namespace {

/// Above this many nodes a step's graph is drawn with regions collapsed.
constexpr size_t kAutoCollapseNodes = 2000;

/// The graph of `ir` marked against `previousIr`, laid out; regions
/// collapsed when asked or when it is too big. Returns whether collapsed.
bool buildGraph(const QString &ir, const QString &previousIr, bool collapse,
                StepGraph &stepGraph, GraphLayout &layout, QString &error) {
  graph::GraphOptions options;
  options.collapseRegions = collapse;
  stepGraph = buildStepGraph(ir, previousIr, options);
  if (!collapse && stepGraph.error.isEmpty() &&
      stepGraph.graph.nodes.size() > kAutoCollapseNodes) {
    options.collapseRegions = true;
    stepGraph = buildStepGraph(ir, previousIr, options);
  }
  error = stepGraph.error;
  if (error.isEmpty())
    layoutGraph(stepGraph.dot, layout, error);
  return options.collapseRegions;
}

GraphJob buildJob(int sequence, int step, const QString &ir,
                  const QString &previousIr, bool collapse, bool before,
                  bool sideBySide) {
  GraphJob job;
  job.sequence = sequence;
  job.step = step;
  job.before = before;
  job.collapsed = buildGraph(ir, previousIr, collapse, job.stepGraph,
                             job.layout, job.error);
  job.sideBySide = sideBySide;
  if (sideBySide && !previousIr.isEmpty())
    buildGraph(previousIr, ir, job.collapsed, job.beforeGraph, job.beforeLayout,
               job.beforeError);
  return job;
}

} // namespace

void PassExplorerPage::showCompilation(int row) {
  const CompilationRecord *record = compilations.record(row);
  if (!record || row == compilation)
    return;
  compilation = row;
  step = -1;
  steps.setSteps(record->steps);
  showHeader(record);
  showTargetCode();
  context.setCurrentCompilation(row);
  int first = 0;
  if (!initialPass.isEmpty()) {
    for (int i = 0; i < record->steps.size(); ++i)
      if (record->steps[i].name == initialPass) {
        first = i;
        break;
      }
    if (first == 0)
      context.console(tr("No pass named %1 in %2; showing the input IR.\n")
                          .arg(initialPass, record->function),
                      WorkbenchContext::Tone::Error);
    initialPass.clear();
  }
  selectStep(first);
  if (first > 0 && initialBefore)
    setShowBefore(true);
  initialBefore = false;
}

void PassExplorerPage::showPass(const QString &name, bool before) {
  const QVector<PassStep> &all = steps.steps();
  for (int i = 0; i < all.size(); ++i)
    if (all[i].name == name) {
      if (!all[i].changed)
        setHideUnchanged(false); // the step must be in the list
      selectStep(i);
      setShowBefore(before);
      return;
    }
  initialPass = name;
  initialBefore = before;
}

void PassExplorerPage::showTargetCode() {
  const CompilationRecord *record = compilations.record(compilation);
  // The code a target writes as text: C, a wasm module's text form, or the
  // GPU kernels' PTX (with their launch bounds and shared memory).
  QString stage = !record                             ? QString()
                  : record->artifacts.contains("c")   ? QStringLiteral("c")
                  : record->artifacts.contains("wat") ? QStringLiteral("wat")
                  : record->artifacts.contains("ptx") ? QStringLiteral("ptx")
                                                      : QString();
  if (stage.isEmpty()) {
    targetCodeIndex = -1;
    targetCodeDock->hide();
    return;
  }
  if (targetCodeIndex != record->index) {
    targetCodeIndex = record->index;
    targetCodeStage = stage;
    targetCodeAsked = false;
    targetCode->setLanguage(stage == "c"     ? SourceEditor::Language::C
                            : stage == "ptx" ? SourceEditor::Language::PTX
                                             : SourceEditor::Language::Wat);
    targetCode->setSource(QString());
  }
  // The worker answers one request at a time, when its run has finished.
  WorkerClient &worker = context.worker();
  if (!targetCodeAsked && worker.state() == WorkerClient::State::Idle)
    targetCodeAsked = worker.requestIr(record->index, record->target, stage);
}

void PassExplorerPage::selectStep(int index) {
  if (index < 0 || index >= steps.rowCount())
    return;
  QModelIndex visible = visibleSteps.mapFromSource(steps.index(index, 0));
  if (visible.isValid() && stepTable->currentIndex().row() != visible.row())
    stepTable->setCurrentIndex(visible); // re-enters with the same index
  if (index == step)
    return;
  // Moving elsewhere drops a prediction that was asked for.
  if (awaitingPrediction() && index != predictStep)
    skipPrediction();
  step = index;
  const PassStep &current = steps.steps()[index];
  QString previous = index > 0 ? steps.steps()[index - 1].ir : QString();
  showShownIr();
  diff.setTexts(previous, current.ir);
  QString doc = PassDocs::instance().markdown(current.name);
  passDoc->setMarkdown(
      !doc.isEmpty() ? doc
      : index == 0
          ? tr("### %1\n\nThe IR as the front end built it, before any pass.")
                .arg(current.name)
          : tr("### %1\n\nNo declaration describes this pass (a Python "
               "pass, a plugin's, or one MLIR registers without TableGen).")
                .arg(current.name));
  context.status(
      tr("Step %1 of %2: %3 (%4, %5 ms)%6")
          .arg(index)
          .arg(steps.rowCount() - 1)
          .arg(current.name, current.stage)
          .arg(current.ms, 0, 'f', 3)
          .arg(current.changed ? tr(", changed the IR") : tr(", no change")));
  requestGraph();
}

bool PassExplorerPage::stepForward() {
  QModelIndex next = visibleSteps.mapFromSource(steps.index(step, 0));
  int row = next.isValid() ? next.row() + 1 : 0;
  if (row >= visibleSteps.rowCount())
    return false;
  int target = visibleSteps.mapToSource(visibleSteps.index(row, 0)).row();
  if (predictMode && steps.steps()[target].changed)
    askPrediction(target);
  else
    selectStep(target);
  return true;
}

bool PassExplorerPage::stepBack() {
  QModelIndex current = visibleSteps.mapFromSource(steps.index(step, 0));
  if (!current.isValid() || current.row() == 0)
    return false;
  selectStep(
      visibleSteps.mapToSource(visibleSteps.index(current.row() - 1, 0)).row());
  return true;
}

void PassExplorerPage::setHideUnchanged(bool hide) {
  if (hideUnchangedBox->isChecked() != hide)
    hideUnchangedBox->setChecked(hide);
  visibleSteps.setHideUnchanged(hide);
  QSettings().setValue("passes/hideUnchanged", hide);
  if (step >= 0) {
    QModelIndex index = visibleSteps.mapFromSource(steps.index(step, 0));
    if (index.isValid())
      stepTable->setCurrentIndex(index);
  }
}

void PassExplorerPage::setShowBefore(bool before) {
  if (beforeBox->isChecked() != before)
    beforeBox->setChecked(before); // re-enters through toggled()
  if (step < 0)
    return;
  showShownIr();
  requestGraph();
}

bool PassExplorerPage::showingBefore() const {
  // Side by side shows both: the main graph stays after the pass.
  return beforeBox->isChecked() && step > 0 && !sideBySide();
}

void PassExplorerPage::showShownIr() {
  const QVector<PassStep> &all = steps.steps();
  linking = true;
  irText->setPlainText(all[showingBefore() ? step - 1 : step].ir);
  linking = false;
}

void PassExplorerPage::requestGraph() {
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
  bool both = sideBySide();
  graphStatus->setText(tr("Laying out the graph..."));
  if (graphWatcher.isRunning())
    return; // graphReady() picks up the newest request
  graphWatcher.setFuture(QtConcurrent::run([=] {
    return buildJob(sequence, s, ir, previous, collapse, before, both);
  }));
}

void PassExplorerPage::graphReady() {
  GraphJob job = graphWatcher.result();
  if (job.sequence != graphSequence) {
    // The user moved on while this one was laid out: lay out the latest.
    --graphSequence;
    requestGraph();
    return;
  }
  shownGraph = job;
  ops.setGraph(job.stepGraph.graph);
  launches.setLaunches(job.stepGraph.graph.launches);
  showBeforeSide(job);
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

void PassExplorerPage::applyHeat() {
  const LatencyHeatIndex &index = context.latencyHeat();
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

} // namespace cuvil::workbench
