//===- WorkbenchSmokeTest.cpp - Open the example, step, link, export ------===//
//
// The main window, offscreen: opens the bundled MLP example (run by a real
// worker), steps through every pass of the compile page waiting for each
// graph, checks the cross-links between graph, IR and source at the fusion
// pass, runs the compiled function (the profile page comes to the front;
// a picked kernel brings back the compile page at its Python line), exports
// every artifact kind, steps with the keyboard, switches pages with Ctrl+1/2,
// stops a hanging file, opens a dropped file and saves its layout. A window
// destroyed while its file runs ends its worker.
//
//===----------------------------------------------------------------------===//

#include "DiffModel.h"
#include "GraphView.h"
#include "InterviewPanel.h"
#include "KernelLaunchModel.h"
#include "LessonsPage.h"
#include "MainWindow.h"
#include "PassDocs.h"
#include "PassExplorerPage.h"
#include "ProfilePage.h"
#include "ProfilerPage.h"
#include "SourceEditor.h"
#include "TestData.h"

#include <QApplication>
#include <QDockWidget>
#include <QDropEvent>
#include <QFileInfo>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextBrowser>
#include <QUrl>
#include <QtTest>

#include <csignal>

using namespace cuvil::workbench;
using namespace cuvil::workbench::test;

class WorkbenchSmokeTest : public QObject {
  Q_OBJECT
private slots:
  void initTestCase();
  void opensStepsLinksRunsAndExports();
  void showsTheCOfACTargetCompilation();
  void showsTheTextOfAWasmModule();
  void showsTheKernelsOfACudaCompilation();
  void comparesAPassSideBySide();
  void predictsWhatAPassWillDo();
  void walksALesson();
  void practisesInterviewQuestions();
  void destroyedWhileRunningEndsItsWorker();

private:
  QTemporaryDir settingsDir;
};

void WorkbenchSmokeTest::initTestCase() {
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope,
                     settingsDir.path());
  QCoreApplication::setOrganizationName("CuvilTest");
  QCoreApplication::setApplicationName("WorkbenchSmoke");
}

/// Every pass the explorer steps through (all but the trace) is documented
/// from its declaration: renaming a pass without its docs fails here.
/// With `show`, the last step's documentation is in the Pass dock.
static void checkEveryPassIsDocumented(PassExplorerPage *explorer,
                                       bool show = true) {
  const QVector<PassStep> &steps = explorer->stepModel().steps();
  for (int i = 1; i < steps.size(); ++i)
    QVERIFY2(PassDocs::instance().contains(steps[i].name),
             qPrintable("no documentation for pass " + steps[i].name));
  if (!show)
    return;
  explorer->selectStep(steps.size() - 1);
  QString shown = explorer->passDocView()->toPlainText();
  QVERIFY2(shown.contains(PassDocs::instance().summary(steps.last().name)),
           qPrintable(shown));
}

/// Waits for the graph of `step` to be shown; returns its node count.
static int waitForStep(QSignalSpy &shown, int step) {
  for (int tries = 0; tries < 3; ++tries) {
    for (const QList<QVariant> &args : shown)
      if (args.at(0).toInt() == step)
        return args.at(1).toInt();
    shown.wait(60000);
  }
  for (const QList<QVariant> &args : shown)
    if (args.at(0).toInt() == step)
      return args.at(1).toInt();
  return -1;
}

