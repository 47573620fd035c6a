//===- PackGemmPanels.cpp - The cuvil-cpu-pack-gemm-panels pass -----------===//
//
// A GEMM's register tiles read the right operand's K block one row of their
// width at a time, each row a whole operand row away from the last. This
// pass copies the block into panels of that width laid end to end on the
// stack, once per K step, and points the tiles' reads at them: consecutive,
// aligned rows, whatever the operand's width (unaligned odd widths, widths
// whose rows alias in L1, pages).
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CPUPACKGEMMPANELS
#include "cuvil/Target/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// The largest value `v` takes, when a constant bounds it.
std::optional<int64_t> upperBound(OpFoldResult v) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB, cast<Value>(v), /*stopCondition=*/nullptr,
      /*closedUB=*/true);
  return succeeded(bound) ? std::optional(*bound) : std::nullopt;
}

/// Whether index `v` is always a multiple of `factor`: a constant, an
/// affine.apply whose expression is one, or the induction variable of a
/// loop that starts at one and steps by one.
bool isMultipleOf(OpFoldResult v, int64_t factor) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c % factor == 0;
  Value value = cast<Value>(v);
  if (auto apply = value.getDefiningOp<affine::AffineApplyOp>())
    return apply.getAffineMap().getResult(0).isMultipleOf(factor);
  if (scf::ForOp loop = scf::getForInductionVarOwner(value)) {
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    return step && *step % factor == 0 &&
           isMultipleOf(loop.getLowerBound(), factor);
  }
  return false;
}

/// Whether every use of `view` can read a packed copy instead: vector
/// transfer reads, and subviews of it used so.
bool onlyRead(Value view) {
  return llvm::all_of(view.getUsers(), [&](Operation *user) {
    if (isa<vector::TransferReadOp>(user))
      return true;
    auto sub = dyn_cast<memref::SubViewOp>(user);
    return sub && sub.getSource() == view && onlyRead(sub.getResult());
  });
}

/// A K block of a GEMM's right operand and the register tiles' reads of it.
struct KBlock {
  Operation *home;                     ///< where the block is taken (a loop)
  memref::SubViewOp block;             ///< %b[%k0, %n0] [kc, n] [1, 1]
  SmallVector<memref::SubViewOp> rows; ///< %block[%k, %j] [1, w] [1, 1]
  int64_t width = 0;                   ///< the widest row read: a panel
  int64_t maxDepth = 0, maxCols = 0;   ///< bounds of kc and n
};

/// The most result rows one read of `block` serves: the largest extent of
/// the loops between the block's home and a read that walk neither the
/// read's row (k) nor its column.
int64_t resultRows(const KBlock &b) {
  int64_t rows = 0;
  for (memref::SubViewOp row : b.rows)
    for (Operation *op = row->getParentOp(); op && op != b.home;
         op = op->getParentOp()) {
      auto loop = dyn_cast<scf::ForOp>(op);
      if (!loop)
        continue;
      Value iv = loop.getInductionVar();
      if (OpFoldResult(iv) == row.getMixedOffsets()[0] ||
          OpFoldResult(iv) == row.getMixedOffsets()[1])
        continue;
      if (std::optional<int64_t> upper = upperBound(loop.getUpperBound()))
        rows = std::max(rows, *upper);
    }
  return rows;
}

/// Whether `row` is read by a register tile: its row index is the
/// induction variable of a loop carrying vector sums.
bool readByRegisterTile(memref::SubViewOp row) {
  auto index = dyn_cast<Value>(row.getMixedOffsets()[0]);
  scf::ForOp loop = index ? scf::getForInductionVarOwner(index) : nullptr;
  return loop && loop.getNumRegionIterArgs() > 0 &&
         llvm::all_of(loop.getRegionIterArgs(), [](BlockArgument arg) {
           return isa<VectorType>(arg.getType());
         });
}

/// The panels of `b`: [n / w][kc][w].
MemRefType packedTypeOf(KBlock &b) {
  int64_t panels = llvm::divideCeil(b.maxCols, b.width);
  return MemRefType::get({panels, b.maxDepth, b.width},
                         b.block.getType().getElementType());
}

int64_t bytesOf(MemRefType type) {
  return type.getNumElements() * type.getElementTypeBitWidth() / 8;
}

