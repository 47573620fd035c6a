//===- ProfilerModelsTest.cpp - Profiler view models with golden output ---===//
//
// Each model is built from a small folded-stack or Chrome trace text (or a
// real Cuvil trace in fixtures/), checked by QAbstractItemModelTester,
// printed and compared with golden/ text. Also the pure functions behind
// the views: flame layout, search, colours, latency heat, timeline rows.
//
//===----------------------------------------------------------------------===//

#include "FlameGraphModel.h"
#include "LatencyHeat.h"
#include "OpTableModel.h"
#include "ProfileData.h"
#include "ProfilerTestData.h"

#include <QAbstractItemModelTester>
#include <QTemporaryDir>
#include <QtTest>

using namespace cuvil::workbench;
using namespace cuvil::workbench::test;

namespace {

QString printTracks(const Profile &profile) {
  QString out;
  const prof::Trace &trace = *profile.trace;
  for (const TimelineTrack &track : profile.tracks) {
    out += QString("%1 | %2 | %3 events\n")
               .arg(track.group, track.label)
               .arg(track.eventCount);
    for (size_t r = 0; r < track.rows.size(); ++r) {
      QStringList spans;
      for (const RowSpan &s : track.rows[r])
        spans << QString("%1 [%2, %3)")
                     .arg(QString::fromStdString(
                         std::string(trace.str(trace.events[s.event].name))))
                     .arg(s.startNs - profile.beginNs)
                     .arg(s.endNs - profile.beginNs);
      out += QString("  row %1: %2\n").arg(r).arg(spans.join(", "));
    }
  }
  return out;
}

uint32_t findFrame(const FlameTree &tree, const QString &name) {
  for (uint32_t i = 1; i < tree.size(); ++i)
    if (tree.node(i).name == name)
      return i;
  return 0;
}

} // namespace

class ProfilerModelsTest : public QObject {
  Q_OBJECT
private slots:
  void flameGraphModelOfFoldedStacks();
  void flameGraphModelDiff();
  void flameSearch();
  void flameFramesAreModelNodes();
  void flameLayoutZoomAndPruning();
  void flameColors();
  void opTableModelOfChromeTrace();
  void opTableSortsAndFilters();
  void opTableNamesModelNodes();
  void opTableDiffColumns();
  void timelineTracksOfChromeTrace();
  void pythonStackRowsMergeTouchingCalls();
  void rangeAggregates();
  void latencyHeat();
  void realCuvilTrace();
  void malformedTraceReportsTheReadersError();
  void formatting();
  void longNamesAreElided();
};

void ProfilerModelsTest::flameGraphModelOfFoldedStacks() {
  FlameGraphModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setTree(FlameTree::fromCallTree(
      prof::CallTree::build(parsedFolded(kCurrentFolded))));
  compareGolden("flame_folded.txt", dumpModel(model));
  QCOMPARE(model.rowCount(), 2); // run, idle
  QModelIndex run = model.index(0, 0);
  QCOMPARE(run.data().toString(), QString("run"));
  QCOMPARE(run.data(FlameGraphModel::TotalNsRole).toLongLong(), 950);
  QModelIndex forward = model.index(0, 0, run);
  QCOMPARE(forward.data().toString(), QString("model.forward"));
  QCOMPARE(model.parent(forward), run);
  uint32_t node = model.nodeOf(forward);
  QCOMPARE(model.indexOfNode(node), forward);
  QCOMPARE(model.tree().node(node).module, QString("model"));
  // Searching marks matches and is reported through the tester too.
  model.setSearchText("MATMUL");
  QModelIndex matmul = model.index(0, 0, forward);
  QVERIFY(matmul.data(FlameGraphModel::MatchRole).toBool());
  QVERIFY(!forward.data(FlameGraphModel::MatchRole).toBool());
}

