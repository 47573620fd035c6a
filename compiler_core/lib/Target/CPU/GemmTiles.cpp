//===- GemmTiles.cpp - Cache and thread tiles of the CPU's GEMMs ----------===//
//
// How cuvil-cpu-schedule cuts a GEMM into cache tiles (thread tasks), K
// blocks and register tiles, and when its tasks are worth the threads.
//
//===----------------------------------------------------------------------===//

#include "GemmTiles.h"
#include "RowKernels.h"

#include "cuvil/Target/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::cuvil;
using namespace mlir::cuvil::cpu;

/// Largest of `candidates` dividing `size`, or 0.
int64_t cpu::largestDivisor(int64_t size, ArrayRef<int64_t> candidates) {
  for (int64_t c : candidates)
    if (c > 0 && size % c == 0)
      return c;
  return 0;
}

/// The cache tile along one GEMM dimension of `size` whose register tile is
/// `reg`: the whole dimension when it fits one cache tile, else the largest
/// candidate dividing it, else (with `anyMultiple`) the largest multiple of
/// `reg` between the candidates that divides it (a convolution's 56 x 56 =
/// 3136 pixels as columns: 224, which ran 1.54 -> 0.79 ms against 256 and a
/// partial tile). A dynamic size, or a static one none of those divides (odd
/// and prime sizes), gets the largest candidate and `partial`: its last tile
/// is cut short and the register loops inside are peeled (see gemmBlock), as
/// are those of a whole dimension that `reg` does not divide.
static int64_t cacheTile(int64_t size, int64_t reg,
                         ArrayRef<int64_t> candidates, bool &partial,
                         bool anyMultiple = false) {
  partial = true;
  if (ShapedType::isDynamic(size))
    return candidates.front();
  if (size <= candidates.front()) {
    partial = size % reg != 0;
    return size;
  }
  if (int64_t divisor = largestDivisor(size, candidates)) {
    partial = false;
    return divisor;
  }
  for (int64_t tile = candidates.front() - reg;
       anyMultiple && tile > candidates.back(); tile -= reg)
    if (size % tile == 0) {
      partial = false;
      return tile;
    }
  return candidates.front();
}

/// From which rows, depth and columns a static GEMM counts as large. From
/// 256 rows: the s256 block (its projections and FFN, 256 rows by 512 or
/// 2048 deep) ran 1.09-1.10x ONNX Runtime's time with 64-row tiles and
/// 1.04x with 128 (bench_peers, two alternated runs).
static constexpr int64_t kLargeGemmRows = 256;
static constexpr int64_t kLargeGemmDepth = 512;
static constexpr int64_t kLargeGemmCols = 256;

/// A GEMM at most this wide (one or two cache tiles of columns) and at least
/// kStreamedDepth deep reads each row of its left operand once, streaming it
/// from memory: K blocks of up to 1024 let each register tile walk a row
/// 4 KiB at a time, which the hardware prefetchers follow, where 128-deep
/// blocks gave them 512-byte pieces of eight rows a page apart. Measured on
/// two threads, A/B in one process: 4096x4096x64 8.0-8.7 -> 6.4-6.7 ms
/// (the right operand compiled in; 9.0-9.3 -> 6.6-7.0 as an input),
/// 2048x8192x64 11.0 -> 7.3, 4096x2048x128 6.9 -> 6.8; 512x2048x64,
/// 1024x1024x128 and 256x4096x128 within noise.
static constexpr int64_t kStreamedCols = 128;
static constexpr int64_t kStreamedDepth = 2048;

/// Up to this depth a static GEMM of whole register tiles is one K block: a
/// register tile's rows of the left operand (8 x 512 floats, 16 KiB) stay
/// in L1 and the block of the right one (512 x 256, 512 KiB) in L2, and its
/// accumulators start at the fill's value and end in the epilogue without a
/// pass zeroing the result or a reload of it per K block (see gemmBlock).
/// A right operand that is not a constant is packed per K block at run time
/// (cuvil-cpu-pack-gemm-panels), on the stack up to kMaxStackPanelBytes
/// and only inside a K block's loop: the K blocks stay
/// with partial tiles or a block larger than that (256x512x2048 with B an
/// input ran 1.73 ms packed in two blocks, 4.19 unpacked in one). Measured on
/// two threads, A/B in one process against blocks of 256 (large GEMMs) or 128:
/// 256x512x2048 1.54-1.58 -> 1.45-1.50 ms, 1024x512x2048 6.08-6.21
/// -> 5.75-5.88, 512x256x512 0.39 -> 0.35, 256x512x512 0.47-0.49 ->
/// 0.45-0.46, the s256 block 5.50 -> 5.37; the MLPs and the convolutions
/// within noise. Deeper than 256, only where N is more than one column tile:
/// where every row tile reads the same block of B (N = 256), 512 deep ran
/// slower, 1024x512x256 0.90-0.91 -> 0.93-0.96 ms, 2048x512x256 1.77-1.80
/// -> 1.84-1.87.
static constexpr int64_t kWholeDepth = 512;

