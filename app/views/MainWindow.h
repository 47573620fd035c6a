//===- MainWindow.h - The Workbench's main window ---------------*- C++ -*-===//
#ifndef CUVIL_WORKBENCH_MAINWINDOW_H
#define CUVIL_WORKBENCH_MAINWINDOW_H

#include "CompilationListModel.h"
#include "DiffModel.h"
#include "GraphLayout.h"
#include "IrOpModel.h"
#include "PassStepModel.h"
#include "WorkerClient.h"

#include <QFutureWatcher>
#include <QMainWindow>

class QCheckBox;
class QLabel;
class QLineEdit;
class QMenu;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QTableView;

namespace cuvil::workbench {

class GraphView;
class ProfilerPage;
class SourceEditor;

/// The graph of one step, built and laid out off the GUI thread.
struct GraphJob {
  int sequence = 0;
  int step = 0;
  StepGraph stepGraph;
  GraphLayout layout;
  QString error;
  bool collapsed = false;
  bool before =
      false; ///< the previous step's graph, marking what the pass replaces
};

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit MainWindow(QWidget *parent = nullptr);
  ~MainWindow() override;

  /// The bundled example (resources/examples/mlp.py) when it can be found.
  static QString bundledExample();

  /// Loads the source and runs it in a fresh worker.
  void openFile(const QString &path);
  QString currentFile() const { return file; }

  /// Shows the first step of pass `name` (e.g. "cuvil-fuse-elementwise")
  /// when the next run's first compilation arrives.
  void showPassOnOpen(const QString &name) { initialPass = name; }

  /// Step navigation over the visible (filtered) pass list; the step index
  /// is the row of the full pipeline.
  void selectStep(int step);
  bool stepForward();
  bool stepBack();
  int currentStep() const { return step; }
  int stepCount() const { return steps.rowCount(); }
  void setHideUnchanged(bool hide);
  /// Shows the graph and IR before the selected pass, marking the ops it
  /// replaces or removes, instead of after it.
  void setShowBefore(bool before);

  /// Exports the current compilation: "mlir" (IR of the current step),
  /// "llvm", "asm", "obj", "so" (from the worker), "dot", "svg", "png" (the
  /// current step's graph). Ends with exportFinished.
  void exportArtifact(const QString &kind, const QString &path);
  /// Times the compiled code on the recorded inputs; ends with executed()
  /// or a console error.
  void runCompiled();
  void stopRun();

  /// Cross-links: a node of the current graph selects its IR line and
  /// Python line; an IR line or Python line selects its nodes.
  void selectNode(int id);
  void selectIrLine(int line);
  void selectSourceLine(int line);

  CompilationListModel &compilationModel() { return compilations; }
  PassStepModel &stepModel() { return steps; }
  IrOpModel &opModel() { return ops; }
  DiffModel &diffModel() { return diff; }
  GraphView *graphView() const { return graph; }
  ProfilerPage *profilerPage() const { return profiler; }
  SourceEditor *sourceEditor() const { return source; }
  QPlainTextEdit *irView() const { return irText; }
  QPlainTextEdit *consoleView() const { return console; }
  WorkerClient &workerClient() { return client; }
  int currentCompilation() const { return compilation; }
  const GraphJob &currentGraph() const { return shownGraph; }

signals:
  void runFinished(bool ok);
  void stepShown(int step, int nodes);
  void exportFinished(const QString &kind, const QString &path, bool ok,
                      const QString &message);
  void executedCompiled(const cuvil::workbench::RunResult &result);

protected:
  void closeEvent(QCloseEvent *event) override;
  void dragEnterEvent(QDragEnterEvent *event) override;
  void dropEvent(QDropEvent *event) override;

private:
  // MainWindow.cpp: widgets, menus, settings.
  void buildDocks();
  void buildActions();
  void updateRecentMenu();
  void updateActions();
  void openDialog();
  void appendConsole(const QString &text, const QColor &color = {});
  void exportDialog(const QString &kind);
  // MainWindowSteps.cpp: compilations, steps, graphs, cross-links.
  void showCompilation(int row);
  void requestGraph();
  bool showingBefore() const;
  void showShownIr();
  void graphReady();
  void markIrLine(int line);
  /// Paints the profile's latency per source line onto the graph.
  void applyHeat();
  /// A kernel, frame or op picked in the profile: its Python line.
  void showProfiledLocation(const QString &loc);
  // MainWindowRun.cpp: worker replies.
  void connectWorker();
  void writeFile(const QString &kind, const QString &path,
                 const QByteArray &data);

  WorkerClient client;
  CompilationListModel compilations;
  PassStepModel steps;
  ChangedStepFilter visibleSteps;
  IrOpModel ops;
  QSortFilterProxyModel *opFilter = nullptr;
  DiffModel diff;

  GraphView *graph = nullptr;
  SourceEditor *source = nullptr;
  QPlainTextEdit *irText = nullptr;
  QPlainTextEdit *console = nullptr;
  QTableView *compilationTable = nullptr;
  QTableView *stepTable = nullptr;
  QTableView *opTable = nullptr;
  QTableView *diffTable = nullptr;
  QCheckBox *hideUnchangedBox = nullptr;
  QCheckBox *collapseBox = nullptr;
  QCheckBox *beforeBox = nullptr;
  QCheckBox *heatBox = nullptr;
  ProfilerPage *profiler = nullptr;
  QLineEdit *searchEdit = nullptr;
  QLabel *graphStatus = nullptr;
  QMenu *recentMenu = nullptr;
  QAction *runAction = nullptr;
  QAction *stopAction = nullptr;
  QAction *executeAction = nullptr;
  QMenu *exportMenu = nullptr;

  QString file;
  int compilation = -1;
  int step = -1;
  int graphSequence = 0;
  bool linking = false; ///< guards cross-link feedback loops
  QString pendingExportKind, pendingExportPath;
  QString initialPass;
  QFutureWatcher<GraphJob> graphWatcher;
  GraphJob shownGraph;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_MAINWINDOW_H
