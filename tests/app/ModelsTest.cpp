//===- ModelsTest.cpp - Workbench models under QAbstractItemModelTester ---===//
//
// Each model is filled from a recorded worker reply (fixtures/), checked by
// QAbstractItemModelTester, printed and compared with golden/ text.
//
//===----------------------------------------------------------------------===//

#include "CompilationListModel.h"
#include "DiffModel.h"
#include "GraphLayout.h"
#include "IrOpModel.h"
#include "KernelLaunchModel.h"
#include "Lesson.h"
#include "PassDocs.h"
#include "PassStepModel.h"
#include "Prediction.h"
#include "RecentFiles.h"
#include "TestData.h"
#include "WorkerProtocol.h"

#include <QAbstractItemModelTester>
#include <QTemporaryDir>
#include <QtTest>

using namespace cuvil::workbench;
using namespace cuvil::workbench::test;

namespace {

/// "header | header" then one "cell | cell" line per row; `role` cells
/// are appended in brackets when given.
QString dump(const QAbstractItemModel &model, int extraRole = -1) {
  QStringList lines, header;
  for (int c = 0; c < model.columnCount(); ++c)
    header << model.headerData(c, Qt::Horizontal).toString();
  lines << header.join(" | ");
  for (int r = 0; r < model.rowCount(); ++r) {
    QStringList cells;
    for (int c = 0; c < model.columnCount(); ++c)
      cells << model.index(r, c).data().toString();
    QString line = cells.join(" | ");
    if (extraRole >= 0)
      line += " [" + model.index(r, 0).data(extraRole).toString() + "]";
    lines << line;
  }
  return lines.join('\n') + '\n';
}

CompilationRecord fixtureRecord() {
  QFile file(testData("fixtures/compilation.jsonl"));
  if (!file.open(QIODevice::ReadOnly))
    qFatal("missing fixture %s", qPrintable(file.fileName()));
  WorkerMessage message;
  QString error;
  if (!decodeWorkerMessage(file.readLine().trimmed(), message, error))
    qFatal("%s", qPrintable(error));
  return message.compilation;
}

} // namespace

class ModelsTest : public QObject {
  Q_OBJECT
private slots:
  void decodesWorkerReplies();
  void compilationListModel();
  void passStepModelAndUnchangedFilter();
  void passDocsFromDeclarations();
  void predictionScores();
  void lessonsAreCheckedWhenRead();
  void irOpModelOfTheFusedStep();
  void irOpModelShowsNodeNames();
  void kernelLaunchModelOfAGpuStep();
  void graphToolFailuresAreExplained();
  void diffModelOfTheFusionPass();
  void diffLinesEditScripts();
  void graphLayoutOfTheFusedStep();
  void recentFiles();
};

void ModelsTest::decodesWorkerReplies() {
  CompilationRecord r = fixtureRecord();
  QCOMPARE(r.function, QString("block"));
  QCOMPARE(r.steps.size(), 5);
  QCOMPARE(r.steps[0].name, QString("input"));
  QCOMPARE(r.steps[4].name, QString("cuvil-fuse-elementwise"));
  QCOMPARE(r.inputSummary(), QString("float32[4, 8], float32[8]"));

  WorkerMessage m;
  QString error;
  QVERIFY(decodeWorkerMessage(
      R"({"type": "exception", "exc_type": "ValueError", "message": "bad", "traceback": "", "file": "/x/m.py", "line": 3})",
      m, error));
  QCOMPARE(m.exception.summary(), QString("ValueError: bad (m.py:3)"));
  QVERIFY(decodeWorkerMessage(
      R"({"type": "executed", "index": 0, "latency_ms": 1.5, "min_ms": 1.0, "runs": 9, "reference_ms": 3.0, "max_error": 1e-7})",
      m, error));
  QCOMPARE(m.run.runs, 9);
  QCOMPARE(m.run.latencyMs, 1.5);
  QCOMPARE(m.run.reference, QString("the Python function"));
  QVERIFY(decodeWorkerMessage(
      R"({"type": "executed", "index": 1, "reference_ms": 2.0, "max_error": 1e-7, "reference": "PyTorch"})",
      m, error));
  QCOMPARE(m.run.reference, QString("PyTorch"));
  QVERIFY(!decodeWorkerMessage("Traceback (most recent call last):", m, error));
  QVERIFY(
      error.startsWith("cuvil-worker sent a line that is not a JSON object"));
  QVERIFY(!decodeWorkerMessage(R"({"index": 1})", m, error));
  QVERIFY(error.contains("without a \"type\""));
}

