//===- PassExplorerLinks.cpp - The compile page's cross-links and exports ===//

#include "PassExplorerPage.h"

#include "GraphView.h"
#include "SourceEditor.h"
#include "WorkbenchContext.h"

#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTextBlock>

namespace cuvil::workbench {

void PassExplorerPage::markIrLine(int line) {
  QList<QTextEdit::ExtraSelection> selections;
  QTextBlock block = irText->document()->findBlockByNumber(line - 1);
  if (line > 0 && block.isValid()) {
    QTextEdit::ExtraSelection sel;
    sel.format.setBackground(QColor(0xcc, 0xdd, 0xff));
    sel.format.setProperty(QTextFormat::FullWidthSelection, true);
    sel.cursor = QTextCursor(block);
    selections << sel;
    linking = true;
    irText->setTextCursor(sel.cursor);
    irText->centerCursor();
    linking = false;
  }
  irText->setExtraSelections(selections);
}

void PassExplorerPage::markSourceLine(const graph::SourceLoc &loc) {
  // The IR may name the file by another absolute path.
  const QString &file = context.file();
  QString locFile = QString::fromStdString(loc.file);
  if (!loc.valid() || (locFile != file && QFileInfo(locFile).fileName() !=
                                              QFileInfo(file).fileName()))
    return;
  linking = true;
  source->markLine(loc.line);
  linking = false;
}

void PassExplorerPage::selectNode(int id) {
  const graph::IRGraph &g = ops.graph();
  if (id < 0 || id >= static_cast<int>(g.nodes.size()) || linking)
    return;
  if (awaitingPrediction())
    return togglePrediction(id);
  const graph::Node &node = g.nodes[id];
  graph->selectNodes({id});
  QModelIndex row = opFilter->mapFromSource(ops.index(id, 0));
  if (row.isValid())
    opTable->setCurrentIndex(row);
  markIrLine(node.irLine);
  markSourceLine(node.loc);
  // An imported model's op names its node ("node_7") besides its file.
  QString where = node.loc.valid() ? ", " + shortLocation(node.loc) : QString();
  if (!node.locName.empty())
    where += tr(", node %1").arg(QString::fromStdString(node.locName));
  // One arg() call: a result name such as "%1" is not a placeholder.
  context.status(tr("%1 %2 at IR line %3%4")
                     .arg(QString::fromStdString(node.opName),
                          QString::fromStdString(node.results),
                          QString::number(node.irLine), where));
}

void PassExplorerPage::selectIrLine(int line) {
  if (linking)
    return;
  int id = ops.nodeForIrLine(line);
  if (id < 0)
    return;
  const graph::Node &node = ops.graph().nodes[id];
  graph->selectNodes({id});
  linking = true;
  if (node.loc.valid())
    source->markLine(node.loc.line);
  linking = false;
}

void PassExplorerPage::selectLaunch(int row) {
  const std::vector<graph::KernelLaunch> &all = launches.launches();
  if (row < 0 || row >= static_cast<int>(all.size()) || linking)
    return;
  const graph::KernelLaunch &launch = all[row];
  // The launch is a node of the graph when it is in the graphed function.
  int id = ops.nodeForIrLine(launch.irLine);
  if (id >= 0 && ops.graph().nodes[id].irLine == launch.irLine) {
    selectNode(id);
  } else {
    markIrLine(launch.irLine);
    markSourceLine(launch.loc);
  }
  auto text = [&](int column) {
    return launches.index(row, column).data().toString();
  };
  context.status(
      tr("%1: grid %2 x block %3, %4 shared memory per block%5")
          .arg(text(KernelLaunchModel::Kernel), text(KernelLaunchModel::Grid),
               text(KernelLaunchModel::Block),
               text(KernelLaunchModel::SharedMemory),
               launch.ops.empty()
                   ? QString()
                   : tr(", runs %1").arg(QString::fromStdString(launch.ops))));
}

void PassExplorerPage::selectSourceLine(int line) {
  if (linking)
    return;
  const QString &file = context.file();
  QList<int> ids = ops.nodesForSourceLine(file, line);
  graph->selectNodes(ids);
  if (!ids.isEmpty())
    markIrLine(ops.graph().nodes[ids.first()].irLine);
  linking = true;
  source->markLine(line);
  linking = false;
  context.status(tr("%1:%2 - %n op(s) in this step", "", ids.size())
                     .arg(QFileInfo(file).fileName())
                     .arg(line));
}

void PassExplorerPage::showLocation(const QString &loc) {
  // "file:line:col" of a kernel or "file:line" of a Python frame.
  static const QRegularExpression pattern("^(.+?):(\\d+)(?::\\d+)?$");
  QRegularExpressionMatch match = pattern.match(loc);
  if (!match.hasMatch())
    return;
  QString path = match.captured(1);
  int line = match.captured(2).toInt();
  if (QFileInfo(path).fileName() != QFileInfo(context.file()).fileName()) {
    context.status(tr("%1 is in %2, not in the open file").arg(loc, path));
    return;
  }
  selectSourceLine(line);
  context.showPage(pageId());
  if (auto *sourceDock = area->findChild<QDockWidget *>("sourceDock"))
    sourceDock->raise();
}

void PassExplorerPage::exportDialog(const QString &kind) {
  static const QHash<QString, QString> suffixes = {
      {"mlir", "mlir"}, {"llvm", "ll"},     {"asm", "s"},
      {"obj", "o"},     {"so", "so"},       {"c", "c"},
      {"h", "h"},       {"dot", "dot"},     {"wasm", "wasm"},
      {"mjs", "mjs"},   {"wat", "wat"},     {"svg", "svg"},
      {"png", "png"},   {"cuvil", "cuvil"}, {"irpkg", "irpkg"},
      {"ptx", "ptx"},   {"cubin", "cubin"}, {"fatbin", "fatbin"}};
  const CompilationRecord *record = compilations.record(compilation);
  QString base = record ? record->function : "graph";
  if (kind == "mlir" && step >= 0)
    base += "." + QString::number(step) + "-" + steps.steps()[step].name;
  QString suggested = QFileInfo(context.file()).path() + "/" + base + "." +
                      suffixes.value(kind);
  QString path = QFileDialog::getSaveFileName(this, tr("Export"), suggested);
  if (!path.isEmpty())
    exportArtifact(kind, path);
}

void PassExplorerPage::failExport(const QString &kind, const QString &path,
                                  const QString &message) {
  context.console(tr("Export failed: %1\n").arg(message),
                  WorkbenchContext::Tone::Error);
  emit exportFinished(kind, path, false, message);
}

void PassExplorerPage::writeFile(const QString &kind, const QString &path,
                                 const QByteArray &data) {
  QFile out(path);
  if (!out.open(QIODevice::WriteOnly) || out.write(data) != data.size())
    return failExport(kind, path,
                      tr("cannot write %1: %2; choose a writable location")
                          .arg(path, out.errorString()));
  context.console(
      tr("Exported %1 to %2 (%3 bytes)\n").arg(kind, path).arg(data.size()),
      WorkbenchContext::Tone::Info);
  emit exportFinished(kind, path, true, {});
}

void PassExplorerPage::finishWorkerExport(bool ok, const QString &message) {
  if (pendingExportKind.isEmpty())
    return;
  QString kind = pendingExportKind, path = pendingExportPath;
  pendingExportKind.clear();
  emit exportFinished(kind, path, ok, message);
}

void PassExplorerPage::exportArtifact(const QString &kind,
                                      const QString &path) {
  const CompilationRecord *record = compilations.record(compilation);
  if (!record)
    return failExport(
        kind, path, tr("no compilation is selected; open a model file first"));
  if (kind == "mlir") {
    if (step < 0)
      return failExport(kind, path, tr("no pass step is selected"));
    return writeFile(kind, path, steps.steps()[step].ir.toUtf8());
  }
  if (kind == "dot" || kind == "svg" || kind == "png") {
    if (shownGraph.stepGraph.dot.empty() || shownGraph.step != step)
      return failExport(kind, path,
                        tr("the graph of this step is not laid out yet (or "
                           "has no function); wait for it to appear"));
    if (kind == "dot")
      return writeFile(kind, path,
                       QByteArray::fromStdString(shownGraph.stepGraph.dot));
    QByteArray data;
    QString error;
    if (!renderGraph(shownGraph.stepGraph.dot, kind.toLatin1().constData(),
                     data, error))
      return failExport(kind, path, error);
    return writeFile(kind, path, data);
  }
  // Written by the worker: the target's code, or a package of it.
  static const QStringList workerKinds = {
      "llvm", "asm", "obj",   "so",    "c",   "h",     "wasm",
      "mjs",  "wat", "cuvil", "irpkg", "ptx", "cubin", "fatbin"};
  if (!record->artifacts.isEmpty() && workerKinds.contains(kind) &&
      !record->artifacts.contains(kind))
    return failExport(
        kind, path,
        tr("the %1 target cannot write '%2'; it writes %3")
            .arg(record->target, kind, record->artifacts.join(", ")));
  if (workerKinds.contains(kind)) {
    // The worker compiles these for the record's own target.
    pendingExportKind = kind;
    pendingExportPath = QFileInfo(path).absoluteFilePath();
    if (!context.worker().exportArtifact(record->index, record->target, kind,
                                         pendingExportPath))
      pendingExportKind.clear();
    return;
  }
  failExport(kind, path,
             tr("unknown export kind '%1'; use mlir, llvm, asm, obj, so, c, "
                "h, cuvil, irpkg, dot, svg or png")
                 .arg(kind));
}

} // namespace cuvil::workbench
