//===- ProfilerPage.cpp - Timeline, flame graph and op table of a profile -===//

#include "ProfilerPage.h"

#include "FlameGraphModel.h"
#include "FlameGraphView.h"
#include "OpTableModel.h"
#include "TimelineView.h"

#include "cuvil/Profiler/Formats.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QScrollArea>
#include <QShortcut>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <map>

namespace cuvil::workbench {
namespace {

QString displayName(const QString &path) {
  QFileInfo info(path);
  return info.exists() ? info.fileName() : path;
}

bool wholeTrace(const prof::Selection &s) {
  return s.beginNs == INT64_MIN && s.endNs == INT64_MAX;
}

struct AggregatePair {
  Aggregates current;
  std::shared_ptr<const Aggregates> baseline;
};

} // namespace

ProfilerPage::ProfilerPage(QWidget *parent) : QWidget(parent) { buildUi(); }

ProfilerPage::~ProfilerPage() = default;

void ProfilerPage::buildUi() {
  flameTree = new FlameGraphModel(this);
  ops = new OpTableModel(this);
  opSort = new OpTableProxy(this);
  opSort->setSourceModel(ops);

  // Tool row.
  auto *tools = new QHBoxLayout;
  tools->setContentsMargins(0, 0, 0, 0);
  auto button = [&](const QString &text, const QString &tip) {
    auto *b = new QToolButton(this);
    b->setText(text);
    b->setToolTip(tip);
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    tools->addWidget(b);
    return b;
  };
  QToolButton *open = button("Open trace…", "Open a Chrome trace, folded "
                                            "stacks, speedscope or Nsight "
                                            "Systems SQLite file");
  // Both buttons pick a trace file and hand it to one of the loaders.
  auto pickTrace = [this](const QString &title,
                          void (ProfilerPage::*load)(const QString &)) {
    QString path = QFileDialog::getOpenFileName(
        this, title, {},
        QString::fromStdString(cuvil::profiler::traceFileFilter()));
    if (!path.isEmpty())
      (this->*load)(path);
  };
  connect(open, &QToolButton::clicked, this,
          [pickTrace] { pickTrace("Open trace", &ProfilerPage::openTrace); });
  QToolButton *compare = button("Compare with…", "Open a baseline trace: the "
                                                 "flame graph shows the "
                                                 "difference, red = slower, "
                                                 "blue = faster");
  connect(compare, &QToolButton::clicked, this, [pickTrace] {
    pickTrace("Open baseline trace", &ProfilerPage::openBaseline);
  });
  clearBaselineButton = button("Clear baseline", "Leave the diff mode");
  clearBaselineButton->setEnabled(false);
  connect(clearBaselineButton, &QToolButton::clicked, this,
          &ProfilerPage::clearBaseline);

  widthButton = button("Baseline widths",
                       "Diff mode: size frames by the baseline's time, so "
                       "that frames the current run no longer has show up");
  widthButton->setCheckable(true);
  widthButton->setEnabled(false);
  connect(widthButton, &QToolButton::toggled, this,
          &ProfilerPage::setBaselineWidths);

  kindsButton = button("Kinds", "Event kinds counted in the flame graph and "
                                "the op table");
  kindsButton->setPopupMode(QToolButton::InstantPopup);
  auto *kindMenu = new QMenu(kindsButton);
  for (int k = 0; k < prof::kEventKindCount; ++k) {
    auto kind = prof::EventKind(k);
    QAction *action = kindMenu->addAction(trackGroupName(kind));
    action->setCheckable(true);
    action->setChecked(true);
    action->setData(k);
    connect(action, &QAction::toggled, this, [this, kindMenu] {
      uint32_t mask = 0;
      for (QAction *a : kindMenu->actions())
        if (a->isChecked())
          mask |= prof::Selection::bit(prof::EventKind(a->data().toInt()));
      setKindMask(mask == (1u << prof::kEventKindCount) - 1 ? ~0u : mask);
    });
  }
  kindsButton->setMenu(kindMenu);

  icicleButton = button("Icicle", "Draw the root on top (icicle) instead of "
                                  "at the bottom (flame graph)");
  icicleButton->setCheckable(true);
  connect(icicleButton, &QToolButton::toggled, this, [this](bool on) {
    flameView->setOrientation(on ? FlameGraphView::Orientation::Icicle
                                 : FlameGraphView::Orientation::Flame);
  });
  QToolButton *resetZoom = button("Reset zoom", "Show the whole trace and the "
                                                "whole flame graph (Home)");
  connect(resetZoom, &QToolButton::clicked, this, [this] {
    flameView->resetZoom();
    timelineView->resetZoom();
  });

  search = new QLineEdit(this);
  search->setPlaceholderText("Search frames, kernels and ops (Ctrl+F)");
  search->setClearButtonEnabled(true);
  search->setMinimumWidth(220);
  tools->addSpacing(12);
  tools->addWidget(search, 1);
  connect(search, &QLineEdit::textChanged, this, &ProfilerPage::setSearchText);
  auto *find = new QShortcut(QKeySequence::Find, this);
  connect(find, &QShortcut::activated, this, [this] {
    search->setFocus();
    search->selectAll();
  });

  errorBanner = new QLabel(this);
  errorBanner->setWordWrap(true);
  errorBanner->setTextInteractionFlags(Qt::TextSelectableByMouse);
  errorBanner->setStyleSheet("QLabel { background: #fdecea; color: #7a1010; "
                             "border: 1px solid #f0b8b4; padding: 6px; }");
  errorBanner->hide();

  info = new QLabel(this);
  info->setTextFormat(Qt::RichText);
  info->setText("No trace loaded. Open one with <i>Open trace…</i>.");

  timelineView = new TimelineView(this);
  timelineView->setMinimumHeight(120);
  connect(timelineView, &TimelineView::rangeSelected, this,
          [this](qint64 b, qint64 e) {
            wanted.beginNs = b;
            wanted.endNs = e;
            reaggregate();
          });
  connect(timelineView, &TimelineView::selectionCleared, this, [this] {
    wanted.beginNs = INT64_MIN;
    wanted.endNs = INT64_MAX;
    reaggregate();
  });
  connect(timelineView, &TimelineView::eventClicked, this,
          &ProfilerPage::activateEvent);
  connect(timelineView, &TimelineView::frameClicked, this,
          [this](qint64, quint32 frame) {
            const prof::Trace &trace = *current->trace;
            const prof::Frame &f = trace.frames[frame];
            std::string_view file = trace.str(f.file), name = trace.str(f.name);
            emit opActivated(f.file ? QString("%1:%2")
                                          .arg(QString::fromUtf8(
                                              file.data(), int(file.size())))
                                          .arg(f.line)
                                    : QString(),
                             prof::kNoOp, displayText(name));
          });

  flameView = new FlameGraphView;
  flameView->setModel(flameTree);
  connect(flameView, &FlameGraphView::frameClicked, this,
          &ProfilerPage::activateFrame);
  connect(flameView, &FlameGraphView::zoomChanged, this,
          &ProfilerPage::updateSearchInfo);
  auto *flameScroll = new QScrollArea;
  flameScroll->setWidget(flameView);
  flameScroll->setWidgetResizable(true);
  flameScroll->setFrameShape(QFrame::NoFrame);
  flameInfo = new QLabel;
  flameInfo->setTextFormat(Qt::RichText);
  auto *flamePane = new QWidget;
  auto *flameLayout = new QVBoxLayout(flamePane);
  flameLayout->setContentsMargins(0, 0, 0, 0);
  flameLayout->setSpacing(2);
  flameLayout->addWidget(flameInfo);
  flameLayout->addWidget(flameScroll, 1);

  opView = new QTableView;
  opView->setModel(opSort);
  opView->setSortingEnabled(true);
  opView->sortByColumn(OpTableModel::Total, Qt::DescendingOrder);
  opView->setSelectionBehavior(QAbstractItemView::SelectRows);
  opView->setSelectionMode(QAbstractItemView::SingleSelection);
  opView->setAlternatingRowColors(true);
  opView->verticalHeader()->hide();
  opView->verticalHeader()->setDefaultSectionSize(20);
  opView->horizontalHeader()->setStretchLastSection(false);
  opView->setWordWrap(false);
  opView->setTextElideMode(Qt::ElideMiddle);
  connect(opView, &QTableView::activated, this, &ProfilerPage::activateOpRow);
  connect(opView, &QTableView::clicked, this, &ProfilerPage::activateOpRow);

  treeView = new QTreeView;
  treeView->setModel(flameTree);
  treeView->setUniformRowHeights(true);
  treeView->setAlternatingRowColors(true);
  treeView->header()->setStretchLastSection(false);
  connect(treeView, &QTreeView::clicked, this, [this](const QModelIndex &i) {
    activateFrame(flameTree->nodeOf(i));
  });

  // Left: the flame graph over its frames as a tree; right: the ops.
  flameColumn = new QSplitter(Qt::Vertical);
  flameColumn->addWidget(flamePane);
  flameColumn->addWidget(treeView);
  auto *opPane = new QWidget;
  auto *opLayout = new QVBoxLayout(opPane);
  opLayout->setContentsMargins(0, 0, 0, 0);
  opLayout->setSpacing(2);
  auto *opTitle = new QLabel("<b>Per-op table</b> — click a row to show its "
                             "IR op and Python line");
  opTitle->setTextFormat(Qt::RichText);
  opLayout->addWidget(opTitle);
  opLayout->addWidget(opView, 1);
  // The timeline across the top; flame graph and tables below it.
  columns = new QSplitter(Qt::Horizontal);
  columns->addWidget(flameColumn);
  columns->addWidget(opPane);
  columns->setStretchFactor(0, 11);
  columns->setStretchFactor(1, 9);
  split = new QSplitter(Qt::Vertical);
  split->addWidget(timelineView);
  split->addWidget(columns);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);

  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->setSpacing(4);
  layout->addLayout(tools);
  layout->addWidget(errorBanner);
  layout->addWidget(info);
  layout->addWidget(split, 1);
  updateSearchInfo();
}

