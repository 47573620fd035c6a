//===- ProfilerViewsTest.cpp - Profiler views' logic, headless ------------===//
//
// The timeline's viewport, level of detail and hit-testing as functions;
// then the widgets on the offscreen platform: clicking, shift-dragging a
// range, wheel zoom, zooming into a flame graph frame and back, diff
// colours; and the ProfilerPage: a range selection re-aggregating the flame
// graph and the op table, the diff mode, load errors, cross-links.
//
//===----------------------------------------------------------------------===//

#include "FlameGraphModel.h"
#include "FlameGraphView.h"
#include "OpTableModel.h"
#include "ProfilerPage.h"
#include "ProfilerTestData.h"
#include "TimelineView.h"

#include <QHeaderView>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QWheelEvent>
#include <QtTest>

using namespace cuvil::workbench;
using namespace cuvil::workbench::test;

namespace {

/// Spans of `count` events of `durNs` every `strideNs`, indices from 0.
std::vector<RowSpan> evenSpans(size_t count, int64_t durNs, int64_t strideNs) {
  std::vector<RowSpan> row;
  for (size_t i = 0; i < count; ++i)
    row.push_back(
        {int64_t(i) * strideNs, int64_t(i) * strideNs + durNs, uint32_t(i)});
  return row;
}

uint32_t findFrame(const FlameTree &tree, const QString &name) {
  for (uint32_t i = 1; i < tree.size(); ++i)
    if (tree.node(i).name == name)
      return i;
  return 0;
}

/// The centre (viewport coordinates) of `event` in the timeline.
QPoint eventCentre(const TimelineView &view, uint32_t event) {
  const Profile &p = *view.profile();
  for (size_t t = 0; t < p.tracks.size(); ++t)
    for (size_t r = 0; r < p.tracks[t].rows.size(); ++r)
      for (const RowSpan &s : p.tracks[t].rows[r])
        if (s.event == event)
          for (const TimelineLanes::Lane &lane : view.lanes().lanes)
            if (lane.track == int(t) && lane.row == int(r))
              return QPoint(int(view.xOf((s.startNs + s.endNs) / 2.0)),
                            TimelineLanes::kRulerHeight + lane.y +
                                lane.height / 2);
  return {};
}

bool wholeSelection(const prof::Selection &s) {
  return s.beginNs == INT64_MIN && s.endNs == INT64_MAX;
}

uint32_t eventNamed(const prof::Trace &trace, const char *name, int nth = 0) {
  for (uint32_t i = 0; i < trace.events.size(); ++i)
    if (trace.str(trace.events[i].name) == name && nth-- == 0)
      return i;
  qFatal("no event %s", name);
}

} // namespace

class ProfilerViewsTest : public QObject {
  Q_OBJECT
private slots:
  void viewportZoomKeepsTheTimeUnderTheCursor();
  void viewportPanClampsToTheTrace();
  void levelOfDetailMergesSubPixelEvents();
  void hitTestingARow();
  void timelineClickAndShiftDragSelection();
  void timelineWheelZoomsAroundTheCursor();
  void flameGraphClickZoomsIntoAFrameAndBack();
  void flameGraphOrientationSearchAndDiffColours();
  void pageRangeSelectionUpdatesAggregates();
  void pageDiffMode();
  void pageShowsLoadErrors();
  void pageCrossLinks();
  void pageShowsModelNodesNextToTheOp();
};

void ProfilerViewsTest::viewportZoomKeepsTheTimeUnderTheCursor() {
  TimelineViewport v;
  v.reset(0, 1000000, 1000);
  double span = v.visibleEndNs() - v.visibleBeginNs();
  QVERIFY(v.visibleBeginNs() < 0 && v.visibleEndNs() > 1000000);
  double anchor = v.toNs(250);
  v.zoomAround(250, 4);
  QVERIFY(qAbs(v.toNs(250) - anchor) < 1e-6);
  QVERIFY(qFuzzyCompare(v.visibleEndNs() - v.visibleBeginNs(), span / 4));
  v.zoomAround(600, 1e12);
  QCOMPARE(v.visibleEndNs() - v.visibleBeginNs(), TimelineViewport::kMinSpanNs);
  v.zoomAround(600, 1e-12);
  QVERIFY(qFuzzyCompare(v.visibleEndNs() - v.visibleBeginNs(), span));
  QVERIFY(qFuzzyCompare(v.toPx(v.toNs(123.5)), 123.5));
}

