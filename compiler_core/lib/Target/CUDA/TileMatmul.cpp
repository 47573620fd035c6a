//===- TileMatmul.cpp - GEMMs through shared memory with register tiles ---===//
//
// cuvil-cuda-tile-matmul: a contraction on buffers (linalg.matmul,
// batch_matmul, a matmul-like generic; either operand may be transposed)
// becomes one gpu.launch. bf16/f16 operands with float32 sums go to tensor
// cores (MmaMatmul.cpp), as do float32 ones where TF32 is allowed. For float32
// (here) each block computes a kBM x kBN tile of the result, staging kBK-deep
// slices of both operands in shared memory (rows padded by one element against
// bank conflicts), each of its 16 x 16 threads accumulating a 4 x 4 register
// tile strided by 16 (neighbouring threads touch neighbouring columns:
// coalesced stores, conflict-free shared reads). Loads of the operands are
// coalesced along whichever dimension is contiguous in memory; edges are
// guarded, so any size works. Batches run on the grid's z. The fill before the
// contraction and the elementwise op after it (bias, activation) are computed
// in the kernel's epilogue.
//
//===----------------------------------------------------------------------===//

#include "GemmKernel.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"
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
using namespace mlir::cuvil::cuda;

namespace {

constexpr int64_t kThreadsX = 16, kThreadsY = 16;
constexpr int64_t kTileM = 4, kTileN = 4; // per thread
constexpr int64_t kBM = kThreadsY * kTileM, kBN = kThreadsX * kTileN;
constexpr int64_t kBK = 16;
constexpr int64_t kThreads = kThreadsX * kThreadsY;

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

/// The arith.extf whose result `generic` yields, if it yields one.
arith::ExtFOp yieldedWidening(linalg::GenericOp generic) {
  Operation *yield = generic.getRegion().front().getTerminator();
  return yield->getOperand(0).getDefiningOp<arith::ExtFOp>();
}

/// The op that last wrote the buffer `value` that `op` reads, if it did so
/// right before (nothing else touched it since) and its values are widened
/// from `narrow` (arith.extf): they narrow back exactly.
linalg::GenericOp widenedBy(linalg::LinalgOp op, Value value, Type narrow) {
  auto uses = [](Operation *o, Value v) {
    return llvm::is_contained(o->getOperands(), v);
  };
  for (Operation *o = op->getPrevNode(); o; o = o->getPrevNode()) {
    if (!uses(o, value))
      continue;
    auto writer = dyn_cast<linalg::GenericOp>(o);
    // (It may read the buffer too: an activation applied in place.)
    if (!writer || writer.getNumDpsInits() != 1 ||
        writer.getDpsInits()[0] != value)
      return nullptr;
    arith::ExtFOp ext = yieldedWidening(writer);
    return ext && ext.getIn().getType() == narrow ? writer : nullptr;
  }
  return nullptr;
}

/// `writer` if all it does is widen one input read at the output's indices
/// and nothing between it and `op` writes that input: `op` can read the
/// input instead.
linalg::GenericOp plainWidening(linalg::LinalgOp op, linalg::GenericOp writer) {
  if (!writer || writer.getNumDpsInputs() != 1 ||
      writer.getRegion().front().getOperations().size() != 2 ||
      !llvm::all_of(writer.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return nullptr;
  arith::ExtFOp ext = yieldedWidening(writer);
  if (!ext || ext.getIn() != writer.getRegion().front().getArgument(0))
    return nullptr;
  Value input = writer.getDpsInputs()[0];
  for (Operation *o = writer->getNextNode(); o && o != op; o = o->getNextNode())
    if (!isMemoryEffectFree(o) && llvm::is_contained(o->getOperands(), input))
      return nullptr;
  return writer;
}

/// How the body of a contraction whose operands have element types `a`,
/// `b` and result `c` multiplies, if one of the kernels takes it: the plain
/// float32 multiply-add, or 16-bit floats widened to a float32 sum (both
/// narrow, or the left one already widened); `narrow` is set to the 16-bit
/// type.
std::optional<GemmKind> gemmKind(linalg::LinalgOp op, Type a, Type b, Type c,
                                 GemmDims &dims) {
  Block &body = op->getRegion(0).front();
  auto ops = body.without_terminator();
  size_t count = std::distance(ops.begin(), ops.end());
  if (a.isF32() && b.isF32() && c.isF32())
    return count == 2 ? std::optional(GemmKind::F32) : std::nullopt;
  // Tensor cores: the right operand bf16 or f16, the left one the same or
  // float32 holding widened values; each narrow operand widened once.
  if (!(b.isBF16() || b.isF16()) || !c.isF32())
    return std::nullopt;
  if (a != b) {
    linalg::GenericOp writer =
        a.isF32() && count == 3 ? widenedBy(op, op->getOperand(0), b) : nullptr;
    if (!writer)
      return std::nullopt;
    dims.widening = plainWidening(op, writer);
  } else if (count != 4) {
    return std::nullopt;
  }
  for (Operation &inner : ops)
    if (auto ext = dyn_cast<arith::ExtFOp>(inner)) {
      if (!isa<BlockArgument>(ext.getIn()))
        return std::nullopt;
    } else if (!isa<arith::MulFOp, arith::AddFOp>(inner)) {
      return std::nullopt;
    }
  dims.narrow = b;
  return GemmKind::TensorCore;
}

} // namespace

std::optional<GemmDims> mlir::cuvil::cuda::tileableDims(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  SmallVector<Type, 3> elements;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      return std::nullopt;
    elements.push_back(type.getElementType());
  }
  GemmDims result;
  std::optional<GemmKind> kind =
      gemmKind(op, elements[0], elements[1], elements[2], result);
  if (!kind)
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 1)
    return std::nullopt;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return std::nullopt;
  result.m = dims->m[0];
  result.n = dims->n[0];
  result.k = dims->k[0];
  result.kind = *kind;
  if (!dims->batch.empty())
    result.batch = dims->batch[0];
  return result;
}

