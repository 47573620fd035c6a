//===- Lesson.cpp - A lesson of the Workbench, read from its folder -------===//

#include "Lesson.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

using namespace cuvil::workbench;

namespace {

const QStringList kStepKeys = {"text", "open", "pass", "before",
                               "find", "run",  "page", "question"};
const QStringList kPages = {"compile", "profile", "lessons"};

} // namespace

bool cuvil::workbench::readLessonStep(const QJsonValue &value,
                                      const QString &where, LessonStep &step,
                                      QString &error) {
  if (!value.isObject()) {
    error = where + ": not an object";
    return false;
  }
  QJsonObject o = value.toObject();
  for (const QString &key : o.keys())
    if (!kStepKeys.contains(key)) {
      error = where + ": unknown field '" + key +
              "' (fields: " + kStepKeys.join(", ") + ")";
      return false;
    }
  step.text = o.value("text").toString();
  if (step.text.trimmed().isEmpty()) {
    error = where + ": 'text' is missing or empty";
    return false;
  }
  step.open = o.value("open").toBool();
  step.pass = o.value("pass").toString();
  step.before = o.value("before").toBool();
  step.find = o.value("find").toString();
  step.run = o.value("run").toBool();
  step.page = o.value("page").toString();
  if (!step.page.isEmpty() && !kPages.contains(step.page)) {
    error = where + ": 'page' must be one of " + kPages.join(", ");
    return false;
  }
  if (step.before && step.pass.isEmpty()) {
    error = where + ": 'before' needs a 'pass'";
    return false;
  }
  if (o.contains("question")) {
    QJsonObject q = o.value("question").toObject();
    step.question.prompt = q.value("prompt").toString();
    for (const QJsonValue &c : q.value("choices").toArray())
      step.question.choices << c.toString();
    step.question.answer = q.value("answer").toInt(-1);
    step.question.explain = q.value("explain").toString();
    if (step.question.prompt.isEmpty() || step.question.choices.size() < 2 ||
        step.question.answer < 0 ||
        step.question.answer >= step.question.choices.size()) {
      error = where +
              ": a question needs a 'prompt', two or more 'choices' and an "
              "'answer' indexing them (from 0)";
      return false;
    }
  }
  return true;
}

namespace {
/// The JSON object in `file`; false with `error` naming the file.
bool readObject(const QString &file, QJsonObject &object, QString &error) {
  QFile f(file);
  if (!f.open(QIODevice::ReadOnly)) {
    error = file + ": cannot read it: " + f.errorString();
    return false;
  }
  QJsonParseError parse;
  QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &parse);
  if (!doc.isObject()) {
    error = QString("%1: not a JSON object (%2 at offset %3)")
                .arg(file, parse.errorString())
                .arg(parse.offset);
    return false;
  }
  object = doc.object();
  return true;
}
} // namespace

bool cuvil::workbench::loadLesson(const QString &folder, Lesson &lesson,
                                  QString &error) {
  QString file = QDir(folder).filePath("lesson.json");
  QJsonObject o;
  if (!readObject(file, o, error))
    return false;
  lesson = Lesson();
  lesson.id = QFileInfo(folder).fileName();
  lesson.folder = QFileInfo(folder).absoluteFilePath();
  lesson.title = o.value("title").toString();
  lesson.summary = o.value("summary").toString();
  if (lesson.title.isEmpty()) {
    error = file + ": 'title' is missing";
    return false;
  }
  QString model = o.value("model").toString();
  lesson.model = QDir(folder).absoluteFilePath(model);
  if (model.isEmpty() || !QFileInfo(lesson.model).isFile()) {
    error = file + ": 'model' must name a file in or next to the lesson (" +
            (model.isEmpty() ? QString("missing") : lesson.model) + ")";
    return false;
  }
  QJsonArray steps = o.value("steps").toArray();
  if (steps.isEmpty()) {
    error = file + ": 'steps' is missing or empty";
    return false;
  }
  for (int i = 0; i < steps.size(); ++i) {
    LessonStep step;
    if (!readLessonStep(steps[i], QString("%1: step %2").arg(file).arg(i + 1),
                        step, error))
      return false;
    lesson.steps << step;
  }
  return true;
}

QList<Lesson> cuvil::workbench::loadLessons(const QString &root,
                                            QStringList &errors) {
  QList<Lesson> lessons;
  QDir dir(root);
  for (const QString &name :
       dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
    Lesson lesson;
    QString error;
    if (loadLesson(dir.filePath(name), lesson, error))
      lessons << lesson;
    else
      errors << error;
  }
  return lessons;
}

bool cuvil::workbench::loadInterviewDeck(const QString &file,
                                         QList<InterviewQuestion> &deck,
                                         QString &error) {
  QJsonObject root;
  if (!readObject(file, root, error))
    return false;
  QJsonArray questions = root.value("questions").toArray();
  if (questions.isEmpty()) {
    error = file + ": 'questions' is missing or empty";
    return false;
  }
  deck.clear();
  QDir folder = QFileInfo(file).dir();
  for (int i = 0; i < questions.size(); ++i) {
    QJsonObject o = questions[i].toObject();
    InterviewQuestion q;
    q.id = o.value("id").toString();
    q.topic = o.value("topic").toString();
    q.question = o.value("question").toString();
    q.answer = o.value("answer").toString();
    QString where = QString("%1: question %2").arg(file).arg(i + 1);
    if (q.id.isEmpty() || q.topic.isEmpty() || q.question.isEmpty() ||
        q.answer.isEmpty()) {
      error = where + ": 'id', 'topic', 'question' and 'answer' are required";
      return false;
    }
    QString model = o.value("model").toString();
    q.model = folder.absoluteFilePath(model);
    if (model.isEmpty() || !QFileInfo(q.model).isFile()) {
      error = where + ": 'model' must name the demonstration's model file";
      return false;
    }
    if (!readLessonStep(o.value("demo"), where + ": demo", q.demo, error))
      return false;
    deck << q;
  }
  return true;
}
