//===- PassExplorerPage.cpp - The compile page: widgets and events --------===//

#include "PassExplorerPage.h"

#include "GraphView.h"
#include "IrHighlighter.h"
#include "SourceEditor.h"
#include "WorkbenchContext.h"

#include <QAction>
#include <QCheckBox>
#include <QDockWidget>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QToolBar>
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

} // namespace

PassExplorerPage::PassExplorerPage(WorkbenchContext &context, QWidget *parent)
    : WorkbenchPage(context, parent), compilations(context.compilations()) {
  setObjectName("compilePage");
  visibleSteps.setSourceModel(&steps);
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  header = new QLabel(this);
  header->setObjectName("compilationHeader");
  header->setContentsMargins(6, 3, 6, 3);
  header->setTextInteractionFlags(Qt::TextSelectableByMouse);
  showHeader(nullptr);
  layout->addWidget(header);
  // A main window inside the page, for its dockable panels.
  area = new QMainWindow(this);
  area->setWindowFlags(Qt::Widget);
  area->setObjectName("compileArea");
  layout->addWidget(area);
  buildGraphPanel();
  buildDocks();
  connectContext();
  connect(&graphWatcher, &QFutureWatcher<GraphJob>::finished, this,
          &PassExplorerPage::graphReady);
  setHideUnchanged(QSettings().value("passes/hideUnchanged", false).toBool());
}

PassExplorerPage::~PassExplorerPage() { graphWatcher.waitForFinished(); }

void PassExplorerPage::buildGraphPanel() {
  // Centre: the graph with its toolbar.
  auto *graphPanel = new QWidget(area);
  auto *graphLayout = new QVBoxLayout(graphPanel);
  graphLayout->setContentsMargins(0, 0, 0, 0);
  auto *graphBar = new QToolBar(graphPanel);
  graph = new GraphView(graphPanel);
  beforeGraph = new GraphView(graphPanel);
  beforeGraph->setObjectName("beforeGraph");
  beforeGraph->hide();
  GraphView::synchronize(beforeGraph, graph);
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
  sideBySideBox = new QCheckBox(tr("Side by side"), graphBar);
  sideBySideBox->setToolTip(
      tr("Show the graphs before and after the selected pass next to each "
         "other, on one zoom and viewport; click a node to find its "
         "counterpart"));
  graphBar->addWidget(sideBySideBox);
  heatBox = new QCheckBox(tr("Latency heat"), graphBar);
  heatBox->setToolTip(tr("Colour ops by the kernel time of their source line "
                         "in the last profile (Run Compiled Function)"));
  heatBox->setChecked(true);
  heatBox->setEnabled(false);
  graphBar->addWidget(heatBox);
  graphStatus = new QLabel(graphPanel);
  graphStatus->setContentsMargins(4, 0, 4, 2);
  graphLayout->addWidget(graphBar);
  buildPredictBar(graphPanel);
  graphLayout->addWidget(predictBar);
  graphSplitter = new QSplitter(Qt::Horizontal, graphPanel);
  graphSplitter->addWidget(beforeGraph);
  graphSplitter->addWidget(graph);
  graphSplitter->setStretchFactor(0, 1);
  graphSplitter->setStretchFactor(1, 1);
  graphLayout->addWidget(graphSplitter, 1);
  graphLayout->addWidget(graphStatus);
  area->setCentralWidget(graphPanel);
  connect(searchEdit, &QLineEdit::textChanged, this,
          [this](const QString &text) {
            opFilter->setFilterFixedString(text);
            int found = graph->search(text);
            if (!text.isEmpty())
              context.status(tr("%n op(s) match \"%1\"", "", found).arg(text));
          });
  connect(collapseBox, &QCheckBox::toggled, this, [this] { requestGraph(); });
  connect(beforeBox, &QCheckBox::toggled, this,
          &PassExplorerPage::setShowBefore);
  connect(heatBox, &QCheckBox::toggled, this, &PassExplorerPage::applyHeat);
  connect(graph, &GraphView::nodeClicked, this, &PassExplorerPage::selectNode);
  connect(sideBySideBox, &QCheckBox::toggled, this,
          &PassExplorerPage::setSideBySide);
  connect(graph, &GraphView::nodeClicked, this,
          [this](int id) { selectCounterparts(graph, id); });
  connect(beforeGraph, &GraphView::nodeClicked, this,
          [this](int id) { selectCounterparts(beforeGraph, id); });
}

