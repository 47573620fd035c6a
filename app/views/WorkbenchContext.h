//===- WorkbenchContext.h - What the Workbench's pages share ----*- C++ -*-===//
//
// The shell owns one context and hands it to every page: the worker that
// runs the open file, the compilations it reported, which one the pages act
// on, and the last profile's latency per source line. Pages never call each
// other: they ask the context (show a page, show a source location, write
// to the console) and listen to its signals, so a page is one class plus
// one line in WorkbenchPage.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_WORKBENCHCONTEXT_H
#define CUVIL_WORKBENCH_WORKBENCHCONTEXT_H

#include "CompilationListModel.h"
#include "LatencyHeat.h"
#include "WorkerClient.h"

#include <QColor>
#include <QObject>

namespace cuvil::workbench {

class WorkbenchContext : public QObject {
  Q_OBJECT
public:
  /// Console text colours.
  enum class Tone { Plain, Info, Error };
  Q_ENUM(Tone)

  explicit WorkbenchContext(QObject *parent = nullptr);

  WorkerClient &worker() { return client; }
  /// The compilations the current run reported (the worker's fill it).
  CompilationListModel &compilations() { return records; }

  /// The open model file (absolute path), empty before one.
  const QString &file() const { return openFile; }
  /// Starts over on `file` with its `source` text: drops the compilations
  /// and the current one, then emits fileOpened (the shell then runs it).
  void beginFile(const QString &file, const QString &source);

  /// The row of compilations() the pages act on (Run Compiled Function,
  /// exports), -1 when none; the page that lists them sets it.
  int currentCompilation() const { return current; }
  const CompilationRecord *currentRecord() const;
  void setCurrentCompilation(int row);

  /// Latency per source line of the last profile, empty before one.
  const LatencyHeatIndex &latencyHeat() const { return heat; }
  void setLatencyHeat(const LatencyHeatIndex &index);

  // Requests any page may make; the shell or the page that owns the
  // thing answers them.
  void console(const QString &text, Tone tone = Tone::Plain);
  void status(const QString &text);
  /// Brings the page with this id (WorkbenchPage::pageId) to the front.
  void showPage(const QString &id);
  /// Shows "file:line[:col]" (a kernel's or Python frame's location) in
  /// the source it belongs to.
  void showLocation(const QString &loc);
  // What a lesson asks of the shell and the pass explorer.
  /// Opens and runs `file`.
  void requestOpen(const QString &file) { emit openRequested(file); }
  /// Shows the first step of `pass` (the graph before it with `before`), at
  /// once or when the next compilation arrives.
  void requestPass(const QString &pass, bool before) {
    emit passRequested(pass, before);
  }
  /// Selects the graph's ops whose name contains `text`.
  void requestFindOps(const QString &text) { emit findOpsRequested(text); }
  /// Run Compiled Function on the current compilation.
  void requestRunCompiled() { emit runCompiledRequested(); }

signals:
  void fileOpened(const QString &file, const QString &source);
  void currentCompilationChanged(int row);
  void latencyHeatChanged();
  void consoleText(const QString &text,
                   cuvil::workbench::WorkbenchContext::Tone tone);
  void statusText(const QString &text);
  void pageRequested(const QString &id);
  void locationRequested(const QString &loc);
  void openRequested(const QString &file);
  void passRequested(const QString &pass, bool before);
  void findOpsRequested(const QString &text);
  void runCompiledRequested();

private:
  CompilationListModel records;
  QString openFile;
  int current = -1;
  LatencyHeatIndex heat;
  WorkerClient client; ///< last, so it ends first (its signals use the rest)
};

/// `relative` ("resources/examples/mlp.py") in the source tree
/// ($CUVIL_SOURCE_DIR or the build's) or the installed share/cuvil, or
/// empty when none has it.
QString bundledResource(const QString &relative);

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_WORKBENCHCONTEXT_H
