//===- InterviewPanel.cpp - Practice questions for AI-compiler interviews -===//

#include "InterviewPanel.h"

#include "LessonsPage.h"
#include "WorkbenchContext.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSpinBox>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>

namespace cuvil::workbench {

namespace {
constexpr int kMockQuestions = 4;
} // namespace

InterviewPanel::InterviewPanel(WorkbenchContext &context, QWidget *parent)
    : QWidget(parent), context(context) {
  auto *column = new QVBoxLayout(this);
  list = new QListWidget(this);
  list->setMaximumHeight(140);
  question = new QLabel(this);
  question->setWordWrap(true);
  answer = new QPlainTextEdit(this);
  answer->setPlaceholderText(tr("Your answer, before you reveal the model "
                                "one"));
  model = new QTextBrowser(this);
  model->hide();
  status = new QLabel(this);
  status->setWordWrap(true);
  demoButton = new QPushButton(tr("Show it"), this);
  demoButton->setToolTip(tr("Run the question's demonstration in the "
                            "Workbench"));
  revealButton = new QPushButton(tr("Reveal answer"), this);
  nextButton = new QPushButton(tr("Next"), this);
  auto *buttons = new QHBoxLayout;
  buttons->addWidget(demoButton);
  buttons->addWidget(revealButton);
  buttons->addStretch();
  buttons->addWidget(nextButton);
  mockButton = new QPushButton(tr("Start mock interview"), this);
  minutes = new QSpinBox(this);
  minutes->setRange(1, 15);
  minutes->setValue(3);
  minutes->setSuffix(tr(" min per question"));
  auto *mockRow = new QHBoxLayout;
  mockRow->addWidget(mockButton);
  mockRow->addWidget(minutes);
  mockRow->addStretch();
  column->addWidget(list);
  column->addLayout(mockRow);
  column->addWidget(question);
  column->addWidget(answer, 1);
  column->addWidget(model, 1);
  column->addLayout(buttons);
  column->addWidget(status);

  clock.setInterval(1000);
  connect(&clock, &QTimer::timeout, this, &InterviewPanel::tick);
  connect(list, &QListWidget::currentRowChanged, this, [this](int row) {
    if (!mockRunning() && row != current)
      selectQuestion(row);
  });
  connect(demoButton, &QPushButton::clicked, this, &InterviewPanel::showDemo);
  connect(revealButton, &QPushButton::clicked, this, &InterviewPanel::reveal);
  connect(nextButton, &QPushButton::clicked, this, [this] { next(); });
  connect(mockButton, &QPushButton::clicked, this, [this] {
    startMock(kMockQuestions, minutes->value() * 60,
              QRandomGenerator::global()->generate());
  });
  QString file = bundledResource("resources/interview/questions.json");
  if (!file.isEmpty())
    loadDeck(file);
}

void InterviewPanel::loadDeck(const QString &file) {
  QString error;
  if (!loadInterviewDeck(file, deck, error)) {
    context.console(tr("Interview questions not loaded: %1\n").arg(error),
                    WorkbenchContext::Tone::Error);
    deck.clear();
  }
  QSignalBlocker block(list);
  list->clear();
  for (const InterviewQuestion &q : deck)
    list->addItem(q.topic + ": " + q.question);
  current = -1;
  selectQuestion(deck.isEmpty() ? -1 : 0);
}

void InterviewPanel::selectQuestion(int index) {
  bool valid = index >= 0 && index < deck.size();
  current = valid ? index : -1;
  {
    QSignalBlocker block(list);
    list->setCurrentRow(current);
  }
  question->setText(valid ? QString("<b>%1</b><br>%2")
                                .arg(deck[index].topic.toHtmlEscaped(),
                                     deck[index].question.toHtmlEscaped())
                          : tr("No practice questions found."));
  answer->clear();
  model->clear();
  model->hide();
  answerShown = false;
  demoButton->setEnabled(valid);
  revealButton->setEnabled(valid);
}

void InterviewPanel::setAnswer(const QString &text) {
  answer->setPlainText(text);
}

void InterviewPanel::reveal() {
  if (current < 0)
    return;
  model->setMarkdown(tr("**Model answer.** ") + deck[current].answer);
  model->show();
  answerShown = true;
}

QString InterviewPanel::modelAnswerText() const { return model->toPlainText(); }

void InterviewPanel::showDemo() {
  if (current < 0)
    return;
  const InterviewQuestion &q = deck[current];
  performStep(context, q.demo, q.model);
  status->setText(q.demo.text);
}

void InterviewPanel::startMock(int count, int seconds, unsigned seed) {
  QList<int> order;
  for (int i = 0; i < deck.size(); ++i)
    order << i;
  QRandomGenerator random(seed);
  std::shuffle(order.begin(), order.end(), random);
  mockOrder = order.mid(0, std::min<int>(count, order.size()));
  if (mockOrder.isEmpty())
    return;
  mockAnswers.clear();
  perQuestion = seconds;
  mockPosition = 0;
  list->setEnabled(false);
  selectQuestion(mockOrder[0]);
  left = perQuestion;
  clock.start();
  tick();
}

void InterviewPanel::tick() {
  if (!mockRunning())
    return;
  if (left > 0 && !revealed()) {
    status->setText(tr("Mock interview: question %1 of %2, %3:%4 left")
                        .arg(mockPosition + 1)
                        .arg(mockOrder.size())
                        .arg(left / 60)
                        .arg(left % 60, 2, 10, QChar('0')));
    --left;
    return;
  }
  if (!revealed()) {
    reveal();
    status->setText(tr("Time is up: compare with the model answer, then "
                       "Next."));
  }
}

bool InterviewPanel::next() {
  if (!mockRunning()) {
    if (current + 1 >= deck.size())
      return false;
    selectQuestion(current + 1);
    return true;
  }
  mockAnswers << answer->toPlainText().trimmed();
  if (++mockPosition >= mockOrder.size()) {
    finishMock();
    return false;
  }
  selectQuestion(mockOrder[mockPosition]);
  left = perQuestion;
  tick();
  return true;
}

void InterviewPanel::finishMock() {
  clock.stop();
  int answered = static_cast<int>(
      std::count_if(mockAnswers.begin(), mockAnswers.end(),
                    [](const QString &a) { return !a.isEmpty(); }));
  status->setText(tr("Mock interview over: %1 of %2 questions answered. Read "
                     "each model answer against yours; practise the topics "
                     "you left blank.")
                      .arg(answered)
                      .arg(mockOrder.size()));
  mockOrder.clear();
  mockPosition = -1;
  list->setEnabled(true);
}

QString InterviewPanel::statusText() const { return status->text(); }

} // namespace cuvil::workbench