QDockWidget *PassExplorerPage::dock(const QString &title, const QString &name,
                                    QWidget *widget, Qt::DockWidgetArea where) {
  auto *d = new QDockWidget(title, area);
  d->setObjectName(name);
  d->setWidget(widget);
  area->addDockWidget(where, d);
  return d;
}

void PassExplorerPage::buildDocks() {
  // Left: source and compilations.
  source = new SourceEditor(area);
  dock(tr("Source"), "sourceDock", source, Qt::LeftDockWidgetArea);
  connect(source, &SourceEditor::lineActivated, this,
          &PassExplorerPage::selectSourceLine);
  targetCode = new SourceEditor(area, SourceEditor::Language::C);
  targetCodeDock = dock(tr("Target code"), "targetCodeDock", targetCode,
                        Qt::LeftDockWidgetArea);
  area->tabifyDockWidget(area->findChild<QDockWidget *>("sourceDock"),
                         targetCodeDock);
  targetCodeDock->hide();
  WorkerClient &worker = context.worker();
  connect(&worker, &WorkerClient::stateChanged, this,
          [this](WorkerClient::State state) {
            if (state == WorkerClient::State::Idle)
              showTargetCode();
          });
  connect(&worker, &WorkerClient::irReady, this,
          [this](int index, const QString &stage, const QString &text) {
            if (stage != targetCodeStage || index != targetCodeIndex)
              return;
            targetCode->setSource(text);
            targetCodeDock->show();
          });
  compilationTable = makeTable(&compilations, area);
  dock(tr("Compilations"), "compilationsDock", compilationTable,
       Qt::LeftDockWidgetArea);
  connect(compilationTable->selectionModel(),
          &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex &index) { showCompilation(index.row()); });

  // Right: passes and ops.
  auto *passPanel = new QWidget(area);
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
  dock(tr("Passes"), "passesDock", passPanel, Qt::RightDockWidgetArea);
  connect(hideUnchangedBox, &QCheckBox::toggled, this,
          &PassExplorerPage::setHideUnchanged);
  connect(stepTable->selectionModel(), &QItemSelectionModel::currentRowChanged,
          this, [this](const QModelIndex &index) {
            if (index.isValid())
              selectStep(visibleSteps.mapToSource(index).row());
          });

  opFilter = new QSortFilterProxyModel(this);
  opFilter->setSourceModel(&ops);
  opFilter->setFilterKeyColumn(IrOpModel::Op);
  opFilter->setFilterCaseSensitivity(Qt::CaseInsensitive);
  opTable = makeTable(opFilter, area);
  QDockWidget *opsDock =
      dock(tr("Ops"), "opsDock", opTable, Qt::RightDockWidgetArea);
  // What the step's pass does: its declaration's summary, description and
  // options.
  passDoc = new QTextBrowser(area);
  passDoc->setOpenLinks(false);
  area->tabifyDockWidget(opsDock, dock(tr("Pass"), "passDocDock", passDoc,
                                       Qt::RightDockWidgetArea));
  opsDock->raise();
  connect(opTable, &QTableView::clicked, this,
          [this](const QModelIndex &index) {
            selectNode(index.data(IrOpModel::NodeIdRole).toInt());
          });

  // Bottom: IR and diff.
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  irText = new QPlainTextEdit(area);
  irText->setReadOnly(true);
  irText->setFont(mono);
  irText->setLineWrapMode(QPlainTextEdit::NoWrap);
  irText->setCenterOnScroll(true);
  new IrHighlighter(irText->document());
  auto *irDock = dock(tr("IR"), "irDock", irText, Qt::BottomDockWidgetArea);
  connect(irText, &QPlainTextEdit::cursorPositionChanged, this, [this] {
    if (!linking)
      selectIrLine(irText->textCursor().blockNumber() + 1);
  });

  diffTable = makeTable(&diff, area);
  diffTable->setFont(mono);
  diffTable->setSelectionMode(QAbstractItemView::NoSelection);
  diffTable->horizontalHeader()->setSectionResizeMode(DiffModel::LeftText,
                                                      QHeaderView::Stretch);
  diffTable->horizontalHeader()->setSectionResizeMode(DiffModel::RightText,
                                                      QHeaderView::Stretch);
  diffTable->horizontalHeader()->setStretchLastSection(false);
  auto *diffDock = dock(tr("Diff with previous step"), "diffDock", diffTable,
                        Qt::BottomDockWidgetArea);
  area->tabifyDockWidget(irDock, diffDock);
  buildKernelDock(irDock);
  irDock->raise();
}

