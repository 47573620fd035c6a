//===- TileMatmul.cpp - GEMMs through shared memory with register tiles ---===//
//
// cuvil-cuda-tile-matmul: a float32 contraction on buffers (linalg.matmul,
// batch_matmul, a matmul-like generic; either operand may be transposed)
// becomes one gpu.launch: each block computes a kBM x kBN tile of the
// result, staging kBK-deep slices of both operands in shared memory (rows
// padded by one element against bank conflicts), each of its 16 x 16
// threads accumulating a 4 x 4 register tile strided by 16 (neighbouring
// threads touch neighbouring columns: coalesced stores, conflict-free shared
// reads). Loads of the operands are coalesced along whichever dimension is
// contiguous in memory; edges are guarded, so any size works. Batches run on
// the grid's z. The fill before the contraction and the elementwise op after
// it (bias, activation) are computed in the kernel's epilogue.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUDATILEMATMUL
#include "cuvil/Target/CUDA/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

constexpr int64_t kThreadsX = 16, kThreadsY = 16;
constexpr int64_t kTileM = 4, kTileN = 4; // per thread
constexpr int64_t kBM = kThreadsY * kTileM, kBN = kThreadsX * kTileN;
constexpr int64_t kBK = 16;
constexpr int64_t kThreads = kThreadsX * kThreadsY;

/// The loop dimensions of a contraction Cuvil tiles: one each of m, n, k
/// and at most one batch dimension.
struct Dims {
  std::optional<unsigned> batch;
  unsigned m, n, k;
};

std::optional<Dims> tileableDims(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isF32())
      return std::nullopt;
  }
  // The body must be the plain multiply-add (no casts, no other math).
  Block &body = op->getRegion(0).front();
  if (body.getOperations().size() != 3)
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 1)
    return std::nullopt;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return std::nullopt;
  Dims result{std::nullopt, dims->m[0], dims->n[0], dims->k[0]};
  if (!dims->batch.empty())
    result.batch = dims->batch[0];
  return result;
}

/// What a GEMM kernel absorbs around its contraction: the fill giving the
/// output its initial value, and the elementwise op reading the output
/// right after (bias, activation), computed on the sums in registers.
struct Fused {
  linalg::FillOp fill;        ///< null: the output's values are loaded
  linalg::GenericOp epilogue; ///< null: the sums are stored as they are
  unsigned epilogueInput = 0; ///< the epilogue's input reading the output
  bool storeOutput = true;    ///< the output is still read after all this
};

/// The ops next to `op` in its block, skipping those without effects.
Operation *neighbour(Operation *op, bool after) {
  for (Operation *o = after ? op->getNextNode() : op->getPrevNode(); o;
       o = after ? o->getNextNode() : o->getPrevNode())
    if (!isMemoryEffectFree(o))
      return o;
  return nullptr;
}

/// The allocation or argument a buffer is a view of.
Value rootOf(Value buffer) {
  while (Operation *def = buffer.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      buffer = view.getViewSource();
    else if (isa<memref::CastOp, memref::ReinterpretCastOp,
                 memref::ExpandShapeOp, memref::CollapseShapeOp>(def))
      buffer = def->getOperand(0);
    else
      break;
  }
  return buffer;
}