/// Chooses the cache tiles of an (m, n, k) GEMM and which register loops
/// end in a partial tile. K needs no remainder handling: where K is not
/// whole blocks its register loop steps by 1 (registerKStep), so a short
/// last K block only shortens that loop.
GemmTiles cpu::chooseTiles(int64_t m, int64_t n, int64_t k,
                           int64_t registerRows, int64_t registerCols,
                           GemmRemainders &rest, bool rhsConstant,
                           int64_t elementBytes) {
  GemmTiles tiles;
  // A large GEMM takes taller tiles and longer K blocks: each K block of B
  // (256 x 256 floats, 256 KB, in L2) then serves 128 rows instead of 64,
  // halving what B costs in L3 traffic per multiply-add. On one core,
  // 2048x2048x1024 went from 0.82-0.86x to 0.91-0.96x OpenBLAS's speed and
  // 1024^3 from 0.91-0.99x to 1.01-1.06x (three alternated runs each); on
  // two threads 4096x4096x1024 from 1.14-1.17x to 1.09-1.13x NumPy's time
  // and the 1024x512->2048->512 MLP from 1.06-1.08x to 0.98-0.99x ONNX
  // Runtime's (bench_peers, two alternated runs).
  bool large = !ShapedType::isDynamic(m) && !ShapedType::isDynamic(n) &&
               !ShapedType::isDynamic(k) && m >= kLargeGemmRows &&
               k >= kLargeGemmDepth && n >= kLargeGemmCols;
  // Small dividing tiles (8 rows, one register tile of columns) would
  // reload the other operand's panel for every few rows: a partial last tile
  // of the full size is cheaper.
  static constexpr int64_t kRowTiles[] = {128, 64, 32};
  ArrayRef<int64_t> rowTiles(kRowTiles);
  tiles.blockM = cacheTile(m, registerRows,
                           large ? rowTiles : rowTiles.drop_front(), rest.rows);
  SmallVector<int64_t, 2> colTiles = {8 * registerCols, 4 * registerCols};
  // A GEMV's (one-row tiles') threads split the columns: the widest tile
  // that still leaves four (two per thread on two cores), down to one
  // register tile.
  if (registerRows == 1 && !ShapedType::isDynamic(n)) {
    colTiles = {registerCols, registerCols};
    for (int64_t c : {8 * registerCols, 4 * registerCols, 2 * registerCols})
      if (n % c == 0 && n / c >= 4) {
        colTiles.front() = c;
        break;
      }
  }
  // Rows keep the largest tile and a partial last one (1000 rows in 40-row
  // tiles ran no faster: each panel of B then serves fewer rows).
  tiles.blockN = cacheTile(n, registerCols, colTiles, rest.cols,
                           /*anyMultiple=*/true);
  bool streamed = !ShapedType::isDynamic(n) && n <= kStreamedCols &&
                  !ShapedType::isDynamic(k) && k >= kStreamedDepth;
  if (ShapedType::isDynamic(k))
    tiles.blockK = 128;
  else if (int64_t depth = streamed ? largestDivisor(k, {1024, 512}) : 0)
    tiles.blockK = depth;
  else if (k <= kWholeDepth && !rest.rows && !rest.cols &&
           (k <= kWholeDepth / 2 || tiles.blockN < n) &&
           (rhsConstant ||
            k * tiles.blockN * elementBytes <= kMaxStackPanelBytes))
    tiles.blockK = k;
  else if (large && k % 256 == 0)
    tiles.blockK = 256;
  else if (int64_t divisor = largestDivisor(k, {128, 64, 32}))
    tiles.blockK = divisor;
  else
    tiles.blockK = k <= kWholeDepth ? k : 128;
  return tiles;
}

