//===- ConvColumns.cpp - Convolution columns per GEMM task ----------------===//
//
// cuvil-cpu-conv-to-gemm turns a convolution into an image-to-column gather
// and a GEMM over its [C*KH*KW, OH*OW] columns. Computed on their own, the
// columns are KH*KW times the image (7 MB for 64 channels of 56 x 56 with a
// 3 x 3 kernel): written out by one kernel, read back by the next. Instead
// each thread task of the GEMM computes the columns of its own output
// pixels, whole output rows of them, right before its register tiles read
// them from the core's cache. The task's slice of the collapsed columns is
// first rewritten as the collapse of a slice of the 6-D gather (over whole
// rows of one image; a batch's columns are all images' side by side), which
// tile-and-fuse can then compute inside the task. A GEMM over pixel rows
// ([N*OH*OW, KH*KW*C] windows times the reordered weights) gathers the rows
// of its task's output pixels the same way.
//
//===----------------------------------------------------------------------===//

#include "ConvColumns.h"
#include "GemmTiles.h"
#include "RowKernels.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

using namespace mlir;
using namespace mlir::cuvil;
using namespace mlir::cuvil::cpu;

/// Whether `collapse` takes image-to-column gathers' columns to a GEMM
/// operand: [1, C, KH, KW, OH, OW] (one image) collapsed by [[0, 1, 2, 3],
/// [4, 5]], or [C, KH, KW, N, OH, OW] (a batch) by [[0, 1, 2], [3, 4, 5]].
static bool isColumnsCollapse(tensor::CollapseShapeOp collapse) {
  auto type = cast<RankedTensorType>(collapse.getSrcType());
  if (type.getRank() != 6 || !type.hasStaticShape())
    return false;
  SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
  SmallVector<ReassociationIndices> oneImage = {{0, 1, 2, 3}, {4, 5}};
  SmallVector<ReassociationIndices> batch = {{0, 1, 2}, {3, 4, 5}};
  return (groups == oneImage && type.getDimSize(0) == 1) || groups == batch;
}

/// Whether `collapse` takes a gather's pixel rows [N, OH, OW, KH, KW, C] to
/// a GEMM's left operand [N*OH*OW, KH*KW*C] (see cuvil-cpu-conv-to-gemm).
static bool isRowsCollapse(tensor::CollapseShapeOp collapse) {
  auto type = cast<RankedTensorType>(collapse.getSrcType());
  SmallVector<ReassociationIndices> rows = {{0, 1, 2}, {3, 4, 5}};
  return type.getRank() == 6 && type.hasStaticShape() &&
         collapse.getReassociationIndices() == rows;
}

/// The gather (a generic of tensor.extract without inputs) that `operand`
/// collapses, by a collapse `isGatherCollapse` accepts, if the operand is
/// its only use; else null.
static linalg::GenericOp
gatherOf(Value operand,
         llvm::function_ref<bool(tensor::CollapseShapeOp)> isGatherCollapse) {
  auto collapse = operand.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || !collapse->hasOneUse() || !isGatherCollapse(collapse))
    return {};
  auto gather = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
  if (!gather || !gather->hasOneUse() || gather.getNumDpsInputs() != 0 ||
      gather.getBody()->getOps<tensor::ExtractOp>().empty())
    return {};
  return gather;
}

linalg::GenericOp cpu::columnsOf(linalg::MatmulOp gemm) {
  return gatherOf(gemm.getDpsInputs()[1], isColumnsCollapse);
}

linalg::GenericOp cpu::pixelRowsOf(linalg::MatmulOp gemm) {
  return gatherOf(gemm.getDpsInputs()[0], isRowsCollapse);
}

/// The most bytes of columns one thread task computes for itself (its tile
/// then stays in the core's L2 cache while the register tiles read it).
constexpr int64_t kColumnTaskBytes = int64_t(1) << 20;