Fused findFused(linalg::LinalgOp op) {
  Fused fused;
  Value out = op.getDpsInits()[0];
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(neighbour(op, false)))
    if (fill.getDpsInits()[0] == out)
      fused.fill = fill;
  auto epilogue = dyn_cast_or_null<linalg::GenericOp>(neighbour(op, true));
  auto outType = cast<MemRefType>(out.getType());
  if (epilogue && epilogue.hasPureBufferSemantics() &&
      epilogue.getNumDpsInits() == 1 &&
      epilogue.getNumLoops() == static_cast<unsigned>(outType.getRank()) &&
      epilogue.getNumParallelLoops() == epilogue.getNumLoops() &&
      llvm::all_of(epilogue.getIndexingMapsArray(),
                   [](AffineMap m) { return m.isProjectedPermutation(); }) &&
      epilogue.getMatchingIndexingMap(epilogue.getDpsInitOperand(0))
          .isIdentity() &&
      epilogue.getRegion().front().getArguments().back().use_empty()) {
    int reading = -1, count = 0;
    for (OpOperand *input : epilogue.getDpsInputOperands())
      if (input->get() == out) {
        ++count;
        if (epilogue.getMatchingIndexingMap(input).isIdentity())
          reading = input->getOperandNumber();
      }
    // Written while other blocks still read the GEMM's operands: its result
    // must not share storage with them (the memory plan may give a dead
    // operand's bytes to the result).
    Value target = rootOf(epilogue.getDpsInits()[0]);
    bool overlaps = epilogue.getDpsInits()[0] != out &&
                    llvm::any_of(op.getDpsInputs(), [&](Value input) {
                      return rootOf(input) == target;
                    });
    if (count == 1 && reading >= 0 && !overlaps) {
      fused.epilogue = epilogue;
      fused.epilogueInput = reading;
    }
  }
  // The output needs its own store unless nothing reads it afterwards: a
  // temporary whose users are the fill, the contraction, the epilogue and
  // its deallocation (or the epilogue writes its result into it).
  fused.storeOutput = !fused.epilogue || isa<BlockArgument>(out);
  if (fused.epilogue && !isa<BlockArgument>(out) &&
      fused.epilogue.getDpsInits()[0] != out)
    for (Operation *user : out.getUsers())
      if (user != op && user != fused.fill && user != fused.epilogue &&
          !isa<memref::DeallocOp, gpu::DeallocOp>(user))
        fused.storeOutput = true;
  if (fused.epilogue && fused.epilogue.getDpsInits()[0] == out)
    fused.storeOutput = false; // the epilogue's store is the output's
  return fused;
}

/// Builds the kernel of one contraction.
class KernelBuilder {
public:
  KernelBuilder(linalg::LinalgOp op, Dims dims, Fused fused)
      : op(op), dims(dims), fused(fused) {}

  void build(RewriterBase &rewriter);

private:
  Value index(OpBuilder &b, int64_t value) {
    return b.create<arith::ConstantIndexOp>(op.getLoc(), value);
  }
  /// The indices of `operand` at loop position `ivs` (one per loop).
  SmallVector<Value> indicesOf(OpOperand &operand, ArrayRef<Value> ivs) {
    SmallVector<Value> indices;
    for (AffineExpr expr : op.getMatchingIndexingMap(&operand).getResults())
      indices.push_back(ivs[cast<AffineDimExpr>(expr).getPosition()]);
    return indices;
  }
  /// True when loop dimension `dim` is the operand's innermost dimension.
  bool contiguousIn(OpOperand &operand, unsigned dim) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    return cast<AffineDimExpr>(map.getResults().back()).getPosition() == dim;
  }
  /// Copies a `rows x cols` slice of `operand` (rows along loop dim
  /// `rowDim` from `row0`, columns along `colDim` from `col0`) into `tile`,
  /// every thread `tid` taking `rows * cols / kThreads` elements, with
  /// zeros past the edges.
  void stage(OpBuilder &b, OpOperand &operand, Value tile, unsigned rowDim,
             Value row0, Value rowSize, unsigned colDim, Value col0,
             Value colSize, int64_t rows, int64_t cols, Value tid,
             Value batchIv);

  /// Stores the result of element `at` of the output, whose sum over the
  /// contraction is `sum`: through the fill's value or the output's, the
  /// epilogue, into the output and/or the epilogue's result.
  void storeResult(OpBuilder &b, Location l, Value sum, ArrayRef<Value> at);

  linalg::LinalgOp op;
  Dims dims;
  Fused fused;
  Location loc() { return op.getLoc(); }
};

void KernelBuilder::storeResult(OpBuilder &b, Location l, Value sum,
                                ArrayRef<Value> at) {
  OpOperand &out = op->getOpOperand(2);
  Value initial = fused.fill ? fused.fill.getInputs()[0]
                             : b.create<memref::LoadOp>(l, out.get(), at);
  Value value = b.create<arith::AddFOp>(l, initial, sum);
  if (fused.storeOutput)
    b.create<memref::StoreOp>(l, value, out.get(), at);
  if (!fused.epilogue)
    return;
  // The epilogue's loops are the output's dimensions, in order.
  linalg::GenericOp epilogue = fused.epilogue;
  Block &body = epilogue.getRegion().front();
  IRMapping map;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    Value arg = body.getArgument(input->getOperandNumber());
    if (input->getOperandNumber() == fused.epilogueInput) {
      map.map(arg, value);
      continue;
    }
    SmallVector<Value> indices;
    for (AffineExpr e : epilogue.getMatchingIndexingMap(input).getResults())
      indices.push_back(at[cast<AffineDimExpr>(e).getPosition()]);
    map.map(arg, b.create<memref::LoadOp>(l, input->get(), indices));
  }
  for (Operation &inner : body.without_terminator()) {
    if (auto idx = dyn_cast<linalg::IndexOp>(inner)) {
      map.map(idx.getResult(), at[idx.getDim()]);
      continue;
    }
    b.clone(inner, map);
  }
  Value result = map.lookupOrDefault(body.getTerminator()->getOperand(0));
  b.create<memref::StoreOp>(l, result, epilogue.getDpsInits()[0], at);
}

