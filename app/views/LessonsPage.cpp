//===- LessonsPage.cpp - Lessons that walk through the compiler -----------===//

#include "LessonsPage.h"

#include "InterviewPanel.h"
#include "WorkbenchContext.h"

#include <QButtonGroup>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QSplitter>
#include <QTabWidget>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace cuvil::workbench {

namespace {
QString progressKey(const QString &id, const char *what) {
  return QString("lessons/%1/%2").arg(id, what);
}
} // namespace

LessonsPage::LessonsPage(WorkbenchContext &context, QWidget *parent)
    : WorkbenchPage(context, parent) {
  auto *split = new QSplitter(Qt::Vertical, this);
  list = new QListWidget(split);
  auto *panel = new QWidget(split);
  auto *column = new QVBoxLayout(panel);
  heading = new QLabel(panel);
  heading->setWordWrap(true);
  text = new QTextBrowser(panel);
  text->setOpenExternalLinks(true);
  questionBox = new QGroupBox(tr("Question"), panel);
  auto *questionLayout = new QVBoxLayout(questionBox);
  choicesLayout = new QVBoxLayout;
  questionLayout->addLayout(choicesLayout);
  choices = new QButtonGroup(this);
  checkButton = new QPushButton(tr("Check my answer"), questionBox);
  feedback = new QLabel(questionBox);
  feedback->setWordWrap(true);
  questionLayout->addWidget(checkButton);
  questionLayout->addWidget(feedback);
  auto *nav = new QHBoxLayout;
  backButton = new QPushButton(tr("Back"), panel);
  nextButton = new QPushButton(tr("Next"), panel);
  position = new QLabel(panel);
  nav->addWidget(backButton);
  nav->addStretch();
  nav->addWidget(position);
  nav->addStretch();
  nav->addWidget(nextButton);
  column->addWidget(heading);
  column->addWidget(text, 1);
  column->addWidget(questionBox);
  column->addLayout(nav);
  split->setStretchFactor(1, 4);
  // Lessons, and interview practice beside them.
  auto *modes = new QTabWidget(this);
  modes->setDocumentMode(true);
  modes->addTab(split, tr("Lessons"));
  interview = new InterviewPanel(context, modes);
  modes->addTab(interview, tr("Interview practice"));
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(modes);

  connect(list, &QListWidget::currentRowChanged, this, [this](int row) {
    if (row >= 0 && row < lessonList.size() && row != lesson)
      selectLesson(lessonList[row].id);
  });
  connect(nextButton, &QPushButton::clicked, this, [this] { next(); });
  connect(backButton, &QPushButton::clicked, this, [this] { back(); });
  connect(checkButton, &QPushButton::clicked, this,
          [this] { answer(choices->checkedId()); });

  QString root = bundledResource("resources/lessons");
  if (!root.isEmpty())
    loadFrom(root);
  else
    showStep(-1, false);
}

void LessonsPage::loadFrom(const QString &root) {
  QStringList errors;
  lessonList = loadLessons(root, errors);
  for (const QString &error : errors)
    context.console(tr("Lesson not loaded: %1\n").arg(error),
                    WorkbenchContext::Tone::Error);
  lesson = step = -1;
  refreshList();
  showStep(-1, false);
}

void LessonsPage::refreshList() {
  QSignalBlocker block(list);
  int row = list->currentRow();
  list->clear();
  QSettings settings;
  for (const Lesson &l : lessonList) {
    bool done = settings.value(progressKey(l.id, "done"), false).toBool();
    list->addItem((done ? QString::fromUtf8("\u2713 ") : QString("   ")) +
                  l.title);
    list->item(list->count() - 1)->setToolTip(l.summary);
  }
  list->setCurrentRow(lesson >= 0 ? lesson : row);
}

const Lesson *LessonsPage::currentLesson() const {
  return lesson >= 0 && lesson < lessonList.size() ? &lessonList[lesson]
                                                   : nullptr;
}

