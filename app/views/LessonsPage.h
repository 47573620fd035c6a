//===- LessonsPage.h - Lessons that walk through the compiler ----*- C++
//-*-===//
//
// The Lessons panel, docked beside the pages: the bundled lessons
// (resources/lessons) above, the current step's text below with Back/Next
// and, where the step asks one, a multiple-choice question. Arriving at a step
// performs its actions on the rest of the Workbench through the
// WorkbenchContext (open the lesson's model, show a pass, find ops, run the
// compiled function, bring a page to the front), so the text sits beside the
// live views. Progress is remembered per lesson.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_LESSONSPAGE_H
#define CUVIL_WORKBENCH_LESSONSPAGE_H

#include "Lesson.h"
#include "WorkbenchPage.h"

class QButtonGroup;
class QGroupBox;
class QLabel;
class QListWidget;
class QPushButton;
class QTextBrowser;
class QVBoxLayout;

namespace cuvil::workbench {

class InterviewPanel;

/// Performs `step`'s actions on the Workbench: open `model`, show a pass,
/// find ops, run, bring a page to the front (lessons and demonstrations).
void performStep(WorkbenchContext &context, const LessonStep &step,
                 const QString &model);

class LessonsPage : public WorkbenchPage {
  Q_OBJECT
public:
  LessonsPage(WorkbenchContext &context, QWidget *parent);

  QString pageId() const override { return "lessons"; }
  QString title() const override { return tr("Lessons"); }
  bool sidePanel() const override { return true; }

  const QList<Lesson> &lessons() const { return lessonList; }
  /// Loads the lessons under `root` instead of the bundled ones (tests).
  void loadFrom(const QString &root);
  /// Opens lesson `id` at its remembered step (its first the first time).
  bool selectLesson(const QString &id);
  const Lesson *currentLesson() const;
  int currentStep() const { return step; }
  /// Moves to the next/previous step; false at the end/start. Next performs
  /// the step's actions; Back only shows its text.
  bool next();
  bool back();
  /// Answers the current step's question; whether it was right.
  bool answer(int choice);
  QString stepText() const;
  QString feedbackText() const;

  /// The interview practice tab.
  InterviewPanel *interviewPanel() const { return interview; }

signals:
  void stepShown(const QString &lesson, int step);

private:
  void showStep(int index, bool act);
  void showQuestion(const LessonQuestion &q);
  void refreshList();

  QList<Lesson> lessonList;
  int lesson = -1;
  int step = -1;
  QListWidget *list = nullptr;
  QLabel *heading = nullptr;
  QTextBrowser *text = nullptr;
  QGroupBox *questionBox = nullptr;
  QVBoxLayout *choicesLayout = nullptr;
  QButtonGroup *choices = nullptr;
  QPushButton *checkButton = nullptr;
  QLabel *feedback = nullptr;
  QLabel *position = nullptr;
  QPushButton *backButton = nullptr;
  QPushButton *nextButton = nullptr;
  InterviewPanel *interview = nullptr;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_LESSONSPAGE_H