void ModelsTest::compilationListModel() {
  CompilationListModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  CompilationRecord first = fixtureRecord();
  CompilationRecord second = first;
  second.index = 1;
  second.function = "block_large";
  second.inputs = {{"float32", {128, 256}}, {"float32", {256}}};
  second.compileMs = 40.25;
  model.add(first);
  model.add(second);
  compareGolden("compilations.txt", dump(model));
  QCOMPARE(model.record(1)->function, QString("block_large"));
  QVERIFY(model.record(2) == nullptr);
  model.clear();
  QCOMPARE(model.rowCount(), 0);
}

void ModelsTest::passDocsFromDeclarations() {
  const PassDocs &docs = PassDocs::instance();
  // Cuvil's passes, with description and options, from their .td.
  QString plan = docs.markdown("cuvil-plan-memory");
  QVERIFY2(plan.contains("Liveness-based reuse of intermediate buffers"),
           qPrintable(plan));
  QVERIFY(plan.contains("#### Options") && plan.contains("-views"));
  QVERIFY(docs.contains("cuvil-wasm-to-llvm") &&
          docs.contains("cuvil-c-to-emitc") &&
          docs.contains("convert-cuvil-to-linalg"));
  // The cuda target's, and the upstream GPU passes its pipeline runs.
  for (const char *pass :
       {"cuvil-cuda-tile-matmul", "cuvil-cuda-warp-reductions",
        "cuvil-cuda-map-parallel-loops", "gpu-kernel-outlining",
        "gpu-async-region", "nvvm-attach-target", "convert-gpu-to-nvvm",
        "gpu-to-llvm", "convert-parallel-loops-to-gpu"})
    QVERIFY2(docs.contains(pass), pass);
  // Upstream passes, and the pipeline MLIR declares in C++.
  QCOMPARE(docs.summary("canonicalize"), QString("Canonicalize operations"));
  QVERIFY(docs.contains("one-shot-bufferize") &&
          docs.contains("finalize-memref-to-llvm") &&
          docs.contains("buffer-deallocation-pipeline"));
  // Anchored and optioned forms name the same pass.
  QCOMPARE(docs.markdown("func.func(cse)"), docs.markdown("cse"));
  QCOMPARE(docs.markdown("cuvil-cpu-schedule{vector-lanes=16}"),
           docs.markdown("cuvil-cpu-schedule"));
  QVERIFY(!docs.contains("no-such-pass") && !docs.contains("input"));

  PassDocs parsed;
  parsed.addMarkdown("<!-- x -->\n### `-a-pass`\n\n_Does A_\n\nText.\n"
                     "### `-b`\n\n_Does B_\n");
  QCOMPARE(parsed.passes(), QStringList({"a-pass", "b"}));
  QCOMPARE(parsed.markdown("a-pass"),
           QString("### `-a-pass`\n\n_Does A_\n\nText."));
  QCOMPARE(parsed.summary("b"), QString("Does B"));

  // The pass table's tooltip is the summary.
  PassStepModel model;
  model.setSteps(fixtureRecord().steps);
  QModelIndex fusion = model.index(4, PassStepModel::Pass);
  QVERIFY2(
      model.data(fusion, Qt::ToolTipRole)
          .toString()
          .startsWith("cuvil-fuse-elementwise: Fuse chains of elementwise"),
      qPrintable(model.data(fusion, Qt::ToolTipRole).toString()));
}