FusedOps mlir::cuvil::cuda::findFused(linalg::LinalgOp op) {
  FusedOps fused;
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

SmallVector<Value> GemmKernelBuilder::indicesOf(OpOperand &operand,
                                                ArrayRef<Value> ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : op.getMatchingIndexingMap(&operand).getResults())
    indices.push_back(ivs[cast<AffineDimExpr>(expr).getPosition()]);
  return indices;
}

GemmKernelBuilder::Launch GemmKernelBuilder::launchOverTiles(
    OpBuilder &b, int64_t rows, int64_t cols, int64_t threadsX,
    int64_t threadsY, Type element,
    ArrayRef<std::pair<int64_t, int64_t>> tiles) {
  Location l = loc();
  b.setInsertionPoint(op);
  SmallVector<Range> ranges = op.createLoopRanges(b, l);
  auto size = [&](unsigned dim) {
    return getValueOrCreateConstantIndexOp(b, l, ranges[dim].size);
  };
  Extents e{size(dims.m), size(dims.n), size(dims.k)};
  Value batch = dims.batch ? size(*dims.batch) : index(b, 1);
  auto ceilDiv = [&](Value v, int64_t d) {
    return b.create<arith::CeilDivUIOp>(l, v, index(b, d)).getResult();
  };
  Attribute workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  SmallVector<Type> shared;
  for (auto [r, c] : tiles)
    shared.push_back(MemRefType::get({r, c}, element, AffineMap(), workgroup));
  auto launch = b.create<gpu::LaunchOp>(
      l, ceilDiv(e.N, cols), ceilDiv(e.M, rows), batch, index(b, threadsX),
      index(b, threadsY), index(b, 1), /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/ValueRange(),
      /*workgroupAttributions=*/shared);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
  return {launch,
          e,
          b.create<arith::MulIOp>(l, launch.getBlockIds().y, index(b, rows)),
          b.create<arith::MulIOp>(l, launch.getBlockIds().x, index(b, cols)),
          launch.getBlockIds().z,
          b.create<arith::AddIOp>(
              l, b.create<arith::MulIOp>(l, ty, index(b, threadsX)), tx)};
}

bool GemmKernelBuilder::contiguousIn(OpOperand &operand, unsigned dim) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  return cast<AffineDimExpr>(map.getResults().back()).getPosition() == dim;
}