void ProfilerPage::openTrace(const QString &path) { loadAsync(path, false); }

void ProfilerPage::openBaseline(const QString &path) { loadAsync(path, true); }

void ProfilerPage::loadAsync(const QString &path, bool asBaseline) {
  int generation = asBaseline ? ++baselineGeneration : ++loadGeneration;
  ++pending;
  info->setText(QString("Reading %1…").arg(path.toHtmlEscaped()));
  auto *watcher = new QFutureWatcher<ProfileLoad>(this);
  connect(watcher, &QFutureWatcherBase::finished, this,
          [this, watcher, generation, asBaseline] {
            --pending;
            finishLoad(watcher->result(), generation, asBaseline);
            watcher->deleteLater();
          });
  watcher->setFuture(QtConcurrent::run(loadProfile, path));
}

void ProfilerPage::setTrace(prof::Trace trace, const QString &name) {
  analyzeAsync(std::move(trace), name, false);
}

void ProfilerPage::setBaseline(prof::Trace trace, const QString &name) {
  analyzeAsync(std::move(trace), name, true);
}

void ProfilerPage::analyzeAsync(prof::Trace trace, const QString &name,
                                bool asBaseline) {
  int generation = asBaseline ? ++baselineGeneration : ++loadGeneration;
  ++pending;
  auto holder = std::make_shared<prof::Trace>(std::move(trace));
  auto *watcher = new QFutureWatcher<ProfileLoad>(this);
  connect(watcher, &QFutureWatcherBase::finished, this,
          [this, watcher, generation, asBaseline] {
            --pending;
            finishLoad(watcher->result(), generation, asBaseline);
            watcher->deleteLater();
          });
  watcher->setFuture(QtConcurrent::run([holder, name] {
    ProfileLoad load;
    load.profile = analyzeProfile(std::move(*holder), name);
    return load;
  }));
}

