//===- MainWindow.cpp - The Workbench's shell: pages, menus, files --------===//

#include "MainWindow.h"

#include "RecentFiles.h"

#include <QAction>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QMenuBar>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

namespace cuvil::workbench {
namespace {

QColor toneColor(WorkbenchContext::Tone tone) {
  switch (tone) {
  case WorkbenchContext::Tone::Info:
    return QColor(0x20, 0x60, 0xc0);
  case WorkbenchContext::Tone::Error:
    return QColor(0xc0, 0x20, 0x20);
  case WorkbenchContext::Tone::Plain:
    break;
  }
  return {};
}

bool isOnnxModel(const QString &path) {
  return path.endsWith(".onnx", Qt::CaseInsensitive);
}

/// What the worker runs: a Python model file or an ONNX model.
bool isModelFile(const QString &path) {
  return path.endsWith(".py") || isOnnxModel(path);
}

} // namespace

QString MainWindow::bundledExample() {
  return bundledResource("resources/examples/mlp.py");
}

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent) {
  setObjectName("CuvilWorkbench");
  setWindowTitle(tr("Cuvil Workbench"));
  setAcceptDrops(true);
  connectWorker();
  buildPages();
  buildConsole();
  buildActions();
  restoreLayout();
  updateRecentMenu();
  updateActions();
}

MainWindow::~MainWindow() {
  // Pages listen to the context: they go before it, and the worker ends
  // with nobody here listening.
  delete tabs;
  tabs = nullptr;
  qDeleteAll(sideDocks);
  sideDocks.clear();
  pageList.clear();
  context.worker().disconnect(this);
  context.worker().shutdown(1000);
}

void MainWindow::buildPages() {
  tabs = new QTabWidget(this);
  tabs->setObjectName("pages");
  tabs->setDocumentMode(true);
  for (const WorkbenchPageFactory &make : workbenchPages()) {
    WorkbenchPage *page = make(context, tabs);
    pageList << page;
    if (!page->sidePanel()) {
      tabs->addTab(page, page->title());
      continue;
    }
    auto *dock = new QDockWidget(page->title(), this);
    dock->setObjectName(page->pageId() + "Dock");
    dock->setWidget(page);
    addDockWidget(Qt::RightDockWidgetArea, dock);
    dock->hide();
    sideDocks << dock;
  }
  setCentralWidget(tabs);
  connect(&context, &WorkbenchContext::openRequested, this,
          &MainWindow::openFile);
  connect(&context, &WorkbenchContext::runCompiledRequested, this,
          &MainWindow::runCompiled);
  connect(&context, &WorkbenchContext::pageRequested, this,
          &MainWindow::showPage);
  connect(&context, &WorkbenchContext::statusText, this,
          [this](const QString &text) { statusBar()->showMessage(text); });
  connect(&context, &WorkbenchContext::consoleText, this,
          [this](const QString &text, WorkbenchContext::Tone tone) {
            appendConsole(text, toneColor(tone));
          });
  connect(&context, &WorkbenchContext::currentCompilationChanged, this,
          [this] { updateActions(); });
}

void MainWindow::buildConsole() {
  // The worker's console belongs to the run, not to a page: it stays below
  // every page.
  console = new QPlainTextEdit(this);
  console->setReadOnly(true);
  console->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  console->setMaximumBlockCount(20000);
  auto *consoleDock = new QDockWidget(tr("Console"), this);
  consoleDock->setObjectName("consoleDock");
  consoleDock->setWidget(console);
  addDockWidget(Qt::BottomDockWidgetArea, consoleDock);
}

WorkbenchPage *MainWindow::currentPage() const {
  return qobject_cast<WorkbenchPage *>(tabs->currentWidget());
}

bool MainWindow::showPage(const QString &id) {
  for (WorkbenchPage *page : pageList) {
    if (page->pageId() != id)
      continue;
    if (page->sidePanel()) {
      auto *dock = qobject_cast<QDockWidget *>(page->parentWidget());
      dock->show();
      dock->raise();
    } else {
      tabs->setCurrentWidget(page);
    }
    return true;
  }
  return false;
}

