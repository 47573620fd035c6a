//===- WorkbenchPage.cpp - The pages of the Workbench, in tab order -------===//

#include "WorkbenchPage.h"

#include "LessonsPage.h"
#include "PassExplorerPage.h"
#include "ProfilePage.h"

namespace cuvil::workbench {
namespace {

template <class Page> WorkbenchPageFactory page() {
  return [](WorkbenchContext &context, QWidget *parent) -> WorkbenchPage * {
    return new Page(context, parent);
  };
}

} // namespace

QList<WorkbenchPageFactory> workbenchPages() {
  return {
      page<PassExplorerPage>(),
      page<ProfilePage>(),
      page<LessonsPage>(),
  };
}

} // namespace cuvil::workbench
