//===- MainWindow.cpp - The Workbench's main window: widgets and settings -===//

#include "MainWindow.h"

#include "ProfilerPage.h"

#include "GraphView.h"
#include "IrHighlighter.h"
#include "RecentFiles.h"
#include "SourceEditor.h"

#include <QAction>
#include <QCheckBox>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace cuvil::workbench {
namespace {

QTableView *makeTable(QAbstractItemModel *model, QWidget *parent) {
  auto *table = new QTableView(parent);
  table->setModel(model);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->verticalHeader()->hide();
  table->verticalHeader()->setDefaultSectionSize(20);
  table->horizontalHeader()->setStretchLastSection(true);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setWordWrap(false);
  return table;
}

QDockWidget *dock(QMainWindow *window, const QString &title,
                  const QString &name, QWidget *widget,
                  Qt::DockWidgetArea area) {
  auto *d = new QDockWidget(title, window);
  d->setObjectName(name);
  d->setWidget(widget);
  window->addDockWidget(area, d);
  return d;
}

} // namespace

QString MainWindow::bundledExample() {
  QStringList roots;
  QString fromEnv = qEnvironmentVariable("CUVIL_SOURCE_DIR");
  if (!fromEnv.isEmpty())
    roots << fromEnv;
#ifdef CUVIL_SOURCE_DIR
  roots << QStringLiteral(CUVIL_SOURCE_DIR);
#endif
  roots << QCoreApplication::applicationDirPath() + "/../share/cuvil";
  for (const QString &root : roots) {
    QString path = root + "/resources/examples/mlp.py";
    if (QFileInfo::exists(path))
      return QFileInfo(path).absoluteFilePath();
  }
  return {};
}

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent) {
  setObjectName("CuvilWorkbench");
  setWindowTitle(tr("Cuvil Workbench"));
  setAcceptDrops(true);
  visibleSteps.setSourceModel(&steps);
  buildDocks();
  buildActions();
  connectWorker();
  connect(&graphWatcher, &QFutureWatcher<GraphJob>::finished, this,
          &MainWindow::graphReady);

  QSettings settings;
  if (!restoreGeometry(settings.value("window/geometry").toByteArray()))
    resize(1500, 950);
  if (!restoreState(settings.value("window/state").toByteArray())) {
    auto find = [this](const char *name) {
      return findChild<QDockWidget *>(name);
    };
    resizeDocks({find("sourceDock"), find("passesDock")}, {420, 360},
                Qt::Horizontal);
    resizeDocks({find("sourceDock"), find("compilationsDock")}, {560, 140},
                Qt::Vertical);
    resizeDocks({find("irDock")}, {230}, Qt::Vertical);
  }
  setHideUnchanged(settings.value("passes/hideUnchanged", false).toBool());
  updateRecentMenu();
  updateActions();
}

MainWindow::~MainWindow() { graphWatcher.waitForFinished(); }

