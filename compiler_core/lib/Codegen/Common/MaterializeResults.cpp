//===- MaterializeResults.cpp - The cuvil-materialize-results pass --------===//
//
// Makes each memref result a distinct fresh allocation, the form in which
// results can become out-params without copies or aliasing.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_MATERIALIZERESULTS
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {
/// Whether `value` is `buffer`, possibly passed through scf.for loops that
/// update it in place (each iteration yields its own iteration buffer).
bool isSameBuffer(Value value, Value buffer) {
  if (value == buffer)
    return true;
  auto result = dyn_cast<OpResult>(value);
  auto loop = result ? dyn_cast<scf::ForOp>(result.getOwner()) : nullptr;
  if (!loop)
    return false;
  unsigned i = result.getResultNumber();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  return isSameBuffer(loop.getInitArgs()[i], buffer) &&
         isSameBuffer(yield.getOperand(i), loop.getRegionIterArgs()[i]);
}

/// The fresh allocation `value` is, directly or through in-place loops.
Value freshAllocation(Value value) {
  if (value.getDefiningOp<memref::AllocOp>())
    return value;
  auto result = dyn_cast<OpResult>(value);
  auto loop = result ? dyn_cast<scf::ForOp>(result.getOwner()) : nullptr;
  if (!loop)
    return {};
  Value alloc = freshAllocation(loop.getInitArgs()[result.getResultNumber()]);
  return alloc && isSameBuffer(value, alloc) ? alloc : Value();
}

struct MaterializeResultsPass
    : public cuvil::impl::MaterializeResultsBase<MaterializeResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 4> seen;
      OpBuilder builder(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        auto type = dyn_cast<MemRefType>(value.getType());
        if (!type)
          continue;
        // A loop that fills an allocation in place returns that allocation:
        // return it directly, so it can become the out-param.
        Value alloc =
            type.getLayout().isIdentity() ? freshAllocation(value) : Value();
        if (alloc && seen.insert(alloc).second) {
          operand.set(alloc);
          continue;
        }
        auto identity = MemRefType::get(type.getShape(), type.getElementType());
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            sizes.push_back(
                builder.create<memref::DimOp>(ret.getLoc(), value, d));
        Value copy =
            builder.create<memref::AllocOp>(ret.getLoc(), identity, sizes);
        builder.create<memref::CopyOp>(ret.getLoc(), value, copy);
        operand.set(copy);
        seen.insert(copy);
      }
    });
  }
};
} // namespace
