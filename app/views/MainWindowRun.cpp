//===- MainWindowRun.cpp - Worker replies, runs and exports ---------------===//

#include "MainWindow.h"

#include "ProfilerPage.h"

#include "GraphView.h"
#include "SourceEditor.h"

#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QPlainTextEdit>
#include <QStatusBar>
#include <QTableView>

namespace cuvil::workbench {
namespace {
const QColor kError(0xc0, 0x20, 0x20);
const QColor kInfo(0x20, 0x60, 0xc0);
} // namespace

void MainWindow::connectWorker() {
  connect(&client, &WorkerClient::stateChanged, this,
          [this] { updateActions(); });
  connect(&client, &WorkerClient::consoleOutput, this,
          [this](const QString &text, bool isError) {
            appendConsole(text, isError ? kError : QColor());
          });
  connect(&client, &WorkerClient::compilationReported, this,
          [this](const CompilationRecord &record) {
            compilations.add(record);
            appendConsole(
                tr("Compiled %1(%2) for %3: %4 passes, %5 ms\n")
                    .arg(record.function, record.inputSummary(), record.target)
                    .arg(record.steps.size() - 1)
                    .arg(record.compileMs, 0, 'f', 1),
                kInfo);
            if (compilation < 0)
              compilationTable->selectRow(compilations.rowCount() - 1);
          });
  connect(&client, &WorkerClient::exceptionRaised, this,
          [this](const UserException &e) {
            appendConsole(tr("The model file raised %1\n").arg(e.summary()),
                          kError);
            if (QFileInfo(e.file) == QFileInfo(file) && e.line > 0)
              source->markLine(e.line, true);
            statusBar()->showMessage(e.summary());
          });
  connect(
      &client, &WorkerClient::runFinished, this,
      [this](bool ok, double seconds) {
        appendConsole(
            ok ? tr("Finished in %1 s\n").arg(seconds, 0, 'f', 2)
               : tr("Ended with an error after %1 s\n").arg(seconds, 0, 'f', 2),
            ok ? kInfo : kError);
        if (compilations.rowCount() == 0 && ok)
          appendConsole(tr("The file made no compilations: call a "
                           "@cuvil.jit function with NumPy arrays to "
                           "compile it.\n"),
                        kInfo);
        emit runFinished(ok);
      });
  connect(&client, &WorkerClient::workerEnded, this,
          [this](const QString &description, bool unexpected) {
            appendConsole(description + "\n", unexpected ? kError : kInfo);
            statusBar()->showMessage(description);
            if (!pendingExportKind.isEmpty()) {
              QString kind = pendingExportKind, path = pendingExportPath;
              pendingExportKind.clear();
              emit exportFinished(kind, path, false, description);
            }
            emit runFinished(false);
          });
  connect(&client, &WorkerClient::executed, this, [this](const RunResult &r) {
    const CompilationRecord *record = compilations.record(r.index);
    QString text =
        tr("%1: compiled code %2 ms median over %3 runs (fastest %4 ms); "
           "the Python function took %5 ms; max |error| vs NumPy %6\n")
            .arg(record ? record->function : QString("#%1").arg(r.index))
            .arg(r.latencyMs, 0, 'f', 3)
            .arg(r.runs)
            .arg(r.minMs, 0, 'f', 3)
            .arg(r.referenceMs, 0, 'f', 3)
            .arg(r.maxError, 0, 'g', 3);
    appendConsole(text, kInfo);
    statusBar()->showMessage(text.trimmed());
    if (!r.tracePath.isEmpty()) {
      profiler->openTrace(r.tracePath);
      if (auto *profileDock = findChild<QDockWidget *>("profileDock"))
        profileDock->raise();
    }
    emit executedCompiled(r);
  });
  connect(&client, &WorkerClient::exported, this,
          [this](const QString &kind, const QString &path, qint64 bytes) {
            pendingExportKind.clear();
            appendConsole(
                tr("Exported %1 to %2 (%3 bytes)\n").arg(kind, path).arg(bytes),
                kInfo);
            emit exportFinished(kind, path, true, {});
          });
  connect(&client, &WorkerClient::requestFailed, this,
          [this](const QString &request, const QString &message) {
            appendConsole(tr("%1 failed: %2\n").arg(request, message), kError);
            statusBar()->showMessage(message);
            if (request == "export" && !pendingExportKind.isEmpty()) {
              QString kind = pendingExportKind, path = pendingExportPath;
              pendingExportKind.clear();
              emit exportFinished(kind, path, false, message);
            }
          });
}

void MainWindow::runCompiled() {
  if (compilation < 0) {
    appendConsole(tr("Nothing to run yet: open a model file that calls a "
                     "@cuvil.jit function.\n"),
                  kError);
    return;
  }
  appendConsole(tr("Running the compiled function on the recorded inputs\n"),
                kInfo);
  // The record's own target: the worker runs what it compiled.
  const CompilationRecord *record = compilations.record(compilation);
  client.execute(record->index, record->target);
}

void MainWindow::stopRun() {
  appendConsole(tr("Stopping the worker\n"), kInfo);
  client.stop();
}

void MainWindow::writeFile(const QString &kind, const QString &path,
                           const QByteArray &data) {
  QFile out(path);
  if (!out.open(QIODevice::WriteOnly) || out.write(data) != data.size()) {
    QString message = tr("cannot write %1: %2; choose a writable location")
                          .arg(path, out.errorString());
    appendConsole(tr("Export failed: %1\n").arg(message), kError);
    emit exportFinished(kind, path, false, message);
    return;
  }
  appendConsole(
      tr("Exported %1 to %2 (%3 bytes)\n").arg(kind, path).arg(data.size()),
      kInfo);
  emit exportFinished(kind, path, true, {});
}

void MainWindow::exportArtifact(const QString &kind, const QString &path) {
  const CompilationRecord *record = compilations.record(compilation);
  auto fail = [&](const QString &message) {
    appendConsole(tr("Export failed: %1\n").arg(message), kError);
    emit exportFinished(kind, path, false, message);
  };
  if (!record)
    return fail(tr("no compilation is selected; open a model file first"));
  if (kind == "mlir") {
    if (step < 0)
      return fail(tr("no pass step is selected"));
    return writeFile(kind, path, steps.steps()[step].ir.toUtf8());
  }
  if (kind == "dot" || kind == "svg" || kind == "png") {
    if (shownGraph.stepGraph.dot.empty() || shownGraph.step != step)
      return fail(tr("the graph of this step is not laid out yet (or has no "
                     "function); wait for it to appear"));
    if (kind == "dot")
      return writeFile(kind, path,
                       QByteArray::fromStdString(shownGraph.stepGraph.dot));
    QByteArray data;
    QString error;
    if (!renderGraph(shownGraph.stepGraph.dot, kind.toLatin1().constData(),
                     data, error))
      return fail(error);
    return writeFile(kind, path, data);
  }
  if (kind == "llvm" || kind == "asm" || kind == "obj" || kind == "so") {
    pendingExportKind = kind;
    pendingExportPath = QFileInfo(path).absoluteFilePath();
    if (!client.exportArtifact(record->index, record->target, kind,
                               pendingExportPath))
      pendingExportKind.clear();
    return;
  }
  fail(tr("unknown export kind '%1'; use mlir, llvm, asm, obj, so, dot, svg "
          "or png")
           .arg(kind));
}

} // namespace cuvil::workbench
