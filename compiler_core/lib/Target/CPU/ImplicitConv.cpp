//===- ImplicitConv.cpp - Convolutions as GEMMs over shifted rows ---------===//
//
// An image-to-column copy is KH*KW times the image (7 MB of copies for 64
// channels of 56 x 56 and a 3 x 3 kernel). With unit strides no copy is
// needed: number a convolution's outputs over whole rows of its padded
// image, p = oh * W' + ow (W' the padded width), and output p reads, for
// channel c and kernel offset (kh, kw), element p + kh * d0 * W' + kw * d1 of
// the channel's flattened plane. For a fixed (c, kh, kw) consecutive outputs
// read consecutive elements, so the convolution is a GEMM of the weights by
// a right operand whose row (c, kh, kw) is the image's plane shifted by a
// constant, read in place:
//
//   out[n, fo, fi, p] += w[fo, c, kh, kw, fi] * x[n, c, p + kh*d0*W' + kw*d1]
//
// a linalg.generic whose filters are split into register rows of 8 (fo, fi),
// the weights packed at compile time so a tile's 8 filters of one step are
// contiguous, and whose columns are split into register tiles of 3 vectors
// of 16 lanes (p = pb * 48 + j * 16 + l), so that a register tile's 24
// accumulators are whole registers. The price: the W' - OW outputs of each
// row past the image's edge are computed and dropped, and the columns are
// rounded up to whole register tiles (more rows of padding keep every read
// inside its channel's plane). cuvil-cpu-schedule tiles it like a GEMM:
// thread tasks of filters by columns, blocks of channels, register tiles
// accumulated one channel and kernel offset per step.
//
//===----------------------------------------------------------------------===//

#include "ImplicitConv.h"
#include "PadKernels.h"
#include "RowKernels.h"

#include "cuvil/Dialect/Cuvil/IR/CuvilDialect.h"
#include "cuvil/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cstring>

using namespace mlir;
using namespace mlir::cuvil;
using namespace mlir::cuvil::cpu;

/// The most bytes of the image one thread task reads: its channels' rows for
/// the task's columns and their span (they stay in the core's L2 cache while
/// every register tile of the task reads them).
constexpr int64_t kTaskImageBytes = int64_t(1) << 20;
/// The widest thread task, in register tiles, and its most filters.
constexpr int64_t kWidestTask = 24;
constexpr int64_t kTallestTask = 128;
/// At most this fraction more columns than the image's pixels (a sixth):
/// 14 x 14 images (224 columns for 196 pixels) ran 16% faster than with
/// gathered columns, 7 x 7 ones (64 for 49) up to a fifth slower.
constexpr int64_t kWasteDenominator = 6;
/// Below these many channels or filters the gathered columns were faster
/// (8 channels of 64 x 64 into 32 filters: 0.114 against 0.133 ms; 16 of
/// 32 x 32 into 16: 0.053 against 0.059; 16 of 64 x 64 into 32: 0.246
/// against 0.210).
constexpr int64_t kFewestChannels = 16;
constexpr int64_t kFewestFilters = 32;
/// Channels per block of the reduction: a register tile's rows of the image
/// for one block stay in the core's L1 cache across the task's filters.
constexpr int64_t kChannelBlock = 32;
/// The most kernel offsets whose loops the register kernel unrolls.
constexpr int64_t kUnrolledWindow = 9;

/// The work of the thread with the largest share of `tiles`' tasks.
static int64_t largestThreadWork(int64_t images, int64_t filters, int64_t cols,
                                 const GemmTiles &tiles) {
  int64_t tasks = images * (filters / tiles.blockM) * (cols / tiles.blockN);
  return largestShare(tasks) * tiles.blockM * tiles.blockN;
}

GemmTiles cpu::implicitConvTiles(int64_t images, int64_t filters, int64_t cols,
                                 int64_t channelBytes, int64_t span,
                                 int64_t registerRows, int64_t registerCols) {
  GemmTiles best{0, 0, 0};
  if (registerRows <= 0 || registerCols <= 0 || filters % registerRows != 0 ||
      cols % registerCols != 0)
    return best;
  int64_t bestWork = 0;
  for (int64_t blockM = std::min(filters, kTallestTask); blockM >= registerRows;
       blockM -= registerRows) {
    if (filters % blockM != 0)
      continue;
    for (int64_t blockN = registerCols;
         blockN <= std::min(cols, kWidestTask * registerCols);
         blockN += registerCols) {
      if (cols % blockN != 0 ||
          channelBytes * (blockN + span) > kTaskImageBytes)
        continue;
      GemmTiles tiles{blockM, blockN, 0};
      int64_t work = largestThreadWork(images, filters, cols, tiles);
      // Least work for the busiest thread; on a tie, fewer, larger tasks.
      if (!best.blockN || work < bestWork ||
          (work == bestWork && blockM * blockN > best.blockM * best.blockN)) {
        best = tiles;
        bestWork = work;
      }
    }
  }
  return best;
}