/// One cache tile covering a whole static GEMM runs on one thread while
/// the others wait at the join (an FFN's 64x512 by 512x128 on two cores):
/// halves it along N, or else M, where each half still holds whole
/// register tiles, so two threads share the work.
void cpu::splitLoneTile(int64_t m, int64_t n, int64_t registerRows,
                        int64_t registerCols, const GemmRemainders &rest,
                        GemmTiles &tiles) {
  if (ShapedType::isDynamic(m) || ShapedType::isDynamic(n) || rest.rows ||
      rest.cols || tiles.blockM < m || tiles.blockN < n)
    return;
  if (tiles.blockN % (2 * registerCols) == 0)
    tiles.blockN /= 2;
  else if (tiles.blockM % (2 * registerRows) == 0)
    tiles.blockM /= 2;
}

/// Thread tasks of a static GEMM below which an odd count leaves a core
/// idle for a whole task (3 tasks on 2 cores run as 2 rounds).
static constexpr int64_t kFewTasks = 8;

/// A static GEMM cut in an odd number of thread tasks under kFewTasks (the
/// merged q|k|v projection of a small block: 64 x 384, three 128-column
/// tiles) gets narrower column tiles of whole register tiles dividing N,
/// the fewest that make the count even.
void cpu::evenOutTasks(int64_t m, int64_t n, int64_t registerCols,
                       const GemmRemainders &rest, GemmTiles &tiles) {
  if (ShapedType::isDynamic(m) || ShapedType::isDynamic(n) || rest.rows ||
      rest.cols)
    return;
  // One task is splitLoneTile's to share (or not: small work is faster on
  // one thread).
  int64_t rowTiles = m / tiles.blockM, colTiles = n / tiles.blockN;
  int64_t tasks = rowTiles * colTiles;
  if (tasks < 3 || tasks >= kFewTasks || tasks % 2 == 0)
    return;
  for (int64_t parts = colTiles + 1; parts <= 2 * colTiles; ++parts) {
    if (n % parts != 0 || (n / parts) % registerCols != 0 ||
        (rowTiles * parts) % 2 != 0)
      continue;
    tiles.blockN = n / parts;
    return;
  }
}

/// Threads the row tiles are balanced for: static loops are split into
/// contiguous, equal shares of tasks (see Runtime/ThreadPool.cpp), and the
/// host has two cores; the balance holds for any even count.
static constexpr int64_t kBalancedThreads = 2;

int64_t cpu::largestShare(int64_t tasks) {
  return llvm::divideCeil(tasks, kBalancedThreads);
}

/// A static GEMM whose row tiles make an odd number of tasks, or end in a
/// partial tile (784 rows in 64-row tiles: 13 tasks), leaves one thread the
/// extra task (7 full tiles against 5 and a quarter): picks, from the row
/// tile down to half of it in whole register tiles, the tile whose largest
/// share of the tasks has the fewest rows (784: 56-row tiles, 14 tasks, 392
/// rows each instead of 448; 576: 48-row tiles, 12 tasks instead of 9),
/// keeping the larger tile on a tie. Rows the tile divided stay divided.
void cpu::balanceRowTiles(int64_t m, int64_t n, int64_t registerRows,
                          GemmRemainders &rest, GemmTiles &tiles) {
  if (ShapedType::isDynamic(m) || ShapedType::isDynamic(n) || rest.cols ||
      m <= tiles.blockM || n % tiles.blockN != 0)
    return;
  bool divided = m % tiles.blockM == 0;
  int64_t colTiles = n / tiles.blockN;
  auto rowsOfShare = [&](int64_t tile) {
    return largestShare(llvm::divideCeil(m, tile) * colTiles) * tile;
  };
  int64_t best = tiles.blockM, bestShare = rowsOfShare(best);
  for (int64_t tile = tiles.blockM - registerRows; tile >= tiles.blockM / 2;
       tile -= registerRows) {
    int64_t share = rowsOfShare(tile);
    if (share < bestShare && (!divided || m % tile == 0)) {
      best = tile;
      bestShare = share;
    }
  }
  tiles.blockM = best;
  rest.rows = m % best != 0;
}

/// Whether a GEMM's multiply-adds are known to be fewer than `work`
/// (static sizes only: a dynamic GEMM may be large).
static bool hasLessWorkThan(linalg::LinalgOp gemm, int64_t work) {
  int64_t product = 1;
  for (int64_t size : gemm.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(size))
      return false;
    product *= size;
    if (product >= work)
      return false;
  }
  return true;
}