void MainWindow::buildActions() {
  WorkbenchMenus menus;
  menus.bar = menuBar();
  menus.file = menuBar()->addMenu(tr("&File"));
  menus.file->addAction(tr("&Open..."), QKeySequence::Open, this,
                        &MainWindow::openDialog);
  recentMenu = menus.file->addMenu(tr("Open &Recent"));
  exportMenu = menus.exportMenu = menus.file->addMenu(tr("&Export"));
  menus.file->addSeparator();
  menus.file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  menus.run = menuBar()->addMenu(tr("&Run"));
  runAction = menus.run->addAction(tr("&Run File Again"),
                                   QKeySequence(Qt::Key_F5), this, [this] {
                                     if (!context.file().isEmpty())
                                       openFile(context.file());
                                   });
  stopAction =
      menus.run->addAction(tr("&Stop"), QKeySequence(Qt::SHIFT | Qt::Key_F5),
                           this, &MainWindow::stopRun);
  executeAction = menus.run->addAction(tr("Run &Compiled Function"),
                                       QKeySequence(Qt::CTRL | Qt::Key_R), this,
                                       &MainWindow::runCompiled);
  for (WorkbenchPage *page : pageList)
    page->addMenuActions(menus);

  // View: the pages (Ctrl+1, Ctrl+2, ...), then each page's panels.
  QMenu *viewMenu = menuBar()->addMenu(tr("&View"));
  for (int i = 0; i < pageList.size(); ++i) {
    QString id = pageList[i]->pageId();
    QAction *show = viewMenu->addAction(pageList[i]->title(), this,
                                        [this, id] { showPage(id); });
    if (i < 9)
      show->setShortcut(QKeySequence(Qt::CTRL | (Qt::Key_1 + i)));
  }
  for (WorkbenchPage *page : pageList) {
    QList<QAction *> actions = page->viewActions();
    if (actions.isEmpty())
      continue;
    viewMenu->addSection(page->title());
    viewMenu->addActions(actions);
  }
  viewMenu->addSeparator();
  viewMenu->addAction(
      findChild<QDockWidget *>("consoleDock")->toggleViewAction());

  QToolBar *bar = addToolBar(tr("Main"));
  bar->setObjectName("mainToolBar");
  bar->addAction(runAction);
  bar->addAction(stopAction);
  bar->addAction(executeAction);
  bar->addSeparator();
  targetBox = new QComboBox(bar);
  targetBox->setObjectName("targetBox");
  targetBox->setToolTip(
      tr("Compile every function of the file for this target (PTX and fat "
         "binaries for cuda, C for c, WebAssembly for wasm), whatever its "
         "decorators say; code that cannot run here runs as Python"));
  targetBox->addItem(tr("Target: as the file says"), QString());
  for (const QString &target : {"cpu", "cuda", "c", "wasm"})
    targetBox->addItem(tr("Target: %1").arg(target), target);
  bar->addWidget(targetBox);
  connect(targetBox, &QComboBox::activated, this, [this] {
    if (!context.file().isEmpty())
      openFile(context.file());
  });
  // The worker says which targets its Cuvil has (plugins add some).
  connect(&context.worker(), &WorkerClient::targetsReported, this,
          [this](const QStringList &targets) {
            QString chosen = targetBox->currentData().toString();
            while (targetBox->count() > 1)
              targetBox->removeItem(1);
            for (const QString &target : targets)
              targetBox->addItem(tr("Target: %1").arg(target), target);
            int at = targetBox->findData(chosen);
            targetBox->setCurrentIndex(at < 0 ? 0 : at);
          });
}

void MainWindow::setRunTarget(const QString &target) {
  int at = targetBox->findData(target);
  if (at < 0) {
    targetBox->addItem(tr("Target: %1").arg(target), target);
    at = targetBox->count() - 1;
  }
  targetBox->setCurrentIndex(at);
}