void WorkbenchSmokeTest::opensStepsLinksRunsAndExports() {
  MainWindow window;
  window.resize(1400, 900);
  window.show();
  QString example = MainWindow::bundledExample();
  QVERIFY2(example.endsWith("resources/examples/mlp.py"), qPrintable(example));

  // The shell hosts the pages; the compile page comes first.
  PassExplorerPage *explorer = window.page<PassExplorerPage>();
  ProfilePage *profilePage = window.page<ProfilePage>();
  QVERIFY(explorer && profilePage);
  QCOMPARE(window.pages().first(), explorer);
  QCOMPARE(window.currentPage(), explorer);
  QVERIFY(explorer->findChild<QDockWidget *>("sourceDock"));

  QSignalSpy finished(&window, &MainWindow::runFinished);
  QSignalSpy shown(explorer, &PassExplorerPage::stepShown);
  window.openFile(example);
  QVERIFY(finished.wait(60000));
  QCOMPARE(finished.first().at(0).toBool(), true);
  QCOMPARE(window.compilationModel().rowCount(), 1);
  QCOMPARE(window.currentCompilation(), 0);
  QCOMPARE(QSettings().value("lastFile").toString(), example);
  // The page's header names the compilation and its target.
  // A cpu compilation has no target code to show.
  QVERIFY(explorer->findChild<QDockWidget *>("targetCodeDock")->isHidden());
  QString header = explorer->headerText();
  QVERIFY2(header.contains("<b>mlp</b>(float32[64, 256]") &&
               header.contains("for target <b>cpu</b>"),
           qPrintable(header));
  QCOMPARE(window.compilationModel()
               .index(0, CompilationListModel::Target)
               .data()
               .toString(),
           QString("cpu"));

  // Step through the whole pipeline; every step gets a graph.
  QCOMPARE(waitForStep(shown, 0) > 5, true);
  int steps = explorer->stepCount();
  QVERIFY(steps > 30);
  QVERIFY(explorer->findChild<QDockWidget *>("passDocDock"));
  checkEveryPassIsDocumented(explorer, /*show=*/false);
  int fusionStep = -1;
  while (explorer->stepForward()) {
    int step = explorer->currentStep();
    int nodes = waitForStep(shown, step);
    QVERIFY2(nodes > 0,
             qPrintable(QString("step %1 (%2) has no graph: %3")
                            .arg(step)
                            .arg(explorer->stepModel().steps()[step].name,
                                 explorer->currentGraph().error)));
    if (explorer->stepModel().steps()[step].name == "cuvil-fuse-elementwise")
      fusionStep = step;
  }
  QCOMPARE(explorer->currentStep(), steps - 1);
  QVERIFY(explorer->stepBack());
  QCOMPARE(explorer->currentStep(), steps - 2);

  // Hiding unchanged passes skips them when stepping.
  explorer->setHideUnchanged(true);
  explorer->selectStep(0);
  QVERIFY(waitForStep(shown, 0) > 0);
  while (explorer->stepForward())
    QVERIFY(explorer->stepModel().steps()[explorer->currentStep()].changed);
  explorer->setHideUnchanged(false);

  // At the fusion pass: the fused generic is a cluster, changed nodes are
  // marked, and a node links to its IR line and Python line.
  QVERIFY(fusionStep > 0);
  shown.clear();
  explorer->selectStep(fusionStep);
  QVERIFY(waitForStep(shown, fusionStep) > 0);
  const GraphJob &job = explorer->currentGraph();
  QVERIFY(!job.layout.clusters.isEmpty());
  QVERIFY(job.stepGraph.graph.changedCount > 0);
  int matmul = -1;
  for (const auto &node : job.stepGraph.graph.nodes)
    if (node.opName == "linalg.matmul" && matmul < 0)
      matmul = node.id;
  QVERIFY(matmul >= 0);
  explorer->selectNode(matmul);
  const auto &node = job.stepGraph.graph.nodes[matmul];
  QCOMPARE(explorer->irView()->textCursor().blockNumber() + 1, node.irLine);
  QVERIFY(explorer->irView()->textCursor().block().text().contains(
      "linalg.matmul"));
  QCOMPARE(explorer->sourceEditor()->markedLine(), 14); // x @ w1 + b1
  QCOMPARE(explorer->graphView()->selectedNodes(), QList<int>{matmul});

  // Source line 15 (hidden @ w2 + b2) selects its ops in the graph.
  explorer->selectSourceLine(15);
  QList<int> selected = explorer->graphView()->selectedNodes();
  QVERIFY(!selected.isEmpty());
  for (int id : selected)
    QCOMPARE(job.stepGraph.graph.nodes[id].loc.line, 15);
  // An IR line selects the op on it.
  explorer->selectIrLine(node.irLine);
  QCOMPARE(explorer->graphView()->selectedNodes(), QList<int>{matmul});
  QCOMPARE(explorer->graphView()->search("matmul"), 2);

  // Before the fusion pass: the previous step's IR and graph, with the ops
  // the pass replaces marked.
  shown.clear();
  explorer->setShowBefore(true);
  QVERIFY(waitForStep(shown, fusionStep) > 0);
  QVERIFY(explorer->currentGraph().before);
  QVERIFY(explorer->currentGraph().stepGraph.graph.changedCount > 0);
  QCOMPARE(explorer->irView()->toPlainText(),
           explorer->stepModel().steps()[fusionStep - 1].ir);
  shown.clear();
  explorer->setShowBefore(false);
  QVERIFY(waitForStep(shown, fusionStep) > 0);
  QVERIFY(!explorer->currentGraph().before);
  QCOMPARE(explorer->irView()->toPlainText(),
           explorer->stepModel().steps()[fusionStep].ir);

  // Run the compiled function against NumPy.
  QSignalSpy executed(&window, &MainWindow::executedCompiled);
  window.runCompiled();
  QVERIFY(executed.wait(60000));
  auto run = executed.first().at(0).value<RunResult>();
  QVERIFY(run.latencyMs > 0);
  QVERIFY(run.maxError < 1e-3);

  // The run was also profiled: the Profile dock loads its trace, and the
  // graph's ops on the hot lines (14 and 15 of mlp.py) get latency heat.
  QVERIFY2(!run.tracePath.isEmpty(), "the worker reported no profile trace");
  ProfilerPage *profile = profilePage->profiler();
  QCOMPARE(window.currentPage(), profilePage);
  if (!profile->profile() || profile->isBusy()) {
    QSignalSpy loaded(profile, &ProfilerPage::traceLoaded);
    QVERIFY(loaded.wait(30000));
  }
  QTRY_VERIFY_WITH_TIMEOUT(!profile->isBusy(), 30000);
  QVERIFY(!profile->heatIndex().isEmpty());
  QVERIFY(profile->heatIndex().latencyNs(window.currentFile(), 14) > 0);
  QVERIFY(explorer->graphView()->heatedNodeCount() > 0);
  QVERIFY(explorer->graphView()->heatedNodeCount() <
          explorer->graphView()->nodeCount());
  // Picking a kernel in the profile shows its Python line.
  explorer->sourceEditor()->markLine(1);
  emit profile->opActivated(window.currentFile() + ":15:12", 1,
                            "linalg.matmul");
  QCOMPARE(explorer->sourceEditor()->markedLine(), 15);
  QCOMPARE(window.currentPage(), explorer);

  // Export every artifact kind.
  QTemporaryDir out;
  const QList<QPair<QString, QByteArray>> kinds = {{"mlir", "module"},
                                                   {"llvm", "define"},
                                                   {"asm", ".text"},
                                                   {"obj", "\x7f"
                                                           "ELF"},
                                                   {"so", "\x7f"
                                                          "ELF"},
                                                   {"dot", "digraph"},
                                                   {"svg", "<svg"},
                                                   {"png", "\x89PNG"},
                                                   {"cuvil", "CUVILPKG"},
                                                   {"irpkg", "CUVILPKG"}};
  QSignalSpy exported(explorer, &PassExplorerPage::exportFinished);
  for (const auto &[kind, marker] : kinds) {
    QString path = out.filePath("artifact." + kind);
    exported.clear();
    explorer->exportArtifact(kind, path);
    if (exported.isEmpty())
      QVERIFY(exported.wait(60000));
    QVERIFY2(exported.first().at(2).toBool(),
             qPrintable(kind + ": " + exported.first().at(3).toString()));
    QFile file(path);
    QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(path));
    QByteArray data = file.readAll();
    QVERIFY2(data.contains(marker), qPrintable(kind + " lacks its marker"));
  }
  // The c target's files, asked of this cpu compilation: refused, naming what
  // the target writes.
  exported.clear();
  explorer->exportArtifact("c", out.filePath("artifact.c"));
  if (exported.isEmpty())
    QVERIFY(exported.wait(60000));
  QVERIFY(!exported.first().at(2).toBool());
  QVERIFY2(exported.first().at(3).toString().contains(
               "the cpu target cannot write 'c'; it writes mlir"),
           qPrintable(exported.first().at(3).toString()));

  // Keyboard stepping (with focus away from the editors).
  QApplication::setActiveWindow(&window);
  QVERIFY(QTest::qWaitForWindowActive(&window));
  explorer->graphView()->setFocus();
  int before = explorer->currentStep();
  QTest::keyClick(explorer->graphView(), Qt::Key_Left, Qt::AltModifier);
  QCOMPARE(explorer->currentStep(), before - 1);
  QTest::keyClick(explorer->graphView(), Qt::Key_Right, Qt::AltModifier);
  QCOMPARE(explorer->currentStep(), before);
  // Ctrl+2 and Ctrl+1 switch pages; stepping works from any page.
  QTest::keyClick(explorer->graphView(), Qt::Key_2, Qt::ControlModifier);
  QCOMPARE(window.currentPage(), profilePage);
  profilePage->setFocus();
  QTest::keyClick(profilePage, Qt::Key_Left, Qt::AltModifier);
  QCOMPARE(explorer->currentStep(), before - 1);
  QTest::keyClick(profilePage, Qt::Key_1, Qt::ControlModifier);
  QCOMPARE(window.currentPage(), explorer);

  // A hanging file is stopped from the window; the window stays usable.
  finished.clear();
  window.openFile(testData("fixtures/hangs.py"));
  QTRY_VERIFY_WITH_TIMEOUT(
      window.consoleView()->toPlainText().contains("looping"), 30000);
  window.stopRun();
  QTRY_VERIFY_WITH_TIMEOUT(
      window.consoleView()->toPlainText().contains("Stopped hangs.py"), 2000);

  // Dropping a .py file opens and runs it in a fresh worker.
  QString tiny =
      QFileInfo(testData("fixtures/tiny_model.py")).absoluteFilePath();
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(tiny)});
  QDragEnterEvent enter(QPoint(20, 20), Qt::CopyAction, &mime, Qt::LeftButton,
                        Qt::NoModifier);
  QApplication::sendEvent(&window, &enter);
  QVERIFY(enter.isAccepted());
  QDropEvent drop(QPointF(20, 20), Qt::CopyAction, &mime, Qt::LeftButton,
                  Qt::NoModifier);
  finished.clear();
  QApplication::sendEvent(&window, &drop);
  QVERIFY(finished.wait(60000));
  QCOMPARE(finished.first().at(0).toBool(), true);
  QCOMPARE(window.compilationModel().rowCount(), 1);
  QCOMPARE(window.compilationModel().record(0)->function,
           QString("scale_shift"));
  QStringList recent = QSettings().value("recentFiles").toStringList();
  QCOMPARE(
      recent.mid(0, 3),
      (QStringList{tiny,
                   QFileInfo(testData("fixtures/hangs.py")).absoluteFilePath(),
                   example}));

  // Closing saves the window layout.
  window.close();
  QVERIFY(!QSettings().value("window/state").toByteArray().isEmpty());
  QVERIFY(!QSettings().value("window/geometry").toByteArray().isEmpty());
  QVERIFY(!QSettings().value("pages/compile/state").toByteArray().isEmpty());
}

