//===- MainWindowRun.cpp - The worker's replies, runs and stops -----------===//

#include "MainWindow.h"

#include <QFileInfo>
#include <QPlainTextEdit>
#include <QStatusBar>

namespace cuvil::workbench {
namespace {
const QColor kError(0xc0, 0x20, 0x20);
const QColor kInfo(0x20, 0x60, 0xc0);
} // namespace

void MainWindow::connectWorker() {
  WorkerClient &client = context.worker();
  connect(&client, &WorkerClient::stateChanged, this,
          [this] { updateActions(); });
  connect(&client, &WorkerClient::consoleOutput, this,
          [this](const QString &text, bool isError) {
            appendConsole(text, isError ? kError : QColor());
          });
  connect(&client, &WorkerClient::compilationReported, this,
          [this](const CompilationRecord &record) {
            appendConsole(
                tr("Compiled %1(%2) for %3: %4 passes, %5 ms\n")
                    .arg(record.function, record.inputSummary(), record.target)
                    .arg(record.steps.size() - 1)
                    .arg(record.compileMs, 0, 'f', 1),
                kInfo);
          });
  connect(&client, &WorkerClient::exceptionRaised, this,
          [this](const UserException &e) {
            appendConsole(tr("The model file raised %1\n").arg(e.summary()),
                          kError);
            statusBar()->showMessage(e.summary());
          });
  connect(
      &client, &WorkerClient::runFinished, this,
      [this](bool ok, double seconds) {
        appendConsole(
            ok ? tr("Finished in %1 s\n").arg(seconds, 0, 'f', 2)
               : tr("Ended with an error after %1 s\n").arg(seconds, 0, 'f', 2),
            ok ? kInfo : kError);
        if (context.compilations().rowCount() == 0 && ok)
          appendConsole(tr("The file made no compilations: call a "
                           "@cuvil.jit function with NumPy arrays, or "
                           "declare a model (cuvil_model(), or model and "
                           "example_inputs) to compile it.\n"),
                        kInfo);
        emit runFinished(ok);
      });
  connect(&client, &WorkerClient::workerEnded, this,
          [this](const QString &description, bool unexpected) {
            appendConsole(description + "\n", unexpected ? kError : kInfo);
            statusBar()->showMessage(description);
            emit runFinished(false);
          });
  connect(&client, &WorkerClient::executed, this, [this](const RunResult &r) {
    const CompilationRecord *record = context.compilations().record(r.index);
    QString text =
        tr("%1: compiled code %2 ms median over %3 runs (fastest %4 ms); "
           "%5 took %6 ms; max |error| vs %5 %7\n")
            .arg(record ? record->function : QString("#%1").arg(r.index))
            .arg(r.latencyMs, 0, 'f', 3)
            .arg(r.runs)
            .arg(r.minMs, 0, 'f', 3)
            .arg(r.reference)
            .arg(r.referenceMs, 0, 'f', 3)
            .arg(r.maxError, 0, 'g', 3);
    if (!r.copies.isEmpty())
      text += tr("%1: %2\n")
                  .arg(record ? record->function : QString("#%1").arg(r.index),
                       r.copies);
    appendConsole(text, kInfo);
    statusBar()->showMessage(text.trimmed());
    emit executedCompiled(r);
  });
  connect(&client, &WorkerClient::exported, this,
          [this](const QString &kind, const QString &path, qint64 bytes) {
            appendConsole(
                tr("Exported %1 to %2 (%3 bytes)\n").arg(kind, path).arg(bytes),
                kInfo);
          });
  connect(&client, &WorkerClient::requestFailed, this,
          [this](const QString &request, const QString &message) {
            appendConsole(tr("%1 failed: %2\n").arg(request, message), kError);
            statusBar()->showMessage(message);
          });
}

void MainWindow::runCompiled() {
  const CompilationRecord *record = context.currentRecord();
  if (!record) {
    appendConsole(tr("Nothing to run yet: open a model file that calls a "
                     "@cuvil.jit function or declares a model.\n"),
                  kError);
    return;
  }
  appendConsole(tr("Running the compiled function on the recorded inputs\n"),
                kInfo);
  // The record's own target: the worker runs what it compiled.
  context.worker().execute(record->index, record->target);
}

void MainWindow::stopRun() {
  appendConsole(tr("Stopping the worker\n"), kInfo);
  context.worker().stop();
}

} // namespace cuvil::workbench