/// Multiply-adds of a GEMM worth threads at all: a few microseconds on one
/// core.
static constexpr int64_t kSerialWork = int64_t(1) << 20;

/// Whether a GEMM does too little work to split across threads: waking the
/// OpenMP team and joining it costs more than half of it.
bool cpu::isSmallWork(linalg::LinalgOp gemm) {
  return hasLessWorkThan(gemm, kSerialWork);
}

/// Whether a GEMM is worth cutting into more cache tiles than its sizes ask
/// for, so that two threads share it. Measured on two cores: a 64x512 by
/// 512x128 product (4M multiply-adds) runs in about two thirds of its
/// one-thread time as two 64x64 tiles, a 64x128 by 128x128 one (1M) is no
/// faster split (the join and the second thread's cold caches eat the gain).
bool cpu::isWorthSharing(linalg::LinalgOp gemm) {
  return !hasLessWorkThan(gemm, 4 * kSerialWork);
}

int64_t cpu::registerKStep(int64_t k, int64_t blockK, int64_t vectorLanes,
                           int64_t accumulators) {
  constexpr int64_t kSteps = 4;
  // With AVX-512's 16 float lanes (32 vector registers) any register tile;
  // with AVX2's 8 (16 registers) a tile of 8 accumulators, whose four
  // steps' operands LLVM interleaves without a spill (4 x 2 vectors: the
  // MLP 1024 0.94x and 1024x512x256 0.98x the time of one step, alternated
  // in one process on a Zen 3). wasm's 4-lane tiles ran slower in V8 with
  // four steps (1024x512x256 6.7 -> 8.4 ms), its register allocation spills.
  constexpr int64_t kAvx2Accumulators = 8;
  bool fits = vectorLanes >= kAvx512Lanes ||
              (vectorLanes >= kAvx2Lanes && accumulators <= kAvx2Accumulators);
  return fits && !ShapedType::isDynamic(k) && blockK > 0 && k % blockK == 0 &&
                 blockK % kSteps == 0
             ? kSteps
             : 1;
}

bool cpu::isRegisterKSteps(OpFoldResult size) {
  std::optional<int64_t> steps = getConstantIntValue(size);
  return steps && *steps >= 1 && *steps <= 8;
}

std::string cpu::vectorizedKSteps(llvm::StringRef gemm, llvm::StringRef fill,
                                  llvm::StringRef out, bool batched,
                                  int64_t kStep) {
  SmallVector<int64_t> steps = {0, 0, kStep};
  if (batched)
    steps.insert(steps.begin(), 0);
  return tileUsingFor(gemm, out, (out + "_k").str(), steps) +
         "    transform.structured.vectorize %" + fill.str() +
         " : !transform.any_op\n    transform.structured.vectorize %" +
         out.str() + " : !transform.any_op\n";
}

std::string cpu::registerTileWithFill(llvm::StringRef gemm, llvm::StringRef out,
                                      bool batched, int64_t rows, int64_t cols,
                                      int64_t kStep) {
  std::string b0 = batched ? "0, " : "";
  std::string o = out.str();
  std::string anyOp = "!transform.any_op";
  return "    %" + o + "_f, %" + o + "_l:2 = transform.structured.fuse %" +
         gemm.str() + " [" + b0 + std::to_string(rows) + ", " +
         std::to_string(cols) + ", 0] : (" + anyOp + ") -> (" + anyOp + ", " +
         anyOp + ", " + anyOp + ")\n" + "    %" + o +
         "_z = transform.structured.match ops{[\"linalg.fill\"]} in %" + o +
         "_l#1 : (" + anyOp + ") -> " + anyOp + "\n" +
         vectorizedKSteps(o + "_f", o + "_z", o, batched, kStep);
}

/// Whether `slice` takes whole unit-stride rows' spans of a 2-D tensor: all
/// of its rows from the first (a column slice); of a 3-D one, the same in
/// one batch (a batched GEMM's operand).
static bool isFullDepthColumnSlice(tensor::ExtractSliceOp slice) {
  auto source = cast<RankedTensorType>(slice.getSourceType());
  int64_t rank = source.getRank(), depth = rank - 2;
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  return (rank == 2 || (rank == 3 && isConstantIntValue(sizes[0], 1))) &&
         slice.getType().getRank() == rank && slice.hasUnitStride() &&
         isConstantIntValue(slice.getMixedOffsets()[depth], 0) &&
         !source.isDynamicDim(depth) &&
         isConstantIntValue(sizes[depth], source.getDimSize(depth));
}