void ProfilerViewsTest::viewportPanClampsToTheTrace() {
  TimelineViewport v;
  v.reset(0, 1000000, 1000);
  double begin = v.visibleBeginNs();
  v.panByPixels(100); // the whole trace is visible: nothing moves
  QCOMPARE(v.visibleBeginNs(), begin);
  v.showRange(400000, 500000);
  double perPx = v.nsPerPixel();
  v.panByPixels(100); // content follows the mouse: earlier times come in
  QVERIFY(qFuzzyCompare(v.visibleBeginNs(), 400000 - 100 * perPx));
  v.panByPixels(1e9);
  QCOMPARE(v.visibleBeginNs(), begin);
  QVERIFY(qFuzzyCompare(v.visibleEndNs() - v.visibleBeginNs(), 100000));
}

void ProfilerViewsTest::levelOfDetailMergesSubPixelEvents() {
  // 100,000 events of 10 ns every 20 ns, and one wide event in the middle.
  std::vector<RowSpan> row = evenSpans(50000, 10, 20);
  row.push_back({1000000, 1500000, 50000});
  for (uint32_t i = 0; i < 50000; ++i)
    row.push_back(
        {1500000 + int64_t(i) * 20, 1500000 + int64_t(i) * 20 + 10, 50001 + i});
  TimelineViewport v;
  v.reset(0, 2500000, 1000);
  std::vector<TimelineBox> boxes = rowBoxes(row, v);
  QVERIFY2(boxes.size() <= 1002, qPrintable(QString::number(boxes.size())));
  uint64_t covered = 0;
  const TimelineBox *wide = nullptr;
  for (const TimelineBox &b : boxes) {
    covered += b.merged;
    QVERIFY(b.x1 - b.x0 >= 1.0 - 1e-9);
    if (b.event == 50000)
      wide = &b;
  }
  QCOMPARE(covered, uint64_t(row.size())); // every event is drawn once
  QVERIFY(wide && wide->merged == 1);
  QVERIFY(qAbs((wide->x1 - wide->x0) - 500000 / v.nsPerPixel()) < 1e-6);
  for (size_t i = 1; i < boxes.size(); ++i) {
    QVERIFY(boxes[i].x0 >= boxes[i - 1].x0);
    // Runs tile the row: each box starts where the one before ended.
    QCOMPARE(boxes[i].span, boxes[i - 1].span + boxes[i - 1].merged);
    QCOMPARE(row[boxes[i].span].event, boxes[i].event);
  }

  // Zoomed in so that events are 5 px wide: one box per visible event.
  v.showRange(0, 2000);
  boxes = rowBoxes(row, v);
  QCOMPARE(boxes.size(), size_t(100));
  for (const TimelineBox &b : boxes)
    QCOMPARE(b.merged, 1u);
  QCOMPARE(boxes.front().event, 0u);
}

void ProfilerViewsTest::hitTestingARow() {
  std::vector<RowSpan> row = {{0, 10, 7}, {20, 30, 8}};
  TimelineViewport v;
  v.reset(0, 100, 100);
  v.showRange(0, 100); // 1 ns per pixel
  QCOMPARE(eventAtPixel(row, v, v.toPx(25)), 8);
  QCOMPARE(eventAtPixel(row, v, v.toPx(5)), 7);
  QCOMPARE(eventAtPixel(row, v, v.toPx(15)), -1); // 5 px from both
  QCOMPARE(eventAtPixel(row, v, v.toPx(31)), 8);  // within 2 px
  QCOMPARE(eventAtPixel(row, v, v.toPx(60)), -1);
  QCOMPARE(eventAtPixel({}, v, 10), -1);
}