void WorkbenchSmokeTest::showsTheCOfACTargetCompilation() {
  MainWindow window;
  window.resize(1400, 900);
  window.show();
  auto *explorer = window.page<PassExplorerPage>();
  QSignalSpy finished(&window, &MainWindow::runFinished);
  window.openFile(testData("fixtures/tiny_c_model.py"));
  QVERIFY(finished.wait(60000));
  QCOMPARE(finished.first().at(0).toBool(), true);
  QVERIFY2(explorer->headerText().contains("for target <b>c</b>"),
           qPrintable(explorer->headerText()));
  // Its passes step like the CPU's, down to EmitC.
  QVERIFY(explorer->stepCount() > 10);
  QVERIFY(explorer->stepModel().steps().last().ir.contains("emitc.func"));
  checkEveryPassIsDocumented(explorer);
  // The generated C, highlighted as C, in the "Target code" dock.
  SourceEditor *code = explorer->targetCodeView();
  QCOMPARE(code->language(), SourceEditor::Language::C);
  QTRY_VERIFY_WITH_TIMEOUT(code->source().contains("int scale_shift(const "
                                                   "float *in0"),
                           30000);
  QVERIFY(!explorer->findChild<QDockWidget *>("targetCodeDock")->isHidden());
}

void WorkbenchSmokeTest::showsTheTextOfAWasmModule() {
  // The module's text comes from wasm2wat (wabt, from make test's set-up).
  MainWindow window;
  window.resize(1400, 900);
  window.show();
  auto *explorer = window.page<PassExplorerPage>();
  QSignalSpy finished(&window, &MainWindow::runFinished);
  window.openFile(testData("fixtures/tiny_wasm_model.py"));
  QVERIFY(finished.wait(60000));
  QCOMPARE(finished.first().at(0).toBool(), true);
  QVERIFY2(explorer->headerText().contains("for target <b>wasm</b>"),
           qPrintable(explorer->headerText()));
  // Its passes step like the CPU's, down to the LLVM dialect.
  QVERIFY(explorer->stepCount() > 10);
  QVERIFY(explorer->stepModel().steps().last().ir.contains("llvm.func"));
  checkEveryPassIsDocumented(explorer);
  SourceEditor *code = explorer->targetCodeView();
  QTRY_VERIFY_WITH_TIMEOUT(code->source().contains("(module"), 30000);
  QCOMPARE(code->language(), SourceEditor::Language::Wat);
  // The module exports the compiled function (its SIMD is tested on a model
  // big enough for vectors in test_wasm_target.py).
  QVERIFY(code->source().contains("(export \"cuvil_scale_shift\""));
  QVERIFY(!explorer->findChild<QDockWidget *>("targetCodeDock")->isHidden());
}