void KernelBuilder::stage(OpBuilder &b, OpOperand &operand, Value tile,
                          unsigned rowDim, Value row0, Value rowSize,
                          unsigned colDim, Value col0, Value colSize,
                          int64_t rows, int64_t cols, Value tid,
                          Value batchIv) {
  Location l = loc();
  // Neighbouring threads take neighbouring elements along the operand's
  // contiguous dimension.
  bool alongCols = contiguousIn(operand, colDim);
  Value zero =
      b.create<arith::ConstantFloatOp>(l, APFloat(0.0f), b.getF32Type());
  for (int64_t q = 0; q < rows * cols / kThreads; ++q) {
    Value e = b.create<arith::AddIOp>(l, tid, index(b, q * kThreads));
    Value r, c;
    if (alongCols) {
      r = b.create<arith::DivUIOp>(l, e, index(b, cols));
      c = b.create<arith::RemUIOp>(l, e, index(b, cols));
    } else {
      r = b.create<arith::RemUIOp>(l, e, index(b, rows));
      c = b.create<arith::DivUIOp>(l, e, index(b, rows));
    }
    Value gr = b.create<arith::AddIOp>(l, row0, r);
    Value gc = b.create<arith::AddIOp>(l, col0, c);
    Value inside = b.create<arith::AndIOp>(
        l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, gr, rowSize),
        b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, gc, colSize));
    auto load = b.create<scf::IfOp>(
        l, inside,
        [&](OpBuilder &t, Location tl) {
          SmallVector<Value> ivs(op.getNumLoops(), Value());
          ivs[rowDim] = gr;
          ivs[colDim] = gc;
          if (dims.batch)
            ivs[*dims.batch] = batchIv;
          Value v = t.create<memref::LoadOp>(tl, operand.get(),
                                             indicesOf(operand, ivs));
          t.create<scf::YieldOp>(tl, v);
        },
        [&](OpBuilder &e2, Location el) { e2.create<scf::YieldOp>(el, zero); });
    b.create<memref::StoreOp>(l, load.getResult(0), tile, ValueRange{r, c});
  }
}

