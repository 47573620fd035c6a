//===- SplitAccumulators.cpp - Partial sums for narrow register tiles -----===//
//
// cuvil-cpu-split-accumulators: a loop whose vector accumulator goes through
// a chain of FMAs per iteration, each adding to the last, waits for every
// FMA's result before the next can start. Where the accumulator fills few
// vector registers (a remainder row of a GEMM), the chain's steps are spread
// over several partial sums that run side by side and are added up after
// the loop. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CPUSPLITACCUMULATORS
#include "cuvil/Target/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

/// A vector iter_arg of a loop taken apart: the chain of FMAs that adds
/// each row's steps (a rank-1 accumulator is one row; a rank-2 one is read
/// by one `vector.extract` per row and yielded as the rows inserted back).
struct Accumulator {
  unsigned index = 0;
  VectorType type;
  /// Per row, its FMAs in order: the first adds to the row, each next one
  /// to the one before.
  SmallVector<SmallVector<vector::FMAOp>> rows;
};

/// The FMAs adding to `start` one after the other, each the only user of
/// the one before and taking it as its addend only.
SmallVector<vector::FMAOp> chainFrom(Value start) {
  SmallVector<vector::FMAOp> chain;
  Value sum = start;
  while (sum.hasOneUse()) {
    auto fma = dyn_cast<vector::FMAOp>(*sum.getUsers().begin());
    if (!fma || fma.getAcc() != sum || fma.getLhs() == sum ||
        fma.getRhs() == sum)
      break;
    chain.push_back(fma);
    sum = fma.getResult();
  }
  return chain;
}

/// The static position of a one-index `vector.extract` / `vector.insert`
/// of a row, if that is what `positions` is.
std::optional<int64_t> rowPosition(ArrayRef<int64_t> positions,
                                   ValueRange dynamic) {
  if (positions.size() != 1 || !dynamic.empty() ||
      ShapedType::isDynamic(positions[0]))
    return std::nullopt;
  return positions[0];
}

/// The values a rank-2 accumulator's rows are yielded from, by row: `yielded`
/// built by `vector.insert`s of whole rows (each used once) into anything,
/// or, for one row, by a `vector.broadcast` of it. Empty where some row is
/// missing.
SmallVector<Value> yieldedRows(Value yielded, int64_t rows) {
  SmallVector<Value> ends(rows);
  Value v = yielded;
  while (auto insert = v.getDefiningOp<vector::InsertOp>()) {
    std::optional<int64_t> row =
        rowPosition(insert.getStaticPosition(), insert.getDynamicPosition());
    if (!v.hasOneUse() || !row || *row < 0 || *row >= rows)
      return {};
    if (!ends[*row]) // the outermost insert of a row is the one yielded
      ends[*row] = insert.getSource();
    v = insert.getDest();
  }
  if (auto broadcast = v.getDefiningOp<vector::BroadcastOp>();
      broadcast && rows == 1 && !ends[0] && v.hasOneUse() &&
      broadcast.getSourceType() ==
          VectorType::get(cast<VectorType>(yielded.getType()).getShape().back(),
                          getElementTypeOrSelf(yielded.getType())))
    ends[0] = broadcast.getSource();
  if (llvm::any_of(ends, [](Value end) { return !end; }))
    return {};
  return ends;
}

/// Takes iter_arg `index` of `loop` apart, if it is an accumulator whose
/// rows each go through a chain of the same two or more FMAs.
std::optional<Accumulator> accumulatorOf(scf::ForOp loop, unsigned index) {
  BlockArgument arg = loop.getRegionIterArg(index);
  auto type = dyn_cast<VectorType>(arg.getType());
  if (!type || type.isScalable() || type.getRank() < 1 || type.getRank() > 2)
    return std::nullopt;
  Value yielded = loop.getYieldedValues()[index];
  Accumulator acc;
  acc.index = index;
  acc.type = type;
  if (type.getRank() == 1) {
    acc.rows.push_back(chainFrom(arg));
    if (acc.rows[0].empty() || acc.rows[0].back().getResult() != yielded)
      return std::nullopt;
  } else {
    int64_t rows = type.getDimSize(0);
    acc.rows.resize(rows);
    for (Operation *user : arg.getUsers()) {
      auto extract = dyn_cast<vector::ExtractOp>(user);
      std::optional<int64_t> row =
          extract ? rowPosition(extract.getStaticPosition(),
                                extract.getDynamicPosition())
                  : std::nullopt;
      if (!row || *row < 0 || *row >= rows || !acc.rows[*row].empty())
        return std::nullopt;
      acc.rows[*row] = chainFrom(extract.getResult());
      if (acc.rows[*row].empty())
        return std::nullopt;
    }
    SmallVector<Value> ends = yieldedRows(yielded, rows);
    if (ends.empty())
      return std::nullopt;
    for (auto [chain, end] : llvm::zip(acc.rows, ends))
      if (chain.empty() || chain.back().getResult() != end)
        return std::nullopt;
  }
  size_t steps = acc.rows[0].size();
  if (steps < 2 ||
      llvm::any_of(
          acc.rows, [&](const auto &chain) { return chain.size() != steps; }))
    return std::nullopt;
  return acc;
}

/// Vector registers one value of `type` takes with `vectorBits`-bit
/// registers.
int64_t registersOf(VectorType type, int64_t vectorBits) {
  if (type.getRank() == 0 || type.getShape().back() == 0)
    return 1;
  int64_t rowBits =
      type.getShape().back() * type.getElementType().getIntOrFloatBitWidth();
  int64_t rows = type.getNumElements() / type.getShape().back();
  return rows * llvm::divideCeil(rowBits, vectorBits);
}