void WorkbenchSmokeTest::showsTheKernelsOfACudaCompilation() {
  // The target box set to cuda: no GPU is needed to compile; the call runs
  // as Python and says why.
  MainWindow window;
  window.resize(1400, 900);
  window.show();
  window.setRunTarget("cuda");
  auto *explorer = window.page<PassExplorerPage>();
  QSignalSpy finished(&window, &MainWindow::runFinished);
  QSignalSpy shown(explorer, &PassExplorerPage::stepShown);
  window.openFile(testData("fixtures/tiny_model.py"));
  QVERIFY2(finished.wait(60000),
           qPrintable(window.consoleView()->toPlainText()));
  QCOMPARE(finished.first().at(0).toBool(), true);
  QVERIFY2(explorer->headerText().contains("for target <b>cuda</b>"),
           qPrintable(explorer->headerText()));
  checkEveryPassIsDocumented(explorer);
  // The PTX, in the "Target code" dock.
  SourceEditor *code = explorer->targetCodeView();
  QTRY_VERIFY_WITH_TIMEOUT(code->source().contains(".entry "), 30000);
  QCOMPARE(code->language(), SourceEditor::Language::PTX);
  // The kernel table: none before the loops are mapped onto the GPU...
  auto *kernels = explorer->findChild<QDockWidget *>("kernelDock");
  QVERIFY(!kernels->isHidden());
  explorer->selectStep(0);
  QVERIFY(waitForStep(shown, 0) >= 0);
  QCOMPARE(explorer->launchModel().rowCount(), 0);
  // ... and after outlining each launch with its grid, block and shared
  // memory; the tiled GEMM's tiles are in shared memory.
  int outlined = -1;
  const QVector<PassStep> &steps = explorer->stepModel().steps();
  for (int i = 0; i < steps.size() && outlined < 0; ++i)
    if (steps[i].name == "gpu-kernel-outlining")
      outlined = i;
  QVERIFY(outlined > 0);
  explorer->selectStep(outlined);
  QVERIFY(waitForStep(shown, outlined) > 0);
  KernelLaunchModel &launches = explorer->launchModel();
  QVERIFY(launches.rowCount() >= 1);
  const cuvil::graph::KernelLaunch &gemm = launches.launches().front();
  QVERIFY2(QString::fromStdString(gemm.ops).contains("linalg.matmul"),
           gemm.ops.c_str());
  QVERIFY(gemm.staticSharedBytes > 0);
  for (int i = 0; i < 3; ++i)
    QVERIFY(gemm.grid[i] > 0 && gemm.block[i] > 0);
  // A launch selects its op in the graph and its line of the IR.
  explorer->kernelTableView()->selectRow(0);
  explorer->selectLaunch(0);
  QCOMPARE(explorer->irView()->textCursor().blockNumber() + 1, gemm.irLine);
  QVERIFY(explorer->irView()->textCursor().block().text().contains(
      "gpu.launch_func"));
}