void ProfilerPage::finishLoad(const ProfileLoad &load, int generation,
                              bool asBaseline) {
  if (generation != (asBaseline ? baselineGeneration : loadGeneration))
    return; // a newer load replaced this one
  if (!load.error.isEmpty()) {
    showError(load.error);
    updateInfo();
    emit loadFailed(load.error);
    return;
  }
  errorBanner->hide();
  errorBanner->clear();
  if (asBaseline) {
    base = load.profile;
    clearBaselineButton->setEnabled(true);
    widthButton->setEnabled(true);
  } else {
    current = load.profile;
    wanted.beginNs = INT64_MIN;
    wanted.endNs = INT64_MAX;
    timelineView->setProfile(current);
    flameView->setEmptyText("No events of the chosen kinds in this range");
  }
  reaggregate();
  if (asBaseline)
    emit baselineLoaded(load.profile->path);
  else
    emit traceLoaded(load.profile->path);
}

void ProfilerPage::fitPanes() {
  // The timeline takes what its lanes need, between 140 px and half of the
  // page; the flame graph and the tables get the rest.
  int total = split->height() > 0 ? split->height() : height();
  int wanted = timelineView->lanes().contentHeight +
               TimelineLanes::kRulerHeight + 2 * timelineView->frameWidth() +
               12;
  int top = std::clamp(wanted, 140, std::max(140, total / 2));
  split->setSizes({top, std::max(100, total - top)});
  int width = columns->width() > 0 ? columns->width() : this->width();
  columns->setSizes({width * 11 / 20, width * 9 / 20});
  // The flame graph takes the rows it needs (up to two thirds of its
  // column); the call tree below it gets the rest.
  int column = std::max(200, total - top);
  int flame = flameView->minimumSizeHint().height() +
              flameInfo->sizeHint().height() + 10;
  flame = std::clamp(flame, 160, std::max(160, column * 2 / 3));
  flameColumn->setSizes({flame, std::max(80, column - flame)});
}

