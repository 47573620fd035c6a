//===- IRSession.h - State shared by the IR handles of one pass run ------===//
#ifndef CUVIL_LIB_DRIVER_IRSESSION_H
#define CUVIL_LIB_DRIVER_IRSESSION_H

#include "DriverSupport.h"

#include "cuvil/Driver/IRView.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"

namespace cuvil {

/// Lives as long as any handle; `active` ends when the pass returns.
struct IRSession {
  explicit IRSession(mlir::Operation *root, std::string passName)
      : root(root), passName(std::move(passName)) {}
  mlir::Operation *root;
  std::string passName;
  bool active = true;
  llvm::DenseSet<mlir::Operation *> erased;
};

OpRef makeOpRef(std::shared_ptr<IRSession> session, void *op);
ValueRef makeValueRef(std::shared_ptr<IRSession> session, void *value);

} // namespace cuvil

#endif // CUVIL_LIB_DRIVER_IRSESSION_H