/// Runs the bundled example in `window`; the step of its fusion pass.
static int openExampleAtFusion(MainWindow &window, QSignalSpy &shown) {
  window.resize(1400, 900);
  window.show();
  QSignalSpy finished(&window, &MainWindow::runFinished);
  window.openFile(MainWindow::bundledExample());
  if (!finished.wait(60000) || waitForStep(shown, 0) <= 0)
    return -1;
  const QVector<PassStep> &steps =
      window.page<PassExplorerPage>()->stepModel().steps();
  for (int i = 0; i < steps.size(); ++i)
    if (steps[i].name == "cuvil-fuse-elementwise")
      return i;
  return -1;
}

void WorkbenchSmokeTest::comparesAPassSideBySide() {
  MainWindow window;
  auto *explorer = window.page<PassExplorerPage>();
  QSignalSpy shown(explorer, &PassExplorerPage::stepShown);
  int fusion = openExampleAtFusion(window, shown);
  QVERIFY(fusion > 0);
  explorer->selectStep(fusion);
  QVERIFY(waitForStep(shown, fusion) > 0);
  QVERIFY(explorer->beforeGraphView()->isHidden());

  shown.clear();
  explorer->setSideBySide(true);
  QVERIFY(waitForStep(shown, fusion) > 0);
  GraphView *before = explorer->beforeGraphView();
  GraphView *after = explorer->graphView();
  QVERIFY(!before->isHidden());
  // Fusion merged ops: more nodes before it than after.
  QVERIFY2(before->nodeCount() > after->nodeCount(),
           qPrintable(QString("%1 vs %2")
                          .arg(before->nodeCount())
                          .arg(after->nodeCount())));
  // One zoom for both.
  after->zoomIn();
  QCOMPARE(before->transform(), after->transform());
  before->zoomOut();
  QCOMPARE(after->transform(), before->transform());

  // An op the pass left alone matches itself; the fused op matches the ops
  // of its source line before the pass.
  const GraphJob &job = explorer->currentGraph();
  int argument = -1, fused = -1;
  for (const cuvil::graph::Node &n : job.stepGraph.graph.nodes) {
    if (n.opName == "%arg0")
      argument = n.id;
    if (n.opName == "linalg.generic" && n.changed && fused < 0)
      fused = n.id;
  }
  QVERIFY(argument >= 0 && fused >= 0);
  emit after->nodeClicked(argument);
  QCOMPARE(before->selectedNodes().size(), 1);
  QCOMPARE(job.beforeGraph.graph.nodes[before->selectedNodes().first()].opName,
           std::string("%arg0"));
  emit after->nodeClicked(fused);
  QVERIFY2(before->selectedNodes().size() >= 2,
           qPrintable(QString::number(before->selectedNodes().size())));
  emit before->nodeClicked(before->selectedNodes().first());
  QVERIFY(after->selectedNodes().contains(fused));

  shown.clear();
  explorer->setSideBySide(false);
  QVERIFY(waitForStep(shown, fusion) > 0);
  QVERIFY(before->isHidden());
}