/// The columns of an implicit GEMM computing `valid` outputs per image
/// (whole padded rows): the count, rounded up to whole register tiles and
/// at most a sixth over the image's `pixels`, whose thread tasks leave the
/// busiest thread least work; 0 if none.
static int64_t implicitColumns(int64_t images, int64_t filters, int64_t valid,
                               int64_t pixels, int64_t channelBytes,
                               int64_t span, int64_t registerRows,
                               int64_t registerCols) {
  int64_t most = pixels + pixels / kWasteDenominator;
  int64_t best = 0, bestWork = 0;
  for (int64_t cols = llvm::alignTo(valid, registerCols); cols <= most;
       cols += registerCols) {
    GemmTiles tiles = implicitConvTiles(images, filters, cols, channelBytes,
                                        span, registerRows, registerCols);
    if (!tiles.blockN)
      continue;
    int64_t work = largestThreadWork(images, filters, cols, tiles);
    if (!best || work < bestWork) {
      best = cols;
      bestWork = work;
    }
  }
  return best;
}

/// `input` (NCHW) with `extraRows` more rows of padding at the bottom: its
/// constant padding extended where it is one, else a padding of zeros.
static Value padBelow(RewriterBase &rewriter, Location loc, Value input,
                      int64_t extraRows) {
  if (extraRows == 0)
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> low(4, rewriter.getIndexAttr(0)), high = low;
  Value source = input, value;
  auto pad = input.getDefiningOp<tensor::PadOp>();
  if (pad && pad.getConstantPaddingValue() &&
      pad.getSourceType().hasStaticShape() &&
      !ShapedType::isDynamicShape(pad.getStaticLow()) &&
      !ShapedType::isDynamicShape(pad.getStaticHigh())) {
    source = pad.getSource();
    low = pad.getMixedLowPad();
    high = pad.getMixedHighPad();
    value = paddingValueOutside(rewriter, pad);
  } else {
    value = rewriter.create<arith::ConstantOp>(
        loc, rewriter.getZeroAttr(type.getElementType()));
  }
  high[2] = rewriter.getIndexAttr(*getConstantIntValue(high[2]) + extraRows);
  SmallVector<int64_t> shape(type.getShape());
  shape[2] += extraRows;
  return rewriter.create<tensor::PadOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), source, low,
      high, value);
}

Value cpu::permutedConstant(OpBuilder &b, Location loc, Value value,
                            RankedTensorType type,
                            llvm::function_ref<int64_t(int64_t)> sourceIndex) {
  DenseElementsAttr dense;
  if (!matchPattern(value, m_Constant(&dense)) ||
      dense.getNumElements() != type.getNumElements())
    return {};
  if (dense.isSplat())
    return b.create<arith::ConstantOp>(loc, dense.reshape(type));
  int64_t bits = type.getElementTypeBitWidth();
  ArrayRef<char> raw = dense.getRawData();
  if (bits % 8 != 0 ||
      static_cast<int64_t>(raw.size()) != type.getNumElements() * bits / 8)
    return {};
  int64_t bytes = bits / 8;
  std::vector<char> moved(raw.size());
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i)
    std::memcpy(&moved[i * bytes], &raw[sourceIndex(i) * bytes], bytes);
  return b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::getFromRawBuffer(type, moved));
}