void ProfilerViewsTest::timelineClickAndShiftDragSelection() {
  TimelineView view;
  view.resize(TimelineView::kLabelWidth + 1000 + 20, 400);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  auto profile = analyzeProfile(parsedChrome(kChromeTrace), "test.json");
  view.setProfile(profile);
  const prof::Trace &trace = *profile->trace;

  // Group headers and one lane per track, Python first.
  QCOMPARE(view.lanes().lanes.front().text, QString("Python stack"));
  uint32_t kernel = eventNamed(trace, "linalg.matmul", 1);
  uint32_t gpu = eventNamed(trace, "gemm_128x128");
  QCOMPARE(view.eventAt(eventCentre(view, kernel)), int64_t(kernel));
  QCOMPARE(view.eventAt(eventCentre(view, gpu)), int64_t(gpu));
  QCOMPARE(view.eventAt(QPoint(5, eventCentre(view, gpu).y())), -1); // labels

  // Clicking a group header collapses the group to that header.
  uint32_t call = eventNamed(trace, "forward");
  QPoint callAt = eventCentre(view, call);
  size_t lanes = view.lanes().lanes.size();
  QTest::mouseClick(view.viewport(), Qt::LeftButton, {},
                    QPoint(300, TimelineLanes::kRulerHeight + 5));
  QVERIFY(view.isGroupCollapsed("Python stack"));
  QCOMPARE(view.lanes().lanes.size(), lanes - 1);
  QVERIFY(view.eventAt(callAt) != int64_t(call));
  QCOMPARE(view.eventAt(eventCentre(view, gpu)), int64_t(gpu));
  view.setGroupCollapsed("Python stack", false);
  QCOMPARE(view.lanes().lanes.size(), lanes);
  QCOMPARE(view.eventAt(callAt), int64_t(call));

  QSignalSpy clicked(&view, &TimelineView::eventClicked);
  QTest::mouseClick(view.viewport(), Qt::LeftButton, {},
                    eventCentre(view, kernel));
  QCOMPARE(clicked.size(), 1);
  QCOMPARE(clicked[0][0].toLongLong(), qint64(kernel));
  QCOMPARE(view.currentEvent(), int64_t(kernel));

  QSignalSpy selected(&view, &TimelineView::rangeSelected);
  QSignalSpy cleared(&view, &TimelineView::selectionCleared);
  int64_t origin = profile->beginNs;
  QPoint from(int(view.xOf(origin + 150000.0)), 100);
  QPoint to(int(view.xOf(origin + 300000.0)), 100);
  QTest::mousePress(view.viewport(), Qt::LeftButton, Qt::ShiftModifier, from);
  QTest::mouseMove(view.viewport(), to);
  QTest::mouseRelease(view.viewport(), Qt::LeftButton, Qt::ShiftModifier, to);
  QCOMPARE(selected.size(), 1);
  double slack = 2 * view.timeViewport().nsPerPixel();
  QVERIFY(qAbs(selected[0][0].toLongLong() - (origin + 150000)) < slack);
  QVERIFY(qAbs(selected[0][1].toLongLong() - (origin + 300000)) < slack);
  QVERIFY(view.hasSelection());
  // A double-click zooms to the event, with a tenth of it on each side.
  QTest::mouseDClick(view.viewport(), Qt::LeftButton, {},
                     eventCentre(view, kernel));
  const prof::Event &k = trace.events[kernel];
  QVERIFY(qFuzzyCompare(view.timeViewport().visibleBeginNs(),
                        k.startNs - k.durationNs / 10.0));
  QVERIFY(qFuzzyCompare(view.timeViewport().visibleEndNs(),
                        k.endNs() + k.durationNs / 10.0));
  view.resetZoom();
  // A plain drag pans instead of selecting.
  view.zoomAround(TimelineView::kLabelWidth + 500, 4);
  double before = view.timeViewport().visibleBeginNs();
  QTest::mousePress(view.viewport(), Qt::LeftButton, {}, QPoint(600, 100));
  QTest::mouseMove(view.viewport(), QPoint(700, 100));
  QTest::mouseRelease(view.viewport(), Qt::LeftButton, {}, QPoint(700, 100));
  QCOMPARE(selected.size(), 1);
  QVERIFY(view.timeViewport().visibleBeginNs() < before);
  // A click on empty space clears the selection.
  QTest::mouseClick(
      view.viewport(), Qt::LeftButton, {},
      QPoint(view.viewport()->width() - 5, view.viewport()->height() - 5));
  QCOMPARE(cleared.size(), 1);
  QVERIFY(!view.hasSelection());
}