void MainWindow::restoreLayout() {
  QSettings settings;
  if (!restoreGeometry(settings.value("window/geometry").toByteArray()))
    resize(1500, 950);
  if (!restoreState(settings.value("window/state").toByteArray()))
    resizeDocks({findChild<QDockWidget *>("consoleDock")}, {130}, Qt::Vertical);
  for (WorkbenchPage *page : pageList) {
    settings.beginGroup("pages/" + page->pageId());
    page->restoreLayout(settings);
    settings.endGroup();
  }
}

void MainWindow::updateActions() {
  WorkerClient::State state = context.worker().state();
  bool busy = state == WorkerClient::State::Starting ||
              state == WorkerClient::State::Busy;
  bool compiled = context.currentCompilation() >= 0;
  stopAction->setEnabled(busy);
  runAction->setEnabled(!context.file().isEmpty() &&
                        state != WorkerClient::State::Stopping);
  executeAction->setEnabled(state == WorkerClient::State::Idle && compiled);
  exportMenu->setEnabled(compiled);
}

void MainWindow::updateRecentMenu() {
  QSettings settings;
  RecentFiles recent(settings);
  recentMenu->clear();
  for (const QString &path : recent.files()) {
    recentMenu->addAction(QFileInfo(path).fileName() + "  (" +
                              QFileInfo(path).path() + ")",
                          this, [this, path] { openFile(path); });
  }
  recentMenu->setEnabled(!recentMenu->isEmpty());
}

void MainWindow::openDialog() {
  const QString &file = context.file();
  QString dir = file.isEmpty() ? QDir::homePath() : QFileInfo(file).path();
  QString path = QFileDialog::getOpenFileName(
      this, tr("Open Model File"), dir,
      tr("Models (*.py *.onnx);;Python files (*.py);;"
         "ONNX models (*.onnx)"));
  if (!path.isEmpty())
    openFile(path);
}

void MainWindow::openFile(const QString &path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    appendConsole(tr("Cannot open %1: %2. Choose an existing .py file with "
                     "File > Open.\n")
                      .arg(path, f.errorString()),
                  toneColor(WorkbenchContext::Tone::Error));
    QSettings settings;
    RecentFiles(settings).remove(path);
    updateRecentMenu();
    return;
  }
  QString file = QFileInfo(path).absoluteFilePath();
  {
    QSettings settings;
    RecentFiles(settings).add(file);
  }
  updateRecentMenu();
  setWindowTitle(tr("%1 - Cuvil Workbench").arg(QFileInfo(file).fileName()));
  // An ONNX model is binary: the source pane shows a note, not its bytes.
  QString source =
      isOnnxModel(file)
          ? tr("ONNX model %1\n(imported and compiled by the worker; its ops "
               "carry the model's node names)\n")
                .arg(file)
          : QString::fromUtf8(f.readAll());
  context.beginFile(file, source);
  appendConsole(tr("Running %1 in a fresh worker\n").arg(file),
                toneColor(WorkbenchContext::Tone::Info));
  context.worker().runFile(file, targetBox->currentData().toString());
  updateActions();
}

void MainWindow::appendConsole(const QString &text, const QColor &color) {
  if (text.isEmpty())
    return;
  QTextCursor cursor(console->document());
  cursor.movePosition(QTextCursor::End);
  QTextCharFormat format;
  if (color.isValid())
    format.setForeground(color);
  cursor.insertText(text, format);
  console->ensureCursorVisible();
}

void MainWindow::closeEvent(QCloseEvent *event) {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
  for (WorkbenchPage *page : pageList) {
    settings.beginGroup("pages/" + page->pageId());
    page->saveLayout(settings);
    settings.endGroup();
  }
  context.worker().shutdown(1000);
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event) {
  for (const QUrl &url : event->mimeData()->urls())
    if (url.isLocalFile() && isModelFile(url.toLocalFile())) {
      event->acceptProposedAction();
      return;
    }
}

void MainWindow::dropEvent(QDropEvent *event) {
  for (const QUrl &url : event->mimeData()->urls())
    if (url.isLocalFile() && isModelFile(url.toLocalFile())) {
      openFile(url.toLocalFile());
      event->acceptProposedAction();
      return;
    }
}

} // namespace cuvil::workbench