void KernelBuilder::build(RewriterBase &rewriter) {
  Location l = loc();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  SmallVector<Range> ranges = op.createLoopRanges(b, l);
  auto size = [&](unsigned dim) {
    return getValueOrCreateConstantIndexOp(b, l, ranges[dim].size);
  };
  Value M = size(dims.m), N = size(dims.n), K = size(dims.k);
  Value batch = dims.batch ? size(*dims.batch) : index(b, 1);
  auto ceilDiv = [&](Value v, int64_t d) {
    return b.create<arith::CeilDivUIOp>(l, v, index(b, d)).getResult();
  };
  Attribute workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  FloatType f32 = b.getF32Type();
  // Rows padded by one element: the column-wise writes of a transposed
  // operand do not all hit one bank.
  auto aTile = MemRefType::get({kBM, kBK + 1}, f32, AffineMap(), workgroup);
  auto bTile = MemRefType::get({kBK, kBN + 1}, f32, AffineMap(), workgroup);
  auto launch = b.create<gpu::LaunchOp>(
      l, ceilDiv(N, kBN), ceilDiv(M, kBM), batch, index(b, kThreadsX),
      index(b, kThreadsY), index(b, 1), /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/ValueRange(),
      /*workgroupAttributions=*/TypeRange{aTile, bTile});
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
  Value m0 = b.create<arith::MulIOp>(l, launch.getBlockIds().y, index(b, kBM));
  Value n0 = b.create<arith::MulIOp>(l, launch.getBlockIds().x, index(b, kBN));
  Value batchIv = launch.getBlockIds().z;
  Value tid = b.create<arith::AddIOp>(
      l, b.create<arith::MulIOp>(l, ty, index(b, kThreadsX)), tx);
  Value as = launch.getWorkgroupAttributions()[0];
  Value bs = launch.getWorkgroupAttributions()[1];
  OpOperand &lhs = op->getOpOperand(0), &rhs = op->getOpOperand(1);
  OpOperand &out = op->getOpOperand(2);

  Value zero = b.create<arith::ConstantFloatOp>(l, APFloat(0.0f), f32);
  SmallVector<Value> init(kTileM * kTileN, zero);
  auto kLoop = b.create<scf::ForOp>(
      l, index(b, 0), K, index(b, kBK), init,
      [&](OpBuilder &lb, Location ll, Value k0, ValueRange acc) {
        stage(lb, lhs, as, dims.m, m0, M, dims.k, k0, K, kBM, kBK, tid,
              batchIv);
        stage(lb, rhs, bs, dims.k, k0, K, dims.n, n0, N, kBK, kBN, tid,
              batchIv);
        lb.create<gpu::BarrierOp>(ll);
        // The slice's 16 steps unrolled: 16 x (8 shared loads, 16 FMAs).
        SmallVector<Value> sums(acc.begin(), acc.end());
        for (int64_t kk = 0; kk < kBK; ++kk) {
          Value kIndex = index(lb, kk);
          SmallVector<Value> a, bv;
          for (int64_t r = 0; r < kTileM; ++r) {
            Value row =
                lb.create<arith::AddIOp>(ll, ty, index(lb, r * kThreadsY));
            a.push_back(
                lb.create<memref::LoadOp>(ll, as, ValueRange{row, kIndex}));
          }
          for (int64_t c = 0; c < kTileN; ++c) {
            Value col =
                lb.create<arith::AddIOp>(ll, tx, index(lb, c * kThreadsX));
            bv.push_back(
                lb.create<memref::LoadOp>(ll, bs, ValueRange{kIndex, col}));
          }
          for (int64_t r = 0; r < kTileM; ++r)
            for (int64_t c = 0; c < kTileN; ++c)
              sums[r * kTileN + c] =
                  lb.create<math::FmaOp>(ll, a[r], bv[c], sums[r * kTileN + c]);
        }
        // Every thread is done with the slices before they are refilled.
        lb.create<gpu::BarrierOp>(ll);
        lb.create<scf::YieldOp>(ll, sums);
      });

  // C += the block's products (linalg's semantics: the output accumulates).
  for (int64_t r = 0; r < kTileM; ++r)
    for (int64_t c = 0; c < kTileN; ++c) {
      Value m = b.create<arith::AddIOp>(
          l, m0, b.create<arith::AddIOp>(l, ty, index(b, r * kThreadsY)));
      Value n = b.create<arith::AddIOp>(
          l, n0, b.create<arith::AddIOp>(l, tx, index(b, c * kThreadsX)));
      Value inside = b.create<arith::AndIOp>(
          l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, m, M),
          b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, n, N));
      Value sum = kLoop.getResult(r * kTileN + c);
      b.create<scf::IfOp>(l, inside, [&](OpBuilder &t, Location tl) {
        SmallVector<Value> ivs(op.getNumLoops(), Value());
        ivs[dims.m] = m;
        ivs[dims.n] = n;
        if (dims.batch)
          ivs[*dims.batch] = batchIv;
        storeResult(t, tl, sum, indicesOf(out, ivs));
        t.create<scf::YieldOp>(tl);
      });
    }
  b.create<gpu::TerminatorOp>(l);
  rewriter.eraseOp(op);
  if (fused.fill)
    rewriter.eraseOp(fused.fill);
  if (fused.epilogue)
    rewriter.eraseOp(fused.epilogue);
}

struct CudaTileMatmulPass
    : mlir::cuvil::impl::CudaTileMatmulBase<CudaTileMatmulPass> {
  using CudaTileMatmulBase::CudaTileMatmulBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, Dims>> work;
    getOperation().walk([&](linalg::LinalgOp op) {
      // Only host-level ops: not inside a loop or kernel already.
      if (op->getParentOp() != getOperation().getOperation())
        return;
      if (std::optional<Dims> dims = tileableDims(op))
        work.push_back({op, *dims});
    });
    IRRewriter rewriter(&getContext());
    // Each GEMM absorbs its neighbours before the next one looks at its own
    // (a fill or epilogue is one GEMM's at most: it sits next to one).
    llvm::SmallPtrSet<Operation *, 8> absorbed;
    for (auto [op, dims] : work) {
      if (absorbed.contains(op))
        continue;
      Fused fused = fuseEpilogues ? findFused(op) : Fused();
      if (fused.fill)
        absorbed.insert(fused.fill);
      if (fused.epilogue)
        absorbed.insert(fused.epilogue);
      KernelBuilder(op, dims, fused).build(rewriter);
    }
  }
};

} // namespace
