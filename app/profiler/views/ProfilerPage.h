//===- ProfilerPage.h - Timeline, flame graph, op table ---------*- C++ -*-===//
//
// The Workbench's profiler page. Open a trace (read and analyzed on a
// worker thread; errors shown in the page), optionally a baseline for the
// diff mode; selecting a range on the timeline re-aggregates the flame
// graph and the per-op table; the search box filters all three. Clicking
// an op, kernel or frame with a source location emits opActivated so that
// the main window can show the IR op, its graph node and the Python line.
//
//===----------------------------------------------------------------------===//

#ifndef CUVIL_WORKBENCH_PROFILERPAGE_H
#define CUVIL_WORKBENCH_PROFILERPAGE_H

#include "LatencyHeat.h"
#include "ProfileData.h"

#include <QHash>
#include <QWidget>

#include <memory>

class QLabel;
class QLineEdit;
class QTableView;
class QTreeView;
class QToolButton;
class QSplitter;

namespace cuvil::workbench {

class FlameGraphModel;
class FlameGraphView;
class OpTableModel;
class OpTableProxy;
class TimelineView;

class ProfilerPage : public QWidget {
  Q_OBJECT
public:
  explicit ProfilerPage(QWidget *parent = nullptr);
  ~ProfilerPage() override;

  /// Reads and analyzes `path` off the GUI thread; emits traceLoaded, or
  /// shows the reader's error in the page and emits loadFailed.
  void openTrace(const QString &path);
  /// The same for the baseline of the diff mode (emits baselineLoaded).
  void openBaseline(const QString &path);
  /// Shows an in-memory trace (e.g. one the worker just recorded); it is
  /// analyzed off the GUI thread. `name` titles it.
  void setTrace(prof::Trace trace, const QString &name);
  /// Compares the current profile with `trace`: red frames are slower than
  /// in the baseline, blue ones faster.
  void setBaseline(prof::Trace trace, const QString &name);
  void clearBaseline();

  /// Restricts the flame graph and op table to [beginNs, endNs) (what a
  /// shift-drag on the timeline does); clearRange shows the whole trace.
  void selectRange(qint64 beginNs, qint64 endNs);
  void clearRange();
  /// Restricts the aggregates to event kinds (Selection::bit mask).
  void setKindMask(uint32_t mask);
  void setSearchText(const QString &text);
  /// Draws the call tree as an icicle (root on top) or a flame graph.
  void setIcicle(bool on);
  /// Diff mode: frame widths from the baseline's times instead of the
  /// current run's (frames the current run lost become visible).
  void setBaselineWidths(bool on);

  std::shared_ptr<const Profile> profile() const { return current; }
  std::shared_ptr<const Profile> baseline() const { return base; }
  bool isBusy() const { return pending > 0; }
  /// The selection the flame graph and op table show now.
  const prof::Selection &selection() const { return shown; }
  /// Latency heat per "file:line:col" of the shown selection, 0..1 (for the
  /// IR graph overlay; see LatencyHeat.h for the raw times).
  const QHash<QString, double> &heat() const { return heatMap; }
  /// The same as an index to look IR ops up by file, line and column.
  const LatencyHeatIndex &heatIndex() const { return heatLookup; }
  /// The error shown for the last failed load, empty when none.
  QString errorText() const;

  TimelineView *timeline() const { return timelineView; }
  FlameGraphView *flameGraph() const { return flameView; }
  FlameGraphModel *flameModel() const { return flameTree; }
  OpTableModel *opModel() const { return ops; }
  OpTableProxy *opProxy() const { return opSort; }
  QTableView *opTable() const { return opView; }

signals:
  /// An op, kernel or frame was picked: its "file:line:col" (or
  /// "file:line" for a Python frame; empty when unknown), its IR op id (-1
  /// when unknown) and its name.
  void opActivated(const QString &loc, qint64 opId, const QString &name);
  void traceLoaded(const QString &path);
  void baselineLoaded(const QString &path);
  void loadFailed(const QString &message);
  /// The flame graph, op table and heat now show selection().
  void aggregatesUpdated();
  void heatChanged(const QHash<QString, double> &heat);

private:
  void buildUi();
  void loadAsync(const QString &path, bool asBaseline);
  void analyzeAsync(prof::Trace trace, const QString &name, bool asBaseline);
  void finishLoad(const ProfileLoad &load, int generation, bool asBaseline);
  void reaggregate();
  void applyAggregates(const Aggregates &currentAgg,
                       const std::shared_ptr<const Aggregates> &baselineAgg);
  void showError(const QString &message);
  void fitPanes();
  void rebuildFlameTree();
  void updateInfo();
  void updateSearchInfo();
  void activateOpRow(const QModelIndex &proxyIndex);
  void activateEvent(qint64 index);
  void activateFrame(quint32 node);

  std::shared_ptr<const Profile> current, base;
  prof::Selection wanted, shown;
  QHash<QString, double> heatMap;
  LatencyHeatIndex heatLookup;
  prof::CallTree shownTree;
  std::shared_ptr<prof::CallTree> shownBaselineTree;
  bool baselineWidths = false;
  int loadGeneration = 0, baselineGeneration = 0, aggregateGeneration = 0;
  int pending = 0;

  TimelineView *timelineView = nullptr;
  FlameGraphView *flameView = nullptr;
  FlameGraphModel *flameTree = nullptr;
  OpTableModel *ops = nullptr;
  OpTableProxy *opSort = nullptr;
  QTableView *opView = nullptr;
  QTreeView *treeView = nullptr;
  QSplitter *split = nullptr, *columns = nullptr, *flameColumn = nullptr;
  QLineEdit *search = nullptr;
  QLabel *errorBanner = nullptr;
  QLabel *info = nullptr;
  QLabel *flameInfo = nullptr;
  QToolButton *icicleButton = nullptr;
  QToolButton *clearBaselineButton = nullptr;
  QToolButton *kindsButton = nullptr;
  QToolButton *widthButton = nullptr;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_PROFILERPAGE_H
