//===- WarpReductions.cpp - Row reductions, one warp per row --------------===//
//
// cuvil-cuda-warp-reductions: a linalg.generic on buffers reducing its
// innermost loop (a softmax's row max and sum, a layer norm's mean and
// variance) becomes a gpu.launch in which each warp owns one row: its 32
// lanes stride over the row, each combining the body's values into a
// partial, and five butterfly shuffles combine the partials; lane 0 folds
// the result into the output, as linalg's semantics say (the output holds
// the initial value). Eight warps a block; rows past the end leave their
// warp idle as a whole, so every shuffle has all 32 lanes.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUDAWARPREDUCTIONS
#include "cuvil/Target/CUDA/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

constexpr int64_t kWarp = 32, kWarpsPerBlock = 8;
/// Rows shorter than this stay one thread's loop: a warp would idle.
constexpr int64_t kMinRow = 64;

/// The combiner of a reduction body: `yield combine(out, value)`.
struct Reduction {
  Operation *combiner;
  Value value; ///< the body's contribution at one point
  TypedAttr identity;
};

std::optional<Reduction> matchReduction(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || op.getNumLoops() < 2 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return std::nullopt;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return std::nullopt;
  auto outType = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  auto element =
      outType ? dyn_cast<FloatType>(outType.getElementType()) : FloatType();
  if (!element || !(element.isF32() || element.isF64()))
    return std::nullopt;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *combiner = yield.getOperand(0).getDefiningOp();
  if (!combiner || combiner->getNumOperands() != 2)
    return std::nullopt;
  Value out = body.getArguments().back();
  Value lhs = combiner->getOperand(0), rhs = combiner->getOperand(1);
  if (lhs != out && rhs != out)
    return std::nullopt;
  Value value = lhs == out ? rhs : lhs;
  // The output is read by the combiner only.
  if (!out.hasOneUse() || value == out)
    return std::nullopt;
  const llvm::fltSemantics &sem = element.getFloatSemantics();
  TypedAttr identity;
  if (isa<arith::AddFOp>(combiner))
    identity = FloatAttr::get(element, 0.0);
  else if (isa<arith::MulFOp>(combiner))
    identity = FloatAttr::get(element, 1.0);
  else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner))
    identity = FloatAttr::get(element, APFloat::getInf(sem, /*Negative=*/true));
  else if (isa<arith::MinimumFOp, arith::MinNumFOp>(combiner))
    identity = FloatAttr::get(element, APFloat::getInf(sem));
  else
    return std::nullopt;
  return Reduction{combiner, value, identity};
}

/// `combiner` (a clone's operation name) applied to `a` and `b`.
Value combine(OpBuilder &b, Location loc, Operation *combiner, Value a,
              Value c) {
  OperationState state(loc, combiner->getName());
  state.addOperands({a, c});
  state.addTypes(a.getType());
  state.addAttributes(combiner->getAttrs());
  return b.create(state)->getResult(0);
}