void WorkbenchSmokeTest::predictsWhatAPassWillDo() {
  MainWindow window;
  auto *explorer = window.page<PassExplorerPage>();
  QSignalSpy shown(explorer, &PassExplorerPage::stepShown);
  int fusion = openExampleAtFusion(window, shown);
  QVERIFY(fusion > 1 && explorer->stepModel().steps()[fusion].changed);
  explorer->selectStep(fusion - 1);
  QVERIFY(waitForStep(shown, fusion - 1) > 0);

  // Stepping forward asks first: the graph before the pass, no diff.
  explorer->setPredicting(true);
  shown.clear();
  QVERIFY(explorer->stepForward());
  QVERIFY(explorer->awaitingPrediction());
  QTRY_VERIFY_WITH_TIMEOUT(explorer->currentGraph().step == fusion &&
                               explorer->currentGraph().before,
                           30000);
  QVERIFY(
      explorer->predictionText().contains("Predict cuvil-fuse-elementwise"));
  DiffModel &diff = explorer->diffModel();
  QVERIFY(diff.rowCount() > 0);
  for (int row = 0; row < diff.rowCount(); ++row)
    QCOMPARE(diff.index(row, 0).data(DiffModel::KindRole).toInt(),
             int(DiffRow::Same));

  // Mark exactly what the diff says the pass replaces: full score.
  QList<int> truth;
  for (const cuvil::graph::Node &n :
       explorer->currentGraph().stepGraph.graph.nodes)
    if (n.changed)
      truth << n.id;
  QVERIFY(!truth.isEmpty());
  GraphView *view = explorer->graphView();
  emit view->nodeClicked(truth.first()); // marked, unmarked, marked again
  emit view->nodeClicked(truth.first());
  QVERIFY(explorer->predictedNodes().isEmpty());
  for (int id : truth)
    emit view->nodeClicked(id);
  QCOMPARE(explorer->predictedNodes().size(), truth.size());
  QVERIFY(explorer->checkPrediction());
  QVERIFY2(explorer->predictionText().contains("(score 100%)") &&
               explorer->predictionText().contains("mean score 100%"),
           qPrintable(explorer->predictionText()));
  QVERIFY(!explorer->awaitingPrediction());
  // The real step follows: the graph after the pass.
  QTRY_VERIFY_WITH_TIMEOUT(explorer->currentGraph().step == fusion &&
                               !explorer->currentGraph().before,
                           30000);

  // Passes predicted as leaving every op alone: right where the diff marks
  // no op (one that only sets attributes), wrong where it marks some.
  bool right = false, wrong = false;
  while (!(right && wrong) && explorer->stepForward()) {
    if (!explorer->awaitingPrediction())
      continue;
    QTRY_VERIFY_WITH_TIMEOUT(explorer->currentGraph().step ==
                                     explorer->currentStep() &&
                                 explorer->currentGraph().before,
                             30000);
    bool changesOps = false;
    for (const cuvil::graph::Node &n :
         explorer->currentGraph().stepGraph.graph.nodes)
      changesOps |= n.changed;
    QVERIFY(explorer->checkPrediction());
    QString result = explorer->predictionText();
    QVERIFY2(result.contains(changesOps ? "(score 0%)" : "(score 100%)"),
             qPrintable(result));
    (changesOps ? wrong : right) = true;
  }
  QVERIFY(right && wrong);
  QVERIFY(explorer->predictionTally().count >= 3);
  explorer->setPredicting(false);
}