/// `block` as a K block worth packing, or nothing: a 2-D view of rows
/// contiguous in memory, read only as rows of whole panels, at least one
/// by a register tile's loop.
std::optional<KBlock> packable(memref::SubViewOp block, int64_t minRows,
                               int64_t maxBytes) {
  auto type = cast<MemRefType>(block.getSource().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (block.getType().getRank() != 2 || type.getRank() != 2 ||
      !isa<FloatType>(type.getElementType()) || !block.hasUnitStride() ||
      failed(getStridesAndOffset(type, strides, offset)) || strides[1] != 1)
    return std::nullopt;
  KBlock b{block->getParentOp(), block, {}, 0, 0, 0};
  std::optional<int64_t> depth = upperBound(block.getMixedSizes()[0]);
  std::optional<int64_t> cols = upperBound(block.getMixedSizes()[1]);
  if (!depth || !cols)
    return std::nullopt;
  b.maxDepth = *depth;
  b.maxCols = *cols;
  for (Operation *user : block->getUsers()) {
    auto row = dyn_cast<memref::SubViewOp>(user);
    std::optional<int64_t> w =
        row ? upperBound(row.getMixedSizes()[1]) : std::nullopt;
    if (!row || row.getSource() != block.getResult() || !row.hasUnitStride() ||
        !isConstantIntValue(row.getMixedSizes()[0], 1) ||
        row.getType().getRank() != 2 || !w || *w <= 0 ||
        !onlyRead(row.getResult()))
      return std::nullopt;
    b.width = std::max(b.width, *w);
    b.rows.push_back(row);
  }
  // Panels of whole vectors, every read starting on one.
  if (b.rows.empty() || b.width % 8 != 0 ||
      !llvm::any_of(b.rows, readByRegisterTile) ||
      llvm::any_of(b.rows, [&](memref::SubViewOp row) {
        return !isMultipleOf(row.getMixedOffsets()[1], b.width);
      }))
    return std::nullopt;
  if (bytesOf(packedTypeOf(b)) > maxBytes || resultRows(b) < minRows)
    return std::nullopt;
  return b;
}

/// Points the reads of `view` at `packed`, a view of the same shape.
void retarget(RewriterBase &rewriter, Value view, Value packed) {
  for (Operation *user : llvm::make_early_inc_range(view.getUsers())) {
    if (auto read = dyn_cast<vector::TransferReadOp>(user)) {
      rewriter.modifyOpInPlace(read,
                               [&] { read.getSourceMutable().assign(packed); });
      continue;
    }
    auto sub = cast<memref::SubViewOp>(user);
    rewriter.setInsertionPoint(sub);
    auto type = memref::SubViewOp::inferRankReducedResultType(
        sub.getType().getShape(), cast<MemRefType>(packed.getType()),
        sub.getMixedOffsets(), sub.getMixedSizes(), sub.getMixedStrides());
    Value replacement = rewriter.create<memref::SubViewOp>(
        sub.getLoc(), cast<MemRefType>(type), packed, sub.getMixedOffsets(),
        sub.getMixedSizes(), sub.getMixedStrides());
    retarget(rewriter, sub.getResult(), replacement);
    rewriter.eraseOp(sub);
  }
}

/// Where `b`'s stack buffer is made: the start of the parallel loop's body
/// (convert-scf-to-openmp puts it at the start of each thread's region),
/// or the function's entry.
Operation *scopeOf(KBlock &b) {
  if (auto parallel = b.block->getParentOfType<scf::ParallelOp>())
    return parallel;
  return b.block->getParentOfType<FunctionOpInterface>();
}

/// Copies the block into panels at the start of each K step, in `buffer`
/// (bytes on the stack, shared by the blocks of one scope: they run one
/// after the other), and retargets the reads.
void pack(RewriterBase &rewriter, KBlock &b, Value buffer) {
  Location loc = b.block.getLoc();
  auto element = cast<FloatType>(b.block.getType().getElementType());
  MemRefType packedType = packedTypeOf(b);
  rewriter.setInsertionPointAfter(b.block);
  Value packed = rewriter.create<memref::ViewOp>(
      loc, packedType, buffer, rewriter.create<arith::ConstantIndexOp>(loc, 0),
      ValueRange());

  // The copy: row k of panel p is the block's row k, columns p*w .. +w
  // (masked past the block's width).
  auto index = [&](int64_t v) {
    return rewriter.create<arith::ConstantIndexOp>(loc, v);
  };
  Value depth = getValueOrCreateConstantIndexOp(rewriter, loc,
                                                b.block.getMixedSizes()[0]);
  Value cols = getValueOrCreateConstantIndexOp(rewriter, loc,
                                               b.block.getMixedSizes()[1]);
  Value width = index(b.width), zero = index(0), one = index(1);
  // (arith.ceildivui has no direct lowering to LLVM.)
  Value count = rewriter.create<arith::DivUIOp>(
      loc, rewriter.create<arith::AddIOp>(loc, cols, index(b.width - 1)),
      width);
  Value pad = rewriter.create<arith::ConstantFloatOp>(
      loc, APFloat::getZero(element.getFloatSemantics()), element);
  auto vector = VectorType::get({b.width}, element);
  rewriter.create<scf::ForOp>(
      loc, zero, count, one, ValueRange(),
      [&](OpBuilder &pb, Location pl, Value p, ValueRange) {
        Value col = pb.create<arith::MulIOp>(pl, p, width);
        pb.create<scf::ForOp>(
            pl, zero, depth, one, ValueRange(),
            [&](OpBuilder &kb, Location kl, Value k, ValueRange) {
              Value row = kb.create<vector::TransferReadOp>(
                  kl, vector, b.block.getResult(), ValueRange{k, col},
                  AffineMap::get(2, 0, kb.getAffineDimExpr(1)), pad,
                  /*mask=*/Value(), kb.getBoolArrayAttr({false}));
              kb.create<vector::TransferWriteOp>(
                  kl, row, packed, ValueRange{p, k, zero},
                  AffineMap::get(3, 0, kb.getAffineDimExpr(2)),
                  ArrayRef<bool>{true});
              kb.create<scf::YieldOp>(kl);
            });
        pb.create<scf::YieldOp>(pl);
      });

  // Row k, columns j .. j+w of the block: row k of panel j / w.
  for (memref::SubViewOp row : b.rows) {
    rewriter.setInsertionPoint(row);
    Value j = getValueOrCreateConstantIndexOp(rewriter, row.getLoc(),
                                              row.getMixedOffsets()[1]);
    Value panel = rewriter.create<arith::DivUIOp>(row.getLoc(), j, width);
    SmallVector<OpFoldResult> offsets = {panel, row.getMixedOffsets()[0],
                                         rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1),
                                       rewriter.getIndexAttr(1),
                                       row.getMixedSizes()[1]};
    SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
    auto type = memref::SubViewOp::inferRankReducedResultType(
        row.getType().getShape(), packedType, offsets, sizes, strides);
    Value view = rewriter.create<memref::SubViewOp>(
        row.getLoc(), cast<MemRefType>(type), packed, offsets, sizes, strides);
    retarget(rewriter, row.getResult(), view);
    rewriter.eraseOp(row);
  }
}

