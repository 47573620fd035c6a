//===- PassExplorerPredict.cpp - Predicting what a pass will do -----------===//
//
// With Passes > Predict Each Pass on, stepping forward onto a pass that
// changes the IR shows the graph before it (and no diff) with a prompt: the
// learner clicks the ops they expect the pass to replace or remove (on the
// graph or in the op table) and presses Check. The guess is scored against
// the graph diff (PredictionScore: F1 of the two sets) and the real step is
// shown, the ops it replaced outlined. Works on any model.
//
//===----------------------------------------------------------------------===//

#include "PassExplorerPage.h"

#include "GraphView.h"
#include "WorkbenchContext.h"

#include <QAction>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace cuvil::workbench {

void PassExplorerPage::buildPredictBar(QWidget *panel) {
  predictBar = new QWidget(panel);
  predictBar->setObjectName("predictBar");
  auto *row = new QHBoxLayout(predictBar);
  row->setContentsMargins(6, 2, 6, 2);
  predictLabel = new QLabel(predictBar);
  predictLabel->setWordWrap(true);
  checkButton = new QPushButton(tr("Check"), predictBar);
  checkButton->setShortcut(Qt::CTRL | Qt::Key_Return);
  skipButton = new QPushButton(tr("Show the step"), predictBar);
  row->addWidget(predictLabel, 1);
  row->addWidget(checkButton);
  row->addWidget(skipButton);
  predictBar->setStyleSheet("#predictBar { background: #fff6d5; }");
  predictBar->hide();
  connect(checkButton, &QPushButton::clicked, this,
          [this] { checkPrediction(); });
  connect(skipButton, &QPushButton::clicked, this,
          &PassExplorerPage::skipPrediction);
}

void PassExplorerPage::setPredicting(bool on) {
  if (predictAction && predictAction->isChecked() != on)
    predictAction->setChecked(on); // re-enters through toggled()
  predictMode = on;
  if (!on) {
    endPrediction();
    predictBar->hide();
    return;
  }
  predictLabel->setText(
      tr("Predicting: step forward (Alt+→) to be asked what the next pass "
         "will do."));
  checkButton->setEnabled(false);
  skipButton->setEnabled(false);
  predictBar->show();
}

QString PassExplorerPage::predictionText() const {
  return predictLabel->text();
}

void PassExplorerPage::askPrediction(int target) {
  endPrediction();
  if (sideBySide())
    setSideBySide(false);
  selectStep(target);
  predictStep = target;
  predicted.clear();
  const PassStep &next = steps.steps()[target];
  // The graph and IR before the pass, and no diff to give the answer away.
  setShowBefore(true);
  QString previous = target > 0 ? steps.steps()[target - 1].ir : QString();
  diff.setTexts(previous, previous);
  predictLabel->setText(
      tr("<b>Predict %1</b> (%2): click the ops it will replace or remove, "
         "then Check. Clicking again unmarks.")
          .arg(next.name.toHtmlEscaped(), next.stage.toHtmlEscaped()));
  checkButton->setEnabled(true);
  skipButton->setEnabled(true);
  predictBar->show();
}

void PassExplorerPage::togglePrediction(int id) {
  if (predicted.contains(id))
    predicted.remove(id);
  else
    predicted.insert(id);
  graph->selectNodes(QList<int>(predicted.begin(), predicted.end()));
  context.status(tr("%n op(s) marked", "", predicted.size()));
}

bool PassExplorerPage::checkPrediction() {
  if (!awaitingPrediction())
    return false;
  // The truth is the diff of the graph before the pass: the ops it marks as
  // replaced or removed. It must be the one on screen.
  if (shownGraph.step != predictStep || !shownGraph.before) {
    context.status(tr("The graph is still being laid out"));
    return false;
  }
  QSet<int> truth;
  for (const graph::Node &node : shownGraph.stepGraph.graph.nodes)
    if (node.changed)
      truth.insert(node.id);
  PredictionScore score = scorePrediction(predicted, truth);
  tally.add(score);
  const PassStep &current = steps.steps()[predictStep];
  predictLabel->setText(
      score.summary(current.name) +
      tr(" Session: %n prediction(s), mean score %1%.", "", tally.count)
          .arg(static_cast<int>(tally.mean() * 100 + 0.5)));
  endPrediction();
  return true;
}

void PassExplorerPage::skipPrediction() {
  if (!awaitingPrediction())
    return;
  predictLabel->setText(tr("Shown without a prediction: %1.")
                            .arg(steps.steps()[predictStep].name));
  endPrediction();
}

void PassExplorerPage::endPrediction() {
  if (!awaitingPrediction())
    return;
  int shown = predictStep;
  predictStep = -1;
  predicted.clear();
  checkButton->setEnabled(false);
  skipButton->setEnabled(false);
  if (shown != step)
    return;
  // Reveal the step: the graph after it and the diff.
  QString previous = shown > 0 ? steps.steps()[shown - 1].ir : QString();
  diff.setTexts(previous, steps.steps()[shown].ir);
  setShowBefore(false);
}

} // namespace cuvil::workbench
