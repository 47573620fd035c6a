//===- Prediction.h - Scoring a guess of what a pass will do -----*- C++
//-*-===//
//
// "Predict the next pass": before a pass is shown, the learner clicks the
// ops of the graph before it that they expect the pass to replace or
// remove; the truth is what the graph diff marks. The score is the F1 of
// the two sets (a pass that changes nothing is predicted by clicking
// nothing), and a session keeps the running tally.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_PREDICTION_H
#define CUVIL_WORKBENCH_PREDICTION_H

#include <QSet>
#include <QString>

namespace cuvil::workbench {

struct PredictionScore {
  int hits = 0;   ///< predicted and replaced or removed
  int missed = 0; ///< replaced or removed but not predicted
  int extra = 0;  ///< predicted but left alone
  /// 2·hits / (predicted + truth) in [0, 1]; 1 when both are empty.
  double f1() const;
  /// "You found 3 of the 5 ops ... (score 86%)".
  QString summary(const QString &pass) const;
};

PredictionScore scorePrediction(const QSet<int> &predicted,
                                const QSet<int> &truth);

/// Predictions made in a session: how many, and their mean score.
struct PredictionTally {
  int count = 0;
  double total = 0;
  void add(const PredictionScore &score) {
    ++count;
    total += score.f1();
  }
  double mean() const { return count ? total / count : 0; }
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_PREDICTION_H
