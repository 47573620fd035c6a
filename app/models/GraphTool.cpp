//===- GraphTool.cpp - IR graphs built by the cuvil-graph tool ------------===//

#include "GraphTool.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>

namespace cuvil::workbench {
namespace {

constexpr int kStartTimeoutMs = 10000;
/// The JSON of a 10,000-op graph is a few MB; far more means a broken tool.
constexpr qint64 kMaxOutputBytes = 512ll << 20;

bool writeFile(const QString &path, const QString &text, QString &error) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(text.toUtf8()) < 0) {
    error = QString("Cannot write the IR for cuvil-graph to %1: %2.")
                .arg(path, file.errorString());
    return false;
  }
  return true;
}

QStringList toolArguments(const graph::GraphOptions &options,
                          const QString &irPath, const QString &beforePath) {
  QStringList args{"--json"};
  if (options.collapseRegions)
    args << "--collapse";
  if (options.hideConstants)
    args << "--hide-constants";
  if (!options.function.empty())
    args << "--function=" + QString::fromStdString(options.function);
  if (!beforePath.isEmpty())
    args << "--before=" + beforePath;
  return args << irPath;
}

/// Waits for `process`; on failure says why, in the user's terms.
bool finish(QProcess &process, const QString &tool, const QString &irPath,
            int timeoutMs, QString &error) {
  if (!process.waitForStarted(kStartTimeoutMs)) {
    error = QString("Cannot start cuvil-graph (%1): %2. Build it with `ninja "
                    "-C build cuvil-graph` or set CUVIL_GRAPH to its path.")
                .arg(tool, process.errorString());
    return false;
  }
  if (!process.waitForFinished(timeoutMs)) {
    process.kill();
    process.waitForFinished(1000);
    error = QString("cuvil-graph did not finish within %1 s on this step's IR "
                    "and was stopped; collapse regions or graph a smaller "
                    "function.")
                .arg(timeoutMs / 1000);
    return false;
  }
  if (process.exitStatus() == QProcess::CrashExit) {
    error = QString("cuvil-graph (%1) crashed on this step's IR.").arg(tool);
    return false;
  }
  if (process.exitCode() != 0) {
    // "<file>:line 3: message": the file is our temporary copy.
    error = QString::fromUtf8(process.readAllStandardError()).trimmed();
    error.replace(irPath + ":", "");
    if (error.isEmpty())
      error = QString("cuvil-graph (%1) failed with exit code %2.")
                  .arg(tool)
                  .arg(process.exitCode());
    return false;
  }
  return true;
}

} // namespace

QString defaultGraphToolPath() {
  QString fromEnv = qEnvironmentVariable("CUVIL_GRAPH");
  if (!fromEnv.isEmpty())
    return fromEnv;
  QString beside = QCoreApplication::applicationDirPath() + "/cuvil-graph";
  if (QFileInfo(beside).isExecutable())
    return beside;
#ifdef CUVIL_BUILD_GRAPH_TOOL_PATH
  return QStringLiteral(CUVIL_BUILD_GRAPH_TOOL_PATH);
#else
  return beside;
#endif
}

bool runGraphTool(const QString &ir, const QString &previousIr,
                  const graph::GraphOptions &options, graph::IRGraph &graph,
                  QString &error, int timeoutMs) {
  graph = graph::IRGraph();
  QTemporaryDir dir;
  if (!dir.isValid()) {
    error = QString("Cannot create a temporary folder for cuvil-graph: %1.")
                .arg(dir.errorString());
    return false;
  }
  QString irPath = dir.filePath("step.mlir");
  QString beforePath =
      previousIr.isEmpty() ? QString() : dir.filePath("before.mlir");
  if (!writeFile(irPath, ir, error) ||
      (!beforePath.isEmpty() && !writeFile(beforePath, previousIr, error)))
    return false;

  QString tool = defaultGraphToolPath();
  QProcess process;
  process.setProgram(tool);
  process.setArguments(toolArguments(options, irPath, beforePath));
  process.start(QIODevice::ReadOnly);
  if (!finish(process, tool, irPath, timeoutMs, error))
    return false;
  QByteArray json = process.readAllStandardOutput();
  if (json.size() > kMaxOutputBytes) {
    error = QString("cuvil-graph (%1) printed %2 MB, more than a graph can "
                    "be; is it the right program?")
                .arg(tool)
                .arg(json.size() >> 20);
    return false;
  }
  std::string readError;
  if (!graph::fromJson(json.toStdString(), graph, readError)) {
    error = QString("cuvil-graph (%1) printed a graph the Workbench cannot "
                    "read: %2. Is it from the same build as the Workbench?")
                .arg(tool, QString::fromStdString(readError));
    return false;
  }
  return true;
}

} // namespace cuvil::workbench