/// Builds a value of `acc`'s type from its rows `rows` (rank 1: the row),
/// inserted into `zero`.
Value assemble(OpBuilder &b, Location loc, const Accumulator &acc, Value zero,
               ArrayRef<Value> rows) {
  if (acc.type.getRank() == 1)
    return rows[0];
  Value result = zero;
  for (auto [row, value] : llvm::enumerate(rows))
    result = b.create<vector::InsertOp>(loc, value, result, row);
  return result;
}

/// Spreads the FMAs of `accs` (iter_args of `loop`) over `parts` partial
/// sums each, and adds them up after the loop.
void split(scf::ForOp loop, ArrayRef<Accumulator> accs, int64_t parts) {
  IRRewriter rewriter(loop->getContext());
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  // Per accumulator, the zero its partial sums start at (and are assembled
  // into, for rows).
  SmallVector<Value> zeros, inits;
  for (const Accumulator &acc : accs) {
    zeros.push_back(rewriter.create<arith::ConstantOp>(
        loc, acc.type, rewriter.getZeroAttr(acc.type)));
    inits.append(parts - 1, zeros.back());
  }
  Block *body = loop.getBody();
  auto newYields = [&](OpBuilder &b, Location loc,
                       ArrayRef<BlockArgument> extra) {
    SmallVector<Value> yields;
    OpBuilder head = OpBuilder::atBlockBegin(body);
    for (auto [n, acc] : llvm::enumerate(accs)) {
      ArrayRef<BlockArgument> mine = extra.slice(n * (parts - 1), parts - 1);
      // Per partial sum, its rows' ends.
      SmallVector<SmallVector<Value>> ends(parts);
      for (auto [row, steps] : llvm::enumerate(acc.rows)) {
        SmallVector<vector::FMAOp> chain(steps);
        SmallVector<Value> last(parts);
        last[0] = chain.front().getAcc();
        for (int64_t p = 1; p < parts; ++p)
          last[p] = acc.type.getRank() == 1
                        ? Value(mine[p - 1])
                        : head.create<vector::ExtractOp>(loc, mine[p - 1], row)
                              .getResult();
        Value end = chain.back().getResult();
        for (auto [step, fma] : llvm::enumerate(chain)) {
          int64_t p = static_cast<int64_t>(step) % parts;
          if (fma.getAcc() != last[p])
            rewriter.modifyOpInPlace(
                fma, [&] { fma.getAccMutable().assign(last[p]); });
          last[p] = fma.getResult();
        }
        // The loop's own yield takes the first partial sum's row.
        if (last[0] != end)
          rewriter.replaceAllUsesWith(end, last[0]);
        for (int64_t p = 1; p < parts; ++p)
          ends[p].push_back(last[p]);
      }
      for (int64_t p = 1; p < parts; ++p)
        yields.push_back(assemble(b, loc, acc, zeros[n], ends[p]));
    }
    return yields;
  };
  unsigned results = loop.getNumResults();
  FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false, newYields);
  if (failed(replaced))
    return;
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  rewriter.setInsertionPointAfter(newLoop);
  for (auto [n, acc] : llvm::enumerate(accs)) {
    Value result = newLoop.getResult(acc.index);
    SmallVector<Value> sums = {result};
    for (int64_t p = 1; p < parts; ++p)
      sums.push_back(newLoop.getResult(results + n * (parts - 1) + p - 1));
    // Pairwise: (s0 + s1) + (s2 + s3).
    Operation *first = nullptr;
    while (sums.size() > 1) {
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < sums.size(); i += 2) {
        auto add = rewriter.create<arith::AddFOp>(loc, sums[i], sums[i + 1]);
        first = first ? first : add.getOperation();
        next.push_back(add);
      }
      if (sums.size() % 2)
        next.push_back(sums.back());
      sums = std::move(next);
    }
    rewriter.replaceAllUsesExcept(result, sums[0], first);
  }
}

struct CpuSplitAccumulatorsPass
    : public mlir::cuvil::impl::CpuSplitAccumulatorsBase<
          CpuSplitAccumulatorsPass> {
  using CpuSplitAccumulatorsBase::CpuSplitAccumulatorsBase;

  void runOnOperation() override {
    if (registers < 2 || vectorBits < 1)
      return;
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      SmallVector<Accumulator> accs;
      // Registers of the accumulators split, and of the loop's other
      // vectors carried from one iteration to the next.
      int64_t splitting = 0, others = 0;
      size_t steps = SIZE_MAX;
      for (unsigned i = 0, e = loop.getNumRegionIterArgs(); i < e; ++i) {
        auto type = dyn_cast<VectorType>(loop.getRegionIterArg(i).getType());
        if (!type || type.isScalable() || !type.getElementType().isIntOrFloat())
          continue;
        std::optional<Accumulator> acc = accumulatorOf(loop, i);
        (acc ? splitting : others) += registersOf(type, vectorBits);
        if (acc) {
          steps = std::min(steps, acc->rows[0].size());
          accs.push_back(std::move(*acc));
        }
      }
      if (accs.empty() || splitting == 0 || others >= registers)
        continue;
      int64_t parts =
          std::min<int64_t>(steps, (registers - others) / splitting);
      if (parts >= 2)
        split(loop, accs, parts);
    }
  }
};

} // namespace