void ModelsTest::predictionScores() {
  PredictionScore exact = scorePrediction({1, 2, 3}, {1, 2, 3});
  QCOMPARE(exact.f1(), 1.0);
  QCOMPARE(exact.summary("cse"),
           QString("You found 3 of the 3 ops cse replaces or removes (score "
                   "100%)."));
  PredictionScore partial = scorePrediction({1, 2, 7}, {1, 2, 3, 4});
  QCOMPARE(partial.hits, 2);
  QCOMPARE(partial.missed, 2);
  QCOMPARE(partial.extra, 1);
  QCOMPARE(partial.f1(), 4.0 / 7.0);
  QCOMPARE(partial.summary("p"),
           QString("You found 2 of the 4 ops p replaces or removes; 1 you "
                   "marked stay (score 57%)."));
  // A pass that changes nothing is predicted by marking nothing.
  QCOMPARE(scorePrediction({}, {}).f1(), 1.0);
  QCOMPARE(scorePrediction({5}, {}).f1(), 0.0);
  QVERIFY(scorePrediction({5}, {}).summary("p").contains("you marked 1"));
  QCOMPARE(scorePrediction({}, {1}).f1(), 0.0);
  PredictionTally tally;
  tally.add(exact);
  tally.add(scorePrediction({}, {1}));
  QCOMPARE(tally.count, 2);
  QCOMPARE(tally.mean(), 0.5);
}

void ModelsTest::lessonsAreCheckedWhenRead() {
  QTemporaryDir root;
  auto write = [&](const QString &name, const QByteArray &json) {
    QDir(root.path()).mkpath(name);
    QFile model(root.filePath(name + "/model.py"));
    QVERIFY(model.open(QIODevice::WriteOnly));
    QFile f(root.filePath(name + "/lesson.json"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(json);
  };
  write("a-good", R"({"title": "Good", "model": "model.py", "steps": [
      {"text": "Open it", "open": true},
      {"text": "See", "pass": "cse", "before": true, "find": "cuvil.tanh"},
      {"text": "Q", "question": {"prompt": "?", "choices": ["x", "y"],
                                 "answer": 1, "explain": "because"}}]})");
  write("b-typo", R"({"title": "T", "model": "model.py",
      "steps": [{"text": "t", "pas": "cse"}]})");
  write("c-answer", R"({"title": "T", "model": "model.py", "steps": [
      {"text": "t", "question": {"prompt": "?", "choices": ["x", "y"],
                                 "answer": 2}}]})");
  write("d-model", R"({"title": "T", "model": "gone.py",
      "steps": [{"text": "t"}]})");
  write("e-json", "{not json");
  QStringList errors;
  QList<Lesson> lessons = loadLessons(root.path(), errors);
  QCOMPARE(lessons.size(), 1);
  const Lesson &good = lessons.first();
  QCOMPARE(good.id, QString("a-good"));
  QCOMPARE(good.steps.size(), 3);
  QVERIFY(good.steps[0].open);
  QCOMPARE(good.steps[1].pass, QString("cse"));
  QVERIFY(good.steps[1].before);
  QCOMPARE(good.steps[2].question.answer, 1);
  QCOMPARE(errors.size(), 4);
  QVERIFY2(errors[0].contains("b-typo/lesson.json: step 1: unknown field "
                              "'pas'"),
           qPrintable(errors[0]));
  QVERIFY2(errors[1].contains("c-answer/lesson.json: step 1: a question "
                              "needs"),
           qPrintable(errors[1]));
  QVERIFY2(errors[2].contains("'model' must name a file"),
           qPrintable(errors[2]));
  QVERIFY2(errors[3].contains("e-json/lesson.json: not a JSON object"),
           qPrintable(errors[3]));
}

