//===- IRSession.h - State shared by the IR handles of one pass run ------===//
#ifndef CUVIL_LIB_RUNTIME_IRSESSION_H
#define CUVIL_LIB_RUNTIME_IRSESSION_H

#include "cuvil/Runtime/IRView.h"

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

namespace detail {
/// The user's "file:line:col" inside a (fused, named, call-site) location.
std::string formatLocation(mlir::Location loc);
} // namespace detail

OpRef makeOpRef(std::shared_ptr<IRSession> session, void *op);
ValueRef makeValueRef(std::shared_ptr<IRSession> session, void *value);

} // namespace cuvil

#endif // CUVIL_LIB_RUNTIME_IRSESSION_H