void GemmKernelBuilder::storeResult(OpBuilder &b, Location l, Value sum,
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

void GemmKernelBuilder::storeIfInside(OpBuilder &b, Value sum, Value m, Value n,
                                      Value M, Value N, Value batchIv) {
  Location l = loc();
  Value inside = b.create<arith::AndIOp>(
      l, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, m, M),
      b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, n, N));
  b.create<scf::IfOp>(l, inside, [&](OpBuilder &t, Location tl) {
    SmallVector<Value> ivs(op.getNumLoops(), Value());
    ivs[dims.m] = m;
    ivs[dims.n] = n;
    if (dims.batch)
      ivs[*dims.batch] = batchIv;
    storeResult(t, tl, sum, indicesOf(op->getOpOperand(2), ivs));
    t.create<scf::YieldOp>(tl);
  });
}

std::pair<Value, Value> GemmKernelBuilder::slicePosition(OpBuilder &b,
                                                         const Slice &slice,
                                                         Value tid, int64_t q) {
  Location l = loc();
  Value e = b.create<arith::AddIOp>(l, tid, index(b, q * slice.threads));
  if (contiguousIn(*slice.operand, slice.colDim))
    return {b.create<arith::DivUIOp>(l, e, index(b, slice.cols)),
            b.create<arith::RemUIOp>(l, e, index(b, slice.cols))};
  return {b.create<arith::RemUIOp>(l, e, index(b, slice.rows)),
          b.create<arith::DivUIOp>(l, e, index(b, slice.rows))};
}

SmallVector<Value> GemmKernelBuilder::loadSlice(OpBuilder &b,
                                                const Slice &slice, Value row0,
                                                Value col0, Value tid,
                                                Value batchIv) {
  Location l = loc();
  Value source = slice.source ? slice.source : slice.operand->get();
  auto element =
      cast<FloatType>(cast<MemRefType>(source.getType()).getElementType());
  Value zero = b.create<arith::ConstantFloatOp>(
      l, APFloat::getZero(element.getFloatSemantics()), element);
  SmallVector<Value> values;
  for (int64_t q = 0; q < slice.rows * slice.cols / slice.threads; ++q) {
    auto [r, c] = slicePosition(b, slice, tid, q);
    Value gr = b.create<arith::AddIOp>(l, row0, r);
    Value gc = b.create<arith::AddIOp>(l, col0, c);
    Value inside = b.create<arith::AndIOp>(
        l,
        b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, gr,
                                slice.rowSize),
        b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, gc,
                                slice.colSize));
    auto load = b.create<scf::IfOp>(
        l, inside,
        [&](OpBuilder &t, Location tl) {
          SmallVector<Value> ivs(op.getNumLoops(), Value());
          ivs[slice.rowDim] = gr;
          ivs[slice.colDim] = gc;
          if (dims.batch)
            ivs[*dims.batch] = batchIv;
          Value v = t.create<memref::LoadOp>(tl, source,
                                             indicesOf(*slice.operand, ivs));
          t.create<scf::YieldOp>(tl, v);
        },
        [&](OpBuilder &e, Location el) { e.create<scf::YieldOp>(el, zero); });
    values.push_back(load.getResult(0));
  }
  return values;
}

void GemmKernelBuilder::storeSlice(OpBuilder &b, const Slice &slice, Value tile,
                                   Value tid, ArrayRef<Value> values) {
  for (auto [q, value] : llvm::enumerate(values)) {
    auto [r, c] = slicePosition(b, slice, tid, q);
    b.create<memref::StoreOp>(loc(), value, tile, ValueRange{r, c});
  }
}