void ModelsTest::passStepModelAndUnchangedFilter() {
  PassStepModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  ChangedStepFilter filter;
  filter.setSourceModel(&model);
  QAbstractItemModelTester filterTester(
      &filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setSteps(fixtureRecord().steps);
  compareGolden("pass_steps.txt", dump(model));
  filter.setHideUnchanged(true);
  compareGolden("pass_steps_changed.txt", dump(filter));
  QCOMPARE(filter.rowCount(), 3);
  filter.setHideUnchanged(false);
  QCOMPARE(filter.rowCount(), 5);
}

void ModelsTest::irOpModelOfTheFusedStep() {
  CompilationRecord r = fixtureRecord();
  StepGraph step = buildStepGraph(r.steps[4].ir, r.steps[3].ir, {});
  QVERIFY2(step.error.isEmpty(), qPrintable(step.error));
  IrOpModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setGraph(step.graph);
  compareGolden("ir_ops_fused.txt", dump(model));
  QCOMPARE(step.graph.changedCount, 2); // the fused generic and maximumf
  // Gone: both unfused generics, the first one's yield, the second one's
  // tensor.empty and its maximumf.
  QCOMPARE(step.graph.removedCount, 5);
  // Line 10 of the IR is the fused body's arith.maximumf.
  int node = model.nodeForIrLine(10);
  QCOMPARE(QString::fromStdString(step.graph.nodes[node].opName),
           QString("arith.maximumf"));
  QList<int> line12 = model.nodesForSourceLine("/elsewhere/m.py", 12);
  QCOMPARE(line12.size(), 3); // the generic, maximumf and its yield
  QVERIFY(model.nodesForSourceLine("/m.py", 99).isEmpty());

  StepGraph broken = buildStepGraph("module {\n}\n", {}, {});
  QVERIFY(broken.error.contains("no function with a body"));
}

void ModelsTest::irOpModelShowsNodeNames() {
  // An imported model's ops carry their node names as NameLocs: an ONNX
  // node's around the model file (no line), an FX node's around its
  // nn.Module path around the forward's line.
  QString ir = R"(module {
  func.func @model(%x: tensor<4xf32> loc("input_0")) -> tensor<4xf32> {
    %0 = cuvil.relu %x : tensor<4xf32> loc("node_7"("/model.onnx":7:1))
    %1 = cuvil.exp %0 : tensor<4xf32> loc("node_8")
    %2 = cuvil.neg %1 : tensor<4xf32> loc("/stem/stem.0/Conv"("/r/resnet.onnx":0:0))
    %3 = cuvil.tanh %2 : tensor<4xf32> loc("convolution"("features.conv1"("/e/torch_cnn.py":37:0)))
    return %3 : tensor<4xf32> loc("/m.py":3:1)
  }
}
)";
  StepGraph step = buildStepGraph(ir, {}, {});
  QVERIFY2(step.error.isEmpty(), qPrintable(step.error));
  IrOpModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setGraph(step.graph);
  QCOMPARE(model.rowCount(), 6);
  auto source = [&](int row) {
    return model.index(row, IrOpModel::Source).data().toString();
  };
  QCOMPARE(source(0), QString("input_0"));
  QCOMPARE(source(1), QString("node_7 (model.onnx:7)"));
  QCOMPARE(source(2), QString("node_8"));
  QCOMPARE(source(3), QString("/stem/stem.0/Conv"));
  QCOMPARE(source(4), QString("features.conv1/convolution (torch_cnn.py:37)"));
  QCOMPARE(source(5), QString("m.py:3"));
  QCOMPARE(model.index(1, 0).data(IrOpModel::LocNameRole).toString(),
           QString("node_7"));
  QCOMPARE(model.index(1, 0).data(IrOpModel::SourceLineRole).toInt(), 7);
  QCOMPARE(model.index(4, 0).data(IrOpModel::LocNameRole).toString(),
           QString("features.conv1/convolution"));
  // The graph's boxes name the nodes too.
  QString dot = QString::fromStdString(step.dot);
  QVERIFY(dot.contains("locname=\"node_7\""));
  QVERIFY(dot.contains("label=\"cuvil.neg\\n/stem/stem.0/Conv\\n"));
  QVERIFY(dot.contains("label=\"cuvil.tanh\\nfeatures.conv1/convolution\\n"));
  if (!graphLayoutAvailable())
    return;
  GraphLayout layout;
  QString error;
  QVERIFY2(layoutGraph(step.dot, layout, error), qPrintable(error));
  QStringList names;
  for (const LaidOutNode &node : layout.nodes)
    if (node.op == "cuvil.tanh") {
      QVERIFY(node.label.contains("features.conv1/convolution"));
      names << node.locName;
    }
  QCOMPARE(names, QStringList{"features.conv1/convolution"});
}

