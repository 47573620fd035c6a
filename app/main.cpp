//===- main.cpp - cuvil-workbench [FILE.py|MODEL.onnx] --------------------===//

#include "MainWindow.h"
#include "PassExplorerPage.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QSettings>

#include <cstdio>

using cuvil::workbench::MainWindow;
using cuvil::workbench::PassExplorerPage;

namespace {

struct Options {
  QCommandLineOption pass{
      "pass",
      "Show the IR after the first run of pass <name> (e.g. "
      "cuvil-fuse-elementwise) once the file has compiled.",
      "name"};
  QCommandLineOption runCompiled{
      "run-compiled",
      "Once the file has run, run (and profile) the compiled function on its "
      "inputs, as Run > Run Compiled Function."};
  QCommandLineOption quit{
      "quit-when-done",
      "Quit once the file has run (with --run-compiled, once its compiled "
      "function has run too), printing a line per compilation; exit status 0 "
      "when the file ran and compiled something, 1 otherwise. For scripts "
      "and smoke tests."};
  QCommandLineOption target{
      "target",
      "Compile every function of the file for target <name> (cpu, cuda, c, "
      "wasm), whatever its decorators say: the toolbar's target box.",
      "name"};
  QCommandLineOption page{
      "page",
      "Bring page <id> to the front once the file has run (with "
      "--run-compiled, once its profile has opened): compile or profile.",
      "id"};
};

/// The file to open: the argument, else the last file, else the example;
/// empty with a message when the argument names no file.
bool chooseFile(const QCommandLineParser &parser, QString &file) {
  if (parser.positionalArguments().isEmpty()) {
    QString last = QSettings().value("lastFile").toString();
    file = QFileInfo(last).isFile() ? last : MainWindow::bundledExample();
    return true;
  }
  file = parser.positionalArguments().first();
  if (QFileInfo(file).isFile())
    return true;
  std::fprintf(stderr,
               "cuvil-workbench: %s: no such file; pass the path of a "
               "Python model file or an .onnx model, e.g. "
               "resources/examples/mlp.py\n",
               qPrintable(file));
  return false;
}

/// Connects what --pass, --run-compiled, --quit-when-done and --page ask
/// for; false with a message for an unknown page.
bool applyOptions(const QCommandLineParser &parser, const Options &options,
                  MainWindow &window) {
  if (parser.isSet(options.pass))
    window.page<PassExplorerPage>()->showPassOnOpen(parser.value(options.pass));
  bool run = parser.isSet(options.runCompiled);
  if (run)
    QObject::connect(
        &window, &MainWindow::runFinished, &window,
        [&window](bool ok) {
          if (ok && window.currentCompilation() >= 0)
            window.runCompiled();
        },
        Qt::SingleShotConnection);
  if (parser.isSet(options.quit)) {
    // Queued: after the pages have taken the run's results.
    auto done = [&window](bool ok) {
      auto &records = window.compilationModel();
      for (int i = 0; i < records.rowCount(); ++i)
        if (const auto *r = records.record(i))
          std::printf("compiled %s(%s) for %s: %lld passes\n",
                      qPrintable(r->function), qPrintable(r->inputSummary()),
                      qPrintable(r->target),
                      static_cast<long long>(r->steps.size() - 1));
      std::fflush(stdout);
      QCoreApplication::exit(ok && records.rowCount() > 0 ? 0 : 1);
    };
    auto type =
        Qt::ConnectionType(Qt::QueuedConnection | Qt::SingleShotConnection);
    if (run) {
      QObject::connect(
          &window, &MainWindow::executedCompiled, &window,
          [done] { done(true); }, type);
      QObject::connect(
          &window, &MainWindow::runFinished, &window,
          [done](bool ok) {
            if (!ok)
              done(false);
          },
          type);
    } else {
      QObject::connect(&window, &MainWindow::runFinished, &window, done, type);
    }
  }
  if (!parser.isSet(options.page))
    return true;
  QString id = parser.value(options.page);
  QStringList ids;
  for (const auto *page : window.pages())
    ids << page->pageId();
  if (!ids.contains(id)) {
    std::fprintf(stderr,
                 "cuvil-workbench: --page %s: no such page; use one of %s\n",
                 qPrintable(id), qPrintable(ids.join(", ")));
    return false;
  }
  // Queued: after the pages' own reactions (a new profile shows its page).
  auto show = [&window, id] { window.showPage(id); };
  if (run)
    QObject::connect(
        &window, &MainWindow::executedCompiled, &window, show,
        Qt::ConnectionType(Qt::QueuedConnection | Qt::SingleShotConnection));
  else
    QObject::connect(
        &window, &MainWindow::runFinished, &window, show,
        Qt::ConnectionType(Qt::QueuedConnection | Qt::SingleShotConnection));
  return true;
}

} // namespace

int main(int argc, char **argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Cuvil");
  QApplication::setApplicationName("Workbench");
  QApplication::setApplicationVersion(CUVIL_VERSION);
  // The installed desktop entry's name (packaging/), so the desktop shell
  // matches windows to it.
  QGuiApplication::setDesktopFileName("io.github.cuvil.Workbench");

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Cuvil Workbench: run a Python model file, step through the compiler's "
      "passes and watch the IR graph change.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(
      "file",
      "Python model file or ONNX model to open (default: the last file "
      "opened, else the bundled MLP example).",
      "[FILE.py|MODEL.onnx]");
  Options options;
  parser.addOptions({options.pass, options.runCompiled, options.quit,
                     options.page, options.target});
  parser.process(app);

  QString file;
  if (!chooseFile(parser, file))
    return 2;
  MainWindow window;
  if (!applyOptions(parser, options, window))
    return 2;
  if (parser.isSet(options.target))
    window.setRunTarget(parser.value(options.target));
  window.show();
  if (!file.isEmpty())
    window.openFile(file);
  return app.exec();
}
