//===- MaterializeResults.cpp - The cuvil-materialize-results pass --------===//
//
// Makes each memref result a distinct fresh allocation, the form in which
// results can become out-params without copies or aliasing.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CPUMATERIALIZERESULTS
#include "cuvil/Target/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {
struct CpuMaterializeResultsPass
    : public cuvil::impl::CpuMaterializeResultsBase<CpuMaterializeResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 4> seen;
      OpBuilder builder(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        auto type = dyn_cast<MemRefType>(value.getType());
        if (!type)
          continue;
        bool fresh = value.getDefiningOp<memref::AllocOp>() &&
                     type.getLayout().isIdentity();
        if (fresh && seen.insert(value).second)
          continue;
        auto identity = MemRefType::get(type.getShape(), type.getElementType());
        Value copy = builder.create<memref::AllocOp>(ret.getLoc(), identity);
        builder.create<memref::CopyOp>(ret.getLoc(), value, copy);
        operand.set(copy);
        seen.insert(copy);
      }
    });
  }
};
} // namespace