void MainWindow::buildDocks() {
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);

  // Centre: the graph with its toolbar.
  auto *graphPanel = new QWidget(this);
  auto *graphLayout = new QVBoxLayout(graphPanel);
  graphLayout->setContentsMargins(0, 0, 0, 0);
  auto *graphBar = new QToolBar(graphPanel);
  graph = new GraphView(graphPanel);
  graphBar->addAction(tr("Zoom in"), graph, &GraphView::zoomIn);
  graphBar->addAction(tr("Zoom out"), graph, &GraphView::zoomOut);
  graphBar->addAction(tr("Fit"), graph, &GraphView::fit);
  graphBar->addSeparator();
  searchEdit = new QLineEdit(graphBar);
  searchEdit->setPlaceholderText(tr("Find op (e.g. matmul)"));
  searchEdit->setClearButtonEnabled(true);
  searchEdit->setMaximumWidth(220);
  graphBar->addWidget(searchEdit);
  collapseBox = new QCheckBox(tr("Collapse regions"), graphBar);
  collapseBox->setToolTip(
      tr("Draw each fused region or loop nest as one node"));
  graphBar->addWidget(collapseBox);
  beforeBox = new QCheckBox(tr("Before this pass"), graphBar);
  beforeBox->setToolTip(tr("Show the IR and graph before the selected pass, "
                           "marking the ops it replaces or removes"));
  graphBar->addWidget(beforeBox);
  heatBox = new QCheckBox(tr("Latency heat"), graphBar);
  heatBox->setToolTip(tr("Colour ops by the kernel time of their source line "
                         "in the last profile (Run Compiled Function)"));
  heatBox->setChecked(true);
  heatBox->setEnabled(false);
  graphBar->addWidget(heatBox);
  graphStatus = new QLabel(graphPanel);
  graphStatus->setContentsMargins(4, 0, 4, 2);
  graphLayout->addWidget(graphBar);
  graphLayout->addWidget(graph);
  graphLayout->addWidget(graphStatus);
  setCentralWidget(graphPanel);
  connect(searchEdit, &QLineEdit::textChanged, this,
          [this](const QString &text) {
            opFilter->setFilterFixedString(text);
            int found = graph->search(text);
            if (!text.isEmpty())
              statusBar()->showMessage(
                  tr("%n op(s) match \"%1\"", "", found).arg(text));
          });
  connect(collapseBox, &QCheckBox::toggled, this, [this] { requestGraph(); });
  connect(beforeBox, &QCheckBox::toggled, this, &MainWindow::setShowBefore);
  connect(heatBox, &QCheckBox::toggled, this, &MainWindow::applyHeat);
  connect(graph, &GraphView::nodeClicked, this, &MainWindow::selectNode);

  // Left: source and compilations.
  source = new SourceEditor(this);
  dock(this, tr("Source"), "sourceDock", source, Qt::LeftDockWidgetArea);
  connect(source, &SourceEditor::lineActivated, this,
          &MainWindow::selectSourceLine);
  compilationTable = makeTable(&compilations, this);
  dock(this, tr("Compilations"), "compilationsDock", compilationTable,
       Qt::LeftDockWidgetArea);
  connect(compilationTable->selectionModel(),
          &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex &index) { showCompilation(index.row()); });

  // Right: passes and ops.
  auto *passPanel = new QWidget(this);
  auto *passLayout = new QVBoxLayout(passPanel);
  passLayout->setContentsMargins(0, 0, 0, 0);
  hideUnchangedBox =
      new QCheckBox(tr("Hide passes that changed nothing"), passPanel);
  passLayout->addWidget(hideUnchangedBox);
  stepTable = makeTable(&visibleSteps, passPanel);
  stepTable->horizontalHeader()->setSectionResizeMode(PassStepModel::Pass,
                                                      QHeaderView::Stretch);
  stepTable->horizontalHeader()->setStretchLastSection(false);
  passLayout->addWidget(stepTable);
  dock(this, tr("Passes"), "passesDock", passPanel, Qt::RightDockWidgetArea);
  connect(hideUnchangedBox, &QCheckBox::toggled, this,
          &MainWindow::setHideUnchanged);
  connect(stepTable->selectionModel(), &QItemSelectionModel::currentRowChanged,
          this, [this](const QModelIndex &index) {
            if (index.isValid())
              selectStep(visibleSteps.mapToSource(index).row());
          });

  opFilter = new QSortFilterProxyModel(this);
  opFilter->setSourceModel(&ops);
  opFilter->setFilterKeyColumn(IrOpModel::Op);
  opFilter->setFilterCaseSensitivity(Qt::CaseInsensitive);
  opTable = makeTable(opFilter, this);
  dock(this, tr("Ops"), "opsDock", opTable, Qt::RightDockWidgetArea);
  connect(opTable, &QTableView::clicked, this,
          [this](const QModelIndex &index) {
            selectNode(index.data(IrOpModel::NodeIdRole).toInt());
          });

  // Bottom: IR, diff, console.
  irText = new QPlainTextEdit(this);
  irText->setReadOnly(true);
  irText->setFont(mono);
  irText->setLineWrapMode(QPlainTextEdit::NoWrap);
  irText->setCenterOnScroll(true);
  new IrHighlighter(irText->document());
  auto *irDock =
      dock(this, tr("IR"), "irDock", irText, Qt::BottomDockWidgetArea);
  connect(irText, &QPlainTextEdit::cursorPositionChanged, this, [this] {
    if (!linking)
      selectIrLine(irText->textCursor().blockNumber() + 1);
  });

  diffTable = makeTable(&diff, this);
  diffTable->setFont(mono);
  diffTable->setSelectionMode(QAbstractItemView::NoSelection);
  diffTable->horizontalHeader()->setSectionResizeMode(DiffModel::LeftText,
                                                      QHeaderView::Stretch);
  diffTable->horizontalHeader()->setSectionResizeMode(DiffModel::RightText,
                                                      QHeaderView::Stretch);
  diffTable->horizontalHeader()->setStretchLastSection(false);
  auto *diffDock = dock(this, tr("Diff with previous step"), "diffDock",
                        diffTable, Qt::BottomDockWidgetArea);

  console = new QPlainTextEdit(this);
  console->setReadOnly(true);
  console->setFont(mono);
  console->setMaximumBlockCount(20000);
  auto *consoleDock = dock(this, tr("Console"), "consoleDock", console,
                           Qt::BottomDockWidgetArea);
  // The profile of the last "Run Compiled Function": timeline, flame graph,
  // per-op table; its latency also colours the graph.
  profiler = new ProfilerPage(this);
  auto *profileDock = dock(this, tr("Profile"), "profileDock", profiler,
                           Qt::BottomDockWidgetArea);
  connect(profiler, &ProfilerPage::aggregatesUpdated, this,
          &MainWindow::applyHeat);
  connect(profiler, &ProfilerPage::opActivated, this,
          [this](const QString &loc, qint64, const QString &) {
            showProfiledLocation(loc);
          });
  connect(profiler, &ProfilerPage::loadFailed, this,
          [this](const QString &message) {
            appendConsole(tr("Profile: %1\n").arg(message),
                          QColor(0xc0, 0x20, 0x20));
          });

  tabifyDockWidget(irDock, diffDock);
  tabifyDockWidget(diffDock, consoleDock);
  tabifyDockWidget(consoleDock, profileDock);
  irDock->raise();
}