void ProfilerViewsTest::timelineWheelZoomsAroundTheCursor() {
  TimelineView view;
  view.resize(TimelineView::kLabelWidth + 800, 300);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  view.setProfile(analyzeProfile(parsedChrome(kChromeTrace), "t"));
  QPointF at(TimelineView::kLabelWidth + 200, 80);
  double anchor = view.timeViewport().toNs(at.x() - TimelineView::kLabelWidth);
  double span =
      view.timeViewport().visibleEndNs() - view.timeViewport().visibleBeginNs();
  QWheelEvent wheel(at, view.viewport()->mapToGlobal(at), QPoint(),
                    QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QApplication::sendEvent(view.viewport(), &wheel);
  const TimelineViewport &v = view.timeViewport();
  QVERIFY(v.visibleEndNs() - v.visibleBeginNs() < span * 0.8);
  QVERIFY(qAbs(v.toNs(at.x() - TimelineView::kLabelWidth) - anchor) <
          v.nsPerPixel());
  view.resetZoom();
  QVERIFY(qFuzzyCompare(v.visibleEndNs() - v.visibleBeginNs(), span));
}

void ProfilerViewsTest::flameGraphClickZoomsIntoAFrameAndBack() {
  FlameGraphModel model;
  model.setTree(FlameTree::fromCallTree(
      prof::CallTree::build(parsedFolded(kCurrentFolded))));
  FlameGraphView view;
  view.setModel(&model);
  view.resize(1000, 200);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  const FlameTree &tree = model.tree();
  uint32_t matmul = findFrame(tree, "cuvil.matmul");
  uint32_t forward = findFrame(tree, "model.forward");
  // Flame: root on the bottom row, matmul on row 3, half the width.
  QRectF m = view.frameRect(matmul);
  QCOMPARE(m, QRectF(0, 200 - 4 * FlameGraphView::kRowHeight, 500,
                     FlameGraphView::kRowHeight));
  QCOMPARE(view.frameAt(m.center().toPoint()), matmul);
  QCOMPARE(view.frameAt(QPoint(990, int(m.center().y()))),
           FlameGraphView::kNoFrame); // model.forward's self time

  QTest::mouseMove(&view, m.center().toPoint());
  QCOMPARE(view.hoveredFrame(), matmul);
  QSignalSpy zoomed(&view, &FlameGraphView::zoomChanged);
  QTest::mouseClick(&view, Qt::LeftButton, {},
                    view.frameRect(forward).center().toPoint());
  QCOMPARE(view.zoomedNode(), forward);
  QCOMPARE(zoomed.size(), 1);
  QCOMPARE(view.frameRect(forward).width(), 1000.0);
  QVERIFY(qAbs(view.frameRect(matmul).width() - 1000.0 * 500 / 650) < 1e-6);
  QVERIFY(view.frameRect(findFrame(tree, "idle")).isEmpty());
  // Clicking the root zooms back out; so does Escape.
  QTest::mouseClick(&view, Qt::LeftButton, {},
                    view.frameRect(0).center().toPoint());
  QCOMPARE(view.zoomedNode(), 0u);
  view.zoomTo(matmul);
  QTest::keyClick(&view, Qt::Key_Backspace);
  QCOMPARE(view.zoomedNode(), forward);
  QTest::keyClick(&view, Qt::Key_Escape);
  QCOMPARE(view.zoomedNode(), 0u);
  QCOMPARE(zoomed.size(), 5);
}

void ProfilerViewsTest::flameGraphOrientationSearchAndDiffColours() {
  FlameGraphModel model;
  prof::CallTree base = prof::CallTree::build(parsedFolded(kBaselineFolded));
  prof::CallTree cur = prof::CallTree::build(parsedFolded(kCurrentFolded));
  model.setTree(FlameTree::fromCallTree(cur));
  FlameGraphView view;
  view.setModel(&model);
  view.resize(800, 300);
  view.setOrientation(FlameGraphView::Orientation::Icicle);
  QCOMPARE(view.frameRect(0).top(), 0.0);
  view.setOrientation(FlameGraphView::Orientation::Flame);
  QCOMPARE(view.frameRect(0).bottom(), 300.0);
  uint32_t matmul = findFrame(model.tree(), "cuvil.matmul");
  uint32_t read = findFrame(model.tree(), "io.read");
  QCOMPARE(view.frameColor(matmul), moduleColor("cuvil", "cuvil.matmul"));
  // Searching fades what does not match (grey) and keeps the matches.
  model.setSearchText("read");
  QColor faded = view.frameColor(matmul);
  QCOMPARE(faded.red(), faded.blue());
  QCOMPARE(view.frameColor(read), moduleColor("io", "io.read"));
  model.setSearchText("");

  model.setTree(FlameTree::fromDiff(base, cur));
  matmul = findFrame(model.tree(), "cuvil.matmul");
  read = findFrame(model.tree(), "io.read");
  QColor faster = view.frameColor(matmul), slower = view.frameColor(read);
  QVERIFY(faster.blue() > faster.red() + 60);
  QVERIFY(slower.red() > slower.blue() + 60);
  QCOMPARE(view.frameColor(findFrame(model.tree(), "cuvil.relu")),
           diffColor(100, 100));
  QImage image(view.size(), QImage::Format_ARGB32_Premultiplied);
  view.render(&image);
  QRectF r = view.frameRect(read);
  QCOMPARE(QColor(image.pixel(r.left() + 2, r.top() + 2)), slower);
}

void ProfilerViewsTest::pageRangeSelectionUpdatesAggregates() {
  ProfilerPage page;
  QSignalSpy loaded(&page, &ProfilerPage::traceLoaded);
  QSignalSpy updated(&page, &ProfilerPage::aggregatesUpdated);
  QSignalSpy heat(&page, &ProfilerPage::heatChanged);
  page.setTrace(parsedChrome(kChromeTrace), "chrome");
  QVERIFY(loaded.wait(5000));
  QCOMPARE(page.opModel()->rowCount(), 4);
  QCOMPARE(page.flameModel()->tree().weight(0), 180000 + 30000);
  QCOMPARE(page.heat().value("/src/m.py:4:9"), 1.0);
  QCOMPARE(page.heatIndex().heat("m.py", 4), 1.0);
  QVERIFY(heat.size() >= 1);

  // What a shift-drag over the second call does.
  int64_t origin = page.profile()->beginNs;
  updated.clear();
  page.timeline()->setSelection(origin + 150000, origin + 300000);
  QVERIFY(updated.wait(5000));
  QCOMPARE(page.selection().beginNs, origin + 150000);
  QCOMPARE(page.flameModel()->tree().weight(0), 80000);
  QCOMPARE(page.opModel()->rowCount(), 2);
  QStringList names;
  for (int r = 0; r < 2; ++r)
    names << page.opModel()->index(r, 0).data().toString();
  QCOMPARE(names, QStringList({"forward", "linalg.matmul"}));
  QCOMPARE(page.opModel()->index(1, OpTableModel::Total).data().toString(),
           QString("60.00 µs"));
  QCOMPARE(page.heatIndex().latencyNs("/src/m.py", 4, 9), 60000);
  QCOMPARE(page.heatIndex().latencyNs("/src/m.py", 5, 9), 0);

  // Kinds narrow it further; clearing the range widens it again.
  updated.clear();
  page.setKindMask(prof::Selection::bit(prof::EventKind::Python));
  QVERIFY(updated.wait(5000));
  QCOMPARE(page.opModel()->rowCount(), 1);
  updated.clear();
  page.setKindMask(~0u);
  QVERIFY(updated.wait(5000));
  updated.clear();
  page.clearRange();
  QTRY_COMPARE(updated.size(), 1);
  QCOMPARE(page.opModel()->rowCount(), 4);
  QVERIFY(!page.timeline()->hasSelection());

  // A range still aggregating when the whole trace is asked for again
  // must not land over it.
  updated.clear();
  page.selectRange(origin + 150000, origin + 300000);
  page.clearRange();
  QCOMPARE(updated.size(), 1); // the whole trace, at once
  QTRY_VERIFY(!page.isBusy());
  QCOMPARE(updated.size(), 1);
  QCOMPARE(page.opModel()->rowCount(), 4);
  QVERIFY(wholeSelection(page.selection()));
}

void ProfilerViewsTest::pageDiffMode() {
  ProfilerPage page;
  QSignalSpy loaded(&page, &ProfilerPage::traceLoaded);
  QSignalSpy baseLoaded(&page, &ProfilerPage::baselineLoaded);
  page.setTrace(parsedFolded(kCurrentFolded), "current");
  QVERIFY(loaded.wait(5000));
  QVERIFY(!page.flameModel()->tree().isDiff());
  page.setBaseline(parsedFolded(kBaselineFolded), "baseline");
  QVERIFY(baseLoaded.wait(5000));
  const FlameTree &tree = page.flameModel()->tree();
  QVERIFY(tree.isDiff());
  QVERIFY(page.opModel()->hasBaseline());
  QCOMPARE(tree.node(findFrame(tree, "cuvil.matmul")).deltaTotalNs(), -300);
  QVERIFY(page.flameGraph()->frameColor(findFrame(tree, "io.read")).red() >
          180);
  // Baseline widths: the root is as wide as the baseline's 1,200 ns.
  QCOMPARE(page.flameModel()->tree().weight(0), 1000);
  page.setBaselineWidths(true);
  QCOMPARE(page.flameModel()->tree().weight(0), 1200);
  page.setBaselineWidths(false);
  QCOMPARE(page.flameModel()->tree().weight(0), 1000);
  page.clearBaseline();
  QVERIFY(!page.flameModel()->tree().isDiff());
  QVERIFY(!page.opModel()->hasBaseline());
}

void ProfilerViewsTest::pageShowsLoadErrors() {
  QTemporaryDir dir;
  QString path = dir.filePath("broken.folded");
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write("a;b 10\na;c notanumber\n");
  file.close();
  ProfilerPage page;
  QSignalSpy loaded(&page, &ProfilerPage::traceLoaded);
  QSignalSpy failed(&page, &ProfilerPage::loadFailed);
  page.setTrace(parsedChrome(kChromeTrace), "chrome");
  QVERIFY(loaded.wait(5000));
  page.openTrace(path);
  QVERIFY(failed.wait(5000));
  QString message = failed[0][0].toString();
  QVERIFY2(message.startsWith(path + ":2:"), qPrintable(message));
  QVERIFY(message.contains("notanumber"));
  QVERIFY(page.errorText().contains(message));
  // The profile shown before stays.
  QCOMPARE(page.opModel()->rowCount(), 4);
  page.openTrace(dir.filePath("missing.json"));
  QVERIFY(failed.wait(5000));
  QVERIFY(failed[1][0].toString().contains("no such trace file"));
}

void ProfilerViewsTest::pageCrossLinks() {
  ProfilerPage page;
  page.resize(1400, 900);
  page.show();
  QVERIFY(QTest::qWaitForWindowExposed(&page));
  QSignalSpy loaded(&page, &ProfilerPage::traceLoaded);
  QSignalSpy activated(&page, &ProfilerPage::opActivated);
  page.setTrace(parsedChrome(kChromeTrace), "chrome");
  QVERIFY(loaded.wait(5000));
  // A click on the op table row of linalg.matmul.
  QTableView *table = page.opTable();
  int row = -1;
  for (int r = 0; r < table->model()->rowCount(); ++r)
    if (table->model()->index(r, 0).data().toString() == "linalg.matmul")
      row = r;
  QVERIFY(row >= 0);
  QRect cell = table->visualRect(table->model()->index(row, 0));
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
  QCOMPARE(activated.size(), 1);
  QCOMPARE(activated[0][0].toString(), QString("/src/m.py:4:9"));
  QCOMPARE(activated[0][1].toLongLong(), 3);
  QCOMPARE(activated[0][2].toString(), QString("linalg.matmul"));
  // A click on the add kernel in the timeline selects its table row.
  const prof::Trace &trace = *page.profile()->trace;
  uint32_t add = eventNamed(trace, "linalg.generic(addf)");
  TimelineView *timeline = page.timeline();
  timeline->showRange(page.profile()->beginNs,
                      page.profile()->beginNs + 100000);
  QTest::mouseClick(timeline->viewport(), Qt::LeftButton, {},
                    eventCentre(*timeline, add));
  QCOMPARE(activated.size(), 2);
  QCOMPARE(activated[1][0].toString(), QString("/src/m.py:5:9"));
  QCOMPARE(activated[1][1].toLongLong(), 4);
  QModelIndex current = table->selectionModel()->selectedRows().value(0);
  QCOMPARE(current.data().toString(), QString("linalg.generic(addf)"));
  // A click on a flame graph frame zooms into it and names its op.
  FlameGraphView *flame = page.flameGraph();
  uint32_t frame = findFrame(page.flameModel()->tree(), "linalg.matmul");
  QTest::mouseClick(flame, Qt::LeftButton, {},
                    flame->frameRect(frame).center().toPoint());
  QCOMPARE(flame->zoomedNode(), frame);
  QCOMPARE(activated.size(), 3);
  QCOMPARE(activated[2][0].toString(), QString("/src/m.py:4:9"));
  QCOMPARE(activated[2][1].toLongLong(), 3);
}

void ProfilerViewsTest::pageShowsModelNodesNextToTheOp() {
  ProfilerPage page;
  QSignalSpy loaded(&page, &ProfilerPage::traceLoaded);
  QHeaderView *header = page.opTable()->horizontalHeader();
  // A NumPy program's profile: times first, the location last.
  page.setTrace(parsedChrome(kChromeTrace), "chrome");
  QVERIFY(loaded.wait(5000));
  QCOMPARE(header->visualIndex(OpTableModel::Location),
           page.opModel()->columnCount() - 1);
  // An imported model's: two convolutions run the same kernel, and the
  // column naming their nodes comes right after the op.
  page.setTrace(parsedChrome(kImportedModelTrace), "chrome");
  QVERIFY(loaded.wait(5000));
  QCOMPARE(header->visualIndex(OpTableModel::Location), 1);
  QStringList shown;
  for (int r = 0; r < page.opModel()->rowCount(); ++r)
    shown << page.opModel()->index(r, OpTableModel::Location).data().toString();
  QCOMPARE(shown, QStringList({"features.conv1/convolution (torch_cnn.py:37:0)",
                               "/stem/stem.0/Conv (resnet.onnx)"}));
}

QTEST_MAIN(ProfilerViewsTest)
#include "ProfilerViewsTest.moc"
