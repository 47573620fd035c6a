//===- ExpandStridedCopies.cpp - Copies between views as loops ------------===//
//
// cuvil-expand-strided-copies: a memref.copy between memrefs that are not
// both contiguous (a tensor.pad's copy of its source into the padded
// buffer's interior, an insert into a slice) lowers, through
// finalize-memref-to-llvm, to a call of MLIR's generic runtime copy, which
// walks the elements one by one through their descriptors. As a loop nest
// of loads and stores, the innermost loop over unit-stride elements, LLVM
// vectorizes it instead. Contiguous copies stay memref.copy (a memcpy).
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_EXPANDSTRIDEDCOPIES
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

void mlir::cuvil::expandCopyToLoops(memref::CopyOp copy) {
  OpBuilder builder(copy);
  Location loc = copy.getLoc();
  Value source = copy.getSource();
  auto type = cast<MemRefType>(source.getType());
  SmallVector<Value> lower, upper, steps;
  Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
  Value one = builder.create<arith::ConstantIndexOp>(loc, 1);
  for (auto [dim, size] : llvm::enumerate(type.getShape())) {
    lower.push_back(zero);
    upper.push_back(
        ShapedType::isDynamic(size)
            ? builder.create<memref::DimOp>(loc, source, dim).getResult()
            : builder.create<arith::ConstantIndexOp>(loc, size).getResult());
    steps.push_back(one);
  }
  scf::buildLoopNest(
      builder, loc, lower, upper, steps,
      [&](OpBuilder &b, Location l, ValueRange indices) {
        Value value = b.create<memref::LoadOp>(l, source, indices);
        b.create<memref::StoreOp>(l, value, copy.getTarget(), indices);
      });
  copy.erase();
}

namespace {

/// Whether `value` is a memref whose elements lie one after another in
/// row-major order (what a memcpy copies).
bool isContiguous(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && (type.getLayout().isIdentity() ||
                  memref::isStaticShapeAndContiguousRowMajor(type));
}

struct ExpandStridedCopiesPass
    : cuvil::impl::ExpandStridedCopiesBase<ExpandStridedCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      auto type = dyn_cast<MemRefType>(copy.getSource().getType());
      if (type && type.getRank() > 0 &&
          !(isContiguous(copy.getSource()) && isContiguous(copy.getTarget())))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies)
      cuvil::expandCopyToLoops(copy);
  }
};

} // namespace
