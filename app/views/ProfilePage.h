//===- ProfilePage.h - The profile of the last compiled run -----*- C++ -*-===//
//
// Hosts the profiler's ProfilerPage as a Workbench page: Run Compiled
// Function's trace opens here (and the page comes to the front), its
// latency per source line goes to the context for the IR graph's heat, and
// a picked kernel, op or frame asks the context to show its Python line.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_WORKBENCH_PROFILEPAGE_H
#define CUVIL_WORKBENCH_PROFILEPAGE_H

#include "WorkbenchPage.h"

namespace cuvil::workbench {

class ProfilerPage;

class ProfilePage : public WorkbenchPage {
  Q_OBJECT
public:
  ProfilePage(WorkbenchContext &context, QWidget *parent);

  QString pageId() const override { return "profile"; }
  QString title() const override { return tr("Profile"); }

  ProfilerPage *profiler() const { return view; }

private:
  ProfilerPage *view = nullptr;
};

} // namespace cuvil::workbench

#endif // CUVIL_WORKBENCH_PROFILEPAGE_H
