//===- MainWindow.h - The Workbench's shell of pages -----------*- C++ -*-===//
//
// The shell keeps what is not about one page: the menus and toolbar, file
// opening (dialog, recent files, drag and drop), the worker that runs the
// file, the console, the status bar and the saved layout. Everything else is
// a WorkbenchPage, one tab each (WorkbenchPage.cpp lists them).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_MAINWINDOW_H
#define CUVIL_WORKBENCH_MAINWINDOW_H

#include "WorkbenchContext.h"
#include "WorkbenchPage.h"

#include <QComboBox>
#include <QMainWindow>

class QMenu;
class QPlainTextEdit;
class QTabWidget;
class QDockWidget;

namespace cuvil::workbench {

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit MainWindow(QWidget *parent = nullptr);
  ~MainWindow() override;

  /// The target box's choice: runs compile every function for `target` ("" =
  /// as each file says).
  void setRunTarget(const QString &target);

  /// The bundled example (resources/examples/mlp.py) when it can be found.
  static QString bundledExample();

  /// Loads the source and runs it in a fresh worker.
  void openFile(const QString &path);
  QString currentFile() const { return context.file(); }

  /// Times the current compilation's code on the recorded inputs (and
  /// profiles it); ends with executedCompiled() or a console error.
  void runCompiled();
  void stopRun();

  /// The pages, in tab order; page<P>() is the one of type P.
  const QList<WorkbenchPage *> &pages() const { return pageList; }
  template <class Page> Page *page() const {
    for (WorkbenchPage *p : pageList)
      if (auto *found = qobject_cast<Page *>(p))
        return found;
    return nullptr;
  }
  WorkbenchPage *currentPage() const;
  /// Brings the page with this id to the front; false when there is none.
  bool showPage(const QString &id);

  WorkbenchContext &workbenchContext() { return context; }
  CompilationListModel &compilationModel() { return context.compilations(); }
  WorkerClient &workerClient() { return context.worker(); }
  int currentCompilation() const { return context.currentCompilation(); }
  QPlainTextEdit *consoleView() const { return console; }

signals:
  void runFinished(bool ok);
  void executedCompiled(const cuvil::workbench::RunResult &result);

protected:
  void closeEvent(QCloseEvent *event) override;
  void dragEnterEvent(QDragEnterEvent *event) override;
  void dropEvent(QDropEvent *event) override;

private:
  // MainWindow.cpp: pages, menus, settings, files.
  void buildPages();
  void buildConsole();
  void buildActions();
  void restoreLayout();
  void updateRecentMenu();
  void updateActions();
  void openDialog();
  void appendConsole(const QString &text, const QColor &color = {});
  // MainWindowRun.cpp: the worker's replies, for the console and status.
  void connectWorker();

  WorkbenchContext context;
  QList<WorkbenchPage *> pageList;
  QTabWidget *tabs = nullptr;
  /// The docks of side-panel pages (WorkbenchPage::sidePanel).
  QList<QDockWidget *> sideDocks;
  QPlainTextEdit *console = nullptr;
  QMenu *recentMenu = nullptr;
  QMenu *exportMenu = nullptr;
  QAction *runAction = nullptr;
  QAction *stopAction = nullptr;
  /// The target every function of a run compiles for: "" (each as its file
  /// says) or one the worker reported.
  QComboBox *targetBox = nullptr;
  QAction *executeAction = nullptr;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_MAINWINDOW_H
