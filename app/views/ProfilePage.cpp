//===- ProfilePage.cpp - The profile of the last compiled run -------------===//

#include "ProfilePage.h"

#include "ProfilerPage.h"
#include "WorkbenchContext.h"

#include <QVBoxLayout>

namespace cuvil::workbench {

ProfilePage::ProfilePage(WorkbenchContext &context, QWidget *parent)
    : WorkbenchPage(context, parent) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  view = new ProfilerPage(this);
  layout->addWidget(view);

  connect(&context.worker(), &WorkerClient::executed, this,
          [this](const RunResult &run) {
            if (run.tracePath.isEmpty())
              return;
            view->openTrace(run.tracePath);
            this->context.showPage(pageId());
          });
  connect(view, &ProfilerPage::aggregatesUpdated, this,
          [this] { this->context.setLatencyHeat(view->heatIndex()); });
  connect(view, &ProfilerPage::opActivated, this,
          [this](const QString &loc, qint64, const QString &) {
            this->context.showLocation(loc);
          });
  connect(view, &ProfilerPage::loadFailed, this, [this](const QString &text) {
    this->context.console(tr("Profile: %1\n").arg(text),
                          WorkbenchContext::Tone::Error);
  });
}

} // namespace cuvil::workbench
