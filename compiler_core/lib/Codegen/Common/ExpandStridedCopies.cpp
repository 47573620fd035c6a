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

namespace mlir::cuvil {
#define GEN_PASS_DEF_EXPANDSTRIDEDCOPIES
#include "cuvil/Codegen/Common/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// Loops from 0 by 1 over the first `dims` dimensions of `source` (sizes
/// read with memref.dim where dynamic), and the index 0 they start from.
struct CopyLoops {
  SmallVector<Value> lower, upper, steps;
  Value zero;
};
CopyLoops copyLoops(OpBuilder &b, Location loc, Value source, unsigned dims) {
  auto type = cast<MemRefType>(source.getType());
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  CopyLoops loops;
  loops.zero = zero;
  for (unsigned dim = 0; dim < dims; ++dim) {
    int64_t size = type.getDimSize(dim);
    loops.lower.push_back(zero);
    loops.upper.push_back(
        ShapedType::isDynamic(size)
            ? b.create<memref::DimOp>(loc, source, dim).getResult()
            : b.create<arith::ConstantIndexOp>(loc, size).getResult());
    loops.steps.push_back(one);
  }
  return loops;
}

} // namespace

void mlir::cuvil::expandCopyToLoops(memref::CopyOp copy) {
  OpBuilder builder(copy);
  Location loc = copy.getLoc();
  Value source = copy.getSource();
  CopyLoops loops = copyLoops(builder, loc, source,
                              cast<MemRefType>(source.getType()).getRank());
  scf::buildLoopNest(
      builder, loc, loops.lower, loops.upper, loops.steps,
      [&](OpBuilder &b, Location l, ValueRange indices) {
        Value value = b.create<memref::LoadOp>(l, source, indices);
        b.create<memref::StoreOp>(l, value, copy.getTarget(), indices);
      });
  copy.erase();
}

namespace {

/// The longest row copied as vectors.
constexpr int64_t kMaxVectorRow = 256;

/// Rows of more than four pieces of this many bytes that are whole pieces
/// are copied a piece at a time in a loop. LLVM costs a load or store of
/// any vector as one instruction when it decides what to unroll, so the
/// rows' loops of a 7 x 7 x 256 copy, one `<256 x float>` each, came out as
/// a single block of 1,568 loads and stores that its instruction scheduler
/// took a quarter of a second over.
constexpr int64_t kRowPieceBytes = 64;

/// Whether `type`'s innermost dimension has unit stride.
bool innermostContiguous(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(getStridesAndOffset(type, strides, offset)) &&
         !strides.empty() && strides.back() == 1;
}

/// Elements from which a copy's rows are split across threads (a padded
/// 64 x 56 x 56 image's interior: 200 K elements, ~30 us on one core).
constexpr int64_t kThreadedCopy = int64_t(1) << 15;

/// The outer dimension a static copy of `type` is split across threads by:
/// the first one longer than 1, where the copy has kThreadedCopy elements
/// or more and rows besides; none otherwise.
std::optional<unsigned> threadedDim(MemRefType type) {
  if (!type.hasStaticShape() || type.getNumElements() < kThreadedCopy)
    return std::nullopt;
  for (unsigned d = 0; d + 1 < type.getRank(); ++d)
    if (type.getDimSize(d) > 1)
      return d;
  return std::nullopt;
}

/// `copy` as loops over all but the innermost dimension, each row one
/// vector read and write, where that row is static, short and contiguous
/// on both sides; false (and nothing changed) otherwise. With `threads`, a
/// large static copy outside any parallel loop splits its rows across
/// threads (an scf.parallel over its first dimension longer than 1).
bool expandCopyToVectorRows(memref::CopyOp copy, bool threads) {
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
  CopyLoops loops =
      copyLoops(builder, loc, copy.getSource(), source.getRank() - 1);
  Value zero = loops.zero;
  int64_t piece = kRowPieceBytes * 8 / element.getIntOrFloatBitWidth();
  if (row <= 4 * piece || row % piece != 0)
    piece = row;
  auto vectorType = VectorType::get({piece}, element);
  auto rows = [&](OpBuilder &b, Location l, ValueRange outer) {
    auto copyAt = [&](OpBuilder &pb, Location pl, Value column) {
      SmallVector<Value> at(outer.begin(), outer.end());
      at.push_back(column);
      SmallVector<bool> inBounds = {true};
      Value value = pb.create<vector::TransferReadOp>(
          pl, vectorType, copy.getSource(), at, inBounds);
      pb.create<vector::TransferWriteOp>(pl, value, copy.getTarget(), at,
                                         inBounds);
    };
    if (piece == row)
      return copyAt(b, l, zero);
    Value end = b.create<arith::ConstantIndexOp>(l, row);
    Value step = b.create<arith::ConstantIndexOp>(l, piece);
    b.create<scf::ForOp>(
        l, zero, end, step, std::nullopt,
        [&](OpBuilder &pb, Location pl, Value column, ValueRange) {
          copyAt(pb, pl, column);
          pb.create<scf::YieldOp>(pl);
        });
  };
  std::optional<unsigned> split;
  if (threads && !copy->getParentOfType<scf::ParallelOp>() &&
      !copy->getParentOfType<scf::ForallOp>())
    split = threadedDim(source);
  if (!split) {
    scf::buildLoopNest(builder, loc, loops.lower, loops.upper, loops.steps,
                       rows);
  } else {
    // Dimensions before the split one have size 1: index 0.
    unsigned d = *split;
    auto after = [&](SmallVector<Value> &v) {
      return ArrayRef(v).drop_front(d + 1);
    };
    builder.create<scf::ParallelOp>(
        loc, ValueRange{loops.lower[d]}, ValueRange{loops.upper[d]},
        ValueRange{loops.steps[d]},
        [&](OpBuilder &pb, Location pl, ValueRange task) {
          scf::buildLoopNest(pb, pl, after(loops.lower), after(loops.upper),
                             after(loops.steps),
                             [&](OpBuilder &b, Location l, ValueRange inner) {
                               SmallVector<Value> outer(d, zero);
                               outer.push_back(task.front());
                               outer.append(inner.begin(), inner.end());
                               rows(b, l, outer);
                             });
        });
  }
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
  using ExpandStridedCopiesBase::ExpandStridedCopiesBase;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      auto type = dyn_cast<MemRefType>(copy.getSource().getType());
      if (type && type.getRank() > 0 &&
          !(isContiguous(copy.getSource()) && isContiguous(copy.getTarget())))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies)
      if (!expandCopyToVectorRows(copy, threads))
        cuvil::expandCopyToLoops(copy);
  }
};

} // namespace