void WorkbenchSmokeTest::walksALesson() {
  MainWindow window;
  window.resize(1400, 900);
  window.show();
  auto *lessons = window.page<LessonsPage>();
  auto *explorer = window.page<PassExplorerPage>();
  QVERIFY(lessons && explorer);
  QVERIFY(lessons->lessons().size() >= 8);
  QVERIFY(window.showPage("lessons"));
  QSignalSpy finished(&window, &MainWindow::runFinished);
  QSignalSpy shown(explorer, &PassExplorerPage::stepShown);
  QSettings().remove("lessons/04-fusion");

  // Step 1 opens the lesson's model and runs it.
  QVERIFY(lessons->selectLesson("04-fusion"));
  QCOMPARE(lessons->currentStep(), 0);
  QVERIFY(lessons->stepText().contains("Why fuse"));
  QVERIFY(finished.wait(60000));
  QVERIFY(window.currentFile().endsWith("resources/examples/mlp.py"));
  QVERIFY(waitForStep(shown, 0) > 0);

  // Step 2 shows the graph before the fusion pass, its generics found.
  QVERIFY(lessons->next());
  int step = explorer->currentStep();
  QCOMPARE(explorer->stepModel().steps()[step].name,
           QString("cuvil-fuse-elementwise"));
  QTRY_VERIFY_WITH_TIMEOUT(explorer->currentGraph().step == step &&
                               explorer->currentGraph().before,
                           30000);
  QVERIFY(!explorer->graphView()->selectedNodes().isEmpty());
  // Step 3: after it.
  QVERIFY(lessons->next());
  QTRY_VERIFY_WITH_TIMEOUT(explorer->currentGraph().step == step &&
                               !explorer->currentGraph().before,
                           30000);
  // Step 4: the schedule.
  QVERIFY(lessons->next());
  QCOMPARE(explorer->stepModel().steps()[explorer->currentStep()].name,
           QString("cuvil-cpu-schedule"));
  // Step 5: the question.
  QVERIFY(lessons->next());
  QVERIFY(!lessons->answer(0));
  QVERIFY(lessons->feedbackText().contains("Not quite"));
  QVERIFY(lessons->answer(1));
  QVERIFY(lessons->feedbackText().contains("Right"));
  // Back shows the text without acting; the place is remembered.
  QVERIFY(lessons->back());
  QCOMPARE(QSettings().value("lessons/04-fusion/step").toInt(), 3);
  QVERIFY(lessons->next());
  QVERIFY(!lessons->next()); // finished
  QVERIFY(QSettings().value("lessons/04-fusion/done").toBool());
}