void ModelsTest::kernelLaunchModelOfAGpuStep() {
  // A step after kernel outlining: a tiled GEMM with shared memory, a
  // reduction whose grid a dynamic shape decides, and what cuvil-graph
  // reads off them for the kernel table.
  QString ir = R"(module attributes {gpu.container_module} {
  func.func @f(%a: memref<?xf32>, %n: index) attributes {cuvil.kernel_names = [[loc("/m.py":6:37), "linalg.fill + linalg.matmul"]]} {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @k::@gemm blocks in (%c2, %c2, %c1) threads in (%c16, %c16, %c1) args(%a : memref<?xf32>) loc("/m.py":6:37)
    gpu.launch_func @k::@sum blocks in (%n, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : memref<?xf32>) loc("/m.py":7:12)
    return
  }
  gpu.module @k {
    gpu.func @gemm(%arg0: memref<?xf32>) workgroup(%t : memref<64x17xf32, #gpu.address_space<workgroup>>, %u : memref<16x65xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
    gpu.func @sum(%arg0: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
)";
  StepGraph step = buildStepGraph(ir, {}, {});
  QVERIFY2(step.error.isEmpty(), qPrintable(step.error));
  KernelLaunchModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QVERIFY(model.summary().contains("No GPU kernel launches"));
  model.setLaunches(step.graph.launches);
  QCOMPARE(dump(model, KernelLaunchModel::SourceLineRole),
           QString("Kernel | Grid | Block | Threads/block | Shared memory | "
                   "Runs | IR line | Source\n"
                   "gemm | (2, 2, 1) | (16, 16, 1) | 256 | 8.3 KiB | "
                   "linalg.fill + linalg.matmul | 7 | m.py:6 [6]\n"
                   "sum | (?, 1, 1) | (32, 1, 1) | 32 | 0 B |  | 8 | "
                   "m.py:7 [7]\n"));
  QCOMPARE(model.summary(),
           QString("2 kernel launches, 1 with shared memory (8.3 KiB per "
                   "block at most), some extents decided at run time"));
  QVERIFY(model.index(0, KernelLaunchModel::SharedMemory)
              .data(Qt::ToolTipRole)
              .toString()
              .contains("8.3 KiB of static shared memory"));
  QCOMPARE(model.index(1, 0).data(KernelLaunchModel::IrLineRole).toInt(), 8);
  // The launch is a node of the host function's graph, on the same line.
  IrOpModel ops;
  ops.setGraph(step.graph);
  int node = ops.nodeForIrLine(7);
  QCOMPARE(QString::fromStdString(step.graph.nodes[node].opName),
           QString("gpu.launch_func"));
}

void ModelsTest::graphToolFailuresAreExplained() {
  QString ir = "func.func @f() {\n  return\n}\n";
  QByteArray saved = qgetenv("CUVIL_GRAPH");
  qputenv("CUVIL_GRAPH", "/nonexistent/cuvil-graph");
  StepGraph missing = buildStepGraph(ir, {}, {});
  QVERIFY2(missing.error.startsWith("Cannot start cuvil-graph (/nonexistent/"),
           qPrintable(missing.error));
  QVERIFY(missing.error.contains("CUVIL_GRAPH"));
  // A program that prints something else than a graph.
  qputenv("CUVIL_GRAPH", "/bin/echo");
  StepGraph garbage = buildStepGraph(ir, {}, {});
  QVERIFY2(garbage.error.contains("printed a graph the Workbench cannot read"),
           qPrintable(garbage.error));
  QVERIFY(garbage.graph.nodes.empty());
  if (saved.isEmpty())
    qunsetenv("CUVIL_GRAPH");
  else
    qputenv("CUVIL_GRAPH", saved);
  // The IR's own problem, at its line.
  StepGraph broken =
      buildStepGraph("func.func @f() {\n  %0 = arith.addi\n}\n", {}, {});
  QVERIFY2(broken.error.startsWith("line 2: expected SSA operand"),
           qPrintable(broken.error));
}

void ModelsTest::diffModelOfTheFusionPass() {
  CompilationRecord r = fixtureRecord();
  DiffModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setTexts(r.steps[3].ir, r.steps[4].ir);
  compareGolden("diff_fusion.txt", dump(model, DiffModel::KindRole));
  QVERIFY(model.changedRows() > 0);
  int returnRow = model.rowForRightLine(13);
  QVERIFY(model.index(returnRow, DiffModel::RightText)
              .data()
              .toString()
              .contains("return %1"));
  QVERIFY(model.index(returnRow, DiffModel::LeftText)
              .data()
              .toString()
              .contains("return %3"));
  model.setTexts(r.steps[2].ir, r.steps[3].ir);
  QCOMPARE(model.changedRows(), 0);
}

void ModelsTest::diffLinesEditScripts() {
  auto kinds = [](const QVector<DiffRow> &rows) {
    QString s;
    for (const DiffRow &row : rows)
      s += "=-+~"[row.kind];
    return s;
  };
  QStringList a{"a", "b", "c", "d"};
  QCOMPARE(kinds(diffLines(a, a)), QString("===="));
  QCOMPARE(kinds(diffLines(a, {"a", "b", "x", "c", "d"})), QString("==+=="));
  QCOMPARE(kinds(diffLines(a, {"a", "c", "d"})), QString("=-=="));
  QCOMPARE(kinds(diffLines(a, {"a", "B", "c", "d"})), QString("=~=="));
  QCOMPARE(kinds(diffLines({}, {"x", "y"})), QString("++"));
  // Past the edit limit the middle is one replaced block.
  QCOMPARE(kinds(diffLines(a, {"w", "x", "y", "z"}, 2)), QString("~~~~"));
  QVector<DiffRow> rows = diffLines(a, {"a", "b", "x", "c", "d"});
  QCOMPARE(rows[2].rightLine, 3);
  QCOMPARE(rows[3].leftLine, 3);
  QCOMPARE(rows[3].rightLine, 4);
}

void ModelsTest::graphLayoutOfTheFusedStep() {
  if (!graphLayoutAvailable())
    QSKIP("built without Graphviz");
  CompilationRecord r = fixtureRecord();
  StepGraph step = buildStepGraph(r.steps[4].ir, r.steps[3].ir, {});
  GraphLayout layout;
  QString error;
  QVERIFY2(layoutGraph(step.dot, layout, error), qPrintable(error));
  QCOMPARE(layout.nodes.size(), static_cast<int>(step.graph.nodes.size()));
  QCOMPARE(layout.edges.size(), static_cast<int>(step.graph.edges.size()));
  QCOMPARE(layout.clusters.size(), 1);
  QCOMPARE(layout.clusters[0].label, QString("linalg.generic"));
  for (const LaidOutNode &node : layout.nodes) {
    QVERIFY(layout.bounds.adjusted(-1, -1, 1, 1).contains(node.rect));
    const auto &source = step.graph.nodes[node.id];
    QCOMPARE(node.irLine, source.irLine);
    QCOMPARE(node.changed, source.changed);
    QCOMPARE(node.op, QString::fromStdString(source.opName));
    if (node.ellipse)
      QCOMPARE(node.kind, QString("argument"));
  }
  // Body ops sit inside their cluster's box.
  for (const LaidOutNode &node : layout.nodes)
    if (node.op == "arith.addf")
      QVERIFY(layout.clusters[0].rect.contains(node.rect));
  for (const LaidOutEdge &edge : layout.edges)
    QVERIFY(edge.points.size() >= 4);
  QByteArray svg;
  QVERIFY2(renderGraph(step.dot, "svg", svg, error), qPrintable(error));
  QVERIFY(svg.contains("<svg"));
  QVERIFY(!layoutGraph("digraph {", layout, error));
  QVERIFY(error.contains("does not parse"));
}

void ModelsTest::recentFiles() {
  QTemporaryDir dir;
  QSettings settings(dir.filePath("recent.ini"), QSettings::IniFormat);
  RecentFiles recent(settings, 3);
  recent.add("/m/a.py");
  recent.add("/m/b.py");
  recent.add("/m/a.py");
  QCOMPARE(recent.files(), (QStringList{"/m/a.py", "/m/b.py"}));
  recent.add("/m/c.py");
  recent.add("/m/d.py");
  QCOMPARE(recent.files(), (QStringList{"/m/d.py", "/m/c.py", "/m/a.py"}));
  QCOMPARE(recent.lastFile(), QString("/m/d.py"));
  recent.remove("/m/c.py");
  QCOMPARE(recent.files(), (QStringList{"/m/d.py", "/m/a.py"}));
}

QTEST_MAIN(ModelsTest)
#include "ModelsTest.moc"
