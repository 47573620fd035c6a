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
// the grid's z.
//
//===----------------------------------------------------------------------===//

#include "cuvil/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

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

/// Builds the kernel of one contraction.
class KernelBuilder {
public:
  KernelBuilder(linalg::LinalgOp op, Dims dims) : op(op), dims(dims) {}

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

  linalg::LinalgOp op;
  Dims dims;
  Location loc() { return op.getLoc(); }
};

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
        SmallVector<Value> at = indicesOf(out, ivs);
        Value old = t.create<memref::LoadOp>(tl, out.get(), at);
        Value updated = t.create<arith::AddFOp>(tl, old, sum);
        t.create<memref::StoreOp>(tl, updated, out.get(), at);
        t.create<scf::YieldOp>(tl);
      });
    }
  b.create<gpu::TerminatorOp>(l);
  rewriter.eraseOp(op);
}

struct CudaTileMatmulPass
    : mlir::cuvil::impl::CudaTileMatmulBase<CudaTileMatmulPass> {
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
    for (auto [op, dims] : work)
      KernelBuilder(op, dims).build(rewriter);
  }
};

} // namespace