void ProfilerModelsTest::flameFramesAreModelNodes() {
  prof::CallTree calls =
      prof::CallTree::build(parsedChrome(kSequentialLineTrace));
  FlameGraphModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setTree(FlameTree::fromCallTree(calls));
  QCOMPARE(model.tree().print(),
           QString("forward total=200.00 µs self=40.00 µs count=2\n"
                   "  linalg.conv_2d_nchw_fchw [features.2/convolution] "
                   "(/e/cnn.py:9) total=100.00 µs self=100.00 µs count=2\n"
                   "  linalg.conv_2d_nchw_fchw [features.0/convolution] "
                   "(/e/cnn.py:9) total=60.00 µs self=60.00 µs count=2\n"));
  uint32_t second = findFrame(
      model.tree(), "linalg.conv_2d_nchw_fchw [features.2/convolution]");
  QCOMPARE(model.tree().node(second).eventName,
           QString("linalg.conv_2d_nchw_fchw"));
  QCOMPARE(model.tree().node(second).node, QString("features.2/convolution"));
  QCOMPARE(model.tree().node(second).opId, qint64(1));
  QCOMPARE(model.setSearchText("features.2").matches,
           std::vector<uint32_t>{second});
  // The diff (lines ignored or not) matches each node with itself.
  for (bool matchLines : {false, true}) {
    FlameTree diff = FlameTree::fromDiff(
        calls, calls, FlameTree::DiffWidth::Current, matchLines);
    QCOMPARE(diff.size(), size_t(4)); // all, forward, two convolutions
    for (const FlameTree::Node &n : diff.nodes())
      QCOMPARE(n.deltaTotalNs(), int64_t(0));
  }
}

void ProfilerModelsTest::flameGraphModelDiff() {
  FlameGraphModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  prof::CallTree base = prof::CallTree::build(parsedFolded(kBaselineFolded));
  prof::CallTree cur = prof::CallTree::build(parsedFolded(kCurrentFolded));
  model.setTree(FlameTree::fromDiff(base, cur));
  QVERIFY(model.tree().isDiff());
  compareGolden("flame_diff.txt", dumpModel(model));
  const FlameTree &tree = model.tree();
  uint32_t matmul = findFrame(tree, "cuvil.matmul");
  uint32_t read = findFrame(tree, "io.read");
  QCOMPARE(tree.node(matmul).deltaTotalNs(), -300);
  QCOMPARE(tree.node(read).deltaTotalNs(), 100);
  QModelIndex m = model.indexOfNode(matmul);
  QCOMPARE(m.siblingAtColumn(FlameGraphModel::Delta).data().toString(),
           QString("-300 ns"));
  QCOMPARE(m.siblingAtColumn(FlameGraphModel::DeltaPercent).data().toString(),
           QString("-37.5%"));
  // Width by baseline reorders: the baseline's heaviest child comes first.
  FlameTree byBase =
      FlameTree::fromDiff(base, cur, FlameTree::DiffWidth::Baseline);
  QCOMPARE(byBase.weight(0), 1200);
  QCOMPARE(FlameTree::fromDiff(base, cur).weight(0), 1000);
}

void ProfilerModelsTest::flameSearch() {
  FlameTree tree = FlameTree::fromCallTree(
      prof::CallTree::build(parsedFolded("a;b;x 10\na;x;x 20\nc 70\n")));
  FlameTree::SearchResult found = tree.search("X");
  QCOMPARE(found.matches.size(), size_t(3));
  // a;x;x is nested in a;x: counted once (20), plus a;b;x (10).
  QCOMPARE(found.coveredNs, 30);
  QVERIFY(tree.search("").matches.empty());
  QVERIFY(tree.search("nothing").matches.empty());
}

