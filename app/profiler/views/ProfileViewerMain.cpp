//===- ProfileViewerMain.cpp - cuvil-profile-viewer TRACE [--baseline B] -===//

#include "ProfilerPage.h"
#include "TimelineView.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QMainWindow>
#include <QStatusBar>
#include <QTimer>

#include <cstdio>

using cuvil::workbench::ProfilerPage;

int main(int argc, char **argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Cuvil");
  QApplication::setApplicationName("Profile Viewer");

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Cuvil profile viewer: the Workbench's timeline, flame graph and per-op "
      "table for one trace (Chrome JSON, folded stacks, speedscope, Nsight "
      "Systems SQLite), or the difference of two.");
  parser.addHelpOption();
  parser.addPositionalArgument("trace", "Trace file to open.", "[TRACE]");
  QCommandLineOption baseline(
      "baseline",
      "Compare with this trace (diff mode: red slower, blue faster).",
      "TRACE2");
  QCommandLineOption search("search", "Search text to apply.", "TEXT");
  QCommandLineOption select(
      "select", "Select a time range in ms from the trace start, e.g. 10:25.",
      "FROM:TO");
  QCommandLineOption zoom(
      "zoom", "Show this range of the timeline, in ms from the trace start.",
      "FROM:TO");
  QCommandLineOption collapse(
      "collapse",
      "Collapse a lane group of the timeline (repeatable), e.g. "
      "\"Python stack\".",
      "GROUP");
  QCommandLineOption icicle("icicle", "Draw the call tree as an icicle.");
  QCommandLineOption screenshot(
      "screenshot",
      "Save a picture of the window to PATH once loaded, then exit.", "PATH");
  QCommandLineOption size("size", "Window size, e.g. 1600x1000.", "WxH",
                          "1600x1000");
  parser.addOptions(
      {baseline, search, select, zoom, collapse, icicle, screenshot, size});
  parser.process(app);

  QStringList args = parser.positionalArguments();
  for (const QString &path : {args.value(0), parser.value(baseline)}) {
    if (!path.isEmpty() && !QFileInfo(path).isFile()) {
      std::fprintf(stderr,
                   "cuvil-profile-viewer: %s: no such file; pass a trace, e.g. "
                   "one written by cuvil.profile()'s export_chrome_trace\n",
                   qPrintable(path));
      return 2;
    }
  }

  QMainWindow window;
  auto *page = new ProfilerPage(&window);
  window.setCentralWidget(page);
  window.setWindowTitle(args.isEmpty()
                            ? "Cuvil profile viewer"
                            : "Cuvil profile viewer — " +
                                  QFileInfo(args.first()).fileName());
  QStringList wh = parser.value(size).split('x');
  window.resize(wh.value(0).toInt() > 0 ? wh.value(0).toInt() : 1600,
                wh.value(1).toInt() > 0 ? wh.value(1).toInt() : 1000);
  QObject::connect(
      page, &ProfilerPage::opActivated, &window,
      [&window](const QString &loc, qint64 opId, const QString &name) {
        window.statusBar()->showMessage(QString("%1%2%3").arg(
            name, opId >= 0 ? QString("  ·  IR op #%1").arg(opId) : QString(),
            loc.isEmpty() ? QString() : "  ·  " + loc));
      });
  int exitCode = 0;
  QObject::connect(
      page, &ProfilerPage::loadFailed, &window, [&](const QString &message) {
        std::fprintf(stderr, "cuvil-profile-viewer: %s\n", qPrintable(message));
        exitCode = 1;
      });
  window.show();

  // Once everything asked for has loaded (or failed): apply the options,
  // take the screenshot.
  int expected = (args.isEmpty() ? 0 : 1) + (parser.isSet(baseline) ? 1 : 0);
  auto loaded = std::make_shared<int>(0);
  auto finish = [&, loaded] {
    if (++*loaded < expected)
      return;
    if (parser.isSet(search))
      page->setSearchText(parser.value(search));
    page->setIcicle(parser.isSet(icicle));
    for (const QString &group : parser.values(collapse))
      page->timeline()->setGroupCollapsed(group, true);
    if (parser.isSet(zoom) && page->profile()) {
      QStringList range = parser.value(zoom).split(':');
      double origin = double(page->profile()->beginNs);
      page->timeline()->showRange(origin + range.value(0).toDouble() * 1e6,
                                  origin + range.value(1).toDouble() * 1e6);
    }
    if (parser.isSet(select) && page->profile()) {
      QStringList range = parser.value(select).split(':');
      qint64 origin = page->profile()->beginNs;
      page->selectRange(origin + qint64(range.value(0).toDouble() * 1e6),
                        origin + qint64(range.value(1).toDouble() * 1e6));
    }
    if (parser.isSet(screenshot)) {
      QString path = parser.value(screenshot);
      // Let the aggregates of a selection arrive and the window settle.
      QTimer::singleShot(1500, &window, [&window, path, &exitCode] {
        if (!window.grab().save(path)) {
          std::fprintf(stderr, "cuvil-profile-viewer: cannot write %s\n",
                       qPrintable(path));
          exitCode = 1;
        }
        QApplication::exit(exitCode);
      });
    }
  };
  QObject::connect(page, &ProfilerPage::traceLoaded, &window, finish);
  QObject::connect(page, &ProfilerPage::baselineLoaded, &window, finish);
  // A failed load counts as done: the page shows its error, and a
  // screenshot shows that (the exit status is still 1).
  QObject::connect(page, &ProfilerPage::loadFailed, &window, finish);
  if (!args.isEmpty())
    page->openTrace(args.first());
  if (parser.isSet(baseline))
    page->openBaseline(parser.value(baseline));
  int code = app.exec();
  return code ? code : exitCode;
}