struct CpuPackGemmPanelsPass
    : mlir::cuvil::impl::CpuPackGemmPanelsBase<CpuPackGemmPanelsPass> {
  using CpuPackGemmPanelsBase::CpuPackGemmPanelsBase;

  void runOnOperation() override {
    SmallVector<KBlock> blocks;
    getOperation().walk([&](memref::SubViewOp view) {
      if (std::optional<KBlock> b = packable(view, minRows, maxBytes))
        blocks.push_back(std::move(*b));
    });
    // One buffer per scope, as large as its largest block.
    llvm::MapVector<Operation *, int64_t> scopes;
    for (KBlock &b : blocks) {
      int64_t &bytes = scopes[scopeOf(b)];
      bytes = std::max(bytes, bytesOf(packedTypeOf(b)));
    }
    IRRewriter rewriter(&getContext());
    llvm::DenseMap<Operation *, Value> buffers;
    for (auto [scope, bytes] : scopes) {
      rewriter.setInsertionPointToStart(&scope->getRegion(0).front());
      buffers[scope] = rewriter.create<memref::AllocaOp>(
          scope->getLoc(), MemRefType::get({bytes}, rewriter.getI8Type()),
          rewriter.getI64IntegerAttr(64));
    }
    for (KBlock &b : blocks)
      pack(rewriter, b, buffers[scopeOf(b)]);
  }
};

} // namespace
