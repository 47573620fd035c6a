//===- PassExplorerPage.h - Compilations, passes, IR and graph --*- C++ -*-===//
//
// The Workbench's compile page: the compilations of the run, the selected
// one's pass steps, each step's IR, diff and graph, and the model's source,
// all cross-linked (a graph node selects its IR line and Python line, and
// the reverse). It owns that link state; the shell only hosts it.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_PASSEXPLORERPAGE_H
#define CUVIL_WORKBENCH_PASSEXPLORERPAGE_H

#include "DiffModel.h"
#include "GraphLayout.h"
#include "IrOpModel.h"
#include "KernelLaunchModel.h"
#include "PassStepModel.h"
#include "Prediction.h"
#include "WorkbenchPage.h"

#include <QFutureWatcher>
#include <QHash>
#include <QSet>

class QCheckBox;
class QDockWidget;
class QLabel;
class QLineEdit;
class QMainWindow;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QSplitter;
class QPushButton;
class QTableView;
class QTextBrowser;

namespace cuvil::workbench {

class CompilationListModel;
struct CompilationRecord;
class GraphView;
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
  /// Side by side: the previous step's graph as well (`stepGraph` is after
  /// the pass), each marking what the pass replaced or made.
  bool sideBySide = false;
  StepGraph beforeGraph;
  GraphLayout beforeLayout;
  QString beforeError;
};

class PassExplorerPage : public WorkbenchPage {
  Q_OBJECT
public:
  PassExplorerPage(WorkbenchContext &context, QWidget *parent);
  ~PassExplorerPage() override;

  QString pageId() const override { return "compile"; }
  QString title() const override { return tr("Compiler"); }
  void addMenuActions(const WorkbenchMenus &menus) override;
  QList<QAction *> viewActions() const override;
  void saveLayout(QSettings &settings) const override;
  void restoreLayout(QSettings &settings) override;

  /// Shows the first step of pass `name` (e.g. "cuvil-fuse-elementwise")
  /// when the next run's first compilation arrives.
  void showPassOnOpen(const QString &name) { initialPass = name; }
  /// Shows the first step of pass `name` (before it with `before`) now, or
  /// when the next compilation arrives if the shown one has no such pass.
  void showPass(const QString &name, bool before);

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
  /// Shows the graphs before and after the selected pass side by side, on
  /// one zoom and viewport; a node clicked in one selects its counterparts
  /// in the other (the same op, or the ops of its source line).
  void setSideBySide(bool on);
  bool sideBySide() const;

  /// "Predict the next pass": stepping forward onto a pass that changes the
  /// IR first shows the graph before it; the learner clicks the ops they
  /// expect it to replace or remove and checks (checkPrediction), which
  /// scores the guess against the real diff and shows the step.
  void setPredicting(bool on);
  bool predicting() const { return predictMode; }
  /// Whether a prediction is asked for (the graph before a pass is shown).
  bool awaitingPrediction() const { return predictStep >= 0; }
  const QSet<int> &predictedNodes() const { return predicted; }
  /// Scores the prediction, reveals the step; false when none is asked for
  /// or the graph is still being laid out.
  bool checkPrediction();
  void skipPrediction();
  const PredictionTally &predictionTally() const { return tally; }
  /// The prompt or the last result, as shown above the graph.
  QString predictionText() const;

  /// Exports the current compilation: "mlir" (IR of the current step),
  /// "llvm", "asm", "obj", "so", "c", "h", "wasm", "mjs", "wat" (from the
  /// worker, each where the compilation's target writes it), "dot", "svg",
  /// "png" (the current step's graph). Ends with exportFinished.
  void exportArtifact(const QString &kind, const QString &path);

  /// Cross-links: a node of the current graph selects its IR line and
  /// Python line; an IR line or Python line selects its nodes.
  void selectNode(int id);
  void selectIrLine(int line);
  void selectSourceLine(int line);
  /// Selects launch `row` of the kernel table: its op in the graph and the
  /// IR, its Python line.
  void selectLaunch(int row);

