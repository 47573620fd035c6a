//===- GemmTiles.cpp - Cache and thread tiles of the CPU's GEMMs ----------===//
//
// How cuvil-cpu-schedule cuts a GEMM into cache tiles (thread tasks), K
// blocks and register tiles, and when its tasks are worth the threads.
//
//===----------------------------------------------------------------------===//

#include "GemmTiles.h"
#include "RowKernels.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

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

/// Chooses the cache tiles of an (m, n, k) GEMM and which register loops
/// end in a partial tile. K needs no remainder handling: its register loop
/// steps by 1, so a short last K block only shortens that loop.
GemmTiles cpu::chooseTiles(int64_t m, int64_t n, int64_t k,
                           int64_t registerRows, int64_t registerCols,
                           GemmRemainders &rest) {
  GemmTiles tiles;
  // Small dividing tiles (8 rows, one register tile of columns) would
  // reload the other operand's panel for every few rows: a partial last tile
  // of the full size is cheaper.
  tiles.blockM = cacheTile(m, registerRows, {64, 32}, rest.rows);
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
  if (ShapedType::isDynamic(k))
    tiles.blockK = 128;
  else if (int64_t divisor = largestDivisor(k, {128, 64, 32}))
    tiles.blockK = divisor;
  else
    tiles.blockK = k <= 512 ? k : 128;
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

std::string cpu::vectorizedKSteps(llvm::StringRef gemm, llvm::StringRef fill,
                                  llvm::StringRef out, bool batched) {
  SmallVector<int64_t> steps = {0, 0, 1};
  if (batched)
    steps.insert(steps.begin(), 0);
  return tileUsingFor(gemm, out, (out + "_k").str(), steps) +
         "    transform.structured.vectorize %" + fill.str() +
         " : !transform.any_op\n    transform.structured.vectorize %" +
         out.str() + " : !transform.any_op\n";
}

std::string cpu::registerTileWithFill(llvm::StringRef gemm, llvm::StringRef out,
                                      bool batched, int64_t rows,
                                      int64_t cols) {
  std::string b0 = batched ? "0, " : "";
  std::string o = out.str();
  std::string anyOp = "!transform.any_op";
  return "    %" + o + "_f, %" + o + "_l:2 = transform.structured.fuse %" +
         gemm.str() + " [" + b0 + std::to_string(rows) + ", " +
         std::to_string(cols) + ", 0] : (" + anyOp + ") -> (" + anyOp + ", " +
         anyOp + ", " + anyOp + ")\n" + "    %" + o +
         "_z = transform.structured.match ops{[\"linalg.fill\"]} in %" + o +
         "_l#1 : (" + anyOp + ") -> " + anyOp + "\n" +
         vectorizedKSteps(o + "_f", o + "_z", o, batched);
}

/// Whether `slice` takes whole unit-stride rows' spans of a 2-D tensor: all
/// of its rows from the first (a column slice).
static bool isFullDepthColumnSlice(tensor::ExtractSliceOp slice) {
  auto source = cast<RankedTensorType>(slice.getSourceType());
  return source.getRank() == 2 && slice.getType().getRank() == 2 &&
         slice.hasUnitStride() &&
         isConstantIntValue(slice.getMixedOffsets()[0], 0) &&
         !source.isDynamicDim(0) &&
         isConstantIntValue(slice.getMixedSizes()[0], source.getDimSize(0));
}

void cpu::readRowsFromBlocks(ModuleOp module) {
  SmallVector<tensor::ExtractSliceOp> rows;
  module.walk([&](tensor::ExtractSliceOp row) {
    auto column = row.getSource().getDefiningOp<tensor::ExtractSliceOp>();
    if (column && isFullDepthColumnSlice(column) &&
        row.getType().getRank() == 2 && row.hasUnitStride() &&
        isConstantIntValue(row.getMixedSizes()[0], 1))
      rows.push_back(row);
  });
  IRRewriter rewriter(module.getContext());
  for (tensor::ExtractSliceOp row : rows) {
    auto column = row.getSource().getDefiningOp<tensor::ExtractSliceOp>();
    rewriter.setInsertionPoint(row);
    AffineExpr a, b;
    bindDims(module.getContext(), a, b);
    OpFoldResult col = affine::makeComposedFoldedAffineApply(
        rewriter, row.getLoc(), a + b,
        {column.getMixedOffsets()[1], row.getMixedOffsets()[1]});
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        row, row.getType(), column.getSource(),
        SmallVector<OpFoldResult>{row.getMixedOffsets()[0], col},
        row.getMixedSizes(), row.getMixedStrides());
    if (column->use_empty())
      rewriter.eraseOp(column);
  }
}
