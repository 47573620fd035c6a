//===- InterviewPanel.h - Practice questions for AI-compiler interviews -*- C++
//-*-===//
//
// A deck of practice questions (resources/interview/questions.json), each
// with a topic, a live demonstration in the Workbench and a model answer
// revealed once the learner has written theirs. A mock interview draws a
// few questions in random order, each against a countdown that reveals the
// model answer when it runs out, and ends with a summary.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_INTERVIEWPANEL_H
#define CUVIL_WORKBENCH_INTERVIEWPANEL_H

#include "Lesson.h"

#include <QTimer>
#include <QWidget>

class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTextBrowser;

namespace cuvil::workbench {

class WorkbenchContext;

class InterviewPanel : public QWidget {
  Q_OBJECT
public:
  InterviewPanel(WorkbenchContext &context, QWidget *parent);

  const QList<InterviewQuestion> &questions() const { return deck; }
  void loadDeck(const QString &file);
  void selectQuestion(int index);
  int currentQuestion() const { return current; }
  void setAnswer(const QString &text);
  /// Shows the model answer (the learner's stays beside it).
  void reveal();
  bool revealed() const { return answerShown; }
  QString modelAnswerText() const;
  /// Runs the question's demonstration in the Workbench.
  void showDemo();

  /// A mock interview of `count` questions drawn with `seed`, each with
  /// `seconds` on the clock.
  void startMock(int count, int seconds, unsigned seed);
  bool mockRunning() const { return !mockOrder.isEmpty(); }
  int secondsLeft() const { return left; }
  /// The next question of the mock interview (or of the deck); false at
  /// the end (the mock interview's summary is shown then).
  bool next();
  QString statusText() const;

private:
  void tick();
  void finishMock();

  WorkbenchContext &context;
  QList<InterviewQuestion> deck;
  int current = -1;
  bool answerShown = false; ///< the model answer of `current` is revealed
  QList<int> mockOrder;     ///< question indices of a running mock interview
  int mockPosition = -1;
  QStringList mockAnswers;
  int left = 0;
  int perQuestion = 0;
  QTimer clock;

  QListWidget *list = nullptr;
  QLabel *question = nullptr;
  QPlainTextEdit *answer = nullptr;
  QTextBrowser *model = nullptr;
  QLabel *status = nullptr;
  QPushButton *demoButton = nullptr;
  QPushButton *revealButton = nullptr;
  QPushButton *nextButton = nullptr;
  QPushButton *mockButton = nullptr;
  QSpinBox *minutes = nullptr;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_INTERVIEWPANEL_H