void ProfilerModelsTest::flameLayoutZoomAndPruning() {
  FlameTree tree = FlameTree::fromCallTree(
      prof::CallTree::build(parsedFolded(kCurrentFolded)));
  // Whole tree: root full width, run = 950/1000, idle after it.
  std::vector<FlameRect> rects = layoutFlame(tree, 0, 0.0);
  QCOMPARE(rects.size(), tree.size());
  const FlameRect *root = flameRectAt(rects, 0.5, 0);
  QVERIFY(root && root->node == 0);
  const FlameRect *idle = flameRectAt(rects, 0.97, 1);
  QVERIFY(idle);
  QCOMPARE(tree.node(idle->node).name, QString("idle"));
  QVERIFY(qFuzzyCompare(idle->x0, 0.95));
  const FlameRect *matmul = flameRectAt(rects, 0.1, 3);
  QVERIFY(matmul);
  QCOMPARE(tree.node(matmul->node).name, QString("cuvil.matmul"));
  QVERIFY(qFuzzyCompare(matmul->x1 - matmul->x0, 0.5));
  QVERIFY(!flameRectAt(rects, 0.99, 3)); // past the children: self time

  // Zoomed into model.forward (650 ns): it and its ancestors fill the width.
  uint32_t forward = findFrame(tree, "model.forward");
  rects = layoutFlame(tree, forward, 0.0);
  const FlameRect *zoomed = flameRectAt(rects, 0.99, 2);
  QVERIFY(zoomed && zoomed->node == forward && !zoomed->ancestor);
  const FlameRect *run = flameRectAt(rects, 0.99, 1);
  QVERIFY(run && run->ancestor);
  matmul = flameRectAt(rects, 0.1, 3);
  QVERIFY(qFuzzyCompare(matmul->x1 - matmul->x0, 500.0 / 650.0));
  QVERIFY(!flameRectAt(rects, 0.5, 1) || flameRectAt(rects, 0.5, 1)->ancestor);
  for (const FlameRect &r : rects)
    QVERIFY(r.node != findFrame(tree, "idle")); // outside the zoomed frame

  // Frames below the minimum width are left out with their subtrees.
  rects = layoutFlame(tree, 0, 0.2);
  for (const FlameRect &r : rects)
    QVERIFY(r.node == 0 || r.x1 - r.x0 >= 0.2);
  QVERIFY(!std::any_of(rects.begin(), rects.end(), [&](const FlameRect &r) {
    return r.node == findFrame(tree, "cuvil.relu");
  }));
}

void ProfilerModelsTest::flameColors() {
  // Equal modules share a hue; different names vary only the shade.
  QColor a = moduleColor("attention", "linalg.matmul");
  QColor b = moduleColor("attention", "linalg.generic");
  QColor c = moduleColor("mlp", "linalg.matmul");
  QCOMPARE(a.hue(), b.hue());
  QVERIFY(a.hue() != c.hue() || a.saturation() != c.saturation());
  // Frames of one module differ in shade; frames without one share the
  // neutral tone's hue.
  QVERIFY(moduleColor("attention", "linalg.matmul") !=
          moduleColor("attention", "linalg.fill"));
  QCOMPARE(moduleColor("", "forward").hue(), QColor(222, 214, 196).hue());
  QCOMPARE(frameModule("linalg.matmul", "/src/model/attention.py"),
           QString("attention"));
  QCOMPARE(frameModule("cuvil.matmul", ""), QString("cuvil"));
  QCOMPARE(frameModule("forward", ""), QString());

  // Diff: slower is red, faster blue, equal neutral, larger change deeper.
  QColor slower = diffColor(100, 130), faster = diffColor(100, 70);
  QColor same = diffColor(100, 100);
  QVERIFY(slower.red() > slower.blue() + 60);
  QVERIFY(faster.blue() > faster.red() + 60);
  QVERIFY(qAbs(same.red() - same.blue()) < 10);
  QColor little = diffColor(100, 105), lots = diffColor(100, 200);
  QVERIFY(lots.green() < little.green());         // deeper red
  QCOMPARE(diffColor(0, 50), diffColor(1, 1000)); // new frame: full red
  QCOMPARE(diffColor(50, 0), diffColor(1000, 1)); // gone: full blue
  QCOMPARE(textColorOn(QColor(215, 48, 39)), QColor(250, 250, 250));
  QCOMPARE(textColorOn(QColor(236, 234, 230)), QColor(20, 20, 20));
}

