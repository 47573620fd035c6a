//===- TagKernels.cpp - The cuvil-tag-kernels pass ------------------------===//
//
// Names kernels by what their linalg ops compute, keyed by location, before
// scheduling turns them into anonymous loops.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"
#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_TAGKERNELS
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {
/// "linalg.matmul", or "linalg.generic(addf,erf)" listing the payload's ops.
std::string describe(linalg::LinalgOp op) {
  std::string name = op->getName().getStringRef().str();
  if (!isa<linalg::GenericOp>(op.getOperation()))
    return name;
  llvm::SetVector<StringRef> payload;
  for (Operation &inner : op->getRegion(0).front())
    if (!isa<linalg::YieldOp>(inner))
      payload.insert(inner.getName().stripDialect());
  std::string text = name + "(";
  for (auto [i, opName] : llvm::enumerate(payload))
    text += (i ? "," : "") + opName.str();
  return text + ")";
}

struct TagKernelsPass : public cuvil::impl::TagKernelsBase<TagKernelsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    llvm::MapVector<Location, std::string> names;
    func.walk([&](linalg::LinalgOp op) {
      std::string &name = names[op->getLoc()];
      std::string part = describe(op);
      if (name.empty())
        name = part;
      else if (StringRef(name).find(part) == StringRef::npos)
        name += " + " + part;
    });
    if (names.empty())
      return markAllAnalysesPreserved();
    Builder b(&getContext());
    SmallVector<Attribute> entries;
    for (auto &[loc, name] : names)
      entries.push_back(b.getArrayAttr({loc, b.getStringAttr(name)}));
    func->setAttr(
        mlir::cuvil::CuvilDialect::KernelNamesAttrHelper::getNameStr(),
        b.getArrayAttr(entries));
  }
};
} // namespace