void MainWindow::buildActions() {
  QMenu *fileMenu = menuBar()->addMenu(tr("&File"));
  fileMenu->addAction(tr("&Open..."), QKeySequence::Open, this,
                      &MainWindow::openDialog);
  recentMenu = fileMenu->addMenu(tr("Open &Recent"));
  exportMenu = fileMenu->addMenu(tr("&Export"));
  const QList<QPair<QString, QString>> kinds = {
      {"mlir", tr("MLIR of this step...")}, {"llvm", tr("LLVM IR...")},
      {"asm", tr("Assembly...")},           {"obj", tr("Object file...")},
      {"so", tr("Shared library...")},      {"dot", tr("Graph as DOT...")},
      {"svg", tr("Graph as SVG...")},       {"png", tr("Graph as PNG...")}};
  for (const auto &[kind, title] : kinds) {
    QString k = kind;
    exportMenu->addAction(title, this, [this, k] { exportDialog(k); });
  }
  fileMenu->addSeparator();
  fileMenu->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu *runMenu = menuBar()->addMenu(tr("&Run"));
  runAction = runMenu->addAction(tr("&Run File Again"),
                                 QKeySequence(Qt::Key_F5), this, [this] {
                                   if (!file.isEmpty())
                                     openFile(file);
                                 });
  stopAction =
      runMenu->addAction(tr("&Stop"), QKeySequence(Qt::SHIFT | Qt::Key_F5),
                         this, &MainWindow::stopRun);
  executeAction = runMenu->addAction(tr("Run &Compiled Function"),
                                     QKeySequence(Qt::CTRL | Qt::Key_R), this,
                                     &MainWindow::runCompiled);

  QMenu *passMenu = menuBar()->addMenu(tr("&Passes"));
  passMenu->addAction(tr("&Next Step"), QKeySequence(Qt::ALT | Qt::Key_Right),
                      this, [this] { stepForward(); });
  passMenu->addAction(tr("&Previous Step"),
                      QKeySequence(Qt::ALT | Qt::Key_Left), this,
                      [this] { stepBack(); });
  passMenu->addAction(tr("&Fit Graph"), QKeySequence(Qt::CTRL | Qt::Key_0),
                      graph, &GraphView::fit);

  QMenu *viewMenu = menuBar()->addMenu(tr("&View"));
  for (QDockWidget *d : findChildren<QDockWidget *>())
    viewMenu->addAction(d->toggleViewAction());

  QToolBar *bar = addToolBar(tr("Main"));
  bar->setObjectName("mainToolBar");
  bar->addAction(runAction);
  bar->addAction(stopAction);
  bar->addAction(executeAction);
}

