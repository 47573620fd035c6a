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
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

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

/// A private uninitialized global of `type` in the module, named uniquely.
memref::GlobalOp addGlobal(Location loc, MemRefType type, IntegerAttr alignment,
                           SymbolTable &symbols) {
  auto module = cast<ModuleOp>(symbols.getOp());
  OpBuilder builder(module.getBodyRegion());
  auto global = builder.create<memref::GlobalOp>(
      loc, "cuvil_buffer", builder.getStringAttr("private"), type,
      builder.getUnitAttr(), /*constant=*/false, alignment);
  symbols.insert(global); // renames it to a unique name
  return global;
}

/// The bytes `alloc` needs at most: its sizes' constant upper bounds (a
/// remainder tile's `affine.min` of a static size), or failure.
FailureOr<int64_t> boundedBytes(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  int64_t elements = 1;
  unsigned dynamic = 0;
  for (int64_t size : type.getShape()) {
    if (!ShapedType::isDynamic(size)) {
      elements *= size;
      continue;
    }
    FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::UB, alloc.getDynamicSizes()[dynamic++],
        /*stopCondition=*/nullptr, /*closedUB=*/true);
    if (failed(bound) || *bound < 0)
      return failure();
    elements *= *bound;
  }
  int64_t bits = type.getElementTypeBitWidth();
  return elements * std::max<int64_t>(1, (bits + 7) / 8);
}

/// `alloc` as a private uninitialized global of the module (aligned as the
/// allocation asked when `keepAlignment`); with `boundedViews`, a dynamic
/// one whose sizes are bounded becomes a byte global of the bound viewed at
/// its sizes. Failure with the error emitted otherwise.
LogicalResult makeStatic(memref::AllocOp alloc, SymbolTable &symbols,
                         StringRef target, bool keepAlignment,
                         bool boundedViews) {
  MemRefType type = alloc.getType();
  if (!type.getLayout().isIdentity())
    return staticShapesOnly(alloc, target, "buffer", type);
  IntegerAttr alignment =
      keepAlignment ? alloc.getAlignmentAttr() : IntegerAttr();
  OpBuilder builder(alloc);
  Location loc = alloc.getLoc();
  Value storage;
  if (type.hasStaticShape()) {
    memref::GlobalOp global = addGlobal(loc, type, alignment, symbols);
    storage =
        builder.create<memref::GetGlobalOp>(loc, type, global.getSymName());
  } else {
    FailureOr<int64_t> bytes =
        boundedViews ? boundedBytes(alloc) : FailureOr<int64_t>(failure());
    if (failed(bytes))
      return staticShapesOnly(alloc, target, "buffer", type);
    auto bytesType = MemRefType::get({*bytes}, builder.getI8Type());
    memref::GlobalOp global = addGlobal(
        loc, bytesType, alignment ? alignment : builder.getI64IntegerAttr(64),
        symbols);
    Value raw = builder.create<memref::GetGlobalOp>(loc, bytesType,
                                                    global.getSymName());
    Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
    storage = builder.create<memref::ViewOp>(loc, type, raw, zero,
                                             alloc.getDynamicSizes());
  }
  alloc.replaceAllUsesWith(storage);
  alloc.erase();
  return success();
}

/// `copy` as a loop nest of loads and stores.
LogicalResult expandCopy(memref::CopyOp copy, StringRef target) {
  auto source = cast<MemRefType>(copy.getSource().getType());
  if (!source.hasStaticShape())
    return staticShapesOnly(copy, target, "copy", source);
  cuvil::expandCopyToLoops(copy);
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
      ok &= succeeded(
          makeStatic(alloc, symbols, target, keepAlignment, boundedViews));
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
