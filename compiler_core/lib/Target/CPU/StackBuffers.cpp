//===- StackBuffers.cpp - The cuvil-cpu-stack-buffers pass ----------------===//
//
// Buffers a loop allocates and frees per iteration become one stack buffer
// per thread. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CPUSTACKBUFFERS
#include "cuvil/Target/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// Whether the buffer `value` (or a view of it) never leaves the code that
/// uses it: not returned, yielded, passed to a call or stored as a value.
bool staysLocal(Value value) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<func::ReturnOp, func::CallOp, RegionBranchTerminatorOpInterface>(
            user))
      return false;
    if (auto store = dyn_cast<memref::StoreOp>(user))
      if (store.getValueToStore() == value)
        return false;
    if (auto view = dyn_cast<ViewLikeOpInterface>(user))
      if (view.getViewSource() == value &&
          !llvm::all_of(user->getResults(), staysLocal))
        return false;
  }
  return true;
}

/// Bytes of a static memref of integers or floats, or nothing.
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * std::max<int64_t>(1, bits / 8);
}

/// Where `alloc`'s stack buffer goes: the innermost enclosing scf.parallel
/// body when those become threads' regions, else the function's entry;
/// nothing when no loop encloses it (a buffer allocated once: the memory
/// plan's).
Block *scopeOf(memref::AllocOp alloc, bool threads) {
  bool inLoop = false;
  for (Operation *op = alloc->getParentOp(); op; op = op->getParentOp()) {
    if (auto parallel = dyn_cast<scf::ParallelOp>(op); parallel && threads)
      return parallel.getBody();
    if (auto function = dyn_cast<FunctionOpInterface>(op))
      return inLoop ? &function.getFunctionBody().front() : nullptr;
    inLoop |= isa<LoopLikeOpInterface>(op);
  }
  return nullptr;
}

struct CpuStackBuffersPass
    : public cuvil::impl::CpuStackBuffersBase<CpuStackBuffersPass> {
  using CpuStackBuffersBase::CpuStackBuffersBase;

  void runOnOperation() override {
    llvm::MapVector<Block *, int64_t> used; // stack bytes per scope
    SmallVector<std::pair<memref::AllocOp, Block *>> moves;
    getOperation().walk([&](memref::AllocOp alloc) {
      std::optional<int64_t> bytes = staticBytes(alloc.getType());
      Block *scope = scopeOf(alloc, threads);
      if (!bytes || !scope || !staysLocal(alloc))
        return;
      // Freed in its own block, the only frees: the buffer is dead at the
      // end of each iteration and the next one may reuse it.
      for (Operation *user : alloc->getUsers())
        if (isa<memref::DeallocOp>(user) &&
            user->getBlock() != alloc->getBlock())
          return;
      int64_t &total = used[scope];
      if (total + *bytes > maxBytes)
        return;
      total += *bytes;
      moves.push_back({alloc, scope});
    });
    // In program order at the start of each scope.
    llvm::DenseMap<Block *, Operation *> last;
    for (auto [alloc, scope] : moves) {
      Operation *previous = last.lookup(scope);
      OpBuilder b = previous ? OpBuilder(scope, ++previous->getIterator())
                             : OpBuilder::atBlockBegin(scope);
      auto alloca = b.create<memref::AllocaOp>(alloc.getLoc(), alloc.getType(),
                                               alloc.getAlignmentAttr());
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      last[scope] = alloca;
      alloc.replaceAllUsesWith(alloca.getResult());
      alloc->erase();
    }
  }
};

} // namespace
