//===- ExpandStridedCopies.cpp - Copies between views as loops ------------===//
//
// cuvil-expand-strided-copies: a memref.copy between memrefs that are not
// both contiguous (a tensor.pad's copy of its source into the padded
// buffer's interior, an insert into a slice) lowers, through
// finalize-memref-to-llvm, to a call of MLIR's generic runtime copy, which
// walks the elements one by one through their descriptors. As a loop nest
// of loads and stores, the innermost loop over unit-stride elements, LLVM
// vectorizes it instead; a short static row contiguous on both sides is
// one vector read and write (LLVM left 56-element rows as 56 scalar
// copies). Contiguous copies stay memref.copy (a memcpy).
//
//===----------------------------------------------------------------------===//

#include "cuvil/Codegen/Common/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

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

/// The longest row copied as one vector.
constexpr int64_t kMaxVectorRow = 256;

/// Whether `type`'s innermost dimension has unit stride.
bool innermostContiguous(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(getStridesAndOffset(type, strides, offset)) &&
         !strides.empty() && strides.back() == 1;
}

/// `copy` as loops over all but the innermost dimension, each row one
/// vector read and write, where that row is static, short and contiguous
/// on both sides; false (and nothing changed) otherwise.
bool expandCopyToVectorRows(memref::CopyOp copy) {
  auto source = cast<MemRefType>(copy.getSource().getType());
  auto target = cast<MemRefType>(copy.getTarget().getType());
  Type element = source.getElementType();
  int64_t row = source.getShape().back();
  if (ShapedType::isDynamic(row) || row > kMaxVectorRow ||
      !element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0 ||
      !innermostContiguous(source) || !innermostContiguous(target))
    return false;
  OpBuilder builder(copy);
  Location loc = copy.getLoc();
  Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
  Value one = builder.create<arith::ConstantIndexOp>(loc, 1);
  SmallVector<Value> lower, upper, steps;
  for (auto [dim, size] : llvm::enumerate(source.getShape().drop_back())) {
    lower.push_back(zero);
    upper.push_back(
        ShapedType::isDynamic(size)
            ? builder.create<memref::DimOp>(loc, copy.getSource(), dim)
                  .getResult()
            : builder.create<arith::ConstantIndexOp>(loc, size).getResult());
    steps.push_back(one);
  }
  auto vectorType = VectorType::get({row}, element);
  scf::buildLoopNest(builder, loc, lower, upper, steps,
                     [&](OpBuilder &b, Location l, ValueRange outer) {
                       SmallVector<Value> at(outer.begin(), outer.end());
                       at.push_back(zero);
                       SmallVector<bool> inBounds = {true};
                       Value value = b.create<vector::TransferReadOp>(
                           l, vectorType, copy.getSource(), at, inBounds);
                       b.create<vector::TransferWriteOp>(
                           l, value, copy.getTarget(), at, inBounds);
                     });
  copy.erase();
  return true;
}

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
      if (!expandCopyToVectorRows(copy))
        cuvil::expandCopyToLoops(copy);
  }
};

} // namespace