void WorkbenchSmokeTest::practisesInterviewQuestions() {
  MainWindow window;
  window.resize(1400, 900);
  window.show();
  InterviewPanel *panel = window.page<LessonsPage>()->interviewPanel();
  auto *explorer = window.page<PassExplorerPage>();
  QVERIFY(panel->questions().size() >= 8);

  // Write an answer, then reveal the model one beside it.
  int memory = -1;
  for (int i = 0; i < panel->questions().size(); ++i)
    if (panel->questions()[i].id == "memory-pools")
      memory = i;
  QVERIFY(memory >= 0);
  panel->selectQuestion(memory);
  panel->setAnswer("an arena planned from live ranges");
  QVERIFY(!panel->revealed());
  panel->reveal();
  QVERIFY(panel->revealed());
  QVERIFY(panel->modelAnswerText().contains("first-fit into one arena"));
  // The demonstration opens its model and shows the memory plan.
  QSignalSpy finished(&window, &MainWindow::runFinished);
  panel->showDemo();
  QVERIFY(finished.wait(60000));
  QTRY_VERIFY_WITH_TIMEOUT(
      explorer->currentStep() > 0 &&
          explorer->stepModel().steps()[explorer->currentStep()].name ==
              "cuvil-plan-memory",
      30000);

  // A mock interview of two questions with a one-second clock: the model
  // answer shows when time is up; the summary counts the answers given.
  panel->startMock(2, 1, 7);
  QVERIFY(panel->mockRunning());
  QTRY_VERIFY_WITH_TIMEOUT(panel->revealed(), 5000);
  QVERIFY(panel->statusText().contains("Time is up"));
  panel->setAnswer("my answer");
  QVERIFY(panel->next());
  QVERIFY(!panel->revealed());
  QVERIFY(!panel->next());
  QVERIFY(!panel->mockRunning());
  QVERIFY2(panel->statusText().contains("1 of 2 questions answered"),
           qPrintable(panel->statusText()));
}

void WorkbenchSmokeTest::destroyedWhileRunningEndsItsWorker() {
  qint64 pid = 0;
  {
    MainWindow window;
    window.openFile(testData("fixtures/hangs.py"));
    QTRY_VERIFY_WITH_TIMEOUT(
        window.consoleView()->toPlainText().contains("looping"), 30000);
    pid = window.workerClient().workerPid();
    QVERIFY(pid > 0);
  }
  // Ended and reaped: the pid names no process.
  QCOMPARE(::kill(static_cast<pid_t>(pid), 0), -1);
}

QTEST_MAIN(WorkbenchSmokeTest)
#include "WorkbenchSmokeTest.moc"