void ProfilerPage::clearBaseline() {
  ++baselineGeneration;
  base.reset();
  clearBaselineButton->setEnabled(false);
  widthButton->setEnabled(false);
  reaggregate();
}

void ProfilerPage::selectRange(qint64 beginNs, qint64 endNs) {
  timelineView->setSelection(beginNs, endNs); // emits rangeSelected
}

void ProfilerPage::clearRange() {
  if (timelineView->hasSelection()) {
    timelineView->clearSelection(); // emits selectionCleared
    return;
  }
  wanted.beginNs = INT64_MIN;
  wanted.endNs = INT64_MAX;
  reaggregate();
}

void ProfilerPage::setKindMask(uint32_t mask) {
  wanted.kindMask = mask;
  reaggregate();
}

void ProfilerPage::reaggregate() {
  if (!current) {
    updateInfo();
    return;
  }
  bool allKinds = wanted.kindMask == ~0u;
  // Results of earlier requests still running are dropped when they land.
  int generation = ++aggregateGeneration;
  if (wholeTrace(wanted) && allKinds) {
    Aggregates whole{wanted, current->callTree, current->ops};
    std::shared_ptr<const Aggregates> baseAgg;
    if (base)
      baseAgg = std::make_shared<Aggregates>(
          Aggregates{wanted, base->callTree, base->ops});
    applyAggregates(whole, baseAgg);
    return;
  }
  ++pending;
  auto *watcher = new QFutureWatcher<AggregatePair>(this);
  connect(watcher, &QFutureWatcherBase::finished, this,
          [this, watcher, generation] {
            --pending;
            AggregatePair result = watcher->result();
            watcher->deleteLater();
            if (generation == aggregateGeneration)
              applyAggregates(result.current, result.baseline);
          });
  // The baseline runs on its own clock: it is compared whole, restricted to
  // the same event kinds.
  watcher->setFuture(QtConcurrent::run(
      [profile = current, baseline = base, selection = wanted] {
        AggregatePair pair;
        pair.current = aggregate(*profile->trace, selection);
        if (baseline) {
          prof::Selection kinds;
          kinds.kindMask = selection.kindMask;
          pair.baseline = std::make_shared<Aggregates>(
              kinds.kindMask == ~0u
                  ? Aggregates{kinds, baseline->callTree, baseline->ops}
                  : aggregate(*baseline->trace, kinds));
        }
        return pair;
      }));
}

void ProfilerPage::rebuildFlameTree() {
  if (shownBaselineTree)
    flameTree->setTree(
        FlameTree::fromDiff(*shownBaselineTree, shownTree,
                            baselineWidths ? FlameTree::DiffWidth::Baseline
                                           : FlameTree::DiffWidth::Current));
  else
    flameTree->setTree(FlameTree::fromCallTree(shownTree));
}

void ProfilerPage::setBaselineWidths(bool on) {
  if (widthButton->isChecked() != on) {
    widthButton->setChecked(on); // comes back here through toggled
    return;
  }
  baselineWidths = on;
  if (current)
    rebuildFlameTree();
  updateSearchInfo();
}

