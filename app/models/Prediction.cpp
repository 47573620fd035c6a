//===- Prediction.cpp - Scoring a guess of what a pass will do ------------===//

#include "Prediction.h"

#include <QCoreApplication>

using namespace cuvil::workbench;

namespace {
QString tr(const char *text) {
  return QCoreApplication::translate("Prediction", text);
}
} // namespace

double PredictionScore::f1() const {
  int predicted = hits + extra, truth = hits + missed;
  if (predicted + truth == 0)
    return 1.0;
  return 2.0 * hits / (predicted + truth);
}

QString PredictionScore::summary(const QString &pass) const {
  int truth = hits + missed;
  int percent = static_cast<int>(f1() * 100 + 0.5);
  if (truth == 0)
    return hits + extra == 0
               ? tr("Right: %1 leaves this graph's ops alone (score 100%).")
                     .arg(pass)
               : tr("%1 leaves this graph's ops alone; you marked %2 (score "
                    "0%).")
                     .arg(pass)
                     .arg(extra);
  QString text = tr("You found %1 of the %2 ops %3 replaces or removes")
                     .arg(hits)
                     .arg(truth)
                     .arg(pass);
  if (extra)
    text += tr("; %1 you marked stay").arg(extra);
  return text + tr(" (score %1%).").arg(percent);
}

PredictionScore cuvil::workbench::scorePrediction(const QSet<int> &predicted,
                                                  const QSet<int> &truth) {
  PredictionScore score;
  for (int id : predicted)
    (truth.contains(id) ? score.hits : score.extra)++;
  score.missed = truth.size() - score.hits;
  return score;
}
