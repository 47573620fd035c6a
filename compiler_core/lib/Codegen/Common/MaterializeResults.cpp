//===- MaterializeResults.cpp - The cuvil-materialize-results pass --------===//
//
// Makes each memref result a distinct fresh allocation, the form in which
// results can become out-params without copies or aliasing.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// The fresh allocation `value` reshapes back to its own type (a collapse
/// of a result's allocation for a kernel on fewer dimensions, then expanded
/// again), or null.
Value identicallyReshapedAllocation(Value value) {
  Value source = value;
  while (isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(
      source.getDefiningOp()))
    source = source.getDefiningOp()->getOperand(0);
  Value alloc = source == value ? Value() : freshAllocation(source);
  return alloc && alloc.getType() == value.getType() ? alloc : Value();
}

/// A result that reshapes a fresh allocation (a static, contiguous
/// memref.expand_shape or collapse_shape of one: a convolution computed as a
/// GEMM returns its [F, OH*OW] result as [1, F, OH, OW]): the allocation is
/// made in the result's shape instead, its users given the reverse reshape
/// of it, so the result needs no copy. Returns the new allocation; null where
/// the allocation is already `returned`.
Value allocateInResultShape(Value value,
                            const llvm::SmallPtrSetImpl<Value> &returned) {
  Operation *reshape = value.getDefiningOp();
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(
          reshape) ||
      !type || !type.hasStaticShape() || !type.getLayout().isIdentity())
    return {};
  Value alloc = freshAllocation(reshape->getOperand(0));
  auto allocType = alloc ? cast<MemRefType>(alloc.getType()) : MemRefType();
  if (!alloc || returned.contains(alloc) || !allocType.hasStaticShape() ||
      !allocType.getLayout().isIdentity())
    return {};
  auto allocOp = alloc.getDefiningOp<memref::AllocOp>();
  OpBuilder b(allocOp);
  Location loc = allocOp.getLoc();
  Value fresh =
      b.create<memref::AllocOp>(loc, type, allocOp.getAlignmentAttr());
  Value view;
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(reshape))
    view = b.create<memref::CollapseShapeOp>(loc, fresh,
                                             expand.getReassociationIndices());
  else
    view = b.create<memref::ExpandShapeOp>(
        loc, allocType.getShape(), fresh,
        cast<memref::CollapseShapeOp>(reshape).getReassociationIndices());
  if (view.getType() != allocType) {
    view.getDefiningOp()->erase();
    fresh.getDefiningOp()->erase();
    return {};
  }
  alloc.replaceAllUsesWith(view);
  allocOp.erase();
  return fresh;
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
        if (!alloc) {
          Operation *reshape = value.getDefiningOp();
          Value fresh = identicallyReshapedAllocation(value);
          if (!fresh)
            fresh = allocateInResultShape(value, seen);
          if (fresh && seen.insert(fresh).second) {
            operand.set(fresh);
            if (reshape->use_empty())
              reshape->erase();
            continue;
          }
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