void ProfilerModelsTest::opTableModelOfChromeTrace() {
  OpTableModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  std::shared_ptr<const Profile> profile =
      analyzeProfile(parsedChrome(kChromeTrace), "test.json");
  model.setRows(profile->ops);
  compareGolden("op_table.txt", dumpModel(model));
  int matmul = model.rowForLocation("/src/m.py:4:9");
  QVERIFY(matmul >= 0);
  QModelIndex index = model.index(matmul, OpTableModel::Op);
  QCOMPARE(index.data(OpTableModel::OpIdRole).toLongLong(), 3);
  QCOMPARE(index.data(OpTableModel::LocRole).toString(),
           QString("/src/m.py:4:9"));
  QCOMPARE(model.index(matmul, OpTableModel::Location).data().toString(),
           QString("m.py:4:9"));
  QCOMPARE(model.columnCount(), int(OpTableModel::BaselineTotal));
}

void ProfilerModelsTest::opTableNamesModelNodes() {
  OpTableModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setRows(
      analyzeProfile(parsedChrome(kImportedModelTrace), "t.json")->ops);
  QCOMPARE(model.rowCount(), 2);
  auto cell = [&](int row, int role) {
    return model.index(row, OpTableModel::Location).data(role).toString();
  };
  QCOMPARE(cell(0, Qt::DisplayRole),
           QString("features.conv1/convolution (torch_cnn.py:37:0)"));
  QCOMPARE(cell(0, OpTableModel::NodeRole),
           QString("features.conv1/convolution"));
  QCOMPARE(cell(0, OpTableModel::LocRole), QString("/e/torch_cnn.py:37:0"));
  QCOMPARE(cell(0, Qt::ToolTipRole),
           QString("/e/torch_cnn.py:37:0\nnode features.conv1/convolution"));
  QCOMPARE(cell(1, Qt::DisplayRole),
           QString("/stem/stem.0/Conv (resnet.onnx)"));
  OpTableProxy proxy;
  proxy.setSourceModel(&model);
  proxy.setFilterText("stem.0");
  QCOMPARE(proxy.rowCount(), 1);
  QCOMPARE(proxy.index(0, 0).data(OpTableModel::OpIdRole).toLongLong(), 7);
}