void MainWindow::updateActions() {
  WorkerClient::State state = client.state();
  bool busy = state == WorkerClient::State::Starting ||
              state == WorkerClient::State::Busy;
  stopAction->setEnabled(busy);
  runAction->setEnabled(!file.isEmpty() &&
                        state != WorkerClient::State::Stopping);
  executeAction->setEnabled(state == WorkerClient::State::Idle &&
                            compilation >= 0);
  exportMenu->setEnabled(compilation >= 0);
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
  QString dir = file.isEmpty() ? QDir::homePath() : QFileInfo(file).path();
  QString path = QFileDialog::getOpenFileName(this, tr("Open Model File"), dir,
                                              tr("Python files (*.py)"));
  if (!path.isEmpty())
    openFile(path);
}

void MainWindow::openFile(const QString &path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    appendConsole(tr("Cannot open %1: %2. Choose an existing .py file with "
                     "File > Open.\n")
                      .arg(path, f.errorString()),
                  QColor(0xc0, 0x20, 0x20));
    QSettings settings;
    RecentFiles(settings).remove(path);
    updateRecentMenu();
    return;
  }
  file = QFileInfo(path).absoluteFilePath();
  source->setSource(QString::fromUtf8(f.readAll()));
  {
    QSettings settings;
    RecentFiles(settings).add(file);
  }
  updateRecentMenu();
  setWindowTitle(tr("%1 - Cuvil Workbench").arg(QFileInfo(file).fileName()));
  compilations.clear();
  steps.setSteps({});
  ops.setGraph({});
  diff.setTexts({}, {});
  irText->clear();
  graph->clearGraph();
  compilation = -1;
  step = -1;
  appendConsole(tr("Running %1 in a fresh worker\n").arg(file),
                QColor(0x20, 0x60, 0xc0));
  client.runFile(file);
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

void MainWindow::exportDialog(const QString &kind) {
  static const QHash<QString, QString> suffixes = {
      {"mlir", "mlir"}, {"llvm", "ll"}, {"asm", "s"},   {"obj", "o"},
      {"so", "so"},     {"dot", "dot"}, {"svg", "svg"}, {"png", "png"}};
  const CompilationRecord *record = compilations.record(compilation);
  QString base = record ? record->function : "graph";
  if (kind == "mlir" && step >= 0)
    base += "." + QString::number(step) + "-" + steps.steps()[step].name;
  QString suggested =
      QFileInfo(file).path() + "/" + base + "." + suffixes.value(kind);
  QString path = QFileDialog::getSaveFileName(this, tr("Export"), suggested);
  if (!path.isEmpty())
    exportArtifact(kind, path);
}

void MainWindow::setHideUnchanged(bool hide) {
  if (hideUnchangedBox->isChecked() != hide)
    hideUnchangedBox->setChecked(hide);
  visibleSteps.setHideUnchanged(hide);
  QSettings().setValue("passes/hideUnchanged", hide);
  if (step >= 0) {
    QModelIndex index = visibleSteps.mapFromSource(steps.index(step, 0));
    if (index.isValid())
      stepTable->setCurrentIndex(index);
  }
}

void MainWindow::setShowBefore(bool before) {
  if (beforeBox->isChecked() != before)
    beforeBox->setChecked(before); // re-enters through toggled()
  if (step < 0)
    return;
  showShownIr();
  requestGraph();
}

void MainWindow::closeEvent(QCloseEvent *event) {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
  client.shutdown(1000);
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event) {
  for (const QUrl &url : event->mimeData()->urls())
    if (url.isLocalFile() && url.toLocalFile().endsWith(".py")) {
      event->acceptProposedAction();
      return;
    }
}

void MainWindow::dropEvent(QDropEvent *event) {
  for (const QUrl &url : event->mimeData()->urls())
    if (url.isLocalFile() && url.toLocalFile().endsWith(".py")) {
      openFile(url.toLocalFile());
      event->acceptProposedAction();
      return;
    }
}

} // namespace cuvil::workbench