void PassExplorerPage::buildKernelDock(QDockWidget *irDock) {
  // The step's kernel launches: grid, block, shared memory, what each runs.
  auto *panel = new QWidget(area);
  auto *layout = new QVBoxLayout(panel);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  kernelSummary = new QLabel(panel);
  kernelSummary->setObjectName("kernelSummary");
  kernelSummary->setContentsMargins(4, 2, 4, 0);
  kernelSummary->setWordWrap(true);
  kernelSummary->setText(launches.summary());
  layout->addWidget(kernelSummary);
  kernelTable = makeTable(&launches, panel);
  kernelTable->setObjectName("kernelTable");
  // Few rows: every column fits its contents, the ops take what is left.
  kernelTable->horizontalHeader()->setSectionResizeMode(
      QHeaderView::ResizeToContents);
  kernelTable->horizontalHeader()->setSectionResizeMode(KernelLaunchModel::Ops,
                                                        QHeaderView::Stretch);
  kernelTable->horizontalHeader()->setStretchLastSection(false);
  layout->addWidget(kernelTable, 1);
  kernelDock =
      dock(tr("Kernels"), "kernelDock", panel, Qt::BottomDockWidgetArea);
  kernelDock->setToolTip(tr("The GPU kernels this step launches: grid, "
                            "block, shared memory and the ops each runs"));
  area->tabifyDockWidget(irDock, kernelDock);
  kernelDock->hide();
  connect(kernelTable, &QTableView::clicked, this,
          [this](const QModelIndex &index) { selectLaunch(index.row()); });
  connect(&launches, &QAbstractItemModel::modelReset, this,
          [this] { kernelSummary->setText(launches.summary()); });
}

void PassExplorerPage::connectContext() {
  connect(&context, &WorkbenchContext::fileOpened, this,
          [this](const QString &, const QString &text) { clearRun(text); });
  connect(&compilations, &QAbstractItemModel::rowsInserted, this, [this] {
    if (compilation < 0)
      compilationTable->selectRow(compilations.rowCount() - 1);
  });
  connect(&context, &WorkbenchContext::latencyHeatChanged, this,
          &PassExplorerPage::applyHeat);
  connect(&context, &WorkbenchContext::locationRequested, this,
          &PassExplorerPage::showLocation);
  connect(&context, &WorkbenchContext::passRequested, this,
          &PassExplorerPage::showPass);
  connect(&context, &WorkbenchContext::findOpsRequested, this,
          [this](const QString &text) { searchEdit->setText(text); });
  WorkerClient &worker = context.worker();
  connect(&worker, &WorkerClient::exceptionRaised, this,
          [this](const UserException &e) {
            if (QFileInfo(e.file) == QFileInfo(context.file()) && e.line > 0)
              source->markLine(e.line, true);
          });
  connect(&worker, &WorkerClient::exported, this,
          [this] { finishWorkerExport(true, {}); });
  connect(&worker, &WorkerClient::requestFailed, this,
          [this](const QString &request, const QString &message) {
            if (request == "export")
              finishWorkerExport(false, message);
          });
  connect(&worker, &WorkerClient::workerEnded, this,
          [this](const QString &description) {
            finishWorkerExport(false, description);
          });
}

void PassExplorerPage::clearRun(const QString &text) {
  source->setSource(text);
  steps.setSteps({});
  ops.setGraph({});
  diff.setTexts({}, {});
  launches.setLaunches({});
  irText->clear();
  graph->clearGraph();
  compilation = -1;
  step = -1;
  showHeader(nullptr);
}

void PassExplorerPage::showHeader(const CompilationRecord *record) {
  if (!record) {
    header->setText(tr("No compilation yet: open a model file that calls a "
                       "@cuvil.jit function."));
    return;
  }
  header->setText(headerText());
  // The kernel table is the GPU targets' ("cuda", "cuda:1").
  kernelDock->setVisible(record->target.startsWith("cuda"));
  // Graph pictures and the step's MLIR never depend on the target.
  for (auto it = exportActions.begin(); it != exportActions.end(); ++it)
    if (it.key() != "dot" && it.key() != "svg" && it.key() != "png" &&
        it.key() != "mlir")
      it.value()->setEnabled(record->artifacts.isEmpty() ||
                             record->artifacts.contains(it.key()));
}

