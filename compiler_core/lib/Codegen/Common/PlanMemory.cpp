//===- PlanMemory.cpp - The cuvil-plan-memory pass ------------------------===//
//
// Static memory planning: intervals of buffer liveness over the top-level
// op order of a function, packed first-fit into one arena (or, without
// views, buffers sharing earlier allocations of their type).
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"
#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_PLANMEMORY
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

constexpr int64_t kAlignment = 64;

struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes = 0;
  unsigned start = 0, end = 0; // top-level op indices, inclusive
  int64_t offset = 0;
  SmallVector<Operation *> deallocs;
};

int64_t alignUp(int64_t v) {
  return (v + kAlignment - 1) / kAlignment * kAlignment;
}

/// The ancestor of `op` in `block`.
Operation *topLevel(Operation *op, Block *block) {
  while (op && op->getBlock() != block)
    op = op->getParentOp();
  return op;
}

/// Follows `value` through view-like ops; fills the last top-level use and
/// the deallocations. False when the buffer escapes or is used in a way the
/// plan cannot see through.
bool collectUses(Value value, Block *block,
                 const DenseMap<Operation *, unsigned> &index, Buffer &buffer,
                 bool isRoot) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<func::ReturnOp, func::CallOp, RegionBranchTerminatorOpInterface>(
            user))
      return false;
    if (isa<RegionBranchOpInterface>(user) &&
        llvm::any_of(user->getResults(),
                     [](Value r) { return isa<MemRefType>(r.getType()); }))
      return false;
    Operation *top = topLevel(user, block);
    if (!top)
      return false;
    // Deallocations sit at the end of the block, not at the last use: they
    // do not extend the live range (the plan replaces them).
    if (isa<memref::DeallocOp>(user)) {
      if (!isRoot)
        return false;
      buffer.deallocs.push_back(user);
      continue;
    }
    buffer.end = std::max(buffer.end, index.lookup(top));
    if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
      if (view.getViewSource() == value &&
          !collectUses(user->getResult(0), block, index, buffer, false))
        return false;
      continue;
    }
    // Any other user that returns a memref may alias it in unknown ways.
    if (llvm::any_of(user->getResults(),
                     [](Value r) { return isa<MemRefType>(r.getType()); }))
      return false;
  }
  return true;
}

/// The top-level buffers of `block` the plan can see through, in order.
SmallVector<Buffer> plannableBuffers(Block *block) {
  DenseMap<Operation *, unsigned> index;
  unsigned position = 0;
  for (Operation &op : *block)
    index[&op] = position++;
  SmallVector<Buffer> buffers;
  for (Operation &op : *block) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc)
      continue;
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        type.getMemorySpace() || !type.getElementType().isIntOrFloat())
      continue;
    Buffer buffer;
    buffer.alloc = alloc;
    buffer.bytes =
        alignUp(type.getNumElements() *
                std::max<int64_t>(1, type.getElementTypeBitWidth() / 8));
    buffer.start = buffer.end = index[alloc];
    if (collectUses(alloc.getResult(), block, index, buffer, true))
      buffers.push_back(std::move(buffer));
  }
  return buffers;
}

/// Packs the buffers first-fit, in allocation order, against those still
/// live; sets their offsets and returns the arena's size.
int64_t packFirstFit(MutableArrayRef<Buffer> buffers) {
  int64_t peak = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    SmallVector<std::pair<int64_t, int64_t>> busy;
    for (size_t j = 0; j < i; ++j)
      if (buffers[j].end >= buffers[i].start)
        busy.push_back(
            {buffers[j].offset, buffers[j].offset + buffers[j].bytes});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [lo, hi] : busy) {
      if (offset + buffers[i].bytes <= lo)
        break;
      offset = std::max(offset, hi);
    }
    buffers[i].offset = offset;
    peak = std::max(peak, offset + buffers[i].bytes);
  }
  return peak;
}

/// One arena of bytes; every buffer a `memref.view` at its offset.
int64_t placeInArena(MutableArrayRef<Buffer> buffers, Block *block,
                     Location loc) {
  int64_t peak = packFirstFit(buffers);
  OpBuilder builder(block, block->begin());
  auto arenaType = MemRefType::get({peak}, builder.getI8Type());
  Value arena = builder.create<memref::AllocOp>(
      loc, arenaType, builder.getI64IntegerAttr(kAlignment));
  for (Buffer &b : buffers) {
    builder.setInsertionPoint(b.alloc);
    Value offset =
        builder.create<arith::ConstantIndexOp>(b.alloc.getLoc(), b.offset);
    Value view = builder.create<memref::ViewOp>(
        b.alloc.getLoc(), b.alloc.getType(), arena, offset, ValueRange{});
    b.alloc.replaceAllUsesWith(view);
    for (Operation *dealloc : b.deallocs)
      dealloc->erase();
    b.alloc.erase();
  }
  builder.setInsertionPoint(block->getTerminator());
  builder.create<memref::DeallocOp>(loc, arena);
  return peak;
}

/// No views: a buffer takes over an earlier allocation of the same type
/// whose users are all done, which is then freed at the end of the block.
int64_t shareSameTypes(MutableArrayRef<Buffer> buffers, Block *block) {
  struct Slot {
    memref::AllocOp alloc;
    unsigned end;
    int64_t bytes;
  };
  SmallVector<Slot> slots;
  OpBuilder builder(block->getTerminator());
  for (Buffer &b : buffers) {
    for (Operation *dealloc : b.deallocs)
      dealloc->erase();
    Slot *free = nullptr;
    for (Slot &slot : slots)
      if (slot.alloc.getType() == b.alloc.getType() && slot.end < b.start) {
        free = &slot;
        break;
      }
    if (!free) {
      slots.push_back({b.alloc, b.end, b.bytes});
      builder.create<memref::DeallocOp>(b.alloc.getLoc(), b.alloc);
      continue;
    }
    free->end = b.end;
    b.alloc.replaceAllUsesWith(free->alloc.getResult());
    b.alloc.erase();
  }
  int64_t peak = 0;
  for (const Slot &slot : slots)
    peak += slot.bytes;
  return peak;
}

struct PlanMemoryPass : public cuvil::impl::PlanMemoryBase<PlanMemoryPass> {
  using PlanMemoryBase::PlanMemoryBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isDeclaration())
      return;
    Block *block = &func.getBody().front();
    SmallVector<Buffer> buffers = plannableBuffers(block);
    int64_t unplanned = 0;
    for (const Buffer &b : buffers)
      unplanned += b.bytes;
    // With fewer than two there is nothing to share: the plan is the
    // buffers as they are.
    int64_t peak = buffers.size() < 2 ? unplanned
                   : views ? placeInArena(buffers, block, func.getLoc())
                           : shareSameTypes(buffers, block);
    Builder attrs(func.getContext());
    func->setAttr(
        mlir::cuvil::CuvilDialect::PlannedPeakBytesAttrHelper::getNameStr(),
        attrs.getI64IntegerAttr(peak));
    func->setAttr(
        mlir::cuvil::CuvilDialect::UnplannedBytesAttrHelper::getNameStr(),
        attrs.getI64IntegerAttr(unplanned));
  }
};
} // namespace