  PassStepModel &stepModel() { return steps; }
  IrOpModel &opModel() { return ops; }
  DiffModel &diffModel() { return diff; }
  /// The shown step's GPU kernel launches, in the "Kernels" dock (shown for
  /// compilations for the cuda target).
  KernelLaunchModel &launchModel() { return launches; }
  QTableView *kernelTableView() const { return kernelTable; }
  GraphView *graphView() const { return graph; }
  /// The graph before the pass, shown side by side (hidden otherwise).
  GraphView *beforeGraphView() const { return beforeGraph; }
  SourceEditor *sourceEditor() const { return source; }
  /// The code a target generated for the shown compilation (the c target's
  /// C, highlighted), in the "Target code" dock; empty for other targets.
  SourceEditor *targetCodeView() const { return targetCode; }
  /// The "Pass" dock: what the current step's pass does.
  QTextBrowser *passDocView() const { return passDoc; }
  QPlainTextEdit *irView() const { return irText; }
  /// "mlp(float32[64, 256], ...) for cpu: 47 passes, ..." of the shown
  /// compilation.
  QString headerText() const;
  const GraphJob &currentGraph() const { return shownGraph; }

signals:
  void stepShown(int step, int nodes);
  void exportFinished(const QString &kind, const QString &path, bool ok,
                      const QString &message);

private:
  // PassExplorerPage.cpp: widgets, the context's and worker's events.
  void buildGraphPanel();
  void buildDocks();
  void buildKernelDock(QDockWidget *irDock);
  void connectContext();
  void clearRun(const QString &source);
  void showHeader(const CompilationRecord *record);
  /// Asks the worker for the shown compilation's C (the c target) once it is
  /// idle, and shows or hides the "Target code" dock.
  void showTargetCode();
  QDockWidget *dock(const QString &title, const QString &name, QWidget *widget,
                    Qt::DockWidgetArea area);
  // PassExplorerSteps.cpp: compilations, steps, graphs.
  void showCompilation(int row);
  void requestGraph();
  bool showingBefore() const;
  void showShownIr();
  void graphReady();
  void applyHeat();
  // PassExplorerPredict.cpp: predicting a pass.
  void buildPredictBar(QWidget *panel);
  void askPrediction(int step);
  void togglePrediction(int id);
  void endPrediction();
  // PassExplorerCompare.cpp: side-by-side graphs.
  void showBeforeSide(const GraphJob &job);
  void selectCounterparts(GraphView *from, int id);
  // PassExplorerLinks.cpp: cross-links, exports.
  void markIrLine(int line);
  /// Marks the Python line of `loc` when it is in the shown file.
  void markSourceLine(const graph::SourceLoc &loc);
  void showLocation(const QString &loc);
  void exportDialog(const QString &kind);
  void writeFile(const QString &kind, const QString &path,
                 const QByteArray &data);
  void failExport(const QString &kind, const QString &path,
                  const QString &message);
  void finishWorkerExport(bool ok, const QString &message);

  CompilationListModel &compilations;
  PassStepModel steps;
  ChangedStepFilter visibleSteps;
  IrOpModel ops;
  QSortFilterProxyModel *opFilter = nullptr;
  DiffModel diff;
  KernelLaunchModel launches;

  QMainWindow *area = nullptr; ///< hosts the page's docks
  QLabel *header = nullptr;
  /// Export actions by artifact kind, enabled for what the shown
  /// compilation's target can write.
  QHash<QString, QAction *> exportActions;
  GraphView *graph = nullptr;
  GraphView *beforeGraph = nullptr;
  QCheckBox *sideBySideBox = nullptr;
  QSplitter *graphSplitter = nullptr; ///< the graphs before and after
  QWidget *predictBar = nullptr;
  QLabel *predictLabel = nullptr;
  QAction *predictAction = nullptr;
  QPushButton *checkButton = nullptr;
  QPushButton *skipButton = nullptr;
  bool predictMode = false;
  int predictStep = -1; ///< the step whose prediction is asked for, or -1
  QSet<int> predicted;  ///< node ids of the graph before that step
  PredictionTally tally;
  SourceEditor *source = nullptr;
  SourceEditor *targetCode = nullptr;
  QTextBrowser *passDoc = nullptr;
  QDockWidget *targetCodeDock = nullptr;
  /// Compilation index whose C the dock shows or was asked for (-1: none).
  int targetCodeIndex = -1;
  /// The stage it shows: "c" or "wat".
  QString targetCodeStage;
  bool targetCodeAsked = false;
  QPlainTextEdit *irText = nullptr;
  QTableView *compilationTable = nullptr;
  QTableView *stepTable = nullptr;
  QTableView *opTable = nullptr;
  QTableView *diffTable = nullptr;
  QTableView *kernelTable = nullptr;
  QLabel *kernelSummary = nullptr;
  QDockWidget *kernelDock = nullptr;
  QCheckBox *hideUnchangedBox = nullptr;
  QCheckBox *collapseBox = nullptr;
  QCheckBox *beforeBox = nullptr;
  QCheckBox *heatBox = nullptr;
  QLineEdit *searchEdit = nullptr;
  QLabel *graphStatus = nullptr;

  int compilation = -1;
  int step = -1;
  int graphSequence = 0;
  bool linking = false; ///< guards cross-link feedback loops
  QString pendingExportKind, pendingExportPath;
  QString initialPass;
  bool initialBefore = false; ///< show initialPass's graph before it
  QFutureWatcher<GraphJob> graphWatcher;
  GraphJob shownGraph;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_PASSEXPLORERPAGE_H