QString PassExplorerPage::headerText() const {
  const CompilationRecord *r = compilations.record(compilation);
  if (!r)
    return {};
  return tr("<b>%1</b>(%2) for target <b>%3</b>: %4 passes, compiled in "
            "%5 ms; defined at %6")
      .arg(r->function.toHtmlEscaped(), r->inputSummary().toHtmlEscaped(),
           r->target.toHtmlEscaped())
      .arg(r->steps.size() - 1)
      .arg(r->compileMs, 0, 'f', 1)
      .arg(QFileInfo(r->source).fileName().toHtmlEscaped());
}

void PassExplorerPage::addMenuActions(const WorkbenchMenus &menus) {
  const QList<QPair<QString, QString>> kinds = {
      {"mlir", tr("MLIR of this step...")},
      {"llvm", tr("LLVM IR...")},
      {"asm", tr("Assembly...")},
      {"obj", tr("Object file...")},
      {"so", tr("Shared library...")},
      {"c", tr("C source (target c)...")},
      {"h", tr("C header (target c)...")},
      {"wasm", tr("WebAssembly module (target wasm)...")},
      {"mjs", tr("ES module loading it (target wasm)...")},
      {"wat", tr("WebAssembly text (target wasm)...")},
      {"ptx", tr("PTX of the GPU kernels (target cuda)...")},
      {"cubin", tr("SASS for sm_90, .cubin (target cuda)...")},
      {"fatbin", tr("Fat binary: SASS and PTX (target cuda)...")},
      {"dot", tr("Graph as DOT...")},
      {"svg", tr("Graph as SVG...")},
      {"png", tr("Graph as PNG...")},
      {"cuvil", tr("Executable package (.cuvil)...")},
      {"irpkg", tr("IR package (.irpkg)...")}};
  for (const auto &[kind, title] : kinds) {
    QString k = kind;
    exportActions[k] = menus.exportMenu->addAction(
        title, this, [this, k] { exportDialog(k); });
  }
  QMenu *passMenu = menus.bar->addMenu(tr("&Passes"));
  passMenu->addAction(tr("&Next Step"), QKeySequence(Qt::ALT | Qt::Key_Right),
                      this, [this] { stepForward(); });
  passMenu->addAction(tr("&Previous Step"),
                      QKeySequence(Qt::ALT | Qt::Key_Left), this,
                      [this] { stepBack(); });
  passMenu->addAction(tr("&Fit Graph"), QKeySequence(Qt::CTRL | Qt::Key_0),
                      graph, &GraphView::fit);
  passMenu->addSeparator();
  predictAction = passMenu->addAction(tr("P&redict Each Pass"));
  predictAction->setCheckable(true);
  predictAction->setToolTip(
      tr("Before a pass is shown, click the ops you expect it to replace or "
         "remove; the real step then scores your guess"));
  connect(predictAction, &QAction::toggled, this,
          &PassExplorerPage::setPredicting);
}

QList<QAction *> PassExplorerPage::viewActions() const {
  QList<QAction *> actions;
  for (QDockWidget *d : area->findChildren<QDockWidget *>())
    actions << d->toggleViewAction();
  return actions;
}

void PassExplorerPage::saveLayout(QSettings &settings) const {
  settings.setValue("state", area->saveState());
}

void PassExplorerPage::restoreLayout(QSettings &settings) {
  if (area->restoreState(settings.value("state").toByteArray()))
    return;
  // The default sizes, once the page (inside the shown window) has its size.
  QTimer::singleShot(0, this, [this] {
    auto find = [this](const char *name) {
      return area->findChild<QDockWidget *>(name);
    };
    area->resizeDocks({find("sourceDock"), find("passesDock")}, {420, 360},
                      Qt::Horizontal);
    area->resizeDocks({find("sourceDock"), find("compilationsDock")},
                      {520, 130}, Qt::Vertical);
    area->resizeDocks({find("irDock")}, {200}, Qt::Vertical);
    stepTable->scrollTo(stepTable->currentIndex());
  });
}

} // namespace cuvil::workbench