void cpu::readRowsFromBlocks(ModuleOp module) {
  SmallVector<tensor::ExtractSliceOp> rows;
  module.walk([&](tensor::ExtractSliceOp row) {
    auto column = row.getSource().getDefiningOp<tensor::ExtractSliceOp>();
    int64_t rank = row.getType().getRank();
    if (column && isFullDepthColumnSlice(column) &&
        column.getType().getRank() == rank && row.hasUnitStride() &&
        isRegisterKSteps(row.getMixedSizes()[rank - 2]))
      rows.push_back(row);
  });
  IRRewriter rewriter(module.getContext());
  for (tensor::ExtractSliceOp row : rows) {
    auto column = row.getSource().getDefiningOp<tensor::ExtractSliceOp>();
    rewriter.setInsertionPoint(row);
    AffineExpr a, b;
    bindDims(module.getContext(), a, b);
    // The row's place in the column's source: the two slices' offsets added.
    SmallVector<OpFoldResult> offsets;
    for (auto [outer, inner] :
         llvm::zip(column.getMixedOffsets(), row.getMixedOffsets()))
      offsets.push_back(affine::makeComposedFoldedAffineApply(
          rewriter, row.getLoc(), a + b, {outer, inner}));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        row, row.getType(), column.getSource(), offsets, row.getMixedSizes(),
        row.getMixedStrides());
    if (column->use_empty())
      rewriter.eraseOp(column);
  }
}

linalg::GenericOp cpu::elementwiseUserOf(Value value) {
  if (!value.hasOneUse())
    return {};
  OpOperand &use = *value.getUses().begin();
  auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
  auto type = dyn_cast<ShapedType>(value.getType());
  if (!generic || !type || generic.getNumResults() != 1 ||
      generic.getNumLoops() != type.getRank() ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.isDpsInput(&use) ||
      !generic.getMatchingIndexingMap(&use).isIdentity())
    return {};
  return generic;
}

linalg::GenericOp cpu::epilogueOf(linalg::LinalgOp gemm) {
  Value result = gemm->getResult(0);
  linalg::GenericOp generic = elementwiseUserOf(result);
  if (!generic || generic.getResult(0).getType() != result.getType())
    return {};
  return generic;
}

