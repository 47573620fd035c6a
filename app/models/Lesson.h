//===- Lesson.h - A lesson of the Workbench, read from its folder -*- C++
//-*-===//
//
// A lesson is a folder under resources/lessons/: `lesson.json` (title, the
// model file it opens, its steps) and the model. Each step has Markdown text
// and may act on the Workbench: open the model, show a pass (before or
// after it), find ops on the graph, run the compiled function, bring a page
// to the front, or ask a multiple-choice question. The format is checked
// when read: an error names the file, the step and the field.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_LESSON_H
#define CUVIL_WORKBENCH_LESSON_H

#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>

namespace cuvil::workbench {

struct LessonQuestion {
  QString prompt;
  QStringList choices;
  int answer = -1; ///< index into choices
  QString explain; ///< shown after answering
  bool valid() const { return answer >= 0; }
};

struct LessonStep {
  QString text;        ///< Markdown
  bool open = false;   ///< open the lesson's model (runs it)
  QString pass;        ///< show the first step of this pass
  bool before = false; ///< ... the graph before it
  QString find;        ///< select the ops whose name contains this
  bool run = false;    ///< Run Compiled Function
  QString page;        ///< bring this page to the front ("compile", "profile")
  LessonQuestion question;
};

struct Lesson {
  QString id;     ///< the folder's name, e.g. "04-fusion"
  QString folder; ///< absolute path
  QString title;
  QString summary;
  QString model; ///< absolute path of the model file
  QList<LessonStep> steps;
};

/// Reads one step from `value` (`where` names it in errors: "file: step 3");
/// also the demonstrations of interview questions.
bool readLessonStep(const QJsonValue &value, const QString &where,
                    LessonStep &step, QString &error);

/// Reads `folder`/lesson.json; false with `error` naming what is wrong.
bool loadLesson(const QString &folder, Lesson &lesson, QString &error);

/// The lessons under `root` (one folder each), sorted by folder name; the
/// errors of those that do not load go to `errors`.
QList<Lesson> loadLessons(const QString &root, QStringList &errors);

} // namespace cuvil::workbench

namespace cuvil::workbench {

/// One interview practice question: a topic, the question, a model answer
/// (Markdown, revealed after the learner has written theirs) and a live
/// demonstration in the Workbench (a lesson step run on `model`).
struct InterviewQuestion {
  QString id;
  QString topic;
  QString question;
  QString answer;
  QString model; ///< absolute path of the demonstration's model file
  LessonStep demo;
};

/// Reads the deck `file` (resources/interview/questions.json); false with
/// `error` naming the question and field that are wrong.
bool loadInterviewDeck(const QString &file, QList<InterviewQuestion> &deck,
                       QString &error);

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_LESSON_H