void GemmKernelBuilder::eraseAbsorbed(RewriterBase &rewriter) {
  Value widened = op->getOperand(0);
  rewriter.eraseOp(op);
  if (fused.fill)
    rewriter.eraseOp(fused.fill);
  if (fused.epilogue)
    rewriter.eraseOp(fused.epilogue);
  // A widened copy of the left operand nothing else reads, and its buffer.
  if (!dims.widening)
    return;
  auto isDealloc = [](Operation *user) {
    return isa<memref::DeallocOp, gpu::DeallocOp>(user);
  };
  for (Operation *user : widened.getUsers())
    if (user != dims.widening && !isDealloc(user))
      return;
  rewriter.eraseOp(dims.widening);
  Operation *alloc = widened.getDefiningOp();
  if (!isa_and_nonnull<memref::AllocOp, gpu::AllocOp>(alloc) ||
      !alloc->hasOneUse() || !isDealloc(*alloc->user_begin()) ||
      !alloc->user_begin()->use_empty())
    return;
  rewriter.eraseOp(*alloc->user_begin());
  rewriter.eraseOp(alloc);
}

void GemmKernelBuilder::buildF32(RewriterBase &rewriter) {
  Location l = loc();
  OpBuilder &b = rewriter;
  FloatType f32 = b.getF32Type();
  // Rows padded by one element: the column-wise writes of a transposed
  // operand do not all hit one bank.
  auto [launch, size, m0, n0, batchIv, tid] = launchOverTiles(
      b, kBM, kBN, kThreadsX, kThreadsY, f32, {{kBM, kBK + 1}, {kBK, kBN + 1}});
  auto [M, N, K] = size;
  Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
  Value as = launch.getWorkgroupAttributions()[0];
  Value bs = launch.getWorkgroupAttributions()[1];
  Slice aSlice{&op->getOpOperand(0), dims.m, dims.k, M, K, kBM, kBK, kThreads};
  Slice bSlice{&op->getOpOperand(1), dims.k, dims.n, K, N, kBK, kBN, kThreads};

  Value zero = b.create<arith::ConstantFloatOp>(l, APFloat(0.0f), f32);
  SmallVector<Value> init(kTileM * kTileN, zero);
  auto kLoop = b.create<scf::ForOp>(
      l, index(b, 0), K, index(b, kBK), init,
      [&](OpBuilder &lb, Location ll, Value k0, ValueRange acc) {
        storeSlice(lb, aSlice, as, tid,
                   loadSlice(lb, aSlice, m0, k0, tid, batchIv));
        storeSlice(lb, bSlice, bs, tid,
                   loadSlice(lb, bSlice, k0, n0, tid, batchIv));
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
      storeIfInside(b, kLoop.getResult(r * kTileN + c), m, n, M, N, batchIv);
    }
  b.create<gpu::TerminatorOp>(l);
  eraseAbsorbed(rewriter);
}

namespace {

struct CudaTileMatmulPass
    : mlir::cuvil::impl::CudaTileMatmulBase<CudaTileMatmulPass> {
  using CudaTileMatmulBase::CudaTileMatmulBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, GemmDims>> work;
    // cuvil-reduce-precision{precision=tf32} allowed TF32 for the function's
    // float32 matmuls.
    bool tf32 = getOperation()->hasAttr(
        mlir::cuvil::CuvilDialect::Tf32MatmulsAttrHelper::getNameStr());
    getOperation().walk([&](linalg::LinalgOp op) {
      // Only host-level ops: not inside a loop or kernel already.
      if (op->getParentOp() != getOperation().getOperation())
        return;
      if (std::optional<GemmDims> dims = tileableDims(op)) {
        if (dims->kind == GemmKind::F32 && tf32)
          dims->kind = GemmKind::TF32;
        work.push_back({op, *dims});
      }
    });
    IRRewriter rewriter(&getContext());
    // Each GEMM absorbs its neighbours before the next one looks at its own
    // (a fill or epilogue is one GEMM's at most: it sits next to one).
    llvm::SmallPtrSet<Operation *, 8> absorbed;
    for (auto [op, dims] : work) {
      if (absorbed.contains(op))
        continue;
      FusedOps fused = fuseEpilogues ? findFused(op) : FusedOps();
      if (fused.fill)
        absorbed.insert(fused.fill);
      if (fused.epilogue)
        absorbed.insert(fused.epilogue);
      GemmKernelBuilder builder(op, dims, fused);
      if (dims.kind != GemmKind::F32)
        builder.buildTensorCore(rewriter);
      else
        builder.buildF32(rewriter);
    }
  }
};

} // namespace