void buildKernel(RewriterBase &rewriter, linalg::GenericOp op,
                 const Reduction &reduction) {
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  auto index = [&](OpBuilder &ob, int64_t v) -> Value {
    return ob.create<arith::ConstantIndexOp>(loc, v);
  };
  SmallVector<Range> ranges =
      cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
  unsigned rank = op.getNumLoops();
  SmallVector<Value> sizes;
  for (Range &range : ranges)
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
  Value rows = index(b, 1);
  for (unsigned d = 0; d + 1 < rank; ++d)
    rows = b.create<arith::MulIOp>(loc, rows, sizes[d]);
  Value rowSize = sizes.back();
  Value blocks =
      b.create<arith::CeilDivUIOp>(loc, rows, index(b, kWarpsPerBlock));
  auto launch = b.create<gpu::LaunchOp>(loc, blocks, index(b, 1), index(b, 1),
                                        index(b, kWarp),
                                        index(b, kWarpsPerBlock), index(b, 1));
  b.setInsertionPointToStart(&launch.getBody().front());
  Value lane = launch.getThreadIds().x;
  Value row = b.create<arith::AddIOp>(
      loc,
      b.create<arith::MulIOp>(loc, launch.getBlockIds().x,
                              index(b, kWarpsPerBlock)),
      launch.getThreadIds().y);
  Value inRange =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row, rows);
  b.create<scf::IfOp>(loc, inRange, [&](OpBuilder &w, Location wl) {
    // The row's position in the parallel loops, innermost last.
    SmallVector<Value> ivs(rank);
    Value rest = row;
    for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
      ivs[d] = w.create<arith::RemUIOp>(wl, rest, sizes[d]);
      rest = w.create<arith::DivUIOp>(wl, rest, sizes[d]);
    }
    Value identity = w.create<arith::ConstantOp>(wl, reduction.identity);
    Block &body = op.getRegion().front();
    auto loop = w.create<scf::ForOp>(
        wl, lane, rowSize, index(w, kWarp), ValueRange{identity},
        [&](OpBuilder &lb, Location ll, Value k, ValueRange partial) {
          ivs[rank - 1] = k;
          IRMapping map;
          for (OpOperand *input : op.getDpsInputOperands()) {
            SmallVector<Value> at;
            for (AffineExpr e : op.getMatchingIndexingMap(input).getResults())
              at.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
            map.map(body.getArgument(input->getOperandNumber()),
                    lb.create<memref::LoadOp>(ll, input->get(), at));
          }
          for (Operation &inner : body.without_terminator()) {
            if (&inner == reduction.combiner)
              continue;
            if (auto idx = dyn_cast<linalg::IndexOp>(inner)) {
              map.map(idx.getResult(), ivs[idx.getDim()]);
              continue;
            }
            lb.clone(inner, map);
          }
          Value value = map.lookupOrDefault(reduction.value);
          lb.create<scf::YieldOp>(
              ll, combine(lb, ll, reduction.combiner, partial[0], value));
        });
    Value partial = loop.getResult(0);
    for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
      auto shuffle = w.create<gpu::ShuffleOp>(wl, partial, offset, kWarp,
                                              gpu::ShuffleMode::XOR);
      partial = combine(w, wl, reduction.combiner, partial,
                        shuffle.getShuffleResult());
    }
    Value first = w.create<arith::CmpIOp>(wl, arith::CmpIPredicate::eq, lane,
                                          index(w, 0));
    w.create<scf::IfOp>(wl, first, [&](OpBuilder &f, Location fl) {
      OpOperand *out = op.getDpsInitOperand(0);
      SmallVector<Value> at;
      for (AffineExpr e : op.getMatchingIndexingMap(out).getResults())
        at.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
      Value old = f.create<memref::LoadOp>(fl, out->get(), at);
      f.create<memref::StoreOp>(
          fl, combine(f, fl, reduction.combiner, old, partial), out->get(), at);
      f.create<scf::YieldOp>(fl);
    });
    w.create<scf::YieldOp>(wl);
  });
  b.create<gpu::TerminatorOp>(loc);
  rewriter.eraseOp(op);
}

struct CudaWarpReductionsPass
    : mlir::cuvil::impl::CudaWarpReductionsBase<CudaWarpReductionsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Reduction>> work;
    for (auto op : getOperation().getOps<linalg::GenericOp>()) {
      std::optional<Reduction> reduction = matchReduction(op);
      if (!reduction)
        continue;
      // Short static rows stay a thread's loop.
      SmallVector<int64_t> bounds = op.getStaticLoopRanges();
      if (!ShapedType::isDynamic(bounds.back()) && bounds.back() < kMinRow)
        continue;
      work.push_back({op, *reduction});
    }
    IRRewriter rewriter(&getContext());
    for (auto &[op, reduction] : work)
      buildKernel(rewriter, op, reduction);
  }
};

} // namespace
