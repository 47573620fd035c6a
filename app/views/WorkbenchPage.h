//===- WorkbenchPage.h - One page of the Workbench's window -----*- C++ -*-===//
//
// The main window is a shell (menus, file opening, the worker, console,
// status bar, settings) around pages, one tab each, as in KDAB Hotspot. A
// page owns its widgets and the state that links them; it talks to the rest
// of the Workbench only through the WorkbenchContext. To add a page, write
// one WorkbenchPage subclass and add one line to workbenchPages().
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_WORKBENCHPAGE_H
#define CUVIL_WORKBENCH_WORKBENCHPAGE_H

#include <QList>
#include <QWidget>

#include <functional>

class QAction;
class QMenu;
class QMenuBar;
class QSettings;

namespace cuvil::workbench {

class WorkbenchContext;

/// The shell's menus, for pages to add their actions to. A page's own menu
/// goes on `bar` (the shell adds View after every page's menus).
struct WorkbenchMenus {
  QMenuBar *bar = nullptr;
  QMenu *file = nullptr;
  QMenu *exportMenu = nullptr; ///< File > Export
  QMenu *run = nullptr;
};

class WorkbenchPage : public QWidget {
  Q_OBJECT
public:
  WorkbenchPage(WorkbenchContext &context, QWidget *parent)
      : QWidget(parent), context(context) {}

  /// Stable name: the page's settings group and what showPage() takes,
  /// e.g. "compile".
  virtual QString pageId() const = 0;
  /// The tab's title.
  virtual QString title() const = 0;
  /// Shown beside the other pages, in a dock of the window, instead of a tab
  /// of its own (the lessons' text next to the views they act on).
  virtual bool sidePanel() const { return false; }
  /// Adds the page's actions to the shell's menus (called once).
  virtual void addMenuActions(const WorkbenchMenus &menus) { (void)menus; }
  /// Actions for the View menu, e.g. the toggles of the page's docks.
  virtual QList<QAction *> viewActions() const { return {}; }
  /// The page's layout, in `settings`' group for the page.
  virtual void saveLayout(QSettings &settings) const { (void)settings; }
  virtual void restoreLayout(QSettings &settings) { (void)settings; }

protected:
  WorkbenchContext &context;
};

using WorkbenchPageFactory =
    std::function<WorkbenchPage *(WorkbenchContext &, QWidget *parent)>;

/// Every page, in tab order (WorkbenchPage.cpp).
QList<WorkbenchPageFactory> workbenchPages();

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_WORKBENCHPAGE_H