/// A GEMM over pixel rows whose thread tasks gather their own rows: the
/// gather, with `tiles.blockM` whole output rows of one image (pixelRowTile)
/// and `rest.rows` set where they are no whole register tiles; else null.
static linalg::GenericOp pixelRowTasks(linalg::MatmulOp matmul,
                                       int64_t registerRows,
                                       int64_t registerCols,
                                       GemmRemainders &rest, GemmTiles &tiles) {
  linalg::GenericOp rows = pixelRowsOf(matmul);
  int64_t n = cast<ShapedType>(matmul.getResultTypes()[0]).getDimSize(1);
  if (!rows || rest.cols || n % tiles.blockN != 0)
    return {};
  auto type = cast<RankedTensorType>(rows.getResult(0).getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t k = shape[3] * shape[4] * shape[5];
  int64_t colTiles = n / tiles.blockN;
  int64_t bytesPerRow = k * type.getElementTypeBitWidth() / 8;
  int64_t blockM =
      pixelRowTile(shape[0], shape[1] * shape[2], shape[2], registerRows,
                   colTiles, kColumnTaskBytes / bytesPerRow);
  if (!blockM)
    return {};
  tiles.blockM = blockM;
  tiles.gatherRow = gatherRowTile(shape[5]);
  rest.rows = blockM % registerRows != 0;
  // One task (a 7 x 7 image's 49 rows by 64 filters): two, by columns.
  if (shape[0] * shape[1] * shape[2] / blockM * colTiles == 1 &&
      tiles.blockN % (2 * registerCols) == 0)
    tiles.blockN /= 2;
  return rows;
}

int64_t cpu::pixelRowTile(int64_t images, int64_t pixels, int64_t outWidth,
                          int64_t registerRows, int64_t colTiles,
                          int64_t maxRows) {
  // The largest thread's share of the tasks, in rows, a row of a partial
  // register tile (done one row at a time) counted three times.
  auto rowsOfShare = [&](int64_t tile) {
    int64_t cost = tile - tile % registerRows + 3 * (tile % registerRows);
    return largestShare(images * (pixels / tile) * colTiles) * cost;
  };
  int64_t best = 0;
  for (int64_t tile = outWidth; tile <= std::min(pixels, maxRows);
       tile += outWidth)
    if (pixels % tile == 0 && (!best || rowsOfShare(tile) <= rowsOfShare(best)))
      best = tile;
  return best;
}

linalg::GenericOp cpu::columnTasks(linalg::LinalgOp gemm, bool fullRegisterRows,
                                   int64_t registerRows, int64_t registerCols,
                                   GemmRemainders &rest, GemmTiles &tiles) {
  auto matmul = dyn_cast<linalg::MatmulOp>(gemm.getOperation());
  if (!matmul || !fullRegisterRows || isSmallWork(gemm))
    return {};
  if (linalg::GenericOp rows =
          pixelRowTasks(matmul, registerRows, registerCols, rest, tiles))
    return rows;
  if (rest.rows || rest.cols)
    return {};
  linalg::GenericOp columns = columnsOf(matmul);
  if (!columns)
    return {};
  // Tasks within one image: tiles dividing its pixels.
  auto type = cast<RankedTensorType>(columns.getResult(0).getType());
  int64_t k =
      cast<ShapedType>(matmul.getDpsInputs()[0].getType()).getDimSize(1);
  int64_t pixels = type.getDimSize(4) * type.getDimSize(5);
  int64_t blockN = columnTile(pixels, type.getDimSize(5), registerCols);
  int64_t bytes = k * blockN * type.getElementTypeBitWidth() / 8;
  if (!blockN || bytes > kColumnTaskBytes)
    return {};
  tiles.blockN = blockN;
  tiles.blockK = k;
  return columns;
}

int64_t cpu::columnTile(int64_t n, int64_t outWidth, int64_t registerCols) {
  if (n <= 0 || outWidth <= 0 || registerCols <= 0)
    return 0;
  int64_t unit = std::lcm(outWidth, registerCols);
  int64_t widest = std::max(unit, 8 * registerCols);
  for (int64_t tile = widest - widest % unit; tile >= unit; tile -= unit)
    if (n % tile == 0)
      return tile;
  return 0;
}

int64_t cpu::gatherRowTile(int64_t extent) {
  if (ShapedType::isDynamic(extent) || extent <= 128)
    return 0;
  return largestDivisor(extent, {64, 32, 16});
}

std::string cpu::fuseColumnsIntoTasks(int64_t id, int64_t rowTile) {
  std::string i = std::to_string(id);
  std::string attr = CuvilDialect::GemmIdAttrHelper::getNameStr().str();
  // The gather's tile ([1, C, KH, KW, rows, OW], or [C, KH, KW, 1, rows,
  // OW] for a batch): one output row per innermost loop (the unit image
  // dimension's loop runs once), its unit dimensions folded so the
  // vectorizer sees the row's contiguous read (as vectorBlock does for
  // gathers).
  return "    %g" + i +
         " = transform.structured.match ops{[\"linalg.generic\"]} "
         "attributes{" +
         attr + " = " + i +
         " : i64} in %root : (!transform.any_op) -> !transform.any_op\n"
         "    %gt" +
         i + ", %fl" + i + " = transform.cuvil.fuse_into_containing_op %g" + i +
         " into %tf" + i +
         " : (!transform.any_op, !transform.any_op) -> (!transform.any_op, "
         "!transform.any_op)\n"
         "    transform.apply_patterns to %fl" +
         i +
         " {\n"
         "      transform.apply_patterns.tensor.fold_tensor_empty\n"
         "    } : !transform.any_op\n" +
         tileUsingFor("gt" + i, "gr" + i, "grl" + i, {1, 1, 1, 1, 1, rowTile}) +
         "    transform.apply_patterns to %grl" + i +
         "#4 {\n"
         "      transform.apply_patterns.linalg.fold_unit_extent_dims_via_"
         "slices\n"
         "    } : !transform.any_op\n"
         "    %gv" +
         i + " = transform.structured.match ops{[\"linalg.generic\"]} in %grl" +
         i +
         "#4 : (!transform.any_op) -> !transform.any_op\n"
         "    transform.structured.vectorize %gv" +
         i + " {vectorize_nd_extract} : !transform.any_op\n";
}

/// The task's slice `slice` of the collapse `collapse` of a gather, as the
/// collapse of a slice of the gather, or null where the slice does not take
/// every row of K and whole output rows of one image. The pixels are the
/// collapse's columns ([C*KH*KW, (N*)OH*OW]), or with `pixelRows` its rows
/// ([N*OH*OW, KH*KW*C]).
static Value sliceBeforeCollapse(RewriterBase &rewriter,
                                 tensor::ExtractSliceOp slice,
                                 tensor::CollapseShapeOp collapse,
                                 bool pixelRows) {
  ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
  SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
  unsigned pixelDim = pixelRows ? 0 : 1, kDim = 1 - pixelDim;
  int64_t width = shape[groups[pixelDim].back()];
  int64_t pixels = shape[groups[pixelDim].back() - 1] * width;
  std::optional<int64_t> taken =
      getConstantIntValue(slice.getMixedSizes()[pixelDim]);
  std::optional<int64_t> depth =
      getConstantIntValue(slice.getMixedSizes()[kDim]);
  if (!slice.hasUnitStride() || !depth ||
      *depth != collapse.getResultType().getDimSize(kDim) || !taken ||
      *taken % width != 0 || pixels % *taken != 0 ||
      !isConstantIntValue(slice.getMixedOffsets()[kDim], 0))
    return {};
  Location loc = slice.getLoc();
  rewriter.setInsertionPoint(slice);
  AffineExpr p;
  bindDims(rewriter.getContext(), p);
  OpFoldResult offset = slice.getMixedOffsets()[pixelDim];
  auto apply = [&](AffineExpr e) {
    return affine::makeComposedFoldedAffineApply(rewriter, loc, e, {offset});
  };
  // K whole; the pixels: (image,) first output row, every column.
  SmallVector<OpFoldResult> offsets, sizes;
  for (unsigned g = 0; g < 2; ++g) {
    if (g == kDim) {
      for (int64_t d : groups[g]) {
        offsets.push_back(rewriter.getIndexAttr(0));
        sizes.push_back(rewriter.getIndexAttr(shape[d]));
      }
      continue;
    }
    AffineExpr inImage = p;
    if (groups[g].size() == 3) {
      offsets.push_back(apply(p.floorDiv(pixels)));
      sizes.push_back(rewriter.getIndexAttr(1));
      inImage = p % pixels;
    }
    offsets.push_back(apply(inImage.floorDiv(width)));
    sizes.push_back(rewriter.getIndexAttr(*taken / width));
    offsets.push_back(rewriter.getIndexAttr(0));
    sizes.push_back(rewriter.getIndexAttr(width));
  }
  Value part = rewriter.create<tensor::ExtractSliceOp>(
      loc, collapse.getSrc(), offsets, sizes,
      SmallVector<OpFoldResult>(6, rewriter.getIndexAttr(1)));
  return rewriter.create<tensor::CollapseShapeOp>(loc, slice.getType(), part,
                                                  groups);
}

/// Whether `slice` is a GEMM's left operand (a task's pixel rows).
static bool isLeftOperand(tensor::ExtractSliceOp slice) {
  return llvm::any_of(slice->getUses(), [](OpOperand &use) {
    return isa<linalg::MatmulOp>(use.getOwner()) && use.getOperandNumber() == 0;
  });
}

void cpu::sliceColumnsBeforeCollapse(ModuleOp module) {
  SmallVector<std::pair<tensor::ExtractSliceOp, tensor::CollapseShapeOp>>
      slices;
  module.walk([&](tensor::ExtractSliceOp slice) {
    auto collapse = slice.getSource().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || !slice->getParentOfType<scf::ForallOp>())
      return;
    auto gather = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
    if (gather &&
        gather->hasAttr(CuvilDialect::GemmIdAttrHelper::getNameStr()) &&
        slice.getType().getRank() == 2 &&
        (isColumnsCollapse(collapse) || isRowsCollapse(collapse)))
      slices.push_back({slice, collapse});
  });
  IRRewriter rewriter(module.getContext());
  for (auto [slice, collapse] : slices)
    if (Value replacement = sliceBeforeCollapse(rewriter, slice, collapse,
                                                isLeftOperand(slice) &&
                                                    isRowsCollapse(collapse))) {
      rewriter.replaceOp(slice, replacement);
      if (collapse->use_empty())
        rewriter.eraseOp(collapse);
    }
}