void ProfilerPage::applyAggregates(
    const Aggregates &currentAgg,
    const std::shared_ptr<const Aggregates> &baselineAgg) {
  shown = currentAgg.selection;
  shownTree = currentAgg.callTree;
  shownBaselineTree.reset();
  if (baselineAgg)
    shownBaselineTree = std::make_shared<prof::CallTree>(baselineAgg->callTree);
  rebuildFlameTree();
  ops->setRows(currentAgg.ops,
               baselineAgg ? baselineAgg->ops : std::vector<prof::OpRow>{});
  // Times first: Op, Total, (Baseline, Δ Total), Self, Self %, Count,
  // p50, p99, Max, Kind, Location. An imported model's kernels are told
  // apart by their nodes (two convolutions run the same kernel), so there
  // Location, which names the node, follows Op.
  bool modelNodes =
      std::any_of(currentAgg.ops.begin(), currentAgg.ops.end(),
                  [](const prof::OpRow &row) { return !row.node.empty(); });
  QHeaderView *header = opView->horizontalHeader();
  std::vector<int> order = {OpTableModel::Op};
  if (modelNodes)
    order.push_back(OpTableModel::Location);
  order.push_back(OpTableModel::Total);
  if (ops->hasBaseline())
    order.insert(order.end(),
                 {OpTableModel::BaselineTotal, OpTableModel::DeltaTotal});
  order.insert(order.end(),
               {OpTableModel::Self, OpTableModel::SelfPercent,
                OpTableModel::Count, OpTableModel::P50, OpTableModel::P99,
                OpTableModel::Max, OpTableModel::Kind});
  if (!modelNodes)
    order.push_back(OpTableModel::Location);
  for (int visual = 0; visual < int(order.size()); ++visual)
    header->moveSection(header->visualIndex(order[size_t(visual)]), visual);
  for (int c = 0; c < ops->columnCount(); ++c)
    opView->resizeColumnToContents(c);
  opView->setColumnWidth(OpTableModel::Op,
                         std::min(opView->columnWidth(OpTableModel::Op), 260));
  opView->setColumnWidth(OpTableModel::Location,
                         std::min(opView->columnWidth(OpTableModel::Location),
                                  modelNodes ? 300 : 190));
  // Small trees open fully; big ones down to the kernels of a few callers.
  if (flameTree->tree().size() <= 256)
    treeView->expandAll();
  else
    treeView->expandToDepth(2);
  treeView->resizeColumnToContents(0);
  treeView->setColumnWidth(0, std::min(treeView->columnWidth(0), 460));
  for (int c = 1; c < FlameGraphModel::ColumnCount; ++c)
    treeView->resizeColumnToContents(c);
  fitPanes();
  heatMap = heatByLocation(currentAgg.ops);
  heatLookup = LatencyHeatIndex(latencyByLocation(currentAgg.ops));
  updateInfo();
  updateSearchInfo();
  emit heatChanged(heatMap);
  emit aggregatesUpdated();
}

void ProfilerPage::setSearchText(const QString &text) {
  if (search->text() != text) {
    search->setText(text); // comes back here through textChanged
    return;
  }
  flameTree->setSearchText(text);
  timelineView->setHighlightText(text);
  opSort->setFilterText(text);
  updateSearchInfo();
}

void ProfilerPage::setIcicle(bool on) { icicleButton->setChecked(on); }

QString ProfilerPage::errorText() const {
  return errorBanner->isVisible() || !errorBanner->text().isEmpty()
             ? errorBanner->text()
             : QString();
}

void ProfilerPage::showError(const QString &message) {
  errorBanner->setText("Could not open the trace: " + message);
  errorBanner->show();
}

void ProfilerPage::updateInfo() {
  if (!current) {
    info->setText("No trace loaded. Open one with <i>Open trace…</i>.");
    return;
  }
  const prof::Trace &trace = *current->trace;
  QString text = QString("<b>%1</b> — %2 events, %3 tracks, %4")
                     .arg(displayName(current->path).toHtmlEscaped())
                     .arg(trace.events.size())
                     .arg(current->tracks.size())
                     .arg(formatDuration(current->endNs - current->beginNs));
  if (!wholeTrace(shown))
    text += QString(" · <span style='color:#1c5fc4'>selection %1 (+%2 → "
                    "+%3)</span>")
                .arg(formatDuration(shown.endNs - shown.beginNs),
                     formatDuration(shown.beginNs - current->beginNs),
                     formatDuration(shown.endNs - current->beginNs));
  if (base)
    text += QString(" · compared with <b>%1</b>")
                .arg(displayName(base->path).toHtmlEscaped());
  text += "<span style='color:#777'> · shift-drag the timeline to select a "
          "range, wheel to zoom, drag to pan</span>";
  info->setText(text);
}

