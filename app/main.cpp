//===- main.cpp - cuvil-workbench [FILE.py]
//--------------------------------===//

#include "MainWindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QSettings>

#include <cstdio>

int main(int argc, char **argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Cuvil");
  QApplication::setApplicationName("Workbench");
  QApplication::setApplicationVersion("0.1.0");

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Cuvil Workbench: run a Python model file, step through the compiler's "
      "passes and watch the IR graph change.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(
      "file",
      "Python model file to open (default: the last file opened, "
      "else the bundled MLP example).",
      "[FILE.py]");
  QCommandLineOption passOption(
      "pass",
      "Show the IR after the first run of pass <name> (e.g. "
      "cuvil-fuse-elementwise) once the file has compiled.",
      "name");
  parser.addOption(passOption);
  QCommandLineOption runOption(
      "run-compiled",
      "Once the file has run, run (and profile) the compiled "
      "function on its inputs, as Run > Run Compiled Function.");
  parser.addOption(runOption);
  parser.process(app);

  QString file;
  if (!parser.positionalArguments().isEmpty()) {
    file = parser.positionalArguments().first();
    if (!QFileInfo(file).isFile()) {
      std::fprintf(stderr,
                   "cuvil-workbench: %s: no such file; pass the path of a "
                   "Python model file, e.g. resources/examples/mlp.py\n",
                   qPrintable(file));
      return 2;
    }
  } else {
    QString last = QSettings().value("lastFile").toString();
    file = QFileInfo(last).isFile()
               ? last
               : cuvil::workbench::MainWindow::bundledExample();
  }

  cuvil::workbench::MainWindow window;
  window.show();
  if (parser.isSet(passOption))
    window.showPassOnOpen(parser.value(passOption));
  if (parser.isSet(runOption))
    QObject::connect(
        &window, &cuvil::workbench::MainWindow::runFinished, &window,
        [&window](bool ok) {
          if (ok && window.currentCompilation() >= 0)
            window.runCompiled();
        },
        Qt::SingleShotConnection);
  if (!file.isEmpty())
    window.openFile(file);
  return app.exec();
}