bool LessonsPage::selectLesson(const QString &id) {
  for (int i = 0; i < lessonList.size(); ++i) {
    if (lessonList[i].id != id)
      continue;
    lesson = i;
    {
      QSignalBlocker block(list);
      list->setCurrentRow(i);
    }
    int saved = QSettings().value(progressKey(id, "step"), 0).toInt();
    saved = std::clamp(saved, 0, int(lessonList[i].steps.size()) - 1);
    // Resuming mid-lesson: its model must be the open one.
    if (saved > 0 && context.file() != lessonList[i].model)
      context.requestOpen(lessonList[i].model);
    showStep(saved, true);
    return true;
  }
  return false;
}

bool LessonsPage::next() {
  const Lesson *l = currentLesson();
  if (!l)
    return false;
  if (step + 1 >= l->steps.size()) {
    QSettings().setValue(progressKey(l->id, "done"), true);
    refreshList();
    feedback->setText(tr("Lesson finished."));
    return false;
  }
  showStep(step + 1, true);
  return true;
}

bool LessonsPage::back() {
  if (!currentLesson() || step <= 0)
    return false;
  showStep(step - 1, false);
  return true;
}

void LessonsPage::showStep(int index, bool act) {
  const Lesson *l = currentLesson();
  if (!l || index < 0) {
    step = -1;
    heading->setText(lessonList.isEmpty()
                         ? tr("No lessons found (resources/lessons).")
                         : tr("<b>Lessons</b>: pick one above."));
    text->setMarkdown(
        tr("Each lesson opens a model and walks through what the compiler "
           "does to it, with the graph, the IR and the profile beside the "
           "text. Your place in each lesson is remembered."));
    questionBox->hide();
    backButton->setEnabled(false);
    nextButton->setEnabled(false);
    position->clear();
    return;
  }
  step = index;
  const LessonStep &s = l->steps[index];
  heading->setText(QString("<b>%1</b>").arg(l->title.toHtmlEscaped()));
  text->setMarkdown(s.text);
  position->setText(tr("Step %1 of %2").arg(index + 1).arg(l->steps.size()));
  backButton->setEnabled(index > 0);
  nextButton->setEnabled(true);
  nextButton->setText(index + 1 < l->steps.size() ? tr("Next") : tr("Finish"));
  showQuestion(s.question);
  QSettings().setValue(progressKey(l->id, "step"), index);
  if (act)
    performStep(context, s, l->model);
  emit stepShown(l->id, index);
}

void performStep(WorkbenchContext &context, const LessonStep &s,
                 const QString &model) {
  if (s.open)
    context.requestOpen(model);
  if (!s.pass.isEmpty())
    context.requestPass(s.pass, s.before);
  if (!s.find.isEmpty())
    context.requestFindOps(s.find);
  if (s.run)
    context.requestRunCompiled();
  if (!s.page.isEmpty())
    context.showPage(s.page);
}

void LessonsPage::showQuestion(const LessonQuestion &q) {
  for (QAbstractButton *b : choices->buttons()) {
    choices->removeButton(b);
    delete b;
  }
  feedback->clear();
  questionBox->setVisible(q.valid());
  if (!q.valid())
    return;
  questionBox->setTitle(q.prompt);
  for (int i = 0; i < q.choices.size(); ++i) {
    auto *choice = new QRadioButton(q.choices[i], questionBox);
    choices->addButton(choice, i);
    choicesLayout->addWidget(choice);
  }
}

bool LessonsPage::answer(int choice) {
  const Lesson *l = currentLesson();
  if (!l || step < 0 || !l->steps[step].question.valid())
    return false;
  const LessonQuestion &q = l->steps[step].question;
  if (choice < 0 || choice >= q.choices.size()) {
    feedback->setText(tr("Pick an answer first."));
    return false;
  }
  if (QAbstractButton *b = choices->button(choice))
    b->setChecked(true);
  bool right = choice == q.answer;
  feedback->setText((right ? tr("<b>Right.</b> ")
                           : tr("<b>Not quite</b>: the answer is "
                                "\"%1\". ")
                                 .arg(q.choices[q.answer].toHtmlEscaped())) +
                    q.explain.toHtmlEscaped());
  return right;
}

QString LessonsPage::stepText() const { return text->toPlainText(); }

QString LessonsPage::feedbackText() const { return feedback->text(); }

} // namespace cuvil::workbench