void ProfilerPage::updateSearchInfo() {
  const FlameTree &tree = flameTree->tree();
  QString text;
  if (tree.isDiff()) {
    text = QString("<b>Diff flame graph</b> (width: %1 run) — ")
               .arg(baselineWidths ? "baseline" : "current") +
           "<span style='background:#d73027;color:white'>&nbsp;slower&nbsp;"
           "</span> <span style='background:#3168c4;color:white'>&nbsp;"
           "faster&nbsp;</span> than the baseline, deeper colour = larger "
           "change";
  } else {
    text = "<b>Flame graph</b> — colour by source module:";
    std::map<QString, int64_t> modules;
    for (uint32_t i = 1; i < tree.size(); ++i)
      if (!tree.node(i).module.isEmpty())
        modules[tree.node(i).module] += tree.node(i).totalNs;
    std::vector<std::pair<int64_t, QString>> order;
    for (auto &[name, ns] : modules)
      order.push_back({-ns, name});
    std::sort(order.begin(), order.end());
    for (size_t i = 0; i < order.size() && i < 5; ++i)
      text += QString(" <span style='background:%1'>&nbsp;%2&nbsp;</span>")
                  .arg(moduleColor(order[i].second, {}).name(),
                       order[i].second.toHtmlEscaped());
  }
  if (flameView->zoomedNode() != 0)
    text += QString(" · zoomed into <b>%1</b> (Esc: back)")
                .arg(tree.node(flameView->zoomedNode()).name.toHtmlEscaped());
  const FlameTree::SearchResult &found = flameTree->searchResult();
  if (!search->text().isEmpty()) {
    int64_t all = std::max<int64_t>(1, tree.weight(0));
    text += QString(" · search: %1 frames, %2% of the time")
                .arg(found.matches.size())
                .arg(100.0 * double(found.coveredNs) / double(all), 0, 'f', 1);
  }
  flameInfo->setText(text);
}

void ProfilerPage::activateOpRow(const QModelIndex &proxyIndex) {
  if (!proxyIndex.isValid())
    return;
  QModelIndex index = opSort->mapToSource(proxyIndex);
  emit opActivated(index.data(OpTableModel::LocRole).toString(),
                   index.data(OpTableModel::OpIdRole).toLongLong(),
                   index.data(OpTableModel::NameRole).toString());
}

void ProfilerPage::activateEvent(qint64 index) {
  if (!current || index < 0 || size_t(index) >= current->trace->events.size())
    return;
  const prof::Trace &trace = *current->trace;
  const prof::Event &e = trace.events[size_t(index)];
  QString loc =
      QString::fromUtf8(trace.str(e.loc).data(), int(trace.str(e.loc).size()));
  QString name = displayText(trace.str(e.name));
  int row = ops->rowForLocation(loc.isEmpty() ? name : loc);
  if (row >= 0)
    opView->selectRow(opSort->mapFromSource(ops->index(row, 0)).row());
  if (loc.isEmpty() && e.stack != prof::kNoStack) {
    // A Python call: point at the line of its innermost frame.
    std::vector<prof::FrameId> frames = trace.stackFrames(e.stack);
    const prof::Frame &f = trace.frames[frames.back()];
    if (f.file)
      loc =
          QString("%1:%2").arg(QString::fromUtf8(trace.str(f.file).data(),
                                                 int(trace.str(f.file).size())),
                               QString::number(f.line));
  }
  emit opActivated(loc, e.opId, name);
}

void ProfilerPage::activateFrame(quint32 node) {
  const FlameTree &tree = flameTree->tree();
  if (node == 0 || node >= tree.size())
    return;
  updateSearchInfo();
  const FlameTree::Node &n = tree.node(node);
  QString loc = tree.location(node);
  // Rows are by total time, so the first row of that name is the hottest;
  // a frame of a model node prefers that node's row.
  int row = -1, nodeRow = -1;
  for (int r = 0; r < ops->rowCount() && nodeRow < 0; ++r) {
    if (displayText(ops->row(r).name) != n.eventName)
      continue;
    if (row < 0)
      row = r;
    if (!n.node.isEmpty() && displayText(ops->row(r).node) == n.node)
      nodeRow = r;
  }
  if (nodeRow >= 0)
    row = nodeRow;
  qint64 opId = n.opId != prof::kNoOp ? n.opId
                : row >= 0            ? ops->row(row).opId
                                      : prof::kNoOp;
  if (row >= 0) {
    opView->selectRow(opSort->mapFromSource(ops->index(row, 0)).row());
    QString rowLoc = QString::fromStdString(ops->row(row).loc);
    if (!rowLoc.isEmpty())
      loc = rowLoc;
  }
  emit opActivated(loc, opId, n.eventName);
}

} // namespace cuvil::workbench
