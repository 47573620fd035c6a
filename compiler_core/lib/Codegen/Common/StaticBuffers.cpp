//===- StaticBuffers.cpp - Static storage instead of a heap ---------------===//
//
// cuvil-static-buffers: for targets whose code has no allocator (C, wasm),
// every static memref.alloc becomes a private module global and every
// memref.copy a loop nest, so nothing of the generated code calls malloc,
// free or a runtime's copy function.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_STATICBUFFERS
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// The error for a buffer or copy of a shape static storage cannot hold.
InFlightDiagnostic staticShapesOnly(Operation *op, StringRef target,
                                    StringRef what, Type type) {
  return op->emitError() << "the " << target
                         << " target compiles static shapes only, and this "
                         << what << " has type " << type
                         << "; fix: compile with static input shapes, or use "
                            "target='cpu' for dynamic ones";
}

/// `alloc` as a private uninitialized global of the module (aligned as the
/// allocation asked when `keepAlignment`), or failure with the error
/// emitted.
LogicalResult makeStatic(memref::AllocOp alloc, SymbolTable &symbols,
                         StringRef target, bool keepAlignment) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return staticShapesOnly(alloc, target, "buffer", type);
  auto module = cast<ModuleOp>(symbols.getOp());
  OpBuilder builder(module.getBodyRegion());
  IntegerAttr alignment =
      keepAlignment ? alloc.getAlignmentAttr() : IntegerAttr();
  auto global = builder.create<memref::GlobalOp>(
      alloc.getLoc(), "cuvil_buffer", builder.getStringAttr("private"), type,
      builder.getUnitAttr(), /*constant=*/false, alignment);
  symbols.insert(global); // renames it to a unique name
  builder.setInsertionPoint(alloc);
  Value storage = builder.create<memref::GetGlobalOp>(alloc.getLoc(), type,
                                                      global.getSymName());
  alloc.replaceAllUsesWith(storage);
  alloc.erase();
  return success();
}

/// `copy` as a loop nest of loads and stores.
LogicalResult expandCopy(memref::CopyOp copy, StringRef target) {
  auto source = cast<MemRefType>(copy.getSource().getType());
  if (!source.hasStaticShape())
    return staticShapesOnly(copy, target, "copy", source);
  OpBuilder builder(copy);
  Location loc = copy.getLoc();
  SmallVector<Value> lower, upper, steps;
  Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
  Value one = builder.create<arith::ConstantIndexOp>(loc, 1);
  for (int64_t size : source.getShape()) {
    lower.push_back(zero);
    upper.push_back(builder.create<arith::ConstantIndexOp>(loc, size));
    steps.push_back(one);
  }
  scf::buildLoopNest(
      builder, loc, lower, upper, steps,
      [&](OpBuilder &b, Location l, ValueRange indices) {
        Value value = b.create<memref::LoadOp>(l, copy.getSource(), indices);
        b.create<memref::StoreOp>(l, value, copy.getTarget(), indices);
      });
  copy.erase();
  return success();
}

struct StaticBuffersPass : cuvil::impl::StaticBuffersBase<StaticBuffersPass> {
  using StaticBuffersBase::StaticBuffersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<memref::AllocOp> allocs;
    SmallVector<memref::CopyOp> copies;
    SmallVector<memref::DeallocOp> deallocs;
    module.walk([&](Operation *op) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        allocs.push_back(alloc);
      else if (auto copy = dyn_cast<memref::CopyOp>(op))
        copies.push_back(copy);
      else if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
        deallocs.push_back(dealloc);
      else if (auto global = dyn_cast<memref::GlobalOp>(op);
               global && !keepAlignment)
        global.removeAlignmentAttr();
    });
    bool ok = true;
    for (memref::AllocOp alloc : allocs)
      ok &= succeeded(makeStatic(alloc, symbols, target, keepAlignment));
    for (memref::CopyOp copy : copies)
      ok &= succeeded(expandCopy(copy, target));
    if (!ok)
      return signalPassFailure();
    // Every allocation is static storage now, so every deallocation frees
    // one (directly or through a view or a selected owner): none has work.
    for (memref::DeallocOp dealloc : deallocs)
      dealloc.erase();
  }
};

} // namespace