void ProfilerModelsTest::opTableSortsAndFilters() {
  OpTableModel model;
  model.setRows(analyzeProfile(parsedChrome(kChromeTrace), "t")->ops);
  OpTableProxy proxy;
  QAbstractItemModelTester tester(
      &proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
  proxy.setSourceModel(&model);
  // Numeric, not textual: "10.00 µs" sorts below "100.00 µs".
  proxy.sort(OpTableModel::Total, Qt::AscendingOrder);
  QList<qint64> totals;
  for (int r = 0; r < proxy.rowCount(); ++r)
    totals << proxy.index(r, 0).data(OpTableModel::TotalNsRole).toLongLong();
  QVERIFY(std::is_sorted(totals.begin(), totals.end()));
  QCOMPARE(totals.last(), 180000); // forward: 100 + 80 µs
  // Rows are per IR op: the GPU kernel of op 3 counts with its CPU kernels.
  proxy.sort(OpTableModel::Count, Qt::DescendingOrder);
  QCOMPARE(proxy.index(0, OpTableModel::Count).data().toString(), QString("3"));
  QCOMPARE(proxy.index(0, 0).data(OpTableModel::OpIdRole).toLongLong(), 3);
  proxy.setFilterText("LINALG");
  QCOMPARE(proxy.rowCount(), 2);
  proxy.setFilterText("m.py:5");
  QCOMPARE(proxy.rowCount(), 1);
  QCOMPARE(proxy.index(0, 0).data().toString(),
           QString("linalg.generic(addf)"));
  proxy.setFilterText("");
  QCOMPARE(proxy.rowCount(), model.rowCount());
}

void ProfilerModelsTest::opTableDiffColumns() {
  OpTableModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  auto cur = analyzeProfile(parsedFolded(kCurrentFolded), "cur");
  auto base = analyzeProfile(parsedFolded(kBaselineFolded), "base");
  model.setRows(cur->ops, base->ops);
  QVERIFY(model.hasBaseline());
  QCOMPARE(model.columnCount(), int(OpTableModel::ColumnCount));
  compareGolden("op_table_diff.txt", dumpModel(model));
  int read = -1;
  for (int r = 0; r < model.rowCount(); ++r)
    if (model.index(r, 0).data().toString() == "io.read")
      read = r;
  QVERIFY(read >= 0);
  QCOMPARE(model.index(read, OpTableModel::DeltaTotal).data().toString(),
           QString("+100 ns"));
  QCOMPARE(model.index(read, OpTableModel::DeltaTotal)
               .data(Qt::ForegroundRole)
               .value<QBrush>()
               .color(),
           QColor(190, 30, 30));

  // Kernels of one name at two locations match their own baseline rows; a
  // name the baseline has once matches even when its location moved.
  auto row = [](const char *name, const char *loc, int64_t total) {
    prof::OpRow r;
    r.name = name;
    r.loc = loc;
    r.totalNs = total;
    return r;
  };
  model.setRows({row("k", "a.py:1:1", 10), row("k", "a.py:2:1", 20),
                 row("m", "a.py:3:1", 5), row("n", "a.py:4:1", 1)},
                {row("k", "a.py:1:1", 15), row("k", "a.py:2:1", 5),
                 row("m", "a.py:9:1", 7)});
  QStringList baselines;
  for (int r = 0; r < model.rowCount(); ++r)
    baselines << model.index(r, OpTableModel::BaselineTotal).data().toString();
  QCOMPARE(baselines, QStringList({"15 ns", "5 ns", "7 ns", "new"}));
}

void ProfilerModelsTest::timelineTracksOfChromeTrace() {
  auto profile = analyzeProfile(parsedChrome(kChromeTrace), "test.json");
  compareGolden("timeline_tracks.txt", printTracks(*profile));
  QCOMPARE(profile->tracks.size(), size_t(4));
  QCOMPARE(profile->tracks[0].group, QString("Python stack"));
  QCOMPARE(profile->tracks[1].group, QString("NVTX ranges"));
  QCOMPARE(profile->tracks[2].group, QString("CPU kernels"));
  QCOMPARE(profile->tracks[3].group, QString("GPU kernels"));
  // Every row grows in both start and end (what level of detail relies on).
  for (const TimelineTrack &t : profile->tracks)
    for (const auto &row : t.rows)
      for (size_t i = 1; i < row.size(); ++i) {
        QVERIFY(row[i].startNs >= row[i - 1].endNs);
        QVERIFY(row[i].endNs >= row[i - 1].endNs);
      }
}

void ProfilerModelsTest::pythonStackRowsMergeTouchingCalls() {
  // Two back-to-back calls from the same caller, then one after a gap.
  prof::Trace trace;
  uint32_t thread = trace.thread(1, 1);
  prof::StackId stack = trace.stack(
      {trace.frame("main", "run.py", 3), trace.frame("step", "run.py", 9)});
  for (int64_t start : {0, 100, 300}) {
    prof::Event e;
    e.startNs = start;
    e.durationNs = 100;
    e.name = trace.intern("forward");
    e.kind = prof::EventKind::Python;
    e.thread = thread;
    e.stack = stack;
    trace.events.push_back(e);
  }
  auto profile = analyzeProfile(std::move(trace), "touching");
  const TimelineTrack &python = profile->tracks[0];
  QCOMPARE(python.stackRows, size_t(2));
  for (int r = 0; r < 2; ++r) {
    QCOMPARE(python.rows[size_t(r)].size(), size_t(2));
    QCOMPARE(python.rows[size_t(r)][0].endNs, 200);
    QCOMPARE(python.rows[size_t(r)][1].startNs, 300);
  }
  QCOMPARE(python.rows[2].size(), size_t(3));
}

void ProfilerModelsTest::rangeAggregates() {
  auto profile = analyzeProfile(parsedChrome(kChromeTrace), "test.json");
  prof::Selection second;
  second.beginNs = profile->beginNs + 150000;
  second.endNs = profile->beginNs + 300000;
  Aggregates a = aggregate(*profile->trace, second);
  FlameGraphModel model;
  QAbstractItemModelTester tester(
      &model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  model.setTree(FlameTree::fromCallTree(a.callTree));
  compareGolden("flame_range.txt", dumpModel(model));
  QCOMPARE(model.tree().weight(0), 80000 + 0); // the second call only
  prof::Selection kernels;
  kernels.kindMask = prof::Selection::bit(prof::EventKind::GpuKernel);
  Aggregates gpu = aggregate(*profile->trace, kernels);
  QCOMPARE(gpu.ops.size(), size_t(1));
  QCOMPARE(QString::fromStdString(gpu.ops[0].name), QString("gemm_128x128"));
}

void ProfilerModelsTest::latencyHeat() {
  prof::Trace trace = parsedChrome(kChromeTrace);
  QHash<QString, qint64> latency = latencyByLocation(trace);
  // matmul: 40 + 60 µs on the CPU, 30 µs on the GPU; add: 10 µs.
  QCOMPARE(latency.value("/src/m.py:4:9"), 130000);
  QCOMPARE(latency.value("/src/m.py:5:9"), 10000);
  QCOMPARE(latency.size(), 2); // Python calls and NVTX ranges have no loc
  QHash<QString, double> heat = heatByLocation(trace);
  QCOMPARE(heat.value("/src/m.py:4:9"), 1.0);
  QVERIFY(qFuzzyCompare(heat.value("/src/m.py:5:9"), 10.0 / 130.0));
  QHash<QString, double> byLine = heatByLocation(trace, HeatKey::Line);
  QVERIFY(byLine.contains("/src/m.py:4"));
  QHash<qint64, qint64> byOp = latencyByOpId(trace);
  QCOMPARE(byOp.value(3), 130000);
  prof::Selection first;
  first.endNs = trace.timeBounds().first + 150000;
  QCOMPARE(
      latencyByLocation(trace, HeatKey::Location, first).value("/src/m.py:4:9"),
      70000);
  // The index the IR graph looks nodes up in: by path, else file name.
  QHash<QString, qint64> locs = latency;
  locs.insert("/src/m.py:5:20", 5000); // a second op on line 5
  LatencyHeatIndex index(locs);
  QCOMPARE(index.latencyNs("/src/m.py", 4, 9), 130000);
  QCOMPARE(index.latencyNs("/other/checkout/m.py", 4, 9), 130000);
  QCOMPARE(index.latencyNs("m.py", 5), 15000); // both columns of line 5
  QCOMPARE(index.latencyNs("/src/m.py", 6), 0);
  QCOMPARE(index.heat("/src/m.py", 4, 9), 1.0);
  QVERIFY(qFuzzyCompare(index.heat("/src/m.py", 5), 15.0 / 130.0));
  QVERIFY(qFuzzyCompare(index.heat("/src/m.py", 5, 20), 5.0 / 130.0));
  QVERIFY(LatencyHeatIndex().isEmpty());
  QCOMPARE(LatencyHeatIndex().heat("/src/m.py", 4), 0.0);
  QCOMPARE(heatColor(0.0), QColor(255, 247, 204));
  QCOMPARE(heatColor(1.0), QColor(200, 30, 30));
  QVERIFY(heatColor(0.75).green() < heatColor(0.25).green());
}

void ProfilerModelsTest::realCuvilTrace() {
  ProfileLoad load = loadProfile(testData("fixtures/mlp_fused.json"));
  QVERIFY2(load.profile, qPrintable(load.error));
  const Profile &profile = *load.profile;
  QCOMPARE(profile.trace->events.size(), size_t(12));
  QCOMPARE(profile.tracks.size(), size_t(2));
  QCOMPARE(profile.tracks[0].group, QString("Python stack"));
  QCOMPARE(profile.tracks[1].group, QString("CPU kernels"));
  // The Python lane shows the callers of each call above it: the recording
  // script's <module> and record() frames, then the mlp calls.
  const TimelineTrack &python = profile.tracks[0];
  QCOMPARE(python.stackRows, size_t(2));
  QCOMPARE(python.rows.size(), size_t(3));
  const prof::Trace &trace = *profile.trace;
  QCOMPARE(python.rows[0].size(), size_t(3)); // one span per call: gaps
  for (int r = 0; r < 2; ++r) {
    const RowSpan &span = python.rows[size_t(r)][0];
    QVERIFY(span.frame != RowSpan::kNoFrame);
    QCOMPARE(trace.str(trace.frames[span.frame].name),
             std::string_view(r == 0 ? "<module>" : "record"));
    QCOMPARE(span.startNs, python.rows[2][0].startNs);
    QCOMPARE(span.endNs, python.rows[2][0].endNs);
  }
  QCOMPARE(python.rows[2][0].frame, RowSpan::kNoFrame);
  FlameGraphModel flame;
  QAbstractItemModelTester flameTester(
      &flame, QAbstractItemModelTester::FailureReportingMode::QtTest);
  flame.setTree(FlameTree::fromCallTree(profile.callTree));
  OpTableModel ops;
  QAbstractItemModelTester opTester(
      &ops, QAbstractItemModelTester::FailureReportingMode::QtTest);
  ops.setRows(profile.ops);
  compareGolden("mlp_fused_flame.txt", dumpModel(flame));
  compareGolden("mlp_fused_ops.txt", dumpModel(ops));
  // Kernels are named after their IR ops and carry the op's Python line.
  bool found = false;
  for (const prof::OpRow &row : profile.ops)
    if (row.kind == prof::EventKind::CpuKernel) {
      QVERIFY(row.opId >= 0);
      QVERIFY(QString::fromStdString(row.loc).contains("mlp.py:"));
      found = true;
    }
  QVERIFY(found);
  // Flows join each compiled call to the kernels it ran.
  uint32_t call = python.rows[2][0].event;
  std::vector<uint32_t> kernels = profile.flows.targets(call);
  QCOMPARE(kernels.size(), size_t(3));
  for (uint32_t k : kernels) {
    QCOMPARE(trace.events[k].kind, prof::EventKind::CpuKernel);
    QVERIFY(trace.events[k].startNs >= trace.events[call].startNs);
    QCOMPARE(profile.flows.sources(k), std::vector<uint32_t>{call});
  }
  QVERIFY(profile.flows.sources(call).empty());
  QVERIFY(FlowIndex().targets(0).empty());
  // The diff of the fused run against the unfused one.
  ProfileLoad unfused = loadProfile(testData("fixtures/mlp_unfused.json"));
  QVERIFY2(unfused.profile, qPrintable(unfused.error));
  flame.setTree(
      FlameTree::fromDiff(unfused.profile->callTree, profile.callTree));
  compareGolden("mlp_diff_flame.txt", dumpModel(flame));
  // The unfused run has two ops of this name (lines 14 and 15), the fused
  // run one (line 15). They are separate frames (#1, #2 by op order); the
  // diff matches by name and file, the fused op taking the first instance,
  // unless asked to match lines too.
  auto frames = [](const FlameTree &tree, const QString &name) {
    int n = 0;
    for (const FlameTree::Node &node : tree.nodes())
      n += node.name == name;
    return n;
  };
  QString both = "linalg.fill + linalg.matmul + linalg.generic(addf)";
  QCOMPARE(frames(flame.tree(), both), 0);
  QCOMPARE(frames(flame.tree(), both + " #1"), 1);
  QCOMPARE(frames(flame.tree(), both + " #2"), 1);
  uint32_t first = findFrame(flame.tree(), both + " #1");
  QVERIFY(flame.tree().node(first).baselineTotalNs > 0);
  QVERIFY(flame.tree().node(first).totalNs > 0);
  QCOMPARE(
      frames(FlameTree::fromDiff(unfused.profile->callTree, profile.callTree,
                                 FlameTree::DiffWidth::Current, true),
             both),
      2);
}

void ProfilerModelsTest::malformedTraceReportsTheReadersError() {
  QTemporaryDir dir;
  QString path = dir.filePath("broken.json");
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(
      "{\"traceEvents\": [\n{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1,,}\n]}");
  file.close();
  ProfileLoad load = loadProfile(path);
  QVERIFY(!load.profile);
  QVERIFY2(load.error.startsWith(path + ":2:"), qPrintable(load.error));
  ProfileLoad missing = loadProfile(dir.filePath("nope.json"));
  QVERIFY(!missing.profile);
  QVERIFY(missing.error.contains("no such trace file"));
}

void ProfilerModelsTest::formatting() {
  QCOMPARE(formatDuration(12), QString("12 ns"));
  QCOMPARE(formatDuration(3400), QString("3.40 µs"));
  QCOMPARE(formatDuration(1250000), QString("1.25 ms"));
  QCOMPARE(formatDuration(2003000000), QString("2.003 s"));
  QCOMPARE(formatDelta(1250000), QString("+1.25 ms"));
  QCOMPARE(formatDelta(-3400), QString("-3.40 µs"));
  QCOMPARE(shortLocation("/a/b/model.py:3:9"), QString("model.py:3:9"));
}

QTEST_MAIN(ProfilerModelsTest)
#include "ProfilerModelsTest.moc"

void ProfilerModelsTest::longNamesAreElided() {
  // A 5 MB frame name: the models hand the views at most kMaxDisplayChars,
  // so layout and paint cost what they do for a short name.
  std::string huge(5 * 1024 * 1024, 'x');
  std::string folded = "main;" + huge + ";leaf 5\nmain;other 3\n";
  FlameGraphModel flame;
  QAbstractItemModelTester tester(
      &flame, QAbstractItemModelTester::FailureReportingMode::QtTest);
  flame.setTree(FlameTree::fromCallTree(
      prof::CallTree::build(parsedFolded(folded.c_str()))));
  QModelIndex main = flame.index(0, 0);
  QModelIndex big = flame.index(0, FlameGraphModel::Frame, main);
  QString shown = big.data().toString();
  QCOMPARE(shown.size(), kMaxDisplayChars);
  QVERIFY(shown.startsWith("xxxx") && shown.endsWith(QChar(0x2026)));
  QVERIFY(big.data(Qt::ToolTipRole).toString().size() <= kMaxDisplayChars);
  QCOMPARE(flame.index(0, 0, big).data().toString(), QString("leaf"));
  QCOMPARE(flame.index(1, 0, main).data().toString(), QString("other"));

  std::shared_ptr<const Profile> profile =
      analyzeProfile(parsedFolded(folded.c_str()), "long.folded");
  OpTableModel ops;
  QAbstractItemModelTester opsTester(
      &ops, QAbstractItemModelTester::FailureReportingMode::QtTest);
  ops.setRows(profile->ops, profile->ops);
  bool sawHuge = false;
  for (int r = 0; r < ops.rowCount(); ++r) {
    for (int c = 0; c < ops.columnCount(); ++c) {
      QModelIndex index = ops.index(r, c);
      for (int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole)})
        QVERIFY(index.data(role).toString().size() <= 2 * kMaxDisplayChars);
    }
    QString name = ops.index(r, 0).data(OpTableModel::NameRole).toString();
    QVERIFY(name.size() <= kMaxDisplayChars);
    sawHuge |= name.startsWith("xxxx");
  }
  QVERIFY(sawHuge);

  // Cut on characters, never inside one; bytes that are not UTF-8 show as
  // U+FFFD; short names are unchanged.
  std::string accents;
  for (int i = 0; i < 3000; ++i)
    accents += "\xc3\xa9\xf0\x9f\x99\x82"; // é and an emoji (2 UTF-16 units)
  QString cut = displayText(accents);
  QVERIFY(cut.size() <= kMaxDisplayChars && cut.endsWith(QChar(0x2026)));
  QVERIFY(!cut.chopped(1).back().isHighSurrogate());
  QCOMPARE(displayText("a\xff"
                       "b"),
           QString("a") + QChar(0xFFFD) + "b");
  QCOMPARE(displayText("forward"), QString("forward"));
  QCOMPARE(displayText(std::string(kMaxDisplayChars, 'y')),
           QString(kMaxDisplayChars, 'y'));
}