/// Replaces `gemm` (static, its init a fill; with its `epilogue`, if any)
/// by GEMMs over consecutive column ranges of the given `widths`, each
/// computed into its slice of one destination (the epilogue tiled alike).
static void splitColumns(RewriterBase &rewriter, linalg::MatmulOp gemm,
                         linalg::GenericOp epilogue, ArrayRef<int64_t> widths) {
  auto fill = gemm.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  auto type = cast<RankedTensorType>(gemm.getResultTypes()[0]);
  Value lhs = gemm.getDpsInputs()[0], rhs = gemm.getDpsInputs()[1];
  int64_t m = type.getDimSize(0);
  int64_t k = cast<RankedTensorType>(lhs.getType()).getDimSize(1);
  Operation *last = epilogue ? epilogue.getOperation() : gemm.getOperation();
  Location loc = gemm.getLoc();
  rewriter.setInsertionPoint(last);
  Value result = epilogue ? epilogue.getDpsInits()[0]
                          : rewriter.create<tensor::EmptyOp>(
                                loc, type.getShape(), type.getElementType());
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  SmallVector<OpFoldResult> strides = {one, one};
  int64_t offset = 0;
  for (int64_t size : widths) {
    SmallVector<OpFoldResult> offsets = {zero, rewriter.getIndexAttr(offset)};
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(m),
                                       rewriter.getIndexAttr(size)};
    Value columns = rewriter.create<tensor::ExtractSliceOp>(
        loc, rhs, SmallVector<OpFoldResult>{zero, offsets[1]},
        SmallVector<OpFoldResult>{rewriter.getIndexAttr(k), sizes[1]}, strides);
    Value dest = rewriter.create<tensor::ExtractSliceOp>(loc, result, offsets,
                                                         sizes, strides);
    Value init =
        epilogue ? rewriter.create<tensor::EmptyOp>(
                       loc, ArrayRef<int64_t>{m, size}, type.getElementType())
                 : dest;
    Value filled =
        rewriter.create<linalg::FillOp>(loc, fill.getDpsInputs()[0], init)
            .getResult(0);
    Value part = rewriter
                     .create<linalg::MatmulOp>(loc, filled.getType(),
                                               ValueRange{lhs, columns}, filled)
                     .getResult(0);
    if (epilogue) {
      FailureOr<TilingResult> tiled =
          cast<TilingInterface>(epilogue.getOperation())
              .getTiledImplementation(rewriter, offsets, sizes);
      // (Linalg ops always tile; were it to fail, the original GEMM and
      // epilogue stay in use and the parts made so far are dead code.)
      if (failed(tiled))
        return;
      auto op = cast<linalg::GenericOp>(tiled->tiledOps.front());
      // Its slices of the whole GEMM result and init: the part and `dest`.
      for (OpOperand &operand : op->getOpOperands()) {
        auto slice = operand.get().getDefiningOp<tensor::ExtractSliceOp>();
        if (!slice || (slice.getSource() != gemm.getResult(0) &&
                       slice.getSource() != result))
          continue;
        rewriter.modifyOpInPlace(op, [&] {
          operand.set(slice.getSource() == result ? dest : part);
        });
        if (slice->use_empty())
          rewriter.eraseOp(slice);
      }
      part = op.getResult(0);
    }
    result = rewriter.create<tensor::InsertSliceOp>(loc, part, result, offsets,
                                                    sizes, strides);
    offset += size;
  }
  rewriter.replaceOp(last, result);
  if (epilogue)
    rewriter.eraseOp(gemm);
  if (fill->use_empty())
    rewriter.eraseOp(fill);
  // Constant weights (`constants=`) become one constant per range, each
  // packed into panels when compiled, instead of slices of one kept whole.
  if (!rhs.getDefiningOp<arith::ConstantOp>())
    return;
  SmallVector<Operation *> slices(rhs.getUsers());
  RewritePatternSet patterns(rewriter.getContext());
  tensor::populateFoldConstantExtractSlicePatterns(
      patterns, [](tensor::ExtractSliceOp) { return true; });
  (void)applyOpPatternsAndFold(slices, std::move(patterns));
}

/// The column ranges a GEMM over `n` columns is split into: whole register
/// tiles, then one vector, then what is left (fewer than a vector), each
/// range given a register tile of its exact width. Vectors longer than one
/// register but not a whole number of them (24 or 17 floats with 16 lanes)
/// compiled to code 30 times slower than either, hence the middle range.
static SmallVector<int64_t> columnRanges(int64_t n, int64_t registerCols,
                                         int64_t vectorLanes) {
  SmallVector<int64_t> widths;
  int64_t whole = n - n % registerCols, rest = n % registerCols;
  if (whole)
    widths.push_back(whole);
  if (rest >= vectorLanes)
    widths.push_back(vectorLanes);
  if (rest % vectorLanes)
    widths.push_back(rest % vectorLanes);
  return widths;
}

void cpu::splitRemainderColumns(ModuleOp module, int64_t registerRows,
                                int64_t registerCols, int64_t vectorLanes,
                                bool fuseEpilogues) {
  SmallVector<linalg::MatmulOp> gemms;
  module.walk([&](linalg::MatmulOp gemm) {
    auto type = dyn_cast<RankedTensorType>(gemm.getResultTypes()[0]);
    if (!type || !type.hasStaticShape() ||
        !gemm.getDpsInits()[0].getDefiningOp<linalg::FillOp>() ||
        llvm::any_of(gemm.getDpsInputs(), [](Value v) {
          auto t = dyn_cast<RankedTensorType>(v.getType());
          return !t || !t.hasStaticShape();
        }))
      return;
    int64_t m = type.getDimSize(0), n = type.getDimSize(1);
    if (m >= registerRows && n > vectorLanes && n % vectorLanes != 0)
      gemms.push_back(gemm);
  });
  IRRewriter rewriter(module.getContext());
  for (linalg::MatmulOp gemm : gemms) {
    int64_t n = cast<RankedTensorType>(gemm.getResultTypes()[0]).getDimSize(1);
    linalg::GenericOp epilogue = fuseEpilogues ? epilogueOf(gemm) : nullptr;
    splitColumns(rewriter, gemm, epilogue,
                 columnRanges(n, registerCols, vectorLanes));
  }
}