/// The weights [F, C, KH, KW] packed as [F/rows, C, KH, KW, rows]: a
/// constant reordered at compile time, else a transpose.
static Value packedWeights(RewriterBase &rewriter, Location loc, Value weight,
                           int64_t rows) {
  auto type = cast<RankedTensorType>(weight.getType());
  ArrayRef<int64_t> w = type.getShape();
  Type element = type.getElementType();
  int64_t k = w[1] * w[2] * w[3];
  auto packed =
      RankedTensorType::get({w[0] / rows, w[1], w[2], w[3], rows}, element);
  // Element (fo, k, fi) of the result is (fo * rows + fi, k) of the weights.
  if (Value constant =
          cpu::permutedConstant(rewriter, loc, weight, packed, [&](int64_t i) {
            int64_t fi = i % rows, rest = i / rows;
            return ((rest / k) * rows + fi) * k + rest % k;
          }))
    return constant;
  Value split = rewriter.create<tensor::ExpandShapeOp>(
      loc,
      RankedTensorType::get({w[0] / rows, rows, w[1], w[2], w[3]}, element),
      weight, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
  return rewriter
      .create<linalg::TransposeOp>(
          loc, split,
          rewriter.create<tensor::EmptyOp>(loc, packed.getShape(), element),
          ArrayRef<int64_t>{0, 2, 3, 4, 1})
      .getResult()
      .front();
}

/// The implicit GEMM over the image's `planes` [N, C, plane] and the
/// `weights` packed as [F/rows, C, KH, KW, rows], filled with `fillValue`:
/// [N, F/rows, rows, cols / (pieces * lanes), pieces, lanes], its columns
/// in register tiles of `pieces` vectors (so that a register tile's
/// accumulators are vectors of `lanes`, the register's width), column p
/// reading plane element p + kh * d0 * `width` + kw * d1.
static linalg::GenericOp
implicitGemm(RewriterBase &rewriter, Location loc, Value planes, Value weights,
             Value fillValue, int64_t cols, int64_t width, int64_t pieces,
             int64_t lanes, ArrayRef<int64_t> dilations) {
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr n, fo, fi, pb, j, l, c, kh, kw;
  bindDims(ctx, n, fo, fi, pb, j, l, c, kh, kw);
  AffineExpr p = pb * (pieces * lanes) + j * lanes + l;
  SmallVector<AffineMap> maps = {
      AffineMap::get(
          9, 0, {n, c, p + kh * (dilations[0] * width) + kw * dilations[1]},
          ctx),
      AffineMap::get(9, 0, {fo, c, kh, kw, fi}, ctx),
      AffineMap::get(9, 0, {n, fo, fi, pb, j, l}, ctx)};
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;
  SmallVector<utils::IteratorType> iterators(6, par);
  iterators.append(3, red);
  ArrayRef<int64_t> packed =
      cast<RankedTensorType>(weights.getType()).getShape();
  int64_t images = cast<RankedTensorType>(planes.getType()).getDimSize(0);
  Value empty = rewriter.create<tensor::EmptyOp>(
      loc,
      ArrayRef<int64_t>{images, packed[0], packed[4], cols / (pieces * lanes),
                        pieces, lanes},
      fillValue.getType());
  Value init =
      rewriter.create<linalg::FillOp>(loc, fillValue, empty).getResult(0);
  auto gemm = rewriter.create<linalg::GenericOp>(
      loc, init.getType(), ValueRange{planes, weights}, ValueRange{init}, maps,
      iterators, [](OpBuilder &b, Location l, ValueRange args) {
        Value product = b.create<arith::MulFOp>(l, args[0], args[1]);
        b.create<linalg::YieldOp>(
            l, b.create<arith::AddFOp>(l, args[2], product).getResult());
      });
  gemm->setAttr(CuvilDialect::ImplicitConvAttrHelper::getNameStr(),
                UnitAttr::get(ctx));
  return gemm;
}

/// The implicit GEMM's `product` [N, F/rows, rows, cols/.., pieces, lanes] as
/// the convolution's NCHW result `outType`: the filters whole again, the
/// outputs of whole padded rows (`width` columns each), then the image's
/// columns of them.
static Value outputsOnImage(RewriterBase &rewriter, Location loc, Value product,
                            RankedTensorType outType, int64_t width) {
  ArrayRef<int64_t> out = outType.getShape();
  Value filters = rewriter.create<tensor::CollapseShapeOp>(
      loc, product, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
  auto index = [&](int64_t i) { return rewriter.getIndexAttr(i); };
  SmallVector<OpFoldResult> zeros(4, index(0)), ones(4, index(1));
  Value computed = rewriter.create<tensor::ExtractSliceOp>(
      loc, filters, ArrayRef(zeros).take_front(3),
      SmallVector<OpFoldResult>{index(out[0]), index(out[1]),
                                index(out[2] * width)},
      ArrayRef(ones).take_front(3));
  Value byRows = rewriter.create<tensor::ExpandShapeOp>(
      loc,
      RankedTensorType::get({out[0], out[1], out[2], width},
                            outType.getElementType()),
      computed, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  return rewriter.create<tensor::ExtractSliceOp>(
      loc, outType, byRows, zeros,
      SmallVector<OpFoldResult>{index(out[0]), index(out[1]), index(out[2]),
                                index(out[3])},
      ones);
}

int64_t cpu::implicitConvPieces(int64_t vectorLanes, Type element) {
  // 8 rows by 3 registers of 16 float32 lanes: 24 accumulators of
  // AVX-512's 32 registers; with AVX2's 8 lanes, 4 rows by 3: 12 of its 16
  // (against 4 by 2 on a Zen 3, alternated in one process: 64x56x56
  // 0.79-0.87x the time, 128x28x28 0.82-0.86x, 256x14x14 and 512x7x7
  // within noise). wasm's 4-lane tiles in V8, or wider elements (a vector of
  // as many float64 lanes takes two registers), two.
  bool narrow = element.getIntOrFloatBitWidth() <= 32;
  return narrow && (vectorLanes >= kAvx512Lanes || vectorLanes == kAvx2Lanes)
             ? 3
             : 2;
}

LogicalResult cpu::convAsImplicitGemm(RewriterBase &rewriter,
                                      linalg::Conv2DNchwFchwOp conv,
                                      linalg::FillOp fill, int64_t registerRows,
                                      int64_t vectorLanes) {
  Value input = conv.getDpsInputs()[0], weight = conv.getDpsInputs()[1];
  auto inType = cast<RankedTensorType>(input.getType());
  auto wType = cast<RankedTensorType>(weight.getType());
  auto outType = cast<RankedTensorType>(conv.getResultTypes()[0]);
  Type element = outType.getElementType();
  if (!inType.hasStaticShape() || !wType.hasStaticShape() ||
      !outType.hasStaticShape() || inType.getElementType() != element ||
      wType.getElementType() != element || !isa<FloatType>(element) ||
      element.getIntOrFloatBitWidth() % 8 != 0)
    return failure();
  if (!llvm::all_of(conv.getStrides().getValues<int64_t>(),
                    [](int64_t s) { return s == 1; }))
    return failure();
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  ArrayRef<int64_t> in = inType.getShape(), w = wType.getShape(),
                    out = outType.getShape();
  // A 1x1 kernel reads the image itself as its columns (convToGemm); few
  // channels or filters run faster as gathered columns.
  if (w[0] % registerRows != 0 || (w[2] == 1 && w[3] == 1) ||
      w[1] < kFewestChannels || w[0] < kFewestFilters)
    return failure();
  int64_t width = in[3], valid = out[2] * width;
  int64_t span = (w[2] - 1) * dilations[0] * width + (w[3] - 1) * dilations[1];
  int64_t channelBytes = w[1] * element.getIntOrFloatBitWidth() / 8;
  // The widest register tile whose columns waste little enough (14 x 14
  // images: 224 columns in tiles of 32, not 240 in tiles of 48).
  int64_t pieces = 0, cols = 0;
  for (int64_t tried = implicitConvPieces(vectorLanes, element);
       tried >= 2 && !cols; --tried) {
    pieces = tried;
    cols = implicitColumns(out[0], w[0], valid, out[2] * out[3], channelBytes,
                           span, registerRows, pieces * vectorLanes);
  }
  if (!cols)
    return failure();

  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  Value weights = packedWeights(rewriter, loc, weight, registerRows);
  // Every read of a channel inside its plane: the last column's span.
  int64_t rows = llvm::divideCeil(cols + span, width);
  Value image =
      padBelow(rewriter, loc, input, std::max<int64_t>(0, rows - in[2]));
  Value planes = rewriter.create<tensor::CollapseShapeOp>(
      loc, image, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});

  linalg::GenericOp gemm =
      implicitGemm(rewriter, loc, planes, weights, fill.getDpsInputs()[0], cols,
                   width, pieces, vectorLanes, dilations);
  rewriter.replaceOp(
      conv, outputsOnImage(rewriter, loc, gemm.getResult(0), outType, width));
  if (fill->use_empty())
    rewriter.eraseOp(fill);
  if (auto pad = input.getDefiningOp<tensor::PadOp>();
      pad && image != input && pad->use_empty())
    rewriter.eraseOp(pad);
  return success();
}

std::string cpu::implicitConvTasks(int64_t id, const GemmTiles &tiles,
                                   int64_t registerRows, int64_t registerCols,
                                   int64_t channels) {
  std::string i = std::to_string(id);
  std::string anyOp = "!transform.any_op";
  std::string attr = CuvilDialect::GemmIdAttrHelper::getNameStr().str();
  // Loops (n, fo, fi, pb, j, l, c, kh, kw). Thread tasks of one image's
  // filters by columns with the fill fused in; blocks of channels; register
  // tiles of one row of packed filters (fi) by one block of columns (j, l),
  // one channel and kernel offset per step.
  int64_t block = channels % kChannelBlock == 0 ? kChannelBlock : 0;
  std::string thread = joinSizes({1, tiles.blockM / registerRows, 0,
                                  tiles.blockN / registerCols, 0, 0, 0, 0, 0});
  return "    %ic" + i +
         " = transform.structured.match ops{[\"linalg.generic\"]} "
         "attributes{" +
         attr + " = " + i + " : i64} in %root : (" + anyOp + ") -> " + anyOp +
         "\n    %icf" + i + " = transform.get_producer_of_operand %ic" + i +
         "[2] : (" + anyOp + ") -> " + anyOp + "\n    %ica" + i +
         ", %icforall" + i + " = transform.structured.tile_using_forall %ic" +
         i + " tile_sizes [" + thread + "] : (" + anyOp + ") -> (" + anyOp +
         ", " + anyOp + ")\n    %icff" + i + ", %icfl" + i +
         " = transform.cuvil.fuse_into_containing_op %icf" + i +
         " into %icforall" + i + " : (" + anyOp + ", " + anyOp + ") -> (" +
         anyOp + ", " + anyOp + ")\n" +
         (block ? tileUsingFor("ica" + i, "icb" + i, "icbl" + i,
                               {0, 0, 0, 0, 0, 0, block, 0, 0})
                : "    %icb" + i + " = transform.merge_handles %ica" + i +
                      " : " + anyOp + "\n") +
         tileUsingFor("icb" + i, "icr" + i, "icl" + i,
                      {0, 1, 0, 1, 0, 0, 1, 1, 1});
}

std::string cpu::implicitConvKernelUnroll(int64_t id, int64_t kernelHeight,
                                          int64_t kernelWidth) {
  // A kernel of up to kUnrolledWindow offsets: its loops unrolled, so one
  // loop step is a channel's every offset (the loops' own instructions
  // were a tenth of the register kernel's).
  if (kernelHeight * kernelWidth > kUnrolledWindow)
    return "";
  std::string i = std::to_string(id);
  std::string match = "transform.structured.match ops{[\"linalg.generic\"]} "
                      "attributes{" +
                      CuvilDialect::GemmIdAttrHelper::getNameStr().str() +
                      " = " + i +
                      " : i64} in %root : (!transform.any_op) -> "
                      "!transform.any_op\n";
  std::string text;
  int64_t level = 0;
  for (int64_t extent : {kernelWidth, kernelHeight}) {
    std::string l = i + "_" + std::to_string(level++);
    text += "    %icu" + l + " = " + match + "    %icp" + l +
            " = transform.get_parent_op %icu" + l +
            " {deduplicate, op_name = \"scf.for\"} : (!transform.any_op) "
            "-> !transform.any_op\n"
            "    transform.loop.unroll %icp" +
            l + " {factor = " + std::to_string(extent) +
            "} : !transform.any_op\n";
  }
  return text;
}

/// The slice `slice` takes, as `type` (its shape without unit dimensions).
static Value rankReduced(RewriterBase &rewriter, tensor::ExtractSliceOp slice,
                         RankedTensorType type) {
  return rewriter.create<tensor::ExtractSliceOp>(
      slice.getLoc(), type, slice.getSource(), slice.getMixedOffsets(),
      slice.getMixedSizes(), slice.getMixedStrides());
}

/// The register tile `tile` (loops of extent 1 but fi, j and l) as a
/// contraction over (m, j, l, k) of the packed weights' row [rows, 1] by the
/// image's shifted row [1, pieces, lanes] into the accumulators [rows,
/// pieces, lanes], tagged like the convolution; failure where its operands
/// are not the slices tiling leaves.
static LogicalResult asRegisterContraction(IRRewriter &rewriter,
                                           linalg::GenericOp tile) {
  auto image = tile.getDpsInputs()[0].getDefiningOp<tensor::ExtractSliceOp>();
  auto weights = tile.getDpsInputs()[1].getDefiningOp<tensor::ExtractSliceOp>();
  auto acc = tile.getDpsInits()[0].getDefiningOp<tensor::ExtractSliceOp>();
  auto insert = tile->hasOneUse()
                    ? dyn_cast<tensor::InsertSliceOp>(*tile->getUsers().begin())
                    : nullptr;
  if (!image || !weights || !acc || !insert ||
      insert.getSource() != tile.getResult(0))
    return failure();
  SmallVector<int64_t> r = tile.getStaticLoopRanges();
  int64_t rows = r[2], pieces = r[4], lanes = r[5];
  Type element = getElementTypeOrSelf(tile.getResultTypes()[0]);
  auto type = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, element);
  };
  Location loc = tile.getLoc();
  rewriter.setInsertionPoint(tile);
  // Over one channel and kernel offset the image's shift is a constant of
  // the slice's offset: the tile's filters of that step by its columns of
  // the shifted row are a contraction with K = 1.
  Value lhs = rewriter.create<tensor::ExpandShapeOp>(
      loc, type({rows, 1}), rankReduced(rewriter, weights, type({rows})),
      SmallVector<ReassociationIndices>{{0, 1}});
  Value rhs = rewriter.create<tensor::ExpandShapeOp>(
      loc, type({1, pieces, lanes}),
      rankReduced(rewriter, image, type({pieces * lanes})),
      SmallVector<ReassociationIndices>{{0, 1, 2}});
  Value out = rankReduced(rewriter, acc, type({rows, pieces, lanes}));
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr m, j, l, k;
  bindDims(ctx, m, j, l, k);
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {m, k}, ctx),
                                 AffineMap::get(4, 0, {k, j, l}, ctx),
                                 AffineMap::get(4, 0, {m, j, l}, ctx)};
  auto par = utils::IteratorType::parallel;
  auto gemm = rewriter.create<linalg::GenericOp>(
      loc, out.getType(), ValueRange{lhs, rhs}, ValueRange{out}, maps,
      SmallVector<utils::IteratorType>{par, par, par,
                                       utils::IteratorType::reduction},
      [](OpBuilder &b, Location l, ValueRange args) {
        Value product = b.create<arith::MulFOp>(l, args[0], args[1]);
        b.create<linalg::YieldOp>(
            l, b.create<arith::AddFOp>(l, args[2], product).getResult());
      });
  gemm->setAttr(CuvilDialect::GemmIdAttrHelper::getNameStr(),
                tile->getAttr(CuvilDialect::GemmIdAttrHelper::getNameStr()));
  rewriter.setInsertionPoint(insert);
  rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
      insert, gemm.getResult(0), insert.getDest(), insert.getMixedOffsets(),
      insert.getMixedSizes(), insert.getMixedStrides());
  rewriter.eraseOp(tile);
  for (Operation *slice :
       {image.getOperation(), weights.getOperation(), acc.getOperation()})
    if (slice->use_empty())
      rewriter.eraseOp(slice);
  return success();
}

void cpu::implicitConvRegisterContractions(ModuleOp module) {
  SmallVector<linalg::GenericOp> tiles;
  module.walk([&](linalg::GenericOp generic) {
    if (generic->hasAttr(CuvilDialect::ImplicitConvAttrHelper::getNameStr()) &&
        generic->hasAttr(CuvilDialect::GemmIdAttrHelper::getNameStr()))
      tiles.push_back(generic);
  });
  IRRewriter rewriter(module.getContext());
  for (linalg::GenericOp tile : tiles) {
    SmallVector<int64_t> r = tile.getStaticLoopRanges();
    bool registerTile = r.size() == 9 && r[0] == 1 && r[1] == 1 && r[3] == 1 &&
                        r[6] == 1 && r[7] == 1 && r[8] == 1 &&
                        !ShapedType::isDynamicShape(r);
    // One the schedule did not cut into register tiles stays untagged (and
    // runs as loops) rather than reach the vectorizer, which its shifted
    // reads would fail.
    if (!registerTile || failed(asRegisterContraction(rewriter, tile)))
      tile->removeAttr(CuvilDialect::GemmIdAttrHelper::getNameStr());
  }
}
